/*
 * The scenarios suite (called "compare" before the `pkbench compare` command took that name): every
 * contender of the registry against every scenario it supports, as in the seed's end-to-end
 * comparison. Workloads are built once, before anything is timed; each
 * series is set up and must pass the correctness check (its output must match the payload
 * exactly) or it is refused — recorded with the reason, never timed.
 *
 * Plus one series that is no contender: `calibration/cpu_loop` (calibration.c), a fixed pure-CPU
 * loop. It and the contenders that declare themselves controls (contenders/contender.h) are marked
 * `control` in the file: `pkbench compare` measures the machine's drift between two runs from
 * them (regress/drift.h).
 *
 * The fan-out at scale (FAN_OUT_SCALE) is one scenario per size N, "fan_out_<N>" (the profile's
 * sizes, or --fan-out's), and each of its series runs in a measuring worker of its own
 * (measure.h): started and set up with the other contenders, checked with one `run 1`, then timed
 * by the runner like any series, from the worker's own clock. Its series carry a "fan_out" object
 * in the file: N, the worker's descriptors before a fan-out and with all its children started,
 * and its peak resident memory over the run (the report's "Fan-out at scale", scale.c).
 */
#define _GNU_SOURCE
#include "suites/own.h"

#include "contenders/registry.h"
#include "contenders/remote.h"
#include "processkit.h"
#include "suites/scenarios/measure.h"
#include "suites/scenarios/view.h"
#include "suites/scenarios/scenario.h"
#include "suites/scenarios/sides.h"

#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct compare_ctx {
    const pkb_contender *contender;
    void *state;
    const pkb_workload *workload;
    bool set_up;
    /* The fan-out at scale: the series' measuring worker, and its "fan_out" object (borrowed
     * from the series' extra) */
    bool measured;
    pkb__measure *measure;
    json_t *fan_out;
};

/* One run of the suite: the workloads, the series and their contexts (series[i] runs ctx[i]);
 * the first `contended` series are the contenders', the calibration may follow. */
struct plan {
    pkb__workloads ws;
    pkb_series *series;
    struct compare_ctx *ctx;
    size_t n, contended;
};

/* The fan-out at scale's sizes when --fan-out gives none. */
static const int full_sizes[] = {16, 64, 256, 1024, 4096};
static const int quick_sizes[] = {16, 64, 256};

static const int *scale_sizes(const pkb_cli *cli, const pkb_suite_options *opts, size_t *n);
static void plan_series(struct plan *p, const pkb_cli *cli, const regex_t *re);
static void check_contenders(struct plan *p);
static void close_plan(struct plan *p);
static bool add_calibration(const pkb_cli *cli, const regex_t *re, pkb_series *ser);
static int iterate(void *ctx, pkb_sample *out);

/* The suite's run: the workloads, a series per contender and scenario (and the calibration),
 * each contender set up and checked, then the runner. */
static int run(const pkb_cli *cli, pkb_suite_options *opts)
{
    char *cat = NULL;
    int rc = pk_resolve_program("cat", NULL, &cat, NULL);
    if (rc != 0) {
        fprintf(stderr, "pkbench: cat is needed for the scenarios suite: %s\n", pk_strerror(rc));
        return 1;
    }
    regex_t re;
    if (pkb_suite_filter(cli, &re) != 0) {
        free(cat);
        return 1;
    }
    struct plan p = {0};
    size_t nsizes;
    const int *sizes = scale_sizes(cli, opts, &nsizes);
    pkb__workloads_build(&p.ws, cat, cli->tiny_path, sizes, nsizes);
    if (cli->sides != NULL) { /* pkbench ab: every series once per build, in its workers */
        rc = pkb__scenarios_sides(cli, opts, &p.ws, cli->filter != NULL ? &re : NULL);
        if (cli->filter != NULL)
            regfree(&re);
        close_plan(&p);
        free(cat);
        return rc;
    }
    plan_series(&p, cli, &re);
    if (cli->filter != NULL)
        regfree(&re);
    if (p.n == 0) {
        fprintf(stderr, "pkbench: no series matches --filter '%s' (see pkbench list)\n",
                cli->filter ? cli->filter : "");
        rc = 1;
    } else {
        check_contenders(&p); /* before priming and before anything is timed */
        rc = pkb_suite_run(p.series, p.n, opts, NULL);
    }
    close_plan(&p);
    free(cat);
    return rc;
}

/* The fan-out at scale's sizes: --fan-out's or the profile's (*n of them). */
static const int *scale_sizes(const pkb_cli *cli, const pkb_suite_options *opts, size_t *n)
{
    bool full = opts->profile != NULL && strcmp(opts->profile->name, "full") == 0;
    *n = cli->nfan_out > 0 ? cli->nfan_out
         : full            ? sizeof full_sizes / sizeof *full_sizes
                           : sizeof quick_sizes / sizeof *quick_sizes;
    return cli->nfan_out > 0 ? cli->fan_out : full ? full_sizes : quick_sizes;
}

/* The registry's contenders, then those `pkbench run --worker` added (contenders/remote.h). */
static const pkb_contender *contender_at(size_t k)
{
    return k < pkb_contender_count ? pkb_contenders[k] : pkb_remote_extra(k - pkb_contender_count);
}

/* Adds contender c's series of workload w (named scenario) unless the filter leaves it out. */
static void add_series(struct plan *p,
                       const pkb_cli *cli,
                       const regex_t *re,
                       const pkb_contender *c,
                       const pkb_workload *w)
{
    char scenario[64];
    pkb__workload_scenario(w, scenario, sizeof scenario);
    pkb_series *ser = &p->series[p->n];
    snprintf(ser->name, sizeof ser->name, "%s/%s", scenario, c->name);
    if (cli->filter != NULL && regexec(re, ser->name, 0, NULL, 0) != 0) {
        memset(ser, 0, sizeof *ser);
        return;
    }
    snprintf(ser->scenario, sizeof ser->scenario, "%s", scenario);
    snprintf(ser->contender, sizeof ser->contender, "%s", c->name);
    ser->description = c->description;
    ser->unit = pkb_scenario_unit(w->scenario);
    ser->work_per_iteration = pkb__workload_work(w);
    ser->baseline = c->baseline;
    ser->control = c->control;
    ser->iterate = iterate;
    ser->ctx = &p->ctx[p->n];
    /* A C contender's fan-out at scale runs in a measuring worker; a worker in another process
     * (contender.h's runtime) measures itself already. */
    bool measured = w->scenario == PKB_FAN_OUT_SCALE && c->runtime == NULL;
    p->ctx[p->n] = (struct compare_ctx){c, NULL, w, false, measured, NULL, NULL};
    if (w->scenario == PKB_FAN_OUT_SCALE) {
        ser->extra = json_pack("{s:{s:i}}", "fan_out", "children", w->children);
        p->ctx[p->n].fan_out = json_object_get(ser->extra, "fan_out");
    }
    p->n++;
}

/* A series for every contender in every scenario it supports (the fan-out at scale at every
 * size), and the calibration, those the filter selects. */
static void plan_series(struct plan *p, const pkb_cli *cli, const regex_t *re)
{
    size_t contenders = pkb_contender_count + pkb_remote_extra_count();
    size_t cap = contenders * (PKB_SCENARIO_COUNT + p->ws.nscale) + 1;
    p->series = calloc(cap, sizeof *p->series);
    p->ctx = calloc(cap, sizeof *p->ctx);
    if (p->series == NULL || p->ctx == NULL)
        return;
    for (int s = 0; s < PKB_SCENARIO_COUNT; s++)
        for (size_t i = 0; i < pkb__workloads_count(&p->ws, (pkb_scenario)s); i++)
            for (size_t k = 0; k < contenders; k++)
                if (contender_at(k)->scenarios & PKB_SCENARIO_BIT(s))
                    add_series(p, cli, re, contender_at(k),
                               pkb__workload_at(&p->ws, (pkb_scenario)s, i));
    p->contended = p->n; /* the contenders' series; the calibration (no contender) follows */
    if (add_calibration(cli, re, &p->series[p->n]))
        p->n++;
}

/* A measured series' set-up: its worker started and set up (this pkbench, as `pkbench worker`),
 * then the check through it; what the set-up counted goes into the series' "fan_out". */
static int measure_check(struct compare_ctx *x, char *why, size_t why_len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(why, why_len, "%s: cannot find this pkbench to start its worker",
                 x->contender->name);
        return -ENOENT;
    }
    exe[n] = '\0';
    int r = pkb__measure_start(exe, x->contender, x->workload, &x->measure, why, why_len);
    x->set_up = r == 0;
    if (r != 0)
        return r;
    pkb_sample out;
    memset(&out, 0, sizeof out);
    r = iterate(x, &out); /* records the worker's descriptors and peak in "fan_out" */
    return pkb_check_sample(x->contender, x->workload, r, &out, why, why_len);
}

/* Set-up and the correctness check: a contender that fails either is refused, with the reason,
 * and never timed. */
/* Seconds on the monotonic clock, for the checks' progress. */
static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The checks say where they are every 15 s: at scale (a fan-out of 4096 per series, a worker
 * per language) they take as long as a round, before pkbench has announced anything. */
static void check_progress(size_t done, size_t total, double start, double *last)
{
    double now = mono_s();
    if (now - *last < 15.0)
        return;
    *last = now;
    fprintf(stderr, "pkbench: checking every series once before timing: %zu of %zu (%.0f s)\n",
            done, total, now - start);
}

static void check_contenders(struct plan *p)
{
    double start = mono_s(), last = start;
    for (size_t i = 0; i < p->contended; i++) {
        check_progress(i, p->contended, start, &last);
        struct compare_ctx *x = &p->ctx[i];
        pkb_series *ser = &p->series[i];
        char why[256] = "";
        int r = 0;
        if (x->measured) {
            r = measure_check(x, why, sizeof why);
        } else {
            r = pkb_contender_setup(x->contender, &x->state, x->workload, why, sizeof why);
            x->set_up = r == 0;
            if (r == 0)
                r = pkb_check_contender(x->contender, x->state, x->workload, why, sizeof why);
        }
        /* What runs a contender that is not this process's code, with its series. */
        const char *runtime = x->set_up && !x->measured && x->contender->runtime != NULL
                                  ? x->contender->runtime(x->state)
                                  : NULL;
        if (runtime != NULL && runtime[0] != '\0') {
            if (ser->extra == NULL)
                ser->extra = json_object();
            json_object_set_new(ser->extra, "runtime", json_string(runtime));
        }
        if (r != 0) {
            ser->status = PKB_SERIES_REFUSED;
            ser->environmental = !x->set_up; /* a set-up the host refused, not a wrong count */
            snprintf(ser->reason, sizeof ser->reason, "%s", why);
            fprintf(stderr, "pkbench: refusing to time %s: %s\n", ser->name, why);
        }
    }
}

static void close_plan(struct plan *p)
{
    for (size_t i = 0; i < p->n; i++) {
        if (p->ctx[i].measured)
            pkb__measure_stop(p->ctx[i].measure);
        else if (p->ctx[i].set_up && p->ctx[i].contender != NULL &&
                 p->ctx[i].contender->teardown != NULL)
            p->ctx[i].contender->teardown(p->ctx[i].state);
        pkb_series_free(&p->series[i]);
    }
    free(p->series);
    free(p->ctx);
    pkb__workloads_free(&p->ws);
}

/* The calibration series, when the filter selects it: set up here, it needs no check. */
static bool add_calibration(const pkb_cli *cli, const regex_t *re, pkb_series *ser)
{
    snprintf(ser->name, sizeof ser->name, "%s/%s", PKB_CALIBRATION_SCENARIO,
             PKB_CALIBRATION_CONTENDER);
    if (cli->filter != NULL && regexec(re, ser->name, 0, NULL, 0) != 0) {
        memset(ser, 0, sizeof *ser);
        return false;
    }
    snprintf(ser->scenario, sizeof ser->scenario, "%s", PKB_CALIBRATION_SCENARIO);
    snprintf(ser->contender, sizeof ser->contender, "%s", PKB_CALIBRATION_CONTENDER);
    ser->description = PKB_CALIBRATION_DESCRIPTION;
    ser->unit = "runs/s";
    ser->work_per_iteration = 1.0;
    ser->control = true;
    ser->iterate = pkb__calibration_iterate;
    return true;
}

/* One iteration of a contender's series: its `run` on its state and workload, or, measured, its
 * worker's (whose peak resident memory so far the series' "fan_out" keeps). */
static int iterate(void *ctx, pkb_sample *out)
{
    struct compare_ctx *x = ctx;
    int rc = x->measured ? pkb__measure_run(x->measure, out)
                         : x->contender->run(x->state, x->workload, out);
    if (rc != 0 || x->fan_out == NULL)
        return rc;
    /* What the performing process reported of itself (plugin/sample.h): its largest peak, and
     * the descriptors its set-up counted. */
    json_int_t seen = json_integer_value(json_object_get(x->fan_out, "peak_rss_kib"));
    if ((json_int_t)out->peak_rss_kib > seen)
        json_object_set_new(x->fan_out, "peak_rss_kib",
                            json_integer((json_int_t)out->peak_rss_kib));
    if (out->peak_fds > 0) {
        json_object_set_new(x->fan_out, "idle_fds", json_integer(out->idle_fds));
        json_object_set_new(x->fan_out, "peak_fds", json_integer(out->peak_fds));
    }
    return rc;
}

const pkb_suite pkb_suite_scenarios = {
    .name = "scenarios",
    .description = "every contender in the seed's scenarios: small capture, large streaming, "
                   "16-way fan-out, spawn_only (the floor), and the fan-out at scale",
    .rounds = true,
    .takes_workers = true,
    .run = run,
    .report = {.markdown = pkb__scenarios_markdown,
               .figures = pkb__scenarios_figures,
               .terminal = pkb__scenarios_terminal,
               .series_line = pkb__scenarios_series_line},
};
