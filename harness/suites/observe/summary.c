/*
 * summary — the observe study's numbers from a results file's series (observe.h): per cell
 * (hold, rate, observer) the medians and ranges over the repetitions of the observer's CPU, the
 * workload's, the attribution ratio and the rest, and the workload's extra CPU against the
 * `none` observer of the same cell. The suite stores this summary in the results file; the
 * report recomputes it from the same series with this same code.
 */
#define _GNU_SOURCE
#include "suites/observe/observe.h"

#include "common/stats.h"
#include "suites/observe/observer.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The numbers of a JSON array (nulls skipped) into a new array; *n their count. */
static double *numbers(const json_t *a, size_t *n)
{
    size_t cap = json_array_size(a);
    double *x = calloc(cap ? cap : 1, sizeof *x);
    *n = 0;
    for (size_t i = 0; x != NULL && i < cap; i++)
        if (json_is_number(json_array_get(a, i)))
            x[(*n)++] = json_number_value(json_array_get(a, i));
    return x;
}

static double median_of(const double *x, size_t n)
{
    double m;
    double *work = calloc(n ? n : 1, sizeof *work);
    int rc = work != NULL && n > 0 ? pks_median(x, n, work, &m) : -1;
    free(work);
    return rc == 0 ? m : NAN;
}

/* {"median", "min", "max"} of x, or null. */
static json_t *range_json(const double *x, size_t n)
{
    if (n == 0)
        return json_null();
    double lo = x[0], hi = x[0];
    for (size_t i = 1; i < n; i++) {
        lo = fmin(lo, x[i]);
        hi = fmax(hi, x[i]);
    }
    return json_pack("{s:f, s:f, s:f}", "median", median_of(x, n), "min", lo, "max", hi);
}

static json_t *range_of(const json_t *o, const char *key)
{
    size_t n;
    double *x = numbers(json_object_get(o, key), &n);
    json_t *r = x != NULL ? range_json(x, n) : NULL;
    free(x);
    return r;
}

static json_t *median_json(const json_t *o, const char *key)
{
    size_t n;
    double *x = numbers(json_object_get(o, key), &n);
    double m = x != NULL && n > 0 ? median_of(x, n) : NAN;
    free(x);
    return isnan(m) ? json_null() : json_real(m);
}

/* Sum and maximum of an array's numbers (0 when none). */
static void sum_max(const json_t *o, const char *key, double *sum, double *max)
{
    size_t n;
    double *x = numbers(json_object_get(o, key), &n);
    *sum = *max = 0;
    for (size_t i = 0; x != NULL && i < n; i++) {
        *sum += x[i];
        *max = i == 0 ? x[i] : fmax(*max, x[i]);
    }
    free(x);
}

/* Per repetition num[i] / den[i] where den[i] > 0, summarized. */
static json_t *ratio_of(const json_t *o, const char *num, const char *den)
{
    const json_t *a = json_object_get(o, num), *b = json_object_get(o, den);
    size_t n = json_array_size(a), k = 0;
    double *x = calloc(n ? n : 1, sizeof *x);
    for (size_t i = 0; x != NULL && i < n; i++) {
        double d = json_number_value(json_array_get(b, i));
        if (json_is_number(json_array_get(a, i)) && d > 0)
            x[k++] = json_number_value(json_array_get(a, i)) / d;
    }
    json_t *r = x != NULL ? range_json(x, k) : NULL;
    free(x);
    return r;
}

static const json_t *observe_of(const json_t *s)
{
    const json_t *o = json_object_get(s, "observe");
    return json_is_object(o) ? o : NULL;
}

static bool measured(const json_t *s)
{
    const char *st = json_string_value(json_object_get(s, "status"));
    return st != NULL && strcmp(st, "measured") == 0 &&
           json_array_size(json_object_get(s, "samples_ns")) > 0;
}

/* The `none` series of the same cell, or NULL. */
static const json_t *none_of(const json_t *series, double rate, double hold)
{
    size_t i;
    const json_t *s;
    json_array_foreach(series, i, s)
    {
        const json_t *o = observe_of(s);
        const char *ob = json_string_value(json_object_get(o, "observer"));
        if (o != NULL && ob != NULL && strcmp(ob, "none") == 0 && measured(s) &&
            json_number_value(json_object_get(o, "rate")) == rate &&
            json_number_value(json_object_get(o, "hold_ms")) == hold)
            return s;
    }
    return NULL;
}

static size_t count_true(const json_t *flags)
{
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(flags); i++)
        n += json_is_true(json_array_get(flags, i));
    return n;
}

/* The cell's repetitions: n, the noisy ones and the disturbed ones. */
static void cell_repetitions(json_t *c, const json_t *s)
{
    size_t n;
    double *x = numbers(json_object_get(s, "samples_ns"), &n);
    free(x);
    json_object_set_new(c, "n", json_integer((json_int_t)n));
    json_object_set_new(c, "noisy",
                        json_integer((json_int_t)count_true(json_object_get(s, "noisy"))));
    /* Files from before the measured disturbance (run/disturb.h) have no `disturbed` array. */
    const json_t *dflags = json_object_get(s, "disturbed");
    if (json_is_array(dflags))
        json_object_set_new(c, "disturbed", json_integer((json_int_t)count_true(dflags)));
}

/* Time inside the BPF programs (ms), the ring's drops, the workload's failures and lateness, and
 * how often the open sockets seen matched the truth. */
static void cell_costs(json_t *c, const json_t *o)
{
    size_t nb;
    double *b = numbers(json_object_get(o, "bpf_run_ns"), &nb);
    for (size_t i = 0; b != NULL && i < nb; i++)
        b[i] /= 1e6;
    json_object_set_new(c, "bpf_ms", b != NULL ? range_json(b, nb) : json_null());
    free(b);
    double sum, max;
    sum_max(o, "drops", &sum, &max);
    json_object_set_new(c, "drops_total",
                        json_is_array(json_object_get(o, "drops")) &&
                                json_is_number(json_array_get(json_object_get(o, "drops"), 0))
                            ? json_real(sum)
                            : json_null());
    json_object_set_new(c, "drops_max", json_real(max));
    sum_max(o, "failures", &sum, &max);
    json_object_set_new(c, "failures_total", json_real(sum));
    sum_max(o, "late_max_us", &sum, &max);
    json_object_set_new(c, "late_max_us", json_real(max));
    const json_t *ot = json_object_get(o, "open_truth"), *oo = json_object_get(o, "open_observed");
    json_int_t equal = 0;
    for (size_t i = 0; i < json_array_size(ot); i++)
        equal += json_equal(json_array_get(ot, i), json_array_get(oo, i));
    json_object_set_new(c, "open_equal", json_integer(equal));
}

/* What watching shifted onto the workload: its CPU here minus its CPU under `none`. */
static void cell_workload_delta(json_t *c, const json_t *series, double rate, double hold)
{
    const json_t *none = none_of(series, rate, hold);
    json_t *wl = json_object_get(c, "workload_cpu_s");
    json_t *nwl = none != NULL ? median_json(observe_of(none), "workload_cpu_s") : NULL;
    json_object_set_new(
        c, "workload_delta_s",
        json_is_object(wl) && json_is_number(nwl)
            ? json_real(json_number_value(json_object_get(wl, "median")) - json_number_value(nwl))
            : json_null());
    json_decref(nwl);
}

static json_t *cell_json(const json_t *series, const json_t *s)
{
    const json_t *o = observe_of(s);
    double rate = json_number_value(json_object_get(o, "rate"));
    double hold = json_number_value(json_object_get(o, "hold_ms"));
    json_t *c = json_pack("{s:f, s:f, s:O, s:O, s:O*}", "hold_ms", hold, "rate", rate, "observer",
                          json_object_get(o, "observer"), "status", json_object_get(s, "status"),
                          "reason", json_object_get(s, "reason"));
    if (c == NULL || !measured(s))
        return c;
    cell_repetitions(c, s);
    static const char *const ranges[] = {"cpu_s", "setup_cpu_s", "workload_cpu_s"};
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        json_object_set_new(c, ranges[i], range_of(o, ranges[i]));
    static const char *const medians[] = {"churned",
                                          "seen",
                                          "attributed",
                                          "misattributed",
                                          "long_attributed",
                                          "accepted",
                                          "server_attributed",
                                          "open_truth",
                                          "open_observed",
                                          "events",
                                          "polls",
                                          "wakeups",
                                          "timewait_max"};
    for (size_t i = 0; i < sizeof medians / sizeof medians[0]; i++)
        json_object_set_new(c, medians[i], median_json(o, medians[i]));
    json_object_set(c, "long_lived", json_object_get(o, "long_lived"));
    json_object_set_new(c, "attribution", ratio_of(o, "attributed", "churned"));
    json_object_set_new(c, "events_per_conn", ratio_of(o, "events", "churned"));
    cell_costs(c, o);
    cell_workload_delta(c, series, rate, hold);
    json_object_set(c, "hooks", json_object_get(o, "hooks"));
    const json_t *progs = json_object_get(o, "bpf_programs");
    json_object_set(c, "bpf_programs", json_array_get(progs, json_array_size(progs) - 1));
    return c;
}

/* Appends v to a sorted array of distinct numbers. */
static void add_sorted(json_t *a, double v)
{
    size_t i = 0;
    while (i < json_array_size(a) && json_number_value(json_array_get(a, i)) < v)
        i++;
    if (i < json_array_size(a) && json_number_value(json_array_get(a, i)) == v)
        return;
    json_array_insert_new(a, i, json_real(v));
}

static size_t observer_rank(const char *name)
{
    for (size_t k = 0; k < pkb_observer_count; k++)
        if (name != NULL && strcmp(pkb_observers[k]->name, name) == 0)
            return k;
    return pkb_observer_count;
}

json_t *pkb_observe_summarize(const json_t *series)
{
    json_t *rates = json_array(), *holds = json_array(), *observers = json_array();
    json_t *cells = json_array();
    bool present[64] = {false};
    size_t i;
    const json_t *s;
    json_array_foreach(series, i, s)
    {
        const json_t *o = observe_of(s);
        if (o == NULL)
            continue;
        add_sorted(rates, json_number_value(json_object_get(o, "rate")));
        add_sorted(holds, json_number_value(json_object_get(o, "hold_ms")));
        size_t k = observer_rank(json_string_value(json_object_get(o, "observer")));
        if (k < 64)
            present[k] = true;
    }
    for (size_t k = 0; k < pkb_observer_count && k < 64; k++)
        if (present[k])
            json_array_append_new(observers, json_string(pkb_observers[k]->name));
    /* Cells in hold, rate, observer order. */
    size_t h, r, k;
    const json_t *hv, *rv, *ov;
    json_array_foreach(holds, h, hv) json_array_foreach(rates, r, rv)
        json_array_foreach(observers, k, ov)
    {
        json_array_foreach(series, i, s)
        {
            const json_t *o = observe_of(s);
            if (o == NULL ||
                json_number_value(json_object_get(o, "rate")) != json_number_value(rv) ||
                json_number_value(json_object_get(o, "hold_ms")) != json_number_value(hv) ||
                !json_equal(json_object_get(o, "observer"), ov))
                continue;
            json_array_append_new(cells, cell_json(series, s));
        }
    }
    return json_pack("{s:o, s:o, s:o, s:o}", "rates", rates, "holds", holds, "observers", observers,
                     "cells", cells);
}
