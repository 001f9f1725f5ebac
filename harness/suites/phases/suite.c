/*
 * The phases suite (`pkbench run --suite phases`): every series of phases/attribution/series.c's
 * table that
 * --filter selects, in the table's order. The host is probed once (phases/attribution/env.c); each
 * series is prepared and runs one untimed iteration that must succeed, or it is refused with the
 * reason (a cgroup series without a delegated cgroup, for one) — recorded, never timed. Each
 * series' `extra` carries its kind and, for a composite, the primitives it contains, so the report
 * can reconcile from the file alone; the top-level "phases" object records the host.
 */
#define _GNU_SOURCE
#include "suites/own.h"

#include "phases/attribution/phases.h"
#include "suites/phases/view.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(const pkb_cli *cli, pkb_suite_options *opts)
{
    regex_t re;
    if (pkb_suite_filter(cli, &re) != 0)
        return 1;
    pkb_series *series = calloc(pkb_phase_def_count, sizeof *series);
    pkb_phase_run **runs = calloc(pkb_phase_def_count, sizeof *runs);
    pkb_phases_env *env = NULL;
    size_t n = 0;
    int rc = series != NULL && runs != NULL ? pkb_phases_env_open(cli->tiny_path, &env) : -ENOMEM;
    if (rc != 0) {
        fprintf(stderr, "pkbench: phases: %s\n",
                rc == -ENOMEM ? "out of memory" : "the tiny helper is not an executable path");
        rc = 1;
        goto out;
    }
    for (size_t i = 0; i < pkb_phase_def_count; i++) {
        const pkb_phase_def *d = &pkb_phase_defs[i];
        pkb_series *s = &series[n];
        snprintf(s->name, sizeof s->name, "%s/%s", d->group, d->name);
        if (cli->filter != NULL && regexec(&re, s->name, 0, NULL, 0) != 0)
            continue;
        snprintf(s->scenario, sizeof s->scenario, "%s", d->group);
        snprintf(s->contender, sizeof s->contender, "%s", d->name);
        s->description = d->description;
        s->unit = d->children > 1 ? "children/s" : d->children == 1 ? "runs/s" : "calls/s";
        s->work_per_iteration = d->children > 0 ? d->children : d->calls > 0 ? d->calls : 1;
        s->baseline = d->baseline;
        s->iterate = pkb_phase_iterate;
        /* Every timed iteration must reap exactly its children, each exiting 0. */
        s->check_counts = true;
        s->expect_children = d->children;
        char why[256] = "";
        int refused = pkb_phase_run_open(d, env, &runs[n], why, sizeof why);
        if (refused != 0) {
            s->status = PKB_SERIES_REFUSED;
            /* What the host lacks (no cgroup delegated, a session leader) is not the code's. */
            s->environmental = refused == -ENOTSUP;
            snprintf(s->reason, sizeof s->reason, "%s", why);
            fprintf(stderr, "pkbench: refusing to time %s: %s\n", s->name, why);
        }
        s->ctx = runs[n];
        s->extra = pkb_phase_extra(d, runs[n]);
        n++;
    }
    rc = pkb_own_selected(cli, n);
    if (rc != 0)
        goto out;
    rc = pkb_suite_run(series, n, opts, pkb_phases_env_json(env));
out:
    for (size_t i = 0; i < n; i++) {
        pkb_phase_run_close(runs[i]);
        pkb_series_free(&series[i]);
    }
    pkb_phases_env_close(env);
    free(series);
    free(runs);
    if (cli->filter != NULL)
        regfree(&re);
    return rc;
}

const pkb_suite pkb_suite_phases = {
    .name = "phases",
    .description = "where a Linux start goes: phase, primitive and spawn_lock series; the report "
                   "reconciles each composite with its parts",
    .rounds = true,
    .run = run,
    .report = {.markdown = pkb__phases_markdown,
               .figures = pkb__phases_figures,
               .terminal = pkb__phases_terminal,
               .series_line = pkb__phases_series_line},
};
