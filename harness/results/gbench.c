/*
 * The `benchmarks` array of a results file, in Google Benchmark 1.7.1's JSON layout, built from
 * the series themselves so that every mode and suite writes the same thing: the sequential run,
 * the rounds, --aa, check's runs, the phases suite and the forkathon suite (which times itself).
 *
 * Why not pass Google Benchmark's own runs through: its names carry the registration's settings
 * ("…/min_time:0.030/repeats:10/manual_time", and in rounds mode "…/iterations:539/repeats:1"),
 * so two files of different profiles or modes share no name and tools/compare.py matches
 * nothing; rounds produce one-repetition runs without aggregates; its cpu_time is the calling
 * thread's only. Here a record is named `scenario/contender` with the settings in the file's
 * `settings`, repetitions and repetition_index count the records actually written, the
 * aggregates are Google Benchmark's four (mean, median, sample stddev, cv as a fraction), and
 * cpu_time is pkbench's whole-process CPU per iteration (every thread), children's CPU being
 * the counter child_cpu_ns.
 */
#define _GNU_SOURCE
#include "results/results.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void pkb_results_gb_date(char *buf, size_t cap)
{
    /* strftime's %z is "+0100"; Google Benchmark writes "+01:00". */
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char raw[64];
    size_t n = strftime(raw, sizeof raw, "%Y-%m-%dT%H:%M:%S%z", &tm);
    if (n >= 5 && cap > n + 1) {
        memcpy(buf, raw, n - 2);
        buf[n - 2] = ':';
        memcpy(buf + n - 1, raw + n - 2, 3);
    } else if (cap > 0) {
        snprintf(buf, cap, "%s", raw);
    }
}

enum gb_stat { S_MEAN, S_MEDIAN, S_STDDEV, S_CV, NSTATS };

static const char *const stat_names[NSTATS] = {"mean", "median", "stddev", "cv"};

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* Google Benchmark's statistics (statistics.cc): the mean, the median (the mean of the two
 * middle values for an even count), the sample standard deviation (n − 1), cv = stddev / mean. */
static double statistic(enum gb_stat k, const double *x, size_t n, double *work)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += x[i];
    double mean = sum / (double)n;
    if (k == S_MEAN)
        return mean;
    if (k == S_MEDIAN) {
        memcpy(work, x, n * sizeof *work);
        qsort(work, n, sizeof *work, cmp_double);
        return n % 2 ? work[n / 2] : (work[n / 2 - 1] + work[n / 2]) / 2;
    }
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - mean) * (x[i] - mean);
    double sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
    return k == S_STDDEV ? sd : mean != 0 ? sd / mean : 0;
}

/* The fields every record of the series shares, in Google Benchmark's order. */
static json_t *head(const pkb_series_record *r, int family, const char *name, size_t reps)
{
    return json_pack("{s:s, s:i, s:i, s:s, s:s, s:I}", "name", name, "family_index", family,
                     "per_family_instance_index", 0, "run_name", r->name, "run_type",
                     strcmp(name, r->name) == 0 ? "iteration" : "aggregate", "repetitions",
                     (json_int_t)reps);
}

/* What one repetition reports: time, CPU and the counters, per iteration. */
struct rep_values {
    double *real, *cpu, *child, *throughput;
};

static int iteration_records(const pkb_series_record *r,
                             int family,
                             const struct rep_values *v,
                             json_t *benchmarks)
{
    for (size_t k = 0; k < r->n; k++) {
        json_t *o = head(r, family, r->name, r->n);
        if (o == NULL)
            return -ENOMEM;
        json_object_set_new(o, "repetition_index", json_integer((json_int_t)k));
        json_object_set_new(o, "threads", json_integer(1));
        json_object_set_new(o, "iterations", json_integer(r->iterations ? r->iterations[k] : 1));
        json_object_set_new(o, "real_time", json_real(v->real[k]));
        json_object_set_new(o, "cpu_time", json_real(v->cpu[k]));
        json_object_set_new(o, "time_unit", json_string("ns"));
        json_object_set_new(o, "child_cpu_ns", json_real(v->child[k]));
        json_object_set_new(o, "throughput", json_real(v->throughput[k]));
        if (json_array_append_new(benchmarks, o) != 0)
            return -ENOMEM;
    }
    return 0;
}

static int aggregate_records(const pkb_series_record *r,
                             int family,
                             const struct rep_values *v,
                             json_t *benchmarks,
                             double *work)
{
    for (int k = 0; k < NSTATS; k++) {
        char name[256];
        snprintf(name, sizeof name, "%s_%s", r->name, stat_names[k]);
        json_t *o = head(r, family, name, r->n);
        if (o == NULL)
            return -ENOMEM;
        json_object_set_new(o, "threads", json_integer(1));
        json_object_set_new(o, "aggregate_name", json_string(stat_names[k]));
        json_object_set_new(o, "aggregate_unit", json_string(k == S_CV ? "percentage" : "time"));
        json_object_set_new(o, "iterations", json_integer((json_int_t)r->n));
        json_object_set_new(o, "real_time", json_real(statistic(k, v->real, r->n, work)));
        json_object_set_new(o, "cpu_time", json_real(statistic(k, v->cpu, r->n, work)));
        json_object_set_new(o, "time_unit", json_string("ns"));
        json_object_set_new(o, "child_cpu_ns", json_real(statistic(k, v->child, r->n, work)));
        json_object_set_new(o, "throughput", json_real(statistic(k, v->throughput, r->n, work)));
        if (json_array_append_new(benchmarks, o) != 0)
            return -ENOMEM;
    }
    return 0;
}

/* A failed series: one error run, as Google Benchmark reports a SkipWithError. */
static int error_record(const pkb_series_record *r, int family, json_t *benchmarks)
{
    json_t *o = head(r, family, r->name, 1);
    if (o == NULL)
        return -ENOMEM;
    json_object_set_new(o, "repetition_index", json_integer(0));
    json_object_set_new(o, "threads", json_integer(1));
    json_object_set_new(o, "error_occurred", json_true());
    json_object_set_new(o, "error_message", json_string(r->reason ? r->reason : "failed"));
    json_object_set_new(o, "iterations", json_integer(0));
    json_object_set_new(o, "real_time", json_real(0));
    json_object_set_new(o, "cpu_time", json_real(0));
    json_object_set_new(o, "time_unit", json_string("ns"));
    return json_array_append_new(benchmarks, o) == 0 ? 0 : -ENOMEM;
}

int pkb_results_gb_records(const pkb_series_record *r, int family, json_t *benchmarks)
{
    if (r->status == PKB_SERIES_FAILED && r->n == 0)
        return error_record(r, family, benchmarks);
    if (r->status != PKB_SERIES_MEASURED || r->n == 0)
        return 0;
    double *all = calloc(5 * r->n, sizeof *all);
    if (all == NULL)
        return -ENOMEM;
    struct rep_values v = {all, all + r->n, all + 2 * r->n, all + 3 * r->n};
    for (size_t k = 0; k < r->n; k++) {
        v.real[k] = r->samples_ns[k];
        v.cpu[k] = r->parent_cpu_ns ? r->parent_cpu_ns[k] : 0;
        v.child[k] = r->child_cpu_ns ? r->child_cpu_ns[k] : 0;
        v.throughput[k] = r->work_per_iteration / (r->samples_ns[k] * 1e-9);
    }
    int rc = iteration_records(r, family, &v, benchmarks);
    if (rc == 0 && r->n >= 2)
        rc = aggregate_records(r, family, &v, benchmarks, all + 4 * r->n);
    free(all);
    return rc;
}
