/*
 * The pk_process handle's half that every platform shares: pk_run, pk_spawn, waiting, the
 * accessors that read what both platforms keep alike, and the steps every start begins with
 * (validating the command, a cancel that came first, the run's own group).
 *
 * How a child is made (process.posix.c with spawn.linux.c; process.windows.c with
 * spawn.windows.c) and how a run is driven to its end (engine.c with engine.linux.c or
 * engine.windows.c) are the platforms' own; this file only strings them together, so that the
 * public calls check their arguments and hand out their results one way.
 */
#define _GNU_SOURCE
#include "command.h"
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int pk__process_check(const pk_command *cmd, pk_result *failure, const char **program)
{
    *program = pk__command_program(cmd);
    if (*program == NULL) {
        pk__set_failure(failure, PK_STAGE_VALIDATE, -EINVAL);
        return -EINVAL;
    }
    if (pk_cancel_triggered(cmd->cancel)) {
        /* Cancelled before the start: nothing is spawned. */
        if (failure != NULL)
            failure->outcome.kind = PK_OUTCOME_CANCELLED;
        return PK_ECANCELLED;
    }
    return 0;
}

int pk__process_contain(const pk_command *cmd, struct pk_process *proc)
{
    struct pk_group *group = cmd->group;
    if (group == NULL && cmd->containment != PK_CONTAIN_NONE) {
        int rc = pk__group_init(&proc->own, cmd->containment, true);
        if (rc != 0)
            return rc;
        proc->has_own = true;
        group = &proc->own;
    }
    proc->group = group;
    proc->containment = group != NULL ? group->mech : PK_CONTAIN_NONE;
    return 0;
}

void pk__process_arm(const pk_command *cmd, struct pk_process *proc, bool fed)
{
    if (fed) {
        proc->in_data = cmd->in.data;
        proc->in_len = cmd->in.len;
    }
    proc->on_line = cmd->on_line;
    proc->line_user = cmd->line_user;
    proc->cancel = cmd->cancel;
    pk__limits_arm(&proc->lim, cmd, proc->start_ns);
}

/* The ab study's injected slowdown (inject_run.c): the command run once more, its outcome
 * dropped, as pk_run runs it. */
static void run_discarded(const pk_command *cmd)
{
    struct pk_process proc;
    pk_result discard;
    memset(&discard, 0, sizeof discard);
    if (pk__process_start(cmd, &proc, &discard, true) == 0) {
        pk__process_finish(&proc, &discard);
        pk__process_close(&proc);
    }
    pk_result_release(&discard);
}

/* ---- public API ---------------------------------------------------------------------------- */

int pk_run(const pk_command *cmd, pk_result *res)
{
    if (res == NULL)
        return -EINVAL;
    memset(res, 0, sizeof *res);
    if (pk__inject_extra_run_due(cmd)) /* never, except in the ab study's slowed builds */
        run_discarded(cmd);
    struct pk_process proc;
    int rc = pk__process_start(cmd, &proc, res, true);
    if (rc != 0)
        return rc;
    rc = pk__process_finish(&proc, res);
    pk__process_close(&proc);
    return rc;
}

int pk_spawn(const pk_command *cmd, pk_process **out, pk_result *failure)
{
    if (out == NULL)
        return -EINVAL;
    *out = NULL;
    if (failure != NULL)
        memset(failure, 0, sizeof *failure);
    struct pk_process *proc = malloc(sizeof *proc);
    if (proc == NULL)
        return -ENOMEM;
    int rc = pk__process_start(cmd, proc, failure, false);
    if (rc != 0) {
        free(proc);
        return rc;
    }
    proc->heap = true;
    *out = proc;
    return 0;
}

int pk_process_wait(pk_process *proc, pk_result *res)
{
    if (proc == NULL || res == NULL)
        return -EINVAL;
    memset(res, 0, sizeof *res);
    if (proc->taken)
        return -ECHILD;
    /* The pull API may already have seen the exit; the result is built either way. */
    proc->taken = true;
    return pk__process_finish(proc, res);
}

int pk_process_signal(pk_process *proc, int signo)
{
    if (proc == NULL)
        return -EINVAL;
    if (proc->reaped)
        return -ESRCH;
    return pk__process_signal(proc, signo);
}

pk_containment pk_process_containment(const pk_process *proc)
{
    return proc != NULL ? proc->containment : PK_CONTAIN_NONE;
}

int pk_process_pid(const pk_process *proc)
{
    return proc != NULL ? proc->pid : -1;
}

void pk_process_free(pk_process *proc)
{
    if (proc == NULL)
        return;
    pk__process_close(proc);
    free(proc);
}
