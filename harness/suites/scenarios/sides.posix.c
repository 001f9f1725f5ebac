/*
 * sides — the scenarios suite in other builds' workers (sides.h). In `pkbench ab` each contender
 * of the registry, in each scenario it runs, becomes two series, "<scenario>/<contender> [base]"
 * and "... [head]", listed next to each other so the rounds keep them together (run/rounds.c,
 * "Two sides"); with one build (`pkbench run --build`) one series of the usual name. Each runs in
 * a process of its own of its side's worker (contenders/host/host.c built against that side's
 * library, build.h), driven through the remote adapter (contenders/remote.h), which times it in
 * the worker and checks its counts; a new process for every sample (side_renew), so that what
 * one process happened to get (its layout, its leaf: a few percent) is noise of the round, not
 * a lasting difference between the sides. Only the base side carries the scenario's baseline mark
 * (a file has one baseline per scenario). The fan-out at scale is one scenario per size, as in a
 * run
 * ("fan_out_<N>"); each side's worker is a process of its own already, so its series need no
 * measuring worker besides. The calibration loop is not among them: it would run in
 * pkbench, the same code for both sides, and ab needs no drift control — its sides share every
 * round.
 *
 * A contender that discards its output reads nothing: its workload then expects 0 bytes and 0
 * lines, which is what the in-process check expects of it (scenario.c). The contenders in other
 * languages are left out: they call nothing of the library, so their sides would differ in
 * nothing but noise (the worker hosts the C contenders only); so are, in ab, the C contenders
 * that call nothing of the library (controls, library_free), unless --controls asks for them as
 * a check of the method. When one side of a
 * series is refused, so is the other (it would be measured for nothing): the refused side's
 * reason says why, the other's names it.
 */
#define _GNU_SOURCE
#include "suites/scenarios/sides.h"

#include "contenders/registry.h"
#include "contenders/remote.h"
#include "suites/own.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct side_ctx {
    const pkb_contender *c; /* the registry's: its name, scenarios and marks */
    pkb_remote_spec spec;   /* the worker to start, hosting c */
    const char *argv[2];
    pkb_workload w; /* the scenario's (expecting nothing read when c discards its output) */
    void *state;
    bool set_up;
};

static int side_iterate(void *ctx, pkb_sample *out)
{
    struct side_ctx *x = ctx;
    return pkb_remote_run(x->state, &x->w, out);
}

/* A worker process of its own for every sample (run/series.h, renew): the old one ends, a new
 * one starts and sets up, untimed; the settling calls that follow warm it. */
static int side_renew(void *ctx, char *why, size_t why_len)
{
    struct side_ctx *x = ctx;
    if (x->set_up)
        pkb_remote_teardown(x->state);
    x->state = NULL;
    int rc = pkb_remote_prepare(&x->spec, &x->state, &x->w, why, why_len);
    x->set_up = rc == 0;
    return rc;
}

/* Series i (side `which` of `nsides` of contender c in workload w's scenario) and its context. */
static void add_side(pkb_series *ser,
                     struct side_ctx *x,
                     const pkb_contender *c,
                     const pkb_workload *w,
                     const pkb_cli_side *side,
                     int which,
                     size_t nsides)
{
    char sc[64];
    pkb__workload_scenario(w, sc, sizeof sc);
    if (nsides == 1) /* one build: the series' own name, so two such runs compare by name */
        snprintf(ser->name, sizeof ser->name, "%s/%s", sc, c->name);
    else
        snprintf(ser->name, sizeof ser->name, "%s/%s [%s]", sc, c->name, side->label);
    snprintf(ser->scenario, sizeof ser->scenario, "%s", sc);
    snprintf(ser->contender, sizeof ser->contender, "%s", c->name);
    ser->description = c->description;
    ser->unit = pkb_scenario_unit(w->scenario);
    ser->work_per_iteration = pkb__workload_work(w);
    ser->baseline = c->baseline && which == 0;
    ser->control = c->control;
    ser->side = nsides == 1 ? PKB_SIDE_NONE : which == 0 ? PKB_SIDE_BASE : PKB_SIDE_HEAD;
    ser->iterate = side_iterate;
    ser->renew = side_renew;
    ser->ctx = x;
    x->c = c;
    x->argv[0] = side->worker;
    x->spec = (pkb_remote_spec){.name = c->name, .description = c->description, .argv = x->argv};
    x->w = *w;
    if (c->discards_output)
        x->w.expect_bytes = x->w.expect_lines = 0;
}

/* Set-up in the worker and the one-iteration check (the adapter compares the counts). */
static void check_side(pkb_series *ser, struct side_ctx *x)
{
    char why[256] = "";
    int rc = pkb_remote_prepare(&x->spec, &x->state, &x->w, why, sizeof why);
    x->set_up = rc == 0;
    if (rc == 0) {
        pkb_sample out = {.batch = 1};
        rc = pkb_remote_run(x->state, &x->w, &out);
        if (rc != 0)
            snprintf(why, sizeof why, "%s", out.error[0] ? out.error : strerror(-rc));
        const char *runtime = pkb_remote_runtime(x->state);
        if (runtime != NULL)
            ser->extra = json_pack("{s:s}", "runtime", runtime);
    }
    if (rc != 0) {
        ser->status = PKB_SERIES_REFUSED;
        ser->environmental = !x->set_up;
        snprintf(ser->reason, sizeof ser->reason, "%s", why);
        fprintf(stderr, "pkbench: refusing to time %s: %s\n", ser->name, why);
    }
}

int pkb__scenarios_sides(const pkb_cli *cli,
                         pkb_suite_options *opts,
                         const pkb__workloads *ws,
                         const regex_t *re)
{
    size_t cap = 2 * pkb_contender_count * (PKB_SCENARIO_COUNT + ws->nscale) + 2, n = 0;
    pkb_series *series = calloc(cap, sizeof *series);
    struct side_ctx *ctx = calloc(cap, sizeof *ctx);
    if (series == NULL || ctx == NULL) {
        free(series);
        free(ctx);
        fprintf(stderr, "pkbench: out of memory\n");
        return 1;
    }
    for (int s = 0; s < PKB_SCENARIO_COUNT; s++) {
        for (size_t i = 0; i < pkb__workloads_count(ws, (pkb_scenario)s); i++) {
            const pkb_workload *w = pkb__workload_at(ws, (pkb_scenario)s, i);
            for (size_t k = 0; k < pkb_contender_count; k++) {
                const pkb_contender *c = pkb_contenders[k];
                if (c->runtime != NULL) /* a worker in another language: no code of the library */
                    continue;
                if (cli->nsides == 2 && !cli->controls && (c->control || c->library_free))
                    continue; /* the same code on both sides: nothing but noise to compare */
                char sc[64], name[160];
                pkb__workload_scenario(w, sc, sizeof sc);
                snprintf(name, sizeof name, "%s/%s", sc, c->name);
                if (!(c->scenarios & PKB_SCENARIO_BIT(s)) ||
                    (re != NULL && regexec(re, name, 0, NULL, 0) != 0))
                    continue;
                for (int which = 0; which < (int)cli->nsides; which++, n++)
                    add_side(&series[n], &ctx[n], c, w, &cli->sides[which], which, cli->nsides);
            }
        }
    }
    int rc = 0;
    if (n == 0) {
        fprintf(stderr, "pkbench: no contender's series matches --filter '%s' (see pkbench list)\n",
                cli->filter ? cli->filter : "");
        rc = 1;
    }
    for (size_t i = 0; i < n; i++) /* before priming and before anything is timed */
        check_side(&series[i], &ctx[i]);
    for (size_t i = 0; cli->nsides == 2 && i + 1 < n; i += 2) { /* a side alone says nothing */
        for (int h = 0; h < 2; h++) {
            pkb_series *a = &series[i + (size_t)h], *b = &series[i + 1 - (size_t)h];
            if (a->status == PKB_SERIES_REFUSED && b->status != PKB_SERIES_REFUSED) {
                b->status = PKB_SERIES_REFUSED;
                b->environmental = a->environmental;
                snprintf(b->reason, sizeof b->reason, "its %s side was refused",
                         h == 0 ? "base" : "head");
            }
        }
    }
    if (rc == 0)
        rc = pkb_suite_run(series, n, opts, NULL);
    for (size_t i = 0; i < n; i++) {
        if (ctx[i].set_up)
            pkb_remote_teardown(ctx[i].state);
        pkb_series_free(&series[i]);
    }
    free(series);
    free(ctx);
    return rc;
}
