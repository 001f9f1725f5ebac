/*
 * processkit (this file is processkit_default.c, so it is never taken for the library's header
 * processkit.h) — the library as a user calls it, with its defaults: the bare program name resolved
 * on every run, and a private kill-on-close group per run (a pooled cgroup v2 leaf the child is
 * born in, or a process group where no cgroup is delegated). That containment is the price of
 * the library's tree guarantee and is deliberately not switched off: the raw baselines have none,
 * and the difference is what the comparison is meant to show.
 *
 *   spawn_capture_small  pk_run: stdin bytes, stdout captured into memory (PK_KEEP_ALL); the
 *                        sample's bytes are the bytes kept, its lines the library's count.
 *   stream_large_stdout  pk_spawn, then the pull API pk_process_read_line until PK_EOF, every
 *                        line taken before pk_process_wait; stdout's capture keeps nothing
 *                        (PK_KEEP_NONE), like the raw baselines, which count and keep nothing.
 *                        Lines are decoded in the library's default text mode (UTF-8 checked);
 *                        the payload is ASCII, so decoding changes no byte.
 *   concurrent_fan_out   16 runs started in one pk_loop (epoll, one thread), created once per
 *                        series in setup, driven by pk_loop_run.
 *   fan_out_<N>          the same with N runs (fan-out at scale, in a measuring process of its
 *                        own): every run is started before the loop runs.
 *   spawn_only           pk_run with all three streams PK_STDIO_INHERIT: no pipe and no open of
 *                        /dev/null, so the child gets exactly what the raw baselines' children
 *                        get (this process's descriptors), as in pk_floor.
 *
 * stderr is inherited in every scenario (cat writes none): every contender pipes stdin and
 * stdout only, so each pays for the same two pipes.
 */
#define _GNU_SOURCE
#include "contenders/contender.h"
#include "processkit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct state {
    pk_loop *loop;   /* the fan-out's loop, NULL in the other scenarios */
    pkb_sample *out; /* where the fan-out's callbacks add up this iteration */
    int rc;          /* the fan-out's first error */
};

/* processkit's own codes (PK_ENOTFOUND...) sit below the errno range; the contract wants -errno.
 * The text in out->error keeps the precise error. */
static int as_errno(int rc)
{
    return rc <= PK_ENOTFOUND ? -EIO : rc;
}

static int fail(pkb_sample *out, const char *what, int rc, const pk_result *res)
{
    if (out->error[0] == '\0') {
        if (res != NULL && res->outcome.kind == PK_OUTCOME_SPAWN_FAILED)
            snprintf(out->error, sizeof out->error, "%s: %s at stage %s", what,
                     pk_strerror(res->outcome.error), pk_stage_name(res->outcome.stage));
        else
            snprintf(out->error, sizeof out->error, "%s: %s", what, pk_strerror(rc));
    }
    return as_errno(rc);
}

static void tally(const pk_result *res, pkb_sample *out)
{
    out->children++;
    if (res->outcome.kind != PK_OUTCOME_EXITED || res->outcome.code != 0)
        out->failures++;
}

static pk_command cat_command(const pkb_workload *w)
{
    return (pk_command){
        .program = w->program,
        .in = {.kind = PK_STDIO_BYTES, .data = w->input, .len = w->input_len},
        .err = {.kind = PK_STDIO_INHERIT},
    };
}

static int capture_small(const pkb_workload *w, pkb_sample *out)
{
    pk_command cmd = cat_command(w);
    pk_result res;
    int rc = pk_run(&cmd, &res);
    if (rc == 0) {
        tally(&res, out);
        out->bytes += res.out.len;
        out->lines += res.out.total_lines;
    } else {
        rc = fail(out, "pk_run", rc, &res);
    }
    pk_result_release(&res);
    return rc;
}

static int stream_lines(const pkb_workload *w, pkb_sample *out)
{
    pk_command cmd = cat_command(w);
    cmd.out.capture.keep = PK_KEEP_NONE;
    pk_process *proc;
    pk_result res;
    int rc = pk_spawn(&cmd, &proc, &res);
    if (rc != 0) {
        rc = fail(out, "pk_spawn", rc, &res);
        pk_result_release(&res);
        return rc;
    }
    pk_line line;
    while ((rc = pk_process_read_line(proc, &line)) == 0)
        out->lines++;
    if (rc != PK_EOF) {
        /* pk_process_free kills and reaps the child */
        rc = fail(out, "pk_process_read_line", rc, NULL);
        pk_process_free(proc);
        return rc;
    }
    rc = pk_process_wait(proc, &res);
    if (rc == 0) {
        tally(&res, out);
        out->bytes += res.out.total_bytes;
    } else {
        rc = fail(out, "pk_process_wait", rc, NULL);
    }
    pk_result_release(&res);
    pk_process_free(proc);
    return rc;
}

static void fan_out_done(void *user, int rc, pk_result *res)
{
    struct state *st = user;
    if (rc == 0) {
        tally(res, st->out);
        st->out->bytes += res->out.len;
        st->out->lines += res->out.total_lines;
    } else if (st->rc == 0) {
        st->rc = fail(st->out, "pk_loop run", rc, res);
    }
    pk_result_release(res);
}

static int fan_out(struct state *st, const pkb_workload *w, pkb_sample *out)
{
    st->out = out;
    st->rc = 0;
    pk_command cmd = cat_command(w);
    for (int i = 0; i < w->children && st->rc == 0; i++) {
        pk_result res;
        int rc = pk_loop_start(st->loop, &cmd, fan_out_done, st, &res);
        if (rc != 0)
            st->rc = fail(out, "pk_loop_start", rc, &res);
        pk_result_release(&res);
    }
    if (w->count_fds)
        out->peak_fds = pkb_count_fds(); /* every run started, none reaped (untimed) */
    /* Whatever started is run to its end (and reaped) even when a start failed. */
    int rc = pk_loop_run(st->loop);
    if (rc != 0 && st->rc == 0)
        st->rc = fail(out, "pk_loop_run", rc, NULL);
    st->out = NULL;
    return st->rc;
}

static int spawn_only(const pkb_workload *w, pkb_sample *out)
{
    pk_command cmd = {
        .program = w->program,
        .in = {.kind = PK_STDIO_INHERIT},
        .out = {.kind = PK_STDIO_INHERIT},
        .err = {.kind = PK_STDIO_INHERIT},
    };
    pk_result res;
    int rc = pk_run(&cmd, &res);
    if (rc == 0)
        tally(&res, out);
    else
        rc = fail(out, "pk_run", rc, &res);
    pk_result_release(&res);
    return rc;
}

static int setup(void **state, const pkb_workload *w)
{
    struct state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return -ENOMEM;
    if (pkb_scenario_fans_out(w->scenario)) {
        int rc = pk_loop_new(&st->loop);
        if (rc != 0) {
            free(st);
            return as_errno(rc);
        }
    }
    *state = st;
    return 0;
}

static int run(void *state, const pkb_workload *w, pkb_sample *out)
{
    switch (w->scenario) {
    case PKB_SPAWN_CAPTURE_SMALL:
        return capture_small(w, out);
    case PKB_STREAM_LARGE_STDOUT:
        return stream_lines(w, out);
    case PKB_CONCURRENT_FAN_OUT:
    case PKB_FAN_OUT_SCALE:
        return fan_out(state, w, out);
    case PKB_SPAWN_ONLY:
        return spawn_only(w, out);
    case PKB_SCENARIO_COUNT:
        break;
    }
    snprintf(out->error, sizeof out->error, "unsupported scenario");
    return -EINVAL;
}

static void teardown(void *state)
{
    struct state *st = state;
    if (st != NULL)
        pk_loop_free(st->loop);
    free(st);
}

const pkb_contender pkb_contender_processkit = {
    .name = "processkit",
    .description = "pk_run capture / pull-API lines (keep none) / N runs in one pk_loop; bare "
                   "name resolved per run, private kill-on-close group per run",
    .scenarios = PKB_SCENARIO_BIT(PKB_SPAWN_CAPTURE_SMALL) |
                 PKB_SCENARIO_BIT(PKB_STREAM_LARGE_STDOUT) |
                 PKB_SCENARIO_BIT(PKB_CONCURRENT_FAN_OUT) | PKB_SCENARIO_BIT(PKB_SPAWN_ONLY) |
                 PKB_SCENARIO_BIT(PKB_FAN_OUT_SCALE),
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
