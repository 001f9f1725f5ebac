/*
 * libuv — a real peer in C, used as its documentation shows (Debian 12's libuv1-dev, 1.44): one
 * uv_loop_t per series (setup / teardown); per child a uv_process_t from uv_spawn with stdin and
 * stdout as UV_CREATE_PIPE streams and stderr UV_INHERIT_FD; the stdin payload handed to one
 * uv_write whose callback closes the pipe (so cat sees end-of-file); stdout read with
 * uv_read_start into one 64 KiB buffer per loop (the read size every contender uses); the exit
 * callback closes the process handle. uv_run returns when the exit callback has run and every
 * handle is closed, so each child is reaped (by libuv's SIGCHLD handler, waitpid on its pid)
 * before `run` returns.
 *
 * libuv has no line API: lines are the newlines counted with memchr in each read callback (a
 * line split across two reads is counted once, at its newline), plus a final unterminated line
 * at end-of-file; nothing is kept, as in the raw baselines. The fan-out starts all 16 children in
 * the one loop, libuv's own concurrency; at scale (fan_out_<N>) all N. spawn_only passes
 * UV_INHERIT_FD for 0, 1 and 2 (libuv would otherwise open /dev/null for the standard descriptors
 * it is not given), so no stdio is set up, as for every contender there.
 *
 * What libuv does that the raw baselines do not (its cost, measured here, not avoided): it starts
 * the child with fork (not vfork or posix_spawn) on Linux, resets the signal handlers in the
 * child, makes its "pipes" socketpairs, and execs with execvp, so the bare name is searched in
 * PATH on every run, like the other bare-name series.
 */
#define _GNU_SOURCE
#include "contenders/contender.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

struct state;

struct child {
    struct state *st;
    uv_process_t proc;
    uv_pipe_t in, out;
    uv_write_t write;
    uint64_t bytes, lines;
    bool partial; /* the last byte read was not a newline */
    bool exited;
    bool failed;
};

struct state {
    uv_loop_t loop;
    struct child *kids;
    int nkids;
    pkb_sample *out;
    int rc; /* the iteration's first error */
    char buf[64 * 1024];
};

static void fail(struct state *st, const char *what, int err)
{
    if (st->rc == 0) {
        st->rc = err;
        snprintf(st->out->error, sizeof st->out->error, "%s: %s", what, uv_strerror(err));
    }
}

static void on_child_exit(uv_process_t *proc, int64_t status, int signo)
{
    struct child *kid = proc->data;
    kid->exited = true;
    kid->failed = status != 0 || signo != 0;
    uv_close((uv_handle_t *)proc, NULL);
}

static void on_written(uv_write_t *req, int status)
{
    struct child *kid = req->data;
    if (status < 0)
        fail(kid->st, "uv_write", status);
    uv_close((uv_handle_t *)&kid->in, NULL);
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    struct child *kid = handle->data;
    (void)suggested;
    *buf = uv_buf_init(kid->st->buf, sizeof kid->st->buf);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    struct child *kid = stream->data;
    if (nread > 0) {
        const char *p = buf->base, *end = buf->base + nread, *nl;
        kid->bytes += (uint64_t)nread;
        while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
            kid->lines++;
            p = nl + 1;
        }
        kid->partial = p < end;
    } else if (nread < 0) {
        if (nread != UV_EOF)
            fail(kid->st, "read stdout", (int)nread);
        if (kid->partial)
            kid->lines++;
        uv_close((uv_handle_t *)stream, NULL);
    }
}

/* Starts one child; on failure closes what it initialised (uv_spawn initialises the process
 * handle even when it fails, so it is closed too). */
static int start(struct state *st, struct child *kid, const pkb_workload *w)
{
    char *args[] = {(char *)w->program, NULL};
    bool pipes = w->scenario != PKB_SPAWN_ONLY;
    uv_stdio_container_t stdio[3] = {
        {.flags = UV_INHERIT_FD, .data.fd = 0},
        {.flags = UV_INHERIT_FD, .data.fd = 1},
        {.flags = UV_INHERIT_FD, .data.fd = 2},
    };
    *kid = (struct child){.st = st};
    kid->proc.data = kid;
    if (pipes) {
        uv_pipe_init(&st->loop, &kid->in, 0);
        uv_pipe_init(&st->loop, &kid->out, 0);
        kid->in.data = kid->out.data = kid->write.data = kid;
        stdio[0] = (uv_stdio_container_t){.flags = UV_CREATE_PIPE | UV_READABLE_PIPE,
                                          .data.stream = (uv_stream_t *)&kid->in};
        stdio[1] = (uv_stdio_container_t){.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE,
                                          .data.stream = (uv_stream_t *)&kid->out};
    }
    uv_process_options_t options = {
        .exit_cb = on_child_exit,
        .file = w->program,
        .args = args,
        .stdio_count = 3,
        .stdio = stdio,
    };
    int rc = uv_spawn(&st->loop, &kid->proc, &options);
    if (rc != 0) {
        fail(st, "uv_spawn", rc);
        uv_close((uv_handle_t *)&kid->proc, NULL);
        if (pipes) {
            uv_close((uv_handle_t *)&kid->in, NULL);
            uv_close((uv_handle_t *)&kid->out, NULL);
        }
        return rc;
    }
    if (!pipes)
        return 0;
    /* From here on the child runs and is reaped by the loop whatever fails: closing its pipes
     * ends it (end-of-file on stdin, a broken pipe on stdout). */
    uv_buf_t buf = uv_buf_init((char *)w->input, (unsigned)w->input_len);
    rc = uv_write(&kid->write, (uv_stream_t *)&kid->in, &buf, 1, on_written);
    if (rc != 0) {
        fail(st, "uv_write", rc);
        uv_close((uv_handle_t *)&kid->in, NULL);
    }
    rc = uv_read_start((uv_stream_t *)&kid->out, on_alloc, on_read);
    if (rc != 0) {
        fail(st, "uv_read_start", rc);
        uv_close((uv_handle_t *)&kid->out, NULL);
    }
    return 0;
}

static int setup(void **state, const pkb_workload *w)
{
    struct state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return -ENOMEM;
    st->nkids = w->children > 0 ? w->children : 1;
    st->kids = calloc((size_t)st->nkids, sizeof *st->kids);
    int rc = st->kids == NULL ? -ENOMEM : uv_loop_init(&st->loop);
    if (rc != 0) {
        free(st->kids);
        free(st);
        return rc;
    }
    *state = st;
    return 0;
}

static int run(void *state, const pkb_workload *w, pkb_sample *out)
{
    struct state *st = state;
    if (w->children > st->nkids) {
        snprintf(out->error, sizeof out->error, "%d children, set up for %d", w->children,
                 st->nkids);
        return -EINVAL;
    }
    st->out = out;
    st->rc = 0;
    int started = 0;
    while (started < w->children && start(st, &st->kids[started], w) == 0)
        started++;
    if (w->count_fds)
        out->peak_fds = pkb_count_fds(); /* every child started, none reaped (untimed) */
    /* Runs until every exit callback has run and every handle is closed, failures included. */
    int rc = uv_run(&st->loop, UV_RUN_DEFAULT);
    if (rc != 0)
        fail(st, "uv_run", -EBUSY);
    for (int i = 0; i < started; i++) {
        const struct child *kid = &st->kids[i];
        out->bytes += kid->bytes;
        out->lines += kid->lines;
        out->children += kid->exited;
        out->failures += kid->exited && kid->failed;
    }
    st->out = NULL;
    return st->rc;
}

static void teardown(void *state)
{
    struct state *st = state;
    if (st == NULL)
        return;
    uv_run(&st->loop, UV_RUN_DEFAULT); /* nothing is left after a run; this is a safety net */
    uv_loop_close(&st->loop);
    free(st->kids);
    free(st);
}

const pkb_contender pkb_contender_libuv = {
    .name = "libuv",
    .library_free = true, /* its own machinery: no processkit code (ab leaves it out) */
    .description =
        "libuv 1.x uv_spawn (fork + execvp, bare name) with UV_CREATE_PIPE stdin/stdout, "
        "uv_write + uv_read_start, newline count; N children in one uv_loop",
    .scenarios = PKB_SCENARIO_BIT(PKB_SPAWN_CAPTURE_SMALL) |
                 PKB_SCENARIO_BIT(PKB_STREAM_LARGE_STDOUT) |
                 PKB_SCENARIO_BIT(PKB_CONCURRENT_FAN_OUT) | PKB_SCENARIO_BIT(PKB_SPAWN_ONLY) |
                 PKB_SCENARIO_BIT(PKB_FAN_OUT_SCALE),
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
