/*
 * processkit_resolved_program — processkit exactly as the `processkit` series runs it, except that
 * the program is resolved once per series, untimed, with the library's own pk_resolve_program
 * (the path a launch of the bare name would exec), and every run then names that absolute path.
 * This is the documented advice for a caller that starts the same program repeatedly.
 *
 * Compared with `processkit` in the same scenario, the difference is what resolving the bare name
 * on every run costs (a PATH walk: one stat per entry until cat is found, then one access), with
 * everything else identical: the runs go through processkit's own `run` with only the workload's
 * program replaced. Compared with vfork_exec and fork_exec, which also exec a path resolved once,
 * it is the like-for-like resolved pairing.
 *
 * Scenarios: spawn_capture_small (the seed's series), stream_large_stdout (one lookup against a
 * megabyte, yet on a long PATH about 1% of the run: ten stats and an access at several µs each on
 * these VMs) and concurrent_fan_out, where the lookup is paid 16 times an iteration. Not
 * spawn_only, whose program is already an absolute path.
 */
#include "contenders/contender.h"
#include "processkit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

extern const pkb_contender pkb_contender_processkit;

struct state {
    void *inner; /* processkit's own per-series state */
    char *path;  /* the program, resolved once */
};

static int setup(void **state, const pkb_workload *w)
{
    struct state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return -ENOMEM;
    int rc = pk_resolve_program(w->program, NULL, &st->path, NULL);
    if (rc == 0)
        rc = pkb_contender_processkit.setup(&st->inner, w);
    if (rc != 0) {
        free(st->path);
        free(st);
        return rc <= PK_ENOTFOUND ? -ENOENT : rc;
    }
    *state = st;
    return 0;
}

static int run(void *state, const pkb_workload *w, pkb_sample *out)
{
    struct state *st = state;
    pkb_workload resolved = *w;
    resolved.program = st->path;
    return pkb_contender_processkit.run(st->inner, &resolved, out);
}

static void teardown(void *state)
{
    struct state *st = state;
    if (st == NULL)
        return;
    pkb_contender_processkit.teardown(st->inner);
    free(st->path);
    free(st);
}

const pkb_contender pkb_contender_processkit_resolved_program = {
    .name = "processkit_resolved_program",
    .description = "processkit with the program resolved once per series (pk_resolve_program, "
                   "untimed), then run by absolute path",
    .scenarios = PKB_SCENARIO_BIT(PKB_SPAWN_CAPTURE_SMALL) |
                 PKB_SCENARIO_BIT(PKB_STREAM_LARGE_STDOUT) |
                 PKB_SCENARIO_BIT(PKB_CONCURRENT_FAN_OUT),
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
