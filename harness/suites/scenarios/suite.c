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
 */
#define _GNU_SOURCE
#include "suites/suite.h"

#include "contenders/registry.h"
#include "contenders/remote.h"
#include "processkit.h"
#include "suites/scenarios/view.h"
#include "suites/scenarios/scenario.h"
#include "suites/scenarios/sides.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct compare_ctx {
    const pkb_contender *contender;
    void *state;
    pkb_workload *workload;
    bool set_up;
};

/* One run of the suite: the workloads, the series and their contexts (series[i] runs ctx[i]);
 * the first `contended` series are the contenders', the calibration may follow. */
struct plan {
    pkb_workload workloads[PKB_SCENARIO_COUNT];
    pkb_series *series;
    struct compare_ctx *ctx;
    size_t n, contended;
};

static void plan_series(struct plan *p, const pkb_cli *cli, const regex_t *re);
static void check_contenders(struct plan *p);
static void close_plan(struct plan *p);
static bool add_calibration(const pkb_cli *cli, const regex_t *re, pkb_series *ser);
static double work_per_iteration(const pkb_workload *w);
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
    if (cli->filter != NULL && regcomp(&re, cli->filter, REG_EXTENDED | REG_NOSUB) != 0) {
        fprintf(stderr, "pkbench: --filter: '%s' is not a valid extended regular expression\n",
                cli->filter);
        free(cat);
        return 1;
    }
    struct plan p = {0};
    for (int s = 0; s < PKB_SCENARIO_COUNT; s++)
        pkb_workload_build((pkb_scenario)s, cat, cli->tiny_path, &p.workloads[s]);
    if (cli->sides != NULL) { /* pkbench ab: every series once per build, in its workers */
        rc = pkb__scenarios_sides(cli, opts, p.workloads, cli->filter != NULL ? &re : NULL);
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
        rc = pkb_run_series(p.series, p.n, opts);
        if (rc < 0)
            rc = 1;
    }
    close_plan(&p);
    free(cat);
    return rc;
}

/* The registry's contenders, then those `pkbench run --worker` added (contenders/remote.h). */
static const pkb_contender *contender_at(size_t k)
{
    return k < pkb_contender_count ? pkb_contenders[k] : pkb_remote_extra(k - pkb_contender_count);
}

/* A series for every contender in every scenario it supports, and the calibration, those the
 * filter selects. */
static void plan_series(struct plan *p, const pkb_cli *cli, const regex_t *re)
{
    size_t contenders = pkb_contender_count + pkb_remote_extra_count();
    size_t cap = contenders * PKB_SCENARIO_COUNT + 1;
    p->series = calloc(cap, sizeof *p->series);
    p->ctx = calloc(cap, sizeof *p->ctx);
    if (p->series == NULL || p->ctx == NULL)
        return;
    for (int s = 0; s < PKB_SCENARIO_COUNT; s++) {
        for (size_t k = 0; k < contenders; k++) {
            const pkb_contender *c = contender_at(k);
            if (!(c->scenarios & PKB_SCENARIO_BIT(s)))
                continue;
            pkb_series *ser = &p->series[p->n];
            snprintf(ser->name, sizeof ser->name, "%s/%s", pkb_scenario_name((pkb_scenario)s),
                     c->name);
            if (cli->filter != NULL && regexec(re, ser->name, 0, NULL, 0) != 0)
                continue;
            snprintf(ser->scenario, sizeof ser->scenario, "%s", pkb_scenario_name((pkb_scenario)s));
            snprintf(ser->contender, sizeof ser->contender, "%s", c->name);
            ser->description = c->description;
            ser->unit = pkb_scenario_unit((pkb_scenario)s);
            ser->work_per_iteration = work_per_iteration(&p->workloads[s]);
            ser->baseline = c->baseline;
            ser->control = c->control;
            ser->iterate = iterate;
            ser->ctx = &p->ctx[p->n];
            p->ctx[p->n] = (struct compare_ctx){c, NULL, &p->workloads[s], false};
            p->n++;
        }
    }
    p->contended = p->n; /* the contenders' series; the calibration (no contender) follows */
    if (add_calibration(cli, re, &p->series[p->n]))
        p->n++;
}

/* Set-up and the correctness check: a contender that fails either is refused, with the reason,
 * and never timed. */
static void check_contenders(struct plan *p)
{
    for (size_t i = 0; i < p->contended; i++) {
        struct compare_ctx *x = &p->ctx[i];
        pkb_series *ser = &p->series[i];
        char why[256] = "";
        int r = pkb_contender_setup(x->contender, &x->state, x->workload, why, sizeof why);
        x->set_up = r == 0;
        if (r == 0)
            r = pkb_check_contender(x->contender, x->state, x->workload, why, sizeof why);
        /* What runs a contender that is not this process's code, with its series. */
        const char *runtime =
            x->set_up && x->contender->runtime != NULL ? x->contender->runtime(x->state) : NULL;
        if (runtime != NULL && runtime[0] != '\0')
            ser->extra = json_pack("{s:s}", "runtime", runtime);
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
        if (p->ctx[i].set_up && p->ctx[i].contender != NULL &&
            p->ctx[i].contender->teardown != NULL)
            p->ctx[i].contender->teardown(p->ctx[i].state);
        pkb_series_free(&p->series[i]);
    }
    free(p->series);
    free(p->ctx);
    for (int s = 0; s < PKB_SCENARIO_COUNT; s++)
        pkb_workload_free(&p->workloads[s]);
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

static double work_per_iteration(const pkb_workload *w)
{
    switch (w->scenario) {
    case PKB_STREAM_LARGE_STDOUT:
        return (double)w->expect_bytes / (1024.0 * 1024.0); /* MiB */
    case PKB_CONCURRENT_FAN_OUT:
        return (double)w->children; /* children */
    default:
        return 1.0; /* runs */
    }
}

/* One iteration of a contender's series: its `run` on its state and workload. */
static int iterate(void *ctx, pkb_sample *out)
{
    struct compare_ctx *x = ctx;
    return x->contender->run(x->state, x->workload, out);
}

const pkb_suite pkb_suite_scenarios = {
    .name = "scenarios",
    .description = "every contender in the seed's scenarios: small capture, large streaming, "
                   "16-way fan-out, and spawn_only (the floor)",
    .rounds = true,
    .takes_workers = true,
    .run = run,
    .report = {.markdown = pkb__scenarios_markdown,
               .figures = pkb__scenarios_figures,
               .terminal = pkb__scenarios_terminal,
               .series_line = pkb__scenarios_series_line},
};
