/*
 * The ab study's injected slowdown (internal.h, pk__inject_extra_run_due): compiled only into a
 * build configured with -DPK_INJECT_EXTRA_RUN_PCT=N, never into the library anyone installs.
 *
 * tests/ab/study.sh needs builds that make spawn_only/processkit a known share slower on any host,
 * to count how often `pkbench ab` catches a 3% and a 1% regression. A spin of N% of each run's
 * time (inject.c, the drift study's) measured about three times N on one of these hosts and N on
 * another: the run's wall time grows more than the spin's own CPU time. Doing N% more of the same
 * work has no such factor: every (100/N)-th pk_run first runs its command once more, so N extra
 * children per 100 runs, each costing what a run costs on that host. This file only says when;
 * pk_run (process.c) runs it, so the run's code stays in one place.
 *
 * The extra run happens only when no stream is a pipe: nothing is captured, fed or delivered
 * twice, and its outcome is discarded, so the caller's result is the real run's alone.
 */
#define _GNU_SOURCE
#include "internal.h"

static _Thread_local int owed; /* percent of a run, accumulated by every pk_run of this thread */

static bool has_pipe(const pk_command *cmd)
{
    pk_stdio_kind out = cmd->out.kind, err = cmd->err.kind;
    if (cmd->in.kind == PK_STDIO_BYTES)
        return true;
    if (out == PK_STDIO_DEFAULT || out == PK_STDIO_CAPTURE)
        return true;
    return err == PK_STDIO_DEFAULT || err == PK_STDIO_CAPTURE;
}

bool pk__inject_extra_run_due(const pk_command *cmd)
{
    if (cmd == NULL || has_pipe(cmd))
        return false;
    owed += PK_INJECT_EXTRA_RUN_PCT;
    if (owed < 100)
        return false;
    owed -= 100;
    return true;
}
