/*
 * pkb_shim, the C API over Google Benchmark 1.7.1: what a run delivers (repetitions, aggregates,
 * manual time, counters, labels, errors, context), selection (filter, clearing), the user pointer,
 * and that every misuse GB would abort or exit on comes back as an error instead. Benchmarks here
 * use fixed iteration counts or min_time 0.01 s, and no test asserts a timing beyond sanity.
 * Without PK_BUILD_BENCH the shim is not built and these tests skip.
 */
#define _GNU_SOURCE
#include "test.h"

#ifdef PK_HAVE_SHIM

#include "run/shim/pkb_shim.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- collecting runs ------------------------------------------------------------------------ */

#define MAX_RUNS     32
#define MAX_COUNTERS 8

/* A copy of a pkb_run: its strings live only during the callback. */
struct got_run {
    char name[160], run_name[160], function_name[64], aggregate_name[16], aggregate_unit[16];
    char time_unit[4], label[64], error_message[160];
    pkb_run_type run_type;
    int64_t family_index, repetitions, repetition_index, iterations, threads;
    double real_time, cpu_time;
    bool error_occurred;
    size_t counter_count;
    char counter_name[MAX_COUNTERS][32];
    double counter_value[MAX_COUNTERS];
};

struct got {
    struct got_run runs[MAX_RUNS];
    size_t n;
    int contexts;           /* on_context calls */
    size_t runs_at_context; /* runs delivered before on_context */
    char executable[256], build_type[16], host_name[256];
    int num_cpus;
    size_t load_avg_count, cache_count;
    bool caches_valid;
    int stop_after; /* on_run returns stop_with once this many runs arrived (0: never) */
    int stop_with;
    int context_rc; /* on_context returns this */
};

#define COPY(dst, src) snprintf((dst), sizeof(dst), "%s", (src))

static int collect_run(const pkb_run *r, void *user)
{
    struct got *g = user;
    if (g->n == MAX_RUNS)
        pk_test_fail(__FILE__, __LINE__, "more than %d runs", MAX_RUNS);
    struct got_run *c = &g->runs[g->n++];
    COPY(c->name, r->name);
    COPY(c->run_name, r->run_name);
    COPY(c->function_name, r->function_name);
    COPY(c->aggregate_name, r->aggregate_name);
    COPY(c->aggregate_unit, r->aggregate_unit);
    COPY(c->time_unit, r->time_unit);
    COPY(c->label, r->label);
    COPY(c->error_message, r->error_message);
    c->run_type = r->run_type;
    c->family_index = r->family_index;
    c->repetitions = r->repetitions;
    c->repetition_index = r->repetition_index;
    c->iterations = r->iterations;
    c->threads = r->threads;
    c->real_time = r->real_time;
    c->cpu_time = r->cpu_time;
    c->error_occurred = r->error_occurred;
    c->counter_count = r->counter_count;
    for (size_t i = 0; i < r->counter_count && i < MAX_COUNTERS; i++) {
        COPY(c->counter_name[i], r->counters[i].name);
        c->counter_value[i] = r->counters[i].value;
    }
    if (g->stop_after > 0 && g->n >= (size_t)g->stop_after)
        return g->stop_with;
    return 0;
}

static int collect_context(const pkb_context *ctx, void *user)
{
    struct got *g = user;
    g->contexts++;
    g->runs_at_context = g->n;
    COPY(g->executable, ctx->executable);
    COPY(g->build_type, ctx->library_build_type);
    COPY(g->host_name, ctx->host_name);
    g->num_cpus = ctx->num_cpus;
    g->load_avg_count = ctx->load_avg_count;
    g->cache_count = ctx->cache_count;
    g->caches_valid = true;
    for (size_t i = 0; i < ctx->cache_count; i++)
        if (ctx->caches[i].type == NULL || ctx->caches[i].level < 1 || ctx->caches[i].size <= 0)
            g->caches_valid = false;
    return g->context_rc;
}

/* Runs the registered benchmarks into a fresh *g; returns pkb_run_benchmarks's result. */
static int run_into(struct got *g, const char *filter, size_t *matched)
{
    int stop_after = g->stop_after, stop_with = g->stop_with, context_rc = g->context_rc;
    memset(g, 0, sizeof *g);
    g->stop_after = stop_after;
    g->stop_with = stop_with;
    g->context_rc = context_rc;
    return pkb_run_benchmarks(
        &(pkb_run_options){
            .filter = filter, .on_context = collect_context, .on_run = collect_run, .user = g},
        matched);
}

static double counter(const struct got_run *r, const char *name)
{
    for (size_t i = 0; i < r->counter_count && i < MAX_COUNTERS; i++)
        if (strcmp(r->counter_name[i], name) == 0)
            return r->counter_value[i];
    pk_test_fail(__FILE__, __LINE__, "run %s has no counter '%s'", r->name, name);
}

#define ASSERT_NEAR(a, b, rel)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (rel)*fabs(b_)))                                                    \
            pk_test_fail(__FILE__, __LINE__, "%s ~= %s: %.17g vs %.17g", #a, #b, a_, b_);          \
    } while (0)

#define ASSERT_HAS(haystack, needle)                                                               \
    do {                                                                                           \
        if (strstr((haystack), (needle)) == NULL)                                                  \
            pk_test_fail(__FILE__, __LINE__, "'%s' not in '%s'", (needle), (haystack));            \
    } while (0)

/* ---- benchmark functions -------------------------------------------------------------------- */

static void bm_empty(pkb_state *st, void *user)
{
    (void)user;
    while (pkb_keep_running(st))
        ;
}

/* Counts its calls in *(int *)user and checks pkb_user agrees. */
static void bm_count(pkb_state *st, void *user)
{
    ++*(int *)user;
    if (pkb_user(st) != user)
        pkb_skip_with_error(st, "pkb_user differs from the user argument");
    while (pkb_keep_running(st))
        ;
}

/* Each iteration "takes" *(double *)user seconds. */
static void bm_manual(pkb_state *st, void *user)
{
    while (pkb_keep_running(st))
        pkb_set_iteration_time(st, *(double *)user);
}

static void bm_counters(pkb_state *st, void *user)
{
    (void)user;
    while (pkb_keep_running(st))
        pkb_set_iteration_time(st, 0.001);
    int64_t n = pkb_iterations(st);
    if (n != pkb_max_iterations(st))
        pkb_skip_with_error(st, "iterations != max_iterations after the loop");
    pkb_counter_set(st, "plain", 7, PKB_COUNTER_PLAIN);
    pkb_counter_set(st, "avg", 2.0 * (double)n, PKB_COUNTER_AVG_ITERATIONS);
    pkb_counter_set(st, "rate", 5, PKB_COUNTER_RATE);
    pkb_counter_set(st, "per_second", 1, PKB_COUNTER_ITERATION_INVARIANT_RATE);
    pkb_counter_set(st, "kibi", 3, PKB_COUNTER_1024);
    pkb_counter_set(st, "inverted", 5, PKB_COUNTER_RATE | PKB_COUNTER_INVERT);
    pkb_counter_set(st, "replaced", 1, PKB_COUNTER_PLAIN);
    pkb_counter_set(st, "replaced", 2, PKB_COUNTER_PLAIN);
}

static void bm_label(pkb_state *st, void *user)
{
    (void)user;
    while (pkb_keep_running(st))
        ;
    pkb_set_label(st, "first");
    pkb_set_label(st, "fork+exec");
}

static void bm_error(pkb_state *st, void *user)
{
    ++*(int *)user;
    pkb_skip_with_error(st, "boom");
    pkb_skip_with_error(st, "second message loses");
    while (pkb_keep_running(st))
        pk_test_fail(__FILE__, __LINE__, "the loop ran after pkb_skip_with_error");
}

/* ---- tests ---------------------------------------------------------------------------------- */

TEST_IMPL(shim_repetitions_and_aggregates)
{
    ASSERT_OK(pkb_register(
        &(pkb_def){.name = "empty", .fn = bm_empty, .repetitions = 3, .min_time = 0.01}));
    static struct got g;
    size_t matched = 99;
    ASSERT_OK(run_into(&g, NULL, &matched));
    ASSERT_EQ(matched, 1);
    ASSERT_EQ(g.n, 7);

    const char *base = "empty/min_time:0.010/repeats:3/real_time";
    for (int i = 0; i < 3; i++) {
        const struct got_run *r = &g.runs[i];
        ASSERT_EQ(r->run_type, PKB_RUN_ITERATION);
        ASSERT_STR_EQ(r->name, base);
        ASSERT_STR_EQ(r->run_name, base);
        ASSERT_STR_EQ(r->function_name, "empty");
        ASSERT_STR_EQ(r->aggregate_name, "");
        ASSERT_STR_EQ(r->aggregate_unit, "");
        ASSERT_EQ(r->repetitions, 3);
        ASSERT_EQ(r->repetition_index, i);
        ASSERT_EQ(r->threads, 1);
        ASSERT_GT(r->iterations, 0);
        /* GB sizes the iteration count on the first repetition and reuses it. */
        ASSERT_EQ(r->iterations, g.runs[0].iterations);
        ASSERT(r->real_time > 0 && r->cpu_time >= 0);
        ASSERT_STR_EQ(r->time_unit, "ns");
        ASSERT(!r->error_occurred);
        ASSERT_STR_EQ(r->label, "");
    }
    static const char *const aggregates[] = {"mean", "median", "stddev", "cv"};
    for (int i = 0; i < 4; i++) {
        const struct got_run *r = &g.runs[3 + i];
        char name[200];
        snprintf(name, sizeof name, "%s_%s", base, aggregates[i]);
        ASSERT_EQ(r->run_type, PKB_RUN_AGGREGATE);
        ASSERT_STR_EQ(r->name, name);
        ASSERT_STR_EQ(r->run_name, base);
        ASSERT_STR_EQ(r->aggregate_name, aggregates[i]);
        ASSERT_STR_EQ(r->aggregate_unit, i == 3 ? "percentage" : "time");
        ASSERT_EQ(r->repetition_index, -1);
        ASSERT_EQ(r->repetitions, 3);
        ASSERT_EQ(r->iterations, 3); /* GB: the number of repetitions aggregated */
    }
    /* The statistics are over the three repetitions' per-iteration times. */
    double t[3] = {g.runs[0].real_time, g.runs[1].real_time, g.runs[2].real_time};
    double mean = (t[0] + t[1] + t[2]) / 3;
    double lo = fmin(t[0], fmin(t[1], t[2])), hi = fmax(t[0], fmax(t[1], t[2]));
    double median = t[0] + t[1] + t[2] - lo - hi;
    double var = ((t[0] - mean) * (t[0] - mean) + (t[1] - mean) * (t[1] - mean) +
                  (t[2] - mean) * (t[2] - mean)) /
                 2;
    ASSERT_NEAR(g.runs[3].real_time, mean, 1e-9);
    ASSERT_NEAR(g.runs[4].real_time, median, 1e-9);
    ASSERT_NEAR(g.runs[5].real_time, sqrt(var), 1e-6);
    /* cv is the fraction stddev/mean, not a time. */
    ASSERT_NEAR(g.runs[6].real_time, sqrt(var) / mean, 1e-6);
    ASSERT_STR_EQ(pkb_run_type_name(PKB_RUN_ITERATION), "iteration");
    ASSERT_STR_EQ(pkb_run_type_name(PKB_RUN_AGGREGATE), "aggregate");
}

TEST_IMPL(shim_manual_time)
{
    static double ms = 0.001, two_ms = 0.002;
    ASSERT_OK(pkb_register(&(pkb_def){.name = "manual",
                                      .fn = bm_manual,
                                      .user = &ms,
                                      .time_mode = PKB_TIME_MANUAL,
                                      .iterations = 10}));
    ASSERT_OK(pkb_register(&(pkb_def){.name = "manual_us",
                                      .fn = bm_manual,
                                      .user = &two_ms,
                                      .time_mode = PKB_TIME_MANUAL,
                                      .unit = PKB_UNIT_US,
                                      .iterations = 4}));
    static struct got g;
    ASSERT_OK(run_into(&g, NULL, NULL));
    ASSERT_EQ(g.n, 2);
    ASSERT_STR_EQ(g.runs[0].name, "manual/iterations:10/manual_time");
    ASSERT_EQ(g.runs[0].iterations, 10);
    ASSERT_STR_EQ(g.runs[0].time_unit, "ns");
    ASSERT_NEAR(g.runs[0].real_time, 1e6, 1e-9);
    ASSERT_STR_EQ(g.runs[1].name, "manual_us/iterations:4/manual_time");
    ASSERT_STR_EQ(g.runs[1].time_unit, "us");
    ASSERT_NEAR(g.runs[1].real_time, 2000, 1e-9);
    /* CPU time is still measured, and a little was spent. */
    ASSERT(g.runs[0].cpu_time >= 0 && g.runs[0].cpu_time < 1e6);
}

TEST_IMPL(shim_counters)
{
    /* 10 iterations of 1 ms manual time: the run's time is exactly 0.01 s. */
    ASSERT_OK(pkb_register(&(pkb_def){
        .name = "counters", .fn = bm_counters, .time_mode = PKB_TIME_MANUAL, .iterations = 10}));
    static struct got g;
    ASSERT_OK(run_into(&g, NULL, NULL));
    ASSERT_EQ(g.n, 1);
    const struct got_run *r = &g.runs[0];
    ASSERT(!r->error_occurred);
    ASSERT_EQ(r->counter_count, 7);
    ASSERT_STR_EQ(r->counter_name[0], "avg"); /* sorted by name */
    ASSERT_NEAR(counter(r, "plain"), 7, 1e-12);
    ASSERT_NEAR(counter(r, "avg"), 2, 1e-12);          /* 2n / n */
    ASSERT_NEAR(counter(r, "rate"), 500, 1e-9);        /* 5 / 0.01 s */
    ASSERT_NEAR(counter(r, "per_second"), 1000, 1e-9); /* 1 x 10 / 0.01 s */
    ASSERT_NEAR(counter(r, "kibi"), 3, 1e-12);         /* display only */
    ASSERT_NEAR(counter(r, "inverted"), 0.002, 1e-9);  /* 1 / (5 / 0.01 s) */
    ASSERT_NEAR(counter(r, "replaced"), 2, 1e-12);
}

TEST_IMPL(shim_label_and_error)
{
    static int error_calls;
    ASSERT_OK(pkb_register(&(pkb_def){.name = "label", .fn = bm_label, .iterations = 2}));
    ASSERT_OK(pkb_register(
        &(pkb_def){.name = "error", .fn = bm_error, .user = &error_calls, .repetitions = 3}));
    static struct got g;
    ASSERT_OK(run_into(&g, NULL, NULL));
    /* label: 1 run; error: 3 error runs and no aggregates (GB needs 2 good repetitions). */
    ASSERT_EQ(g.n, 4);
    ASSERT_STR_EQ(g.runs[0].label, "fork+exec");
    ASSERT(!g.runs[0].error_occurred);
    ASSERT_STR_EQ(g.runs[0].error_message, "");
    for (int i = 1; i < 4; i++) {
        ASSERT_EQ(g.runs[i].run_type, PKB_RUN_ITERATION);
        ASSERT_STR_EQ(g.runs[i].function_name, "error");
        ASSERT(g.runs[i].error_occurred);
        ASSERT_STR_EQ(g.runs[i].error_message, "boom");
        ASSERT_EQ(g.runs[i].repetition_index, i - 1);
    }
    ASSERT_EQ(error_calls, 3); /* one call per repetition: an error stops the growth */
}

TEST_IMPL(shim_filter)
{
    ASSERT_OK(pkb_register(&(pkb_def){.name = "alpha", .fn = bm_empty, .iterations = 1}));
    ASSERT_OK(pkb_register(&(pkb_def){.name = "beta", .fn = bm_empty, .iterations = 1}));
    ASSERT_OK(pkb_register(&(pkb_def){.name = "alphabet", .fn = bm_empty, .iterations = 1}));
    static struct got g;
    size_t matched;

    ASSERT_OK(run_into(&g, "^alpha", &matched));
    ASSERT_EQ(matched, 2);
    ASSERT_EQ(g.n, 2);
    ASSERT_STR_EQ(g.runs[0].function_name, "alpha");
    ASSERT_STR_EQ(g.runs[1].function_name, "alphabet");
    ASSERT_EQ(g.runs[1].family_index, 1); /* counted among the matches only */

    /* The filter sees the full run name, option suffixes included. */
    ASSERT_OK(run_into(&g, "^alpha/iterations:1/real_time$", &matched));
    ASSERT_EQ(matched, 1);
    ASSERT_STR_EQ(g.runs[0].function_name, "alpha");

    ASSERT_OK(run_into(&g, "-^alpha", &matched)); /* GB's negation */
    ASSERT_EQ(matched, 1);
    ASSERT_STR_EQ(g.runs[0].function_name, "beta");

    ASSERT_OK(run_into(&g, "^gamma", &matched)); /* nothing matching is not an error */
    ASSERT_EQ(matched, 0);
    ASSERT_EQ(g.n, 0);
    ASSERT_EQ(g.contexts, 0);

    ASSERT_EQ(run_into(&g, "alpha(", &matched), -EINVAL);
    ASSERT_EQ(matched, 0);
    ASSERT_EQ(g.n, 0);

    ASSERT_OK(run_into(&g, "", &matched));
    ASSERT_EQ(matched, 3);
    ASSERT_OK(run_into(&g, "all", &matched));
    ASSERT_EQ(matched, 3);
    ASSERT_OK(run_into(&g, NULL, &matched));
    ASSERT_EQ(matched, 3);
    ASSERT_EQ(g.n, 3);
}

TEST_IMPL(shim_user_data)
{
    static int a, b;
    ASSERT_OK(pkb_register(&(pkb_def){.name = "a", .fn = bm_count, .user = &a, .iterations = 5}));
    ASSERT_OK(pkb_register(
        &(pkb_def){.name = "b", .fn = bm_count, .user = &b, .iterations = 5, .repetitions = 2}));
    static struct got g;
    ASSERT_OK(run_into(&g, NULL, NULL));
    ASSERT_EQ(a, 1);
    ASSERT_EQ(b, 2);
    for (size_t i = 0; i < g.n; i++)
        ASSERT(!g.runs[i].error_occurred); /* pkb_user agreed with the argument */
}

TEST_IMPL(shim_clear)
{
    static int first, second;
    ASSERT_OK(
        pkb_register(&(pkb_def){.name = "first", .fn = bm_count, .user = &first, .iterations = 1}));
    ASSERT_OK(pkb_clear());
    static struct got g;
    size_t matched = 99;
    ASSERT_OK(run_into(&g, NULL, &matched));
    ASSERT_EQ(matched, 0);
    ASSERT_EQ(g.n, 0);
    ASSERT_EQ(first, 0);

    ASSERT_OK(pkb_clear()); /* clearing nothing is fine */
    ASSERT_OK(pkb_register(
        &(pkb_def){.name = "second", .fn = bm_count, .user = &second, .iterations = 1}));
    ASSERT_OK(run_into(&g, NULL, &matched));
    ASSERT_EQ(matched, 1);
    ASSERT_EQ(g.n, 1);
    ASSERT_STR_EQ(g.runs[0].function_name, "second");
    ASSERT_EQ(first, 0);
    ASSERT_EQ(second, 1);
    /* A second suite in the same process, after the first ran. */
    ASSERT_OK(pkb_clear());
    ASSERT_OK(
        pkb_register(&(pkb_def){.name = "first", .fn = bm_count, .user = &first, .iterations = 1}));
    ASSERT_OK(run_into(&g, NULL, &matched));
    ASSERT_EQ(matched, 1);
    ASSERT_EQ(first, 1);
    ASSERT_EQ(second, 1);
}

TEST_IMPL(shim_context)
{
    ASSERT_OK(pkb_register(&(pkb_def){.name = "x", .fn = bm_empty, .iterations = 1}));
    static struct got g;
    ASSERT_OK(run_into(&g, NULL, NULL));
    ASSERT_EQ(g.contexts, 1);
    ASSERT_EQ(g.runs_at_context, 0); /* before the first run */
    ASSERT_EQ(g.n, 1);
    ASSERT_GE(g.num_cpus, 1);
    ASSERT_EQ(g.load_avg_count, 3);
    ASSERT(g.caches_valid);
    ASSERT(strcmp(g.build_type, "release") == 0 || strcmp(g.build_type, "debug") == 0);
    ASSERT(g.host_name[0] != '\0');
    /* Nobody called pkb_init: the program's own name. */
    ASSERT_STR_EQ(g.executable, program_invocation_name);
}

TEST_IMPL(shim_definition_checks)
{
    const pkb_def ok = {.name = "ok", .fn = bm_empty, .iterations = 1};
    pkb_def d;
    ASSERT_EQ(pkb_register(NULL), -EINVAL);
#define BAD(field, value)                                                                          \
    do {                                                                                           \
        d = ok;                                                                                    \
        d.field = value;                                                                           \
        ASSERT_EQ(pkb_register(&d), -EINVAL);                                                      \
    } while (0)
    BAD(name, NULL);
    BAD(name, "");
    BAD(fn, NULL);
    BAD(repetitions, -1);
    BAD(iterations, -1);
    BAD(time_mode, (pkb_time_mode)7);
    BAD(unit, (pkb_time_unit)9);
    /* GB aborts on these combinations. */
    BAD(min_time, 0.01);
    BAD(min_warmup_time, 0.01);
    d = ok;
    d.iterations = 0;
    d.min_time = -1;
    ASSERT_EQ(pkb_register(&d), -EINVAL);
    d.min_time = NAN;
    ASSERT_EQ(pkb_register(&d), -EINVAL);
    d.min_time = INFINITY;
    ASSERT_EQ(pkb_register(&d), -EINVAL);
    d.min_time = 0.01;
    d.min_warmup_time = -0.5;
    ASSERT_EQ(pkb_register(&d), -EINVAL);
#undef BAD
    static struct got g;
    size_t matched = 99;
    ASSERT_OK(run_into(&g, NULL, &matched));
    ASSERT_EQ(matched, 0); /* nothing rejected was registered */
}

TEST_IMPL(shim_time_modes_and_names)
{
    /* Zero is real time: GB's CPU-time default would miss children and waiting. */
    ASSERT_OK(pkb_register(&(pkb_def){.name = "zero", .fn = bm_empty, .iterations = 2}));
    ASSERT_OK(pkb_register(
        &(pkb_def){.name = "cpu", .fn = bm_empty, .time_mode = PKB_TIME_CPU, .iterations = 2}));
    ASSERT_OK(pkb_register(
        &(pkb_def){.name = "proc", .fn = bm_empty, .iterations = 2, .process_cpu = true}));
    ASSERT_OK(pkb_register(&(pkb_def){.name = "warm",
                                      .fn = bm_empty,
                                      .unit = PKB_UNIT_MS,
                                      .min_warmup_time = 0.01,
                                      .min_time = 0.01}));
    static struct got g;
    ASSERT_OK(run_into(&g, NULL, NULL));
    ASSERT_EQ(g.n, 4);
    ASSERT_STR_EQ(g.runs[0].name, "zero/iterations:2/real_time");
    ASSERT_STR_EQ(g.runs[1].name, "cpu/iterations:2");
    ASSERT_STR_EQ(g.runs[2].name, "proc/iterations:2/process_time/real_time");
    ASSERT_STR_EQ(g.runs[3].name, "warm/min_time:0.010/min_warmup_time:0.010/real_time");
    ASSERT_STR_EQ(g.runs[3].time_unit, "ms");
    for (int i = 0; i < 4; i++)
        ASSERT(!g.runs[i].error_occurred);
}

/* ---- misuse: GB aborts, the shim reports --------------------------------------------------- */

struct misuse {
    int pause, pause_again, resume, resume_again;             /* pause_twice */
    int after_loop_more, after_loop_pause, after_loop_resume; /* after_loop */
    int skip_then_pause, paused_skip_then_resume;
    int bad_time, nan_time, null_name, empty_name, bad_flag, null_label, null_message;
};

static void bm_early_return(pkb_state *st, void *user)
{
    (void)st;
    (void)user;
}

static void bm_pause_twice(pkb_state *st, void *user)
{
    struct misuse *m = user;
    while (pkb_keep_running(st)) {
        m->pause = pkb_pause_timing(st);
        m->pause_again = pkb_pause_timing(st);
        m->resume = pkb_resume_timing(st);
        m->resume_again = pkb_resume_timing(st);
    }
}

static void bm_ends_paused(pkb_state *st, void *user)
{
    (void)user;
    while (pkb_keep_running(st))
        pkb_pause_timing(st);
}

static void bm_after_loop(pkb_state *st, void *user)
{
    struct misuse *m = user;
    while (pkb_keep_running(st))
        ;
    m->after_loop_more = pkb_keep_running(st);
    m->after_loop_pause = pkb_pause_timing(st);
    m->after_loop_resume = pkb_resume_timing(st);
}

static void bm_skip_then_pause(pkb_state *st, void *user)
{
    struct misuse *m = user;
    while (pkb_keep_running(st)) {
        pkb_skip_with_error(st, "stop");
        m->skip_then_pause = pkb_pause_timing(st);
    }
}

static void bm_paused_skip_then_resume(pkb_state *st, void *user)
{
    struct misuse *m = user;
    while (pkb_keep_running(st)) {
        pkb_pause_timing(st);
        pkb_skip_with_error(st, "stop while paused");
        m->paused_skip_then_resume = pkb_resume_timing(st);
    }
}

static void bm_bad_arguments(pkb_state *st, void *user)
{
    struct misuse *m = user;
    while (pkb_keep_running(st)) {
        m->bad_time = pkb_set_iteration_time(st, -1);
        m->nan_time = pkb_set_iteration_time(st, NAN);
    }
    m->null_name = pkb_counter_set(st, NULL, 1, 0);
    m->empty_name = pkb_counter_set(st, "", 1, 0);
    m->bad_flag = pkb_counter_set(st, "x", 1, 1u << 20);
    m->null_label = pkb_set_label(st, NULL);
    m->null_message = pkb_skip_with_error(st, NULL);
}

TEST_IMPL(shim_misuse_is_an_error_not_an_abort)
{
    static struct misuse m;
    static const struct {
        const char *name;
        pkb_fn *fn;
        const char *error; /* NULL: no error run */
    } cases[] = {
        {"early_return", bm_early_return, "returned before pkb_keep_running() returned false"},
        {"pause_twice", bm_pause_twice, NULL},
        {"ends_paused", bm_ends_paused, "called while timing was paused"},
        {"after_loop", bm_after_loop, NULL},
        {"skip_then_pause", bm_skip_then_pause, "stop"},
        {"paused_skip_then_resume", bm_paused_skip_then_resume, "stop while paused"},
        {"bad_arguments", bm_bad_arguments, NULL},
    };
    size_t ncases = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < ncases; i++)
        ASSERT_OK(pkb_register(
            &(pkb_def){.name = cases[i].name, .fn = cases[i].fn, .user = &m, .iterations = 3}));
    static struct got g;
    ASSERT_OK(run_into(&g, NULL, NULL));
    ASSERT_EQ(g.n, ncases);
    for (size_t i = 0; i < ncases; i++) {
        ASSERT_STR_EQ(g.runs[i].function_name, cases[i].name);
        ASSERT_EQ(g.runs[i].error_occurred, cases[i].error != NULL);
        if (cases[i].error != NULL)
            ASSERT_HAS(g.runs[i].error_message, cases[i].error);
    }
    ASSERT_EQ(m.pause, 0);
    ASSERT_EQ(m.pause_again, -EINVAL);
    ASSERT_EQ(m.resume, 0);
    ASSERT_EQ(m.resume_again, -EINVAL);
    ASSERT_EQ(m.after_loop_more, false);
    ASSERT_EQ(m.after_loop_pause, -EINVAL);
    ASSERT_EQ(m.after_loop_resume, -EINVAL);
    ASSERT_EQ(m.skip_then_pause, -ECANCELED);
    ASSERT_EQ(m.paused_skip_then_resume, -ECANCELED);
    ASSERT_EQ(m.bad_time, -EINVAL);
    ASSERT_EQ(m.nan_time, -EINVAL);
    ASSERT_EQ(m.null_name, -EINVAL);
    ASSERT_EQ(m.empty_name, -EINVAL);
    ASSERT_EQ(m.bad_flag, -EINVAL);
    ASSERT_EQ(m.null_label, -EINVAL);
    ASSERT_EQ(m.null_message, -EINVAL);
}

/* In shim_throw.cc: C++ benchmark functions that throw. */
void pk_test_shim_throw_std(pkb_state *st, void *user);
void pk_test_shim_throw_int(pkb_state *st, void *user);

TEST_IMPL(shim_exception_becomes_error_run)
{
    static int after;
    ASSERT_OK(pkb_register(&(pkb_def){
        .name = "throw_std", .fn = pk_test_shim_throw_std, .iterations = 5, .repetitions = 2}));
    ASSERT_OK(pkb_register(
        &(pkb_def){.name = "throw_int", .fn = pk_test_shim_throw_int, .iterations = 1}));
    ASSERT_OK(
        pkb_register(&(pkb_def){.name = "after", .fn = bm_count, .user = &after, .iterations = 1}));
    static struct got g;
    ASSERT_OK(run_into(&g, NULL, NULL));
    ASSERT_EQ(g.n, 4); /* two error repetitions (no aggregates), one error run, one good run */
    for (int i = 0; i < 2; i++) {
        ASSERT_STR_EQ(g.runs[i].function_name, "throw_std");
        ASSERT(g.runs[i].error_occurred);
        ASSERT_STR_EQ(g.runs[i].error_message, "benchmark function threw: boom");
    }
    ASSERT(g.runs[2].error_occurred);
    ASSERT_STR_EQ(g.runs[2].error_message,
                  "benchmark function threw: an exception not derived from std::exception");
    ASSERT_STR_EQ(g.runs[3].function_name, "after");
    ASSERT(!g.runs[3].error_occurred);
    ASSERT_EQ(after, 1);
}

/* ---- callbacks that stop the run ------------------------------------------------------------ */

TEST_IMPL(shim_callback_stops_run)
{
    static int a, b, c;
    ASSERT_OK(pkb_register(&(pkb_def){.name = "a", .fn = bm_count, .user = &a, .iterations = 1}));
    ASSERT_OK(pkb_register(&(pkb_def){.name = "b", .fn = bm_count, .user = &b, .iterations = 1}));
    ASSERT_OK(pkb_register(&(pkb_def){.name = "c", .fn = bm_count, .user = &c, .iterations = 1}));
    static struct got g;

    g.stop_after = 1;
    g.stop_with = -ENOSPC;
    size_t matched;
    ASSERT_EQ(run_into(&g, NULL, &matched), -ENOSPC);
    ASSERT_EQ(matched, 3);
    ASSERT_EQ(g.n, 1); /* nothing delivered after the stop */
    ASSERT_EQ(a, 1);
    ASSERT_EQ(b, 0); /* ... and no benchmark function called */
    ASSERT_EQ(c, 0);

    g.stop_with = 1; /* positive: -ECANCELED */
    ASSERT_EQ(run_into(&g, NULL, NULL), -ECANCELED);
    ASSERT_EQ(a, 2);
    ASSERT_EQ(b, 0);

    g.stop_after = 0;
    g.context_rc = -EPERM;
    ASSERT_EQ(run_into(&g, NULL, NULL), -EPERM);
    ASSERT_EQ(g.contexts, 1);
    ASSERT_EQ(g.n, 0);
    ASSERT_EQ(a, 2);

    /* The next run is unaffected. */
    g.context_rc = 0;
    ASSERT_OK(run_into(&g, NULL, NULL));
    ASSERT_EQ(g.n, 3);
    ASSERT_EQ(a + b + c, 5);
}

/* ---- re-entry from inside a benchmark ------------------------------------------------------- */

struct reentry {
    int run, reg, clear, init;
};

static void bm_reenter(pkb_state *st, void *user)
{
    struct reentry *r = user;
    r->run = pkb_run_benchmarks(NULL, NULL);
    r->reg = pkb_register(&(pkb_def){.name = "inner", .fn = bm_empty});
    r->clear = pkb_clear();
    r->init = pkb_init(NULL, NULL);
    while (pkb_keep_running(st))
        ;
}

TEST_IMPL(shim_reentry_is_busy)
{
    static struct reentry r;
    ASSERT_OK(
        pkb_register(&(pkb_def){.name = "reenter", .fn = bm_reenter, .user = &r, .iterations = 1}));
    static struct got g;
    size_t matched;
    ASSERT_OK(run_into(&g, NULL, &matched));
    ASSERT_EQ(matched, 1);
    ASSERT_EQ(g.n, 1);
    ASSERT(!g.runs[0].error_occurred);
    ASSERT_EQ(r.run, -EBUSY);
    ASSERT_EQ(r.reg, -EBUSY);
    ASSERT_EQ(r.clear, -EBUSY);
    ASSERT_EQ(r.init, -EBUSY);
}

/* ---- initialization ------------------------------------------------------------------------- */

/* GB's flag parser ends the process with exit(0), which the runner would count as a pass: an exit
 * before the test's end must fail it. */
static bool init_test_done;

static void fail_on_early_exit(void)
{
    if (!init_test_done) {
        fprintf(stderr, "the process exited before the test ended (GB's usage exit?)\n");
        _exit(1);
    }
}

TEST_IMPL(shim_init_flags)
{
    atexit(fail_on_early_exit);
    /* Each of these would make GB print its usage and exit(0) the whole process. */
    static const char *const exits[] = {"--help",
                                        "--help=1",
                                        "--benchmark_format=xml",
                                        "--benchmark_out_format=yaml",
                                        "--benchmark_time_unit=ks",
                                        "--benchmark_color="};
    for (size_t i = 0; i < sizeof exits / sizeof exits[0]; i++) {
        char *argv[] = {"prog", (char *)exits[i], NULL};
        int argc = 2;
        ASSERT_EQ(pkb_init(&argc, argv), -EINVAL);
        ASSERT_EQ(argc, 2); /* untouched */
    }
    /* The environment counts too. */
    setenv("BENCHMARK_COLOR", "", 1);
    int one = 1;
    char *prog_only[] = {"prog", NULL};
    ASSERT_EQ(pkb_init(&one, prog_only), -EINVAL);
    unsetenv("BENCHMARK_COLOR");
    int argc0 = 0;
    ASSERT_EQ(pkb_init(&argc0, NULL), -EINVAL); /* argc without argv */
    ASSERT_EQ(pkb_init(NULL, prog_only), -EINVAL);

    /* A real initialization: GB takes its flags out of argv (the last value of a flag wins, so an
     * invalid one overridden is fine) and the shim keeps a copy of argv[0]. */
    char name[] = "my-bench";
    char *argv[] = {name,
                    "--benchmark_format=xml",
                    "--benchmark_format=json",
                    "--benchmark_filter=^beta",
                    "--keep-me",
                    NULL};
    int argc = 5;
    ASSERT_OK(pkb_init(&argc, argv));
    ASSERT_EQ(argc, 2);
    ASSERT_STR_EQ(argv[1], "--keep-me");
    memcpy(name, "clobber!", sizeof name);

    /* Idempotent: a second call neither parses nor checks. */
    char *again[] = {"prog", "--help", NULL};
    int again_argc = 2;
    ASSERT_OK(pkb_init(&again_argc, again));
    ASSERT_EQ(again_argc, 2);

    ASSERT_OK(pkb_register(&(pkb_def){.name = "alpha", .fn = bm_empty, .iterations = 1}));
    ASSERT_OK(pkb_register(&(pkb_def){.name = "beta", .fn = bm_empty, .iterations = 1}));
    static struct got g;
    size_t matched;
    ASSERT_OK(run_into(&g, NULL, &matched)); /* NULL filter: --benchmark_filter */
    ASSERT_EQ(matched, 1);
    ASSERT_STR_EQ(g.runs[0].function_name, "beta");
    ASSERT_STR_EQ(g.executable, "my-bench");
    ASSERT_OK(run_into(&g, "", &matched)); /* an explicit filter overrides the flag */
    ASSERT_EQ(matched, 2);
    init_test_done = true;
}

/* ---- console output is opt-in --------------------------------------------------------------- */

/* Runs everything with `console`, returning what reached stdout (static buffer). */
static const char *stdout_of_run(bool console)
{
    static char buf[8192];
    char path[512];
    snprintf(path, sizeof path, "%s/stdout", pk_test_tmpdir());
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT(saved >= 0 && fd >= 0);
    ASSERT_EQ(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
    int rc = pkb_run_benchmarks(&(pkb_run_options){.console = console}, NULL);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    ASSERT_OK(rc);
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    unlink(path);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

TEST_IMPL(shim_console_is_opt_in)
{
    ASSERT_OK(pkb_register(&(pkb_def){.name = "shown", .fn = bm_empty, .iterations = 3}));
    ASSERT_STR_EQ(stdout_of_run(false), "");
    ASSERT_HAS(stdout_of_run(true), "shown/iterations:3/real_time");
}

#else /* !PK_HAVE_SHIM */

#define SKIP_ALL(X)                                                                                \
    X(shim_repetitions_and_aggregates)                                                             \
    X(shim_manual_time)                                                                            \
    X(shim_counters)                                                                               \
    X(shim_label_and_error)                                                                        \
    X(shim_filter)                                                                                 \
    X(shim_user_data)                                                                              \
    X(shim_clear)                                                                                  \
    X(shim_context)                                                                                \
    X(shim_definition_checks)                                                                      \
    X(shim_time_modes_and_names)                                                                   \
    X(shim_misuse_is_an_error_not_an_abort)                                                        \
    X(shim_exception_becomes_error_run)                                                            \
    X(shim_callback_stops_run)                                                                     \
    X(shim_reentry_is_busy)                                                                        \
    X(shim_init_flags)                                                                             \
    X(shim_console_is_opt_in)

#define SKIP_ONE(name)                                                                             \
    TEST_IMPL(name)                                                                                \
    {                                                                                              \
        pk_test_skip_gate("build", "pkb_shim is built only with PK_BUILD_BENCH");                  \
    }
SKIP_ALL(SKIP_ONE)

#endif /* PK_HAVE_SHIM */
