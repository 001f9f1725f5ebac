/*
 * The scenarios suite (called "compare" before the `pkbench compare` command took that name): every
 * contender of the registry against every scenario it supports, as in the seed's end-to-end
 * comparison. Workloads are built once, before anything is timed; each
 * series is set up and must pass the correctness check (its output must match the payload
 * exactly) or it is refused — recorded with the reason, never timed.
 */
#define _GNU_SOURCE
#include "suites/suite.h"

#include "processkit.h"
#include "suites/scenarios/report.h"
#include "suites/scenarios/scenario.h"

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

static int iterate(void *ctx, pkb_sample *out)
{
    struct compare_ctx *x = ctx;
    return x->contender->run(x->state, x->workload, out);
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
    pkb_workload workloads[PKB_SCENARIO_COUNT];
    for (int s = 0; s < PKB_SCENARIO_COUNT; s++)
        pkb_workload_build((pkb_scenario)s, cat, cli->tiny_path, &workloads[s]);

    size_t cap = pkb_contender_count * PKB_SCENARIO_COUNT, n = 0;
    pkb_series *series = calloc(cap, sizeof *series);
    struct compare_ctx *ctx = calloc(cap, sizeof *ctx);
    for (int s = 0; s < PKB_SCENARIO_COUNT && series != NULL && ctx != NULL; s++) {
        for (size_t k = 0; k < pkb_contender_count; k++) {
            const pkb_contender *c = pkb_contenders[k];
            if (!(c->scenarios & PKB_SCENARIO_BIT(s)))
                continue;
            pkb_series *ser = &series[n];
            snprintf(ser->name, sizeof ser->name, "%s/%s", pkb_scenario_name((pkb_scenario)s),
                     c->name);
            if (cli->filter != NULL && regexec(&re, ser->name, 0, NULL, 0) != 0)
                continue;
            snprintf(ser->scenario, sizeof ser->scenario, "%s", pkb_scenario_name((pkb_scenario)s));
            snprintf(ser->contender, sizeof ser->contender, "%s", c->name);
            ser->description = c->description;
            ser->unit = pkb_scenario_unit((pkb_scenario)s);
            ser->work_per_iteration = work_per_iteration(&workloads[s]);
            ser->baseline = c->baseline;
            ser->iterate = iterate;
            ser->ctx = &ctx[n];
            ctx[n] = (struct compare_ctx){c, NULL, &workloads[s], false};
            n++;
        }
    }
    if (cli->filter != NULL)
        regfree(&re);
    if (n == 0) {
        fprintf(stderr, "pkbench: no series matches --filter '%s' (see pkbench list)\n",
                cli->filter ? cli->filter : "");
        rc = 1;
        goto out;
    }

    /* Set-up and the correctness check, before priming and before anything is timed. */
    for (size_t i = 0; i < n; i++) {
        struct compare_ctx *x = &ctx[i];
        char why[256] = "";
        int r = x->contender->setup != NULL ? x->contender->setup(&x->state, x->workload) : 0;
        x->set_up = r == 0;
        if (r != 0)
            snprintf(why, sizeof why, "%s: set-up failed: %s", x->contender->name, strerror(-r));
        else
            r = pkb_check_contender(x->contender, x->state, x->workload, why, sizeof why);
        if (r != 0) {
            series[i].status = PKB_SERIES_REFUSED;
            series[i].environmental = !x->set_up; /* a set-up the host refused, not a wrong count */
            snprintf(series[i].reason, sizeof series[i].reason, "%s", why);
            fprintf(stderr, "pkbench: refusing to time %s: %s\n", series[i].name, why);
        }
    }
    rc = pkb_run_series(series, n, opts);
    if (rc < 0)
        rc = 1;

out:
    for (size_t i = 0; i < n; i++) {
        if (ctx[i].set_up && ctx[i].contender->teardown != NULL)
            ctx[i].contender->teardown(ctx[i].state);
        pkb_series_free(&series[i]);
    }
    free(series);
    free(ctx);
    for (int s = 0; s < PKB_SCENARIO_COUNT; s++)
        pkb_workload_free(&workloads[s]);
    free(cat);
    return rc;
}

const pkb_suite pkb_suite_scenarios = {
    .name = "scenarios",
    .description = "every contender in the seed's scenarios: small capture, large streaming, "
                   "16-way fan-out, and spawn_only (the floor)",
    .rounds = true,
    .run = run,
    .report = {.markdown = pkb__scenarios_markdown,
               .figures = pkb__scenarios_figures,
               .terminal = pkb__scenarios_terminal,
               .series_line = pkb__scenarios_series_line},
};
