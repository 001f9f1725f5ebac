/*
 * glib — a real peer in C, used as its documentation shows (Debian 12's GLib 2.74): one
 * GMainContext and GMainLoop per series (setup / teardown); per child g_spawn_async_with_pipes
 * with G_SPAWN_SEARCH_PATH (the bare name is searched in PATH on every run, like the other
 * bare-name series) and G_SPAWN_DO_NOT_REAP_CHILD, a child watch (g_child_watch_source_new) that
 * reaps it, stdin written from a g_unix_fd_source on G_IO_OUT (non-blocking, closed once the
 * payload is in), and stdout read through a GIOChannel watch with GLib's line API,
 * g_io_channel_read_line, until end-of-file. The loop quits when every child has exited and every
 * pipe is closed, so each child is reaped before `run` returns. The fan-out starts all 16 children
 * in the one loop, GLib's own concurrency; at scale (fan_out_<N>) all N.
 *
 * GLib's line API is used in every cat scenario: its lines are the sample's lines and their
 * lengths (terminator included) its bytes. The channel keeps its defaults: UTF-8 encoding, so
 * each line is validated as processkit's default text mode validates it (the payload is ASCII),
 * and GLib's own read buffer size. (A 64 KiB buffer, the read size the other contenders use, made
 * the stream slower here, not faster: taking a line shifts the rest of the buffer down, so the
 * copying grows with the buffer.) Each line comes back as a fresh allocation: that is GLib's API,
 * and so part of its cost. stderr is inherited (cat writes none).
 *
 * spawn_only: G_SPAWN_CHILD_INHERITS_STDIN and no pipes, so the child inherits 0, 1 and 2 as in
 * every contender; only the child watch remains.
 *
 * What GLib does that the raw baselines do not (its cost, measured here, not avoided): unless
 * asked to leave descriptors open it starts the child with fork, resets a few signal handlers and
 * closes every descriptor above 2 in it (close_range), and watches the exit through a pidfd.
 */
#include "contenders/contender.h"

#include <errno.h>
#include <glib-unix.h>
#include <glib.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct state;

struct child {
    struct state *st;
    GPid pid;
    int in_fd;
    size_t off;
    uint64_t bytes, lines;
    bool exited;
    bool failed;
};

struct state {
    GMainContext *ctx;
    GMainLoop *loop;
    struct child *kids;
    int nkids;
    int pending; /* exits and pipe closes still to come this iteration */
    const pkb_workload *w;
    pkb_sample *out;
    int rc;
};

static void fail(struct state *st, const char *what, int err, const GError *gerr)
{
    if (st->rc == 0) {
        st->rc = err;
        snprintf(st->out->error, sizeof st->out->error, "%s: %s", what,
                 gerr != NULL ? gerr->message : g_strerror(-err));
    }
}

static void done_one(struct state *st)
{
    if (--st->pending == 0)
        g_main_loop_quit(st->loop);
}

static void on_child_exit(GPid pid, gint wait_status, gpointer data)
{
    struct child *kid = data;
    kid->exited = true;
    kid->failed = !g_spawn_check_wait_status(wait_status, NULL);
    g_spawn_close_pid(pid);
    done_one(kid->st);
}

/* Writes what the pipe takes now. Returns true once stdin is closed (payload in, or an error). */
static bool feed(struct child *kid)
{
    const pkb_workload *w = kid->st->w;
    while (kid->off < w->input_len) {
        ssize_t n = write(kid->in_fd, w->input + kid->off, w->input_len - kid->off);
        if (n > 0)
            kid->off += (size_t)n;
        else if (n < 0 && errno == EAGAIN)
            return false;
        else if (n < 0 && errno != EINTR) {
            fail(kid->st, "write stdin", -errno, NULL);
            break;
        }
    }
    close(kid->in_fd);
    kid->in_fd = -1;
    return true;
}

static gboolean on_stdin(gint fd, GIOCondition cond, gpointer data)
{
    struct child *kid = data;
    (void)fd;
    (void)cond;
    if (!feed(kid))
        return G_SOURCE_CONTINUE;
    done_one(kid->st);
    return G_SOURCE_REMOVE;
}

static gboolean on_stdout(GIOChannel *ch, GIOCondition cond, gpointer data)
{
    struct child *kid = data;
    (void)cond;
    for (;;) {
        gchar *line = NULL;
        gsize len = 0;
        GError *err = NULL;
        GIOStatus s = g_io_channel_read_line(ch, &line, &len, NULL, &err);
        if (s == G_IO_STATUS_NORMAL) {
            kid->lines++;
            kid->bytes += len;
            g_free(line);
            continue;
        }
        if (s == G_IO_STATUS_AGAIN)
            return G_SOURCE_CONTINUE;
        if (s == G_IO_STATUS_ERROR) {
            fail(kid->st, "g_io_channel_read_line", -EIO, err);
            g_error_free(err);
        }
        /* End-of-file (or an error): removing the watch drops the last reference to the
         * channel, which closes the pipe. */
        done_one(kid->st);
        return G_SOURCE_REMOVE;
    }
}

static void watch_stdout(struct child *kid, int fd)
{
    GIOChannel *ch = g_io_channel_unix_new(fd);
    g_io_channel_set_close_on_unref(ch, TRUE);
    g_io_channel_set_flags(ch, G_IO_FLAG_NONBLOCK, NULL);
    GSource *src = g_io_create_watch(ch, G_IO_IN | G_IO_HUP | G_IO_ERR);
    g_source_set_callback(src, G_SOURCE_FUNC(on_stdout), kid, NULL);
    g_source_attach(src, kid->st->ctx);
    g_source_unref(src);
    g_io_channel_unref(ch); /* the watch holds it now */
    kid->st->pending++;
}

static void watch_stdin(struct child *kid, int fd)
{
    kid->in_fd = fd;
    if (!g_unix_set_fd_nonblocking(fd, TRUE, NULL)) {
        fail(kid->st, "O_NONBLOCK on stdin", -errno, NULL);
        close(fd);
        kid->in_fd = -1;
        return;
    }
    if (feed(kid))
        return; /* the small payload fits the pipe: written and closed at once */
    GSource *src = g_unix_fd_source_new(fd, G_IO_OUT);
    g_source_set_callback(src, G_SOURCE_FUNC(on_stdin), kid, NULL);
    g_source_attach(src, kid->st->ctx);
    g_source_unref(src);
    kid->st->pending++;
}

static int start(struct state *st, struct child *kid)
{
    const pkb_workload *w = st->w;
    gchar *argv[] = {(gchar *)w->program, NULL};
    GSpawnFlags flags = G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD;
    bool pipes = w->scenario != PKB_SPAWN_ONLY;
    int in_fd = -1, out_fd = -1;
    GError *err = NULL;
    *kid = (struct child){.st = st, .in_fd = -1};
    gboolean ok = g_spawn_async_with_pipes(
        NULL, argv, NULL, pipes ? flags : flags | G_SPAWN_CHILD_INHERITS_STDIN, NULL, NULL,
        &kid->pid, pipes ? &in_fd : NULL, pipes ? &out_fd : NULL, NULL, &err);
    if (!ok) {
        fail(st, "g_spawn_async_with_pipes", -ENOEXEC, err);
        g_error_free(err);
        return -1;
    }
    GSource *src = g_child_watch_source_new(kid->pid);
    g_source_set_callback(src, G_SOURCE_FUNC(on_child_exit), kid, NULL);
    g_source_attach(src, st->ctx);
    g_source_unref(src);
    st->pending++;
    if (pipes) {
        watch_stdout(kid, out_fd);
        watch_stdin(kid, in_fd);
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
    if (st->kids == NULL) {
        free(st);
        return -ENOMEM;
    }
    st->ctx = g_main_context_new();
    st->loop = g_main_loop_new(st->ctx, FALSE);
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
    st->w = w;
    st->out = out;
    st->rc = 0;
    st->pending = 0;
    int started = 0;
    while (started < w->children && start(st, &st->kids[started]) == 0)
        started++;
    if (w->count_fds)
        out->peak_fds = pkb_count_fds(); /* every child started, none reaped (untimed) */
    /* Until every started child has exited (and been reaped) and every pipe is closed. */
    if (st->pending > 0)
        g_main_loop_run(st->loop);
    for (int i = 0; i < started; i++) {
        const struct child *kid = &st->kids[i];
        out->bytes += kid->bytes;
        out->lines += kid->lines;
        out->children += kid->exited;
        out->failures += kid->exited && kid->failed;
    }
    st->w = NULL;
    st->out = NULL;
    return st->rc;
}

static void teardown(void *state)
{
    struct state *st = state;
    if (st == NULL)
        return;
    g_main_loop_unref(st->loop);
    g_main_context_unref(st->ctx);
    free(st->kids);
    free(st);
}

const pkb_contender pkb_contender_glib = {
    .name = "glib",
    .library_free = true, /* its own machinery: no processkit code (ab leaves it out) */
    .description = "GLib g_spawn_async_with_pipes (fork, bare name) + child watch, "
                   "g_io_channel_read_line lines; N children in one GMainLoop",
    .scenarios = PKB_SCENARIO_BIT(PKB_SPAWN_CAPTURE_SMALL) |
                 PKB_SCENARIO_BIT(PKB_STREAM_LARGE_STDOUT) |
                 PKB_SCENARIO_BIT(PKB_CONCURRENT_FAN_OUT) | PKB_SCENARIO_BIT(PKB_SPAWN_ONLY) |
                 PKB_SCENARIO_BIT(PKB_FAN_OUT_SCALE),
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
