/*
 * The runner's collection layer, shared by the sequential run (run.c), the rounds mode
 * (rounds.c) and the re-measuring (remeasure.c): the Google Benchmark function every series runs
 * in, with the disturbance of every call measured around it (run/disturb.h), the progress (a live
 * line on a terminal; one line per finished series once the file holds its final data, read back
 * from the file through the suite's summary, with the time left), and the collection of Google
 * Benchmark's runs into the series and the results document, which is rewritten after every
 * finished series (see run.c for the timing and noise rules). The document's `benchmarks` are
 * built from the series (results.h's pkb_results_gb_records), not copied from Google Benchmark's
 * runs: the same records in every mode.
 */
#define _GNU_SOURCE
#include "run/collect.h"

#include "common/term.h"
#include "run/calibrate.h"
#include "run/disturb.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

double pkb__now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double tv_ns(struct timeval tv)
{
    return (double)tv.tv_sec * 1e9 + (double)tv.tv_usec * 1e3;
}

/* ---- progress ------------------------------------------------------------------------------ */

struct pkb__progress pkb__progress;

double pkb__eta_s(void)
{
    struct pkb__progress *p = &pkb__progress;
    double now = pkb__now_s(), per = p->per_series_s;
    /* In one-after-another mode every series costs about the same (warm-up plus the sized
     * repetitions), so the pace so far beats the profile's estimate once a series finished. */
    if (!p->rounds && p->first_start > 0 && p->index > 1)
        per = (p->series_start - p->first_start) / (double)(p->index - 1);
    double left_series = per - (now - p->series_start);
    if (left_series < 0 || p->index == 0)
        left_series = 0;
    size_t after = p->total > p->index ? p->total - p->index : 0;
    return left_series + per * (double)after + p->later_s;
}

static void show(const char *phase)
{
    if (!pkb__progress.tty)
        return;
    char eta[32];
    pkb_fmt_duration(eta, sizeof eta, pkb__eta_s());
    fprintf(stderr, "\r\033[K[%zu/%zu] %-48s %-9s elapsed %4.0fs  ETA %s", pkb__progress.index,
            pkb__progress.total, pkb__progress.name, phase, pkb__now_s() - pkb__progress.run_start,
            eta);
    fflush(stderr);
}

/* "[index/total] name  <the suite's summary, read back from the file>", on stderr. */
static void series_line(struct pkb__collect *c, const pkb_series *s, bool eta)
{
    pkb_buf line = {0};
    int digits = snprintf(NULL, 0, "%zu", c->timed);
    pkb_buf_printf(&line, "[%*zu/%zu] %-*s  ", digits, s->line_no, c->timed, pkb__progress.width,
                   s->name);
    size_t head = line.len;
    if (c->write_error != 0 || c->opts->series_line == NULL ||
        c->opts->series_line(c->opts->out_path, s->name, &line) != 0) {
        line.len = line.failed ? 0 : head; /* the file could not say: the status at least */
        if (line.data != NULL)
            line.data[line.len] = '\0';
        pkb_buf_printf(&line, "%s%s%s", pkb_series_status_name(s->status),
                       s->reason[0] != '\0' ? ": " : "", s->reason);
    }
    if (eta && !pkb__progress.tty && s->line_no < c->timed) {
        char left[32];
        pkb_fmt_duration(left, sizeof left, pkb__eta_s());
        pkb_buf_printf(&line, "  ETA %s", left);
    }
    if (!line.failed)
        fprintf(stderr, "%s%s\n", pkb__progress.tty ? "\r\033[K" : "pkbench: ", line.data);
    pkb_buf_free(&line);
}

void pkb__show_finished(struct pkb__collect *c, bool final, bool eta)
{
    /* In rounds every series finishes at once: a re-measure due for any of them (a baseline, a
     * member of a Holm family) can change the others' verdicts, so all wait for it. */
    for (size_t i = 0; !final && pkb__progress.rounds && i < c->n; i++)
        if (pkb__remeasure_due(c, &c->series[i]))
            return;
    for (size_t i = 0; i < c->n; i++) {
        pkb_series *s = &c->series[i];
        if (s->line_no == 0 || s->shown || !s->done || s->remeasuring ||
            (!final && pkb__remeasure_due(c, s)))
            continue;
        series_line(c, s, eta);
        s->shown = true;
    }
}

int pkb__register(pkb_series *s, const pkb_profile *prof)
{
    int rc = pkb_register(&(pkb_def){.name = s->name,
                                     .fn = pkb__bench,
                                     .user = s,
                                     .time_mode = PKB_TIME_MANUAL,
                                     .unit = PKB_UNIT_NS,
                                     .repetitions = prof->repetitions,
                                     .min_warmup_time = prof->warmup_s,
                                     .min_time = prof->min_time_s});
    if (rc != 0)
        fprintf(stderr, "pkbench: cannot register %s: %s\n", s->name, strerror(-rc));
    return rc;
}

bool pkb__remeasure_due(const struct pkb__collect *c, const pkb_series *s)
{
    return !c->opts->aa && c->opts->more_rounds == NULL && !pkb_interrupted &&
           s->status == PKB_SERIES_MEASURED && s->nreps > 0 && !s->remeasured &&
           pkb__disturbed_share(s) > PKB_REMEASURE_SHARE;
}

/* ---- the benchmark function ---------------------------------------------------------------- */

/* What disturbed this call of the benchmark function: one repetition in rounds mode, one of
 * Google Benchmark's sizing calls or repetitions in a sequential run. */
static void record_call(pkb_series *s, const pkb_disturbance *d)
{
    if (s->ncalls == s->capcalls) {
        size_t cap = s->capcalls ? s->capcalls * 2 : 64;
        pkb_disturbance *p = realloc(s->calls, cap * sizeof *p);
        if (p == NULL)
            return;
        s->calls = p;
        s->capcalls = cap;
    }
    s->calls[s->ncalls++] = *d;
}

/* Whether one iteration's result fails the series: its error, or counts other than the
 * series expects; *msg says why. */
static bool
iteration_failed(const pkb_series *s, int rc, const pkb_sample *out, char *msg, size_t cap)
{
    if (rc != 0) {
        snprintf(msg, cap, "iteration failed: %s",
                 out->error[0] ? out->error : strerror(rc < 0 ? -rc : rc));
        return true;
    }
    uint64_t k = out->iterations > 0 ? out->iterations : 1; /* a batch reports sums */
    if (k > (out->batch > 0 ? out->batch : 1)) {
        snprintf(msg, cap, "%llu iterations performed, at most %u asked", (unsigned long long)k,
                 out->batch > 0 ? out->batch : 1);
        return true;
    }
    if (s->check_counts &&
        (out->bytes != s->expect_bytes * k || out->lines != s->expect_lines * k ||
         (uint64_t)out->children != (uint64_t)s->expect_children * k || out->failures != 0)) {
        snprintf(msg, cap,
                 "%llu iteration%s read %llu bytes / %llu lines from %d children (%d failed), "
                 "expected %llu / %llu from %llu",
                 (unsigned long long)k, k == 1 ? "" : "s", (unsigned long long)out->bytes,
                 (unsigned long long)out->lines, out->children, out->failures,
                 (unsigned long long)(s->expect_bytes * k),
                 (unsigned long long)(s->expect_lines * k),
                 (unsigned long long)s->expect_children * k);
        return true;
    }
    return false;
}

/* What a self-timed call reported beyond its time: the largest peaks seen (series.h). */
static void note_peaks(pkb_series *s, const pkb_sample *out)
{
    s->self_timed = true;
    if (out->peak_rss_kib > s->peak_rss_kib)
        s->peak_rss_kib = out->peak_rss_kib;
    if (out->peak_fds > s->peak_fds)
        s->peak_fds = out->peak_fds;
    if (out->idle_fds > 0 && (s->idle_fds == 0 || out->idle_fds < s->idle_fds))
        s->idle_fds = out->idle_fds;
}

/* The iterations this call of the benchmark function still has to run, the current one
 * included (Google Benchmark counts it as done once pkb_keep_running returned true). */
static uint32_t batch_left(const pkb_state *st)
{
    int64_t left = pkb_max_iterations(st) - pkb_iterations(st) + 1;
    return left < 1 ? 1 : left > UINT32_MAX ? UINT32_MAX : (uint32_t)left;
}

/* The series' own iterations, untimed, for s->settle_s (at least one), so the timed ones start
 * in its steady state rather than in what the series before it left (run.c, "Settling").
 * Returns false, with *msg, when one of them failed. */
static bool settle(pkb_series *s, char *msg, size_t cap)
{
    double end = pkb__now_s() + s->settle_s;
    do {
        pkb_sample out;
        memset(&out, 0, sizeof out);
        int rc = s->iterate(s->ctx, &out);
        if (iteration_failed(s, rc, &out, msg, cap))
            return false;
    } while (pkb__now_s() < end && !pkb_interrupted);
    return true;
}

/* What the calls of one run of the benchmark function added up to. */
struct totals {
    double child_ns, self_ns, timed_s; /* CPU of children and of the parent, wall time */
    int64_t n;                         /* Google Benchmark's iterations */
    bool failed;
};

/* One call of the series' iterate (one iteration, or a batch of them), timed: its wall time and
 * the CPU of its children and of this process, or, when it timed itself in another process,
 * what that process reported. Each of a batch's iterations is given its share of the time. */
static void timed_call(pkb_state *st, pkb_series *s, pkb_disturb_mark *mark, struct totals *t)
{
    struct rusage c0, c1, p0, p1;
    getrusage(RUSAGE_CHILDREN, &c0);
    getrusage(RUSAGE_SELF, &p0);
    pkb_sample out;
    memset(&out, 0, sizeof out);
    out.batch = batch_left(st);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = s->iterate(s->ctx, &out);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    getrusage(RUSAGE_SELF, &p1);
    getrusage(RUSAGE_CHILDREN, &c1);
    char msg[256];
    if (iteration_failed(s, rc, &out, msg, sizeof msg)) {
        pkb_skip_with_error(st, msg);
        t->failed = true;
        out = (pkb_sample){.self_timed = false}; /* one iteration, as the runner saw it */
    }
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (out.self_timed) { /* another process's own clock and CPU (plugin/sample.h) */
        secs = (double)out.wall_ns / 1e9;
        t->child_ns += (double)out.child_cpu_ns;
        t->self_ns += (double)out.self_cpu_ns;
        /* the performing process's CPU, which RUSAGE_CHILDREN here cannot see: the work's,
         * not "other processes'" (disturb.h) */
        mark->worker_ns += (double)(out.child_cpu_ns + out.self_cpu_ns);
        note_peaks(s, &out);
    } else {
        t->child_ns +=
            tv_ns(c1.ru_utime) - tv_ns(c0.ru_utime) + tv_ns(c1.ru_stime) - tv_ns(c0.ru_stime);
        t->self_ns +=
            tv_ns(p1.ru_utime) - tv_ns(p0.ru_utime) + tv_ns(p1.ru_stime) - tv_ns(p0.ru_stime);
    }
    /* A batch of k iterations is k of Google Benchmark's, each its share of the time. */
    uint32_t k = out.iterations > 0 ? out.iterations : 1;
    pkb_set_iteration_time(st, secs / k);
    for (uint32_t j = 1; j < k && pkb_keep_running(st); j++)
        pkb_set_iteration_time(st, secs / k);
    t->timed_s += secs;
    t->n += k;
}

void pkb__bench(pkb_state *st, void *user)
{
    pkb_series *s = user;
    if (pkb__progress.name != s->name) {
        pkb__progress.name = s->name;
        pkb__progress.index++;
        pkb__progress.series_start = pkb__now_s();
        if (pkb__progress.first_start == 0)
            pkb__progress.first_start = pkb__progress.series_start;
    }
    struct totals t = {0};
    char why[256];
    if (s->renewing && s->renew != NULL && s->renew(s->ctx, why, sizeof why) != 0) {
        pkb_skip_with_error(st, why); /* a new measuring process could not start */
        t.failed = true;
    } else if (s->settle_s > 0 && !settle(s, why, sizeof why)) {
        pkb_skip_with_error(st, why); /* the loop below then does not run */
        t.failed = true;
    }
    pkb_disturb_mark mark;
    pkb_disturb_begin(&mark);
    while (pkb_keep_running(st)) {
        if (pkb_interrupted) {
            pkb_skip_with_error(st, "interrupted");
            t.failed = true;
            continue;
        }
        timed_call(st, s, &mark, &t);
    }
    if (t.n > 0) {
        pkb_counter_set(st, "child_cpu_ns", t.child_ns, PKB_COUNTER_AVG_ITERATIONS);
        pkb_counter_set(st, "parent_cpu_ns", t.self_ns, PKB_COUNTER_AVG_ITERATIONS);
        pkb_counter_set(st, "throughput", s->work_per_iteration,
                        PKB_COUNTER_ITERATION_INVARIANT_RATE);
    }
    pkb_disturbance d;
    pkb_disturb_end(&mark, &d);
    record_call(s, &d);
    if (s->calibrating && !t.failed)
        pkb_calibration_add(&s->calib, t.n, t.timed_s, d.disturbed, pkb__progress.prof->min_time_s);
    show(pkb__progress.phase[0] != '\0' ? pkb__progress.phase
         : pkb__now_s() - pkb__progress.series_start < pkb__progress.prof->warmup_s ? "warm-up"
                                                                                    : "measuring");
}

/* ---- collecting runs ----------------------------------------------------------------------- */

static double to_ns(double v, const char *unit)
{
    if (strcmp(unit, "us") == 0)
        return v * 1e3;
    if (strcmp(unit, "ms") == 0)
        return v * 1e6;
    if (strcmp(unit, "s") == 0)
        return v * 1e9;
    return v;
}

static double counter(const pkb_run *run, const char *name)
{
    for (size_t i = 0; i < run->counter_count; i++)
        if (strcmp(run->counters[i].name, name) == 0)
            return run->counters[i].value;
    return NAN;
}

static int grow_samples(pkb_series *s, size_t need)
{
    size_t n = need;
#define PKB__GROW(field)                                                                           \
    do {                                                                                           \
        void *p = realloc(s->field, n * sizeof *s->field);                                         \
        if (p == NULL)                                                                             \
            return -ENOMEM;                                                                        \
        s->field = p;                                                                              \
    } while (0)
    PKB__GROW(samples_ns);
    PKB__GROW(child_cpu_ns);
    PKB__GROW(parent_cpu_ns);
    PKB__GROW(iterations);
    PKB__GROW(disturb);
    PKB__GROW(round);
#undef PKB__GROW
    return 0;
}

/* Rebuilds series[] and benchmarks[] from the finished series and writes the file. */
int pkb__write_doc(struct pkb__collect *c)
{
    json_t *series = json_array(), *benchmarks = json_array();
    int family = 0;
    for (size_t i = 0; series != NULL && benchmarks != NULL && i < c->n; i++) {
        pkb_series *s = &c->series[i];
        if (!s->done)
            continue;
        json_array_append_new(series, pkb_series_json(s));
        pkb_series_record rec = pkb__series_record(s);
        if (pkb_results_gb_records(&rec, family++, benchmarks) != 0) {
            json_decref(benchmarks);
            benchmarks = NULL;
        }
    }
    int rc = pkb_results_write(c->doc, series, benchmarks, c->opts->out_path);
    if (rc != 0 && c->write_error == 0) {
        fprintf(stderr, "\npkbench: cannot write %s: %s\n", c->opts->out_path, strerror(-rc));
        c->write_error = rc;
    }
    return rc;
}

/* Appends one repetition's sample; returns its index, or -1 when out of memory. */
long pkb__append_sample(pkb_series *s, const pkb_run *run)
{
    if (grow_samples(s, s->nreps + 1) != 0)
        return -1;
    size_t k = s->nreps++;
    s->samples_ns[k] = to_ns(run->real_time, run->time_unit);
    s->child_cpu_ns[k] = counter(run, "child_cpu_ns");
    s->parent_cpu_ns[k] = counter(run, "parent_cpu_ns");
    s->iterations[k] = run->iterations;
    s->round[k] = 0; /* rounds mode sets it (rounds.c) */
    return (long)k;
}

static pkb_series *find_series(struct pkb__collect *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->series[i].name, name) == 0)
            return &c->series[i];
    return NULL;
}

void pkb__finish_series(struct pkb__collect *c, pkb_series *s)
{
    /* The last nreps calls of the benchmark function were the repetitions. */
    for (size_t i = 0; i < s->nreps; i++) {
        size_t call = s->ncalls >= s->nreps ? s->ncalls - s->nreps + i : 0;
        s->disturb[i] =
            call < s->ncalls
                ? s->calls[call]
                : (pkb_disturbance){
                      .procs_running = -1, .others_cpu = NAN, .steal = NAN, .migrations = -1};
    }
    if (s->status == PKB_SERIES_PENDING)
        s->status = PKB_SERIES_MEASURED;
    s->done = true;
    if (s->remeasuring) /* a second attempt is written once it is settled (remeasure.c) */
        return;
    pkb__write_doc(c);
    pkb__show_finished(c, false, true);
}

/* Google Benchmark's context block, in its JSON reporter's order, with its date (local time)
 * and its integer mhz_per_cpu. The first context of a run is kept: the one at its start. */
int pkb__on_context(const pkb_context *ctx, void *user)
{
    struct pkb__collect *c = user;
    if (json_object_size(json_object_get(c->doc, "context")) > 0)
        return 0;
    json_t *load = json_array(), *caches = json_array();
    for (size_t i = 0; i < ctx->load_avg_count; i++)
        json_array_append_new(load, json_real(ctx->load_avg[i]));
    for (size_t i = 0; i < ctx->cache_count; i++)
        json_array_append_new(caches, json_pack("{s:s, s:i, s:I, s:i}", "type", ctx->caches[i].type,
                                                "level", ctx->caches[i].level, "size",
                                                (json_int_t)ctx->caches[i].size, "num_sharing",
                                                ctx->caches[i].num_sharing));
    char date[64];
    pkb_results_gb_date(date, sizeof date);
    json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:I}", "date", date, "host_name", ctx->host_name,
                          "executable", ctx->executable, "num_cpus", ctx->num_cpus, "mhz_per_cpu",
                          (json_int_t)llround(ctx->mhz_per_cpu));
    if (o != NULL && ctx->cpu_scaling != PKB_CPU_SCALING_UNKNOWN)
        json_object_set_new(o, "cpu_scaling_enabled",
                            json_boolean(ctx->cpu_scaling == PKB_CPU_SCALING_ENABLED));
    json_object_set_new(o, "caches", caches);
    json_object_set_new(o, "load_avg", load);
    json_object_set_new(o, "library_build_type", json_string(ctx->library_build_type));
    json_object_set_new(c->doc, "context", o != NULL ? o : json_object());
    return 0;
}

int pkb__on_run(const pkb_run *run, void *user)
{
    struct pkb__collect *c = user;
    pkb_series *s = find_series(c, run->function_name);
    if (s == NULL || s->done)
        return pkb_interrupted ? 1 : 0;
    if (run->error_occurred && pkb_interrupted)
        return 1; /* an interrupted series is dropped, not recorded as failed */
    if (run->run_type == PKB_RUN_ITERATION) {
        if (run->error_occurred) {
            if (s->status != PKB_SERIES_FAILED)
                snprintf(s->reason, sizeof s->reason, "%s", run->error_message);
            s->status = PKB_SERIES_FAILED;
        } else {
            pkb__append_sample(s, run);
        }
        /* A failed series reports no aggregates: it is finished at its last repetition. */
        if (run->repetition_index == run->repetitions - 1 &&
            (run->repetitions == 1 || s->status == PKB_SERIES_FAILED))
            pkb__finish_series(c, s);
    } else if (strcmp(run->aggregate_name, "cv") == 0) {
        pkb__finish_series(c, s);
    }
    return pkb_interrupted ? 1 : 0;
}
