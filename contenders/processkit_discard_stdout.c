/*
 * processkit_discard_stdout — processkit with stdout sent to /dev/null (PK_STDIO_NULL): pk_spawn,
 * then pk_process_wait, which writes the stdin bytes and reaps. Nothing is captured, no line is
 * split, no stdout pipe exists. Compared with `processkit` in spawn_capture_small (same bare name
 * resolved per run, same private group, same stdin pipe), the difference is what capturing and
 * pumping stdout costs.
 *
 * It cannot observe the child's output, so it claims none: it reports 0 bytes and 0 lines and sets
 * `discards_output`, under which pkb_check_contender expects exactly that, plus the child reaped
 * with exit status 0 — which for cat means it read its whole stdin to end-of-file and wrote all of
 * it without an error (contender.h). It is a discard path, not an output-equivalent replacement
 * for capture, and only runs spawn_capture_small (as in the seed).
 */
#include "contenders/contender.h"
#include "processkit.h"

#include <errno.h>
#include <stdio.h>

static int fail(pkb_sample *out, const char *what, int rc, const pk_result *res)
{
    if (res != NULL && res->outcome.kind == PK_OUTCOME_SPAWN_FAILED)
        snprintf(out->error, sizeof out->error, "%s: %s at stage %s", what,
                 pk_strerror(res->outcome.error), pk_stage_name(res->outcome.stage));
    else
        snprintf(out->error, sizeof out->error, "%s: %s", what, pk_strerror(rc));
    return rc <= PK_ENOTFOUND ? -EIO : rc;
}

static int run(void *state, const pkb_workload *w, pkb_sample *out)
{
    (void)state;
    pk_command cmd = {
        .program = w->program,
        .in = {.kind = PK_STDIO_BYTES, .data = w->input, .len = w->input_len},
        .out = {.kind = PK_STDIO_NULL},
        .err = {.kind = PK_STDIO_INHERIT},
    };
    pk_process *proc;
    pk_result res;
    int rc = pk_spawn(&cmd, &proc, &res);
    if (rc != 0) {
        rc = fail(out, "pk_spawn", rc, &res);
        pk_result_release(&res);
        return rc;
    }
    rc = pk_process_wait(proc, &res);
    if (rc == 0) {
        out->children++;
        if (res.outcome.kind != PK_OUTCOME_EXITED || res.outcome.code != 0)
            out->failures++;
    } else {
        rc = fail(out, "pk_process_wait", rc, NULL);
    }
    pk_result_release(&res);
    pk_process_free(proc);
    return rc;
}

const pkb_contender pkb_contender_processkit_discard_stdout = {
    .name = "processkit_discard_stdout",
    .description = "processkit with stdout to /dev/null: pk_spawn + pk_process_wait; reads "
                   "nothing (a discard path, not a capture)",
    .scenarios = PKB_SCENARIO_BIT(PKB_SPAWN_CAPTURE_SMALL),
    .discards_output = true,
    .run = run,
};
