/*
 * Starting a described command and running it to completion with capture.
 *
 * Start: validate, resolve the program in the parent (a bare name costs one PATH walk, a path
 * none), build the environment only when it changes, create the pipes the command asks for
 * (O_CLOEXEC, so a concurrent spawn in another thread never inherits them), describe the child's
 * stdio as a plan, and hand the plan to the mechanism (spawn.linux.c). Files and /dev/null are
 * opened by the child itself, so the parent has nothing to close for them.
 *
 * Finish: one poll loop feeds stdin and drains stdout and stderr at the same time, so a child that
 * writes while it reads never deadlocks against us (64 MiB each way through `cat` is a test).
 * Reads go straight into the capture buffer; the first read of a stream goes to the stack so a
 * stream that stays empty costs no allocation. Then the child is reaped through its pidfd.
 *
 * Writing to a pipe whose reader is gone raises SIGPIPE, which would kill a host that has not
 * ignored it; stdin writes therefore run with SIGPIPE blocked, and a SIGPIPE our own write
 * generated is consumed before the mask is restored.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char dev_null[] = "/dev/null";

static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

static bool valid_stdio(const pk_stdio *s, int stream)
{
    switch (s->kind) {
    case PK_STDIO_DEFAULT:
    case PK_STDIO_NULL:
    case PK_STDIO_INHERIT:
        return true;
    case PK_STDIO_CAPTURE:
        return stream != 0;
    case PK_STDIO_BYTES:
        return stream == 0 && (s->data != NULL || s->len == 0);
    case PK_STDIO_FILE:
        return s->path != NULL && s->path[0] != '\0';
    case PK_STDIO_FD:
        return s->fd >= 0;
    case PK_STDIO_MERGE:
        return stream == 2;
    }
    return false;
}

/* Fills the child's plan for one stream; creates a pipe when the stream is captured or fed.
 * *child_end receives the descriptor the parent must close after the spawn. */
static int
plan_stream(const pk_stdio *s, int stream, struct pk__io_plan *io, int *parent_end, int *child_end)
{
    pk_stdio_kind kind = s->kind;
    if (kind == PK_STDIO_DEFAULT)
        kind = stream == 0 ? PK_STDIO_NULL : PK_STDIO_CAPTURE;
    if (kind == PK_STDIO_BYTES && s->len == 0)
        kind = PK_STDIO_NULL; /* nothing to feed: the child sees EOF at once either way */

    switch (kind) {
    case PK_STDIO_NULL:
        *io = (struct pk__io_plan){PK__IO_OPEN, -1, dev_null, stream == 0 ? O_RDONLY : O_WRONLY};
        return 0;
    case PK_STDIO_INHERIT:
        *io = (struct pk__io_plan){PK__IO_KEEP, -1, NULL, 0};
        return 0;
    case PK_STDIO_FILE: {
        int flags = stream == 0 ? O_RDONLY : O_WRONLY | O_CREAT | (s->append ? O_APPEND : O_TRUNC);
        *io = (struct pk__io_plan){PK__IO_OPEN, -1, s->path, flags};
        return 0;
    }
    case PK_STDIO_FD:
        *io = (struct pk__io_plan){PK__IO_DUP, s->fd, NULL, 0};
        return 0;
    case PK_STDIO_MERGE:
        *io = (struct pk__io_plan){PK__IO_SAME_AS_1, -1, NULL, 0};
        return 0;
    case PK_STDIO_CAPTURE:
    case PK_STDIO_BYTES: {
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0)
            return -errno;
        /* p[0] reads, p[1] writes: the child reads its stdin, writes its outputs. */
        *parent_end = stream == 0 ? p[1] : p[0];
        *child_end = stream == 0 ? p[0] : p[1];
        *io = (struct pk__io_plan){PK__IO_DUP, *child_end, NULL, 0};
        return 0;
    }
    case PK_STDIO_DEFAULT:
        break;
    }
    return -EINVAL;
}

static void set_failure(pk_result *failure, pk_stage stage, int err)
{
    if (failure == NULL)
        return;
    failure->outcome.kind = PK_OUTCOME_SPAWN_FAILED;
    failure->outcome.stage = stage;
    failure->outcome.error = err;
}

int pk__process_start(const pk_command *cmd, struct pk_process *proc, pk_result *failure)
{
    memset(proc, 0, sizeof *proc);
    proc->pidfd = -1;
    proc->fds[0] = proc->fds[1] = proc->fds[2] = -1;
    proc->start_ns = pk__now_ns();

    const char *program = NULL;
    if (cmd != NULL)
        program = cmd->program != NULL ? cmd->program : (cmd->argv ? cmd->argv[0] : NULL);
    if (program == NULL || program[0] == '\0' || !valid_stdio(&cmd->in, 0) ||
        !valid_stdio(&cmd->out, 1) || !valid_stdio(&cmd->err, 2)) {
        set_failure(failure, PK_STAGE_VALIDATE, -EINVAL);
        return -EINVAL;
    }

    struct pk__child_plan plan = {.cwd = cmd->cwd};
    char pathbuf[PATH_MAX];
    plan.path = program;
    if (strchr(program, '/') == NULL) {
        const char *pathvar = pk__child_path(&cmd->env);
        int rc = pk__resolve(program, pathvar, pathbuf, sizeof pathbuf);
        if (rc != 0) {
            set_failure(failure, PK_STAGE_RESOLVE, rc);
            if (rc == PK_ENOTFOUND && failure != NULL)
                failure->searched = strdup(pathvar);
            return rc;
        }
        plan.path = pathbuf;
    }

    char **owned_env = NULL;
    char *const *envp;
    int rc = pk__build_env(&cmd->env, &envp, &owned_env);
    if (rc != 0) {
        set_failure(failure, PK_STAGE_VALIDATE, rc);
        return rc;
    }
    plan.envp = envp;
    const char *default_argv[2] = {program, NULL};
    plan.argv = (char *const *)(cmd->argv != NULL ? cmd->argv : default_argv);

    int child_ends[3] = {-1, -1, -1};
    const pk_stdio *streams[3] = {&cmd->in, &cmd->out, &cmd->err};
    for (int i = 0; i < 3 && rc == 0; i++)
        rc = plan_stream(streams[i], i, &plan.io[i], &proc->fds[i], &child_ends[i]);

    if (rc == 0)
        rc = pk__spawn_plan(&plan, &proc->pid, &proc->pidfd);
    for (int i = 0; i < 3; i++)
        close_fd(&child_ends[i]);
    free(owned_env);

    if (rc != 0) {
        pk_stage stage = PK_STAGE_PREPARE;
        if (rc == PK__ECHILD_FAILED) {
            stage = (pk_stage)plan.err_stage;
            rc = -plan.err_errno;
        } else if (rc != -EMFILE && rc != -ENFILE && rc != -ENOMEM) {
            stage = PK_STAGE_CLONE;
        }
        set_failure(failure, stage, rc);
        for (int i = 0; i < 3; i++)
            close_fd(&proc->fds[i]);
        return rc;
    }

    if (proc->fds[0] >= 0) {
        proc->in_data = cmd->in.data;
        proc->in_len = cmd->in.len;
        /* Up to PIPE_BUF bytes go into the fresh pipe at once in one blocking write; a larger
         * payload is fed by the poll loop, which needs a non-blocking descriptor. */
        if (proc->in_len > PIPE_BUF)
            (void)fcntl(proc->fds[0], F_SETFL, O_NONBLOCK);
    }
    return 0;
}

/* Feeds stdin until the pipe is full, everything is written, or the reader is gone. */
static void write_stdin(struct pk_process *p)
{
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    bool done = false;
    while (p->in_off < p->in_len) {
        ssize_t n = write(p->fds[0], p->in_data + p->in_off, p->in_len - p->in_off);
        if (n > 0) {
            p->in_off += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN) {
            break;
        } else {
            /* EPIPE: the child closed its stdin; the rest is discarded, as a shell would. Our
             * write queued a SIGPIPE for this thread; take it back unless the caller blocks
             * SIGPIPE itself (then a pending one may be theirs). */
            if (n < 0 && errno == EPIPE && !sigismember(&old, SIGPIPE)) {
                struct timespec zero = {0, 0};
                (void)sigtimedwait(&pipe_set, NULL, &zero);
            }
            done = true;
            break;
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (done || p->in_off >= p->in_len)
        close_fd(&p->fds[0]);
}

/* Reads once from a captured stream into its buffer; closes the descriptor at EOF. */
static int drain(int *fd, struct pk__buffer *b)
{
    ssize_t n;
    if (b->data == NULL) {
        /* First read on the stack: an empty stream then costs no allocation at all. */
        char first[16384];
        do
            n = read(*fd, first, sizeof first);
        while (n < 0 && errno == EINTR);
        if (n > 0) {
            size_t cap = (size_t)n * 2 > 65536 ? (size_t)n * 2 : 65536;
            b->data = malloc(cap);
            if (b->data == NULL)
                return -ENOMEM;
            b->cap = cap;
            memcpy(b->data, first, (size_t)n);
        }
    } else {
        if (b->cap - b->len < 16384 + 1) {
            size_t cap = b->cap * 2;
            char *grown = realloc(b->data, cap);
            if (grown == NULL)
                return -ENOMEM;
            b->data = grown;
            b->cap = cap;
        }
        do
            n = read(*fd, b->data + b->len, b->cap - b->len - 1);
        while (n < 0 && errno == EINTR);
    }
    if (n > 0) {
        b->len += (size_t)n;
        b->total += (uint64_t)n;
        return 0;
    }
    if (n < 0 && errno == EAGAIN)
        return 0;
    close_fd(fd);
    return n < 0 ? -errno : 0;
}

static void hand_over(struct pk__buffer *b, pk_output *out)
{
    if (b->data != NULL)
        b->data[b->len] = '\0';
    out->data = b->data;
    out->len = b->len;
    out->total_bytes = b->total;
    *b = (struct pk__buffer){0};
}

int pk__process_finish(struct pk_process *p, pk_result *res)
{
    int rc = 0;
    if (p->fds[0] >= 0 && p->in_len <= PIPE_BUF)
        write_stdin(p);

    while (rc == 0 && (p->fds[0] >= 0 || p->fds[1] >= 0 || p->fds[2] >= 0)) {
        struct pollfd pfd[3];
        int idx[3];
        nfds_t n = 0;
        for (int i = 0; i < 3; i++) {
            if (p->fds[i] >= 0) {
                pfd[n] = (struct pollfd){p->fds[i], i == 0 ? POLLOUT : POLLIN, 0};
                idx[n++] = i;
            }
        }
        if (poll(pfd, n, -1) < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            break;
        }
        for (nfds_t k = 0; k < n && rc == 0; k++) {
            if (pfd[k].revents == 0)
                continue;
            int i = idx[k];
            if (i == 0)
                write_stdin(p);
            else
                rc = drain(&p->fds[i], i == 1 ? &p->out : &p->err);
        }
    }
    for (int i = 0; i < 3; i++)
        close_fd(&p->fds[i]);

    int reap_rc = pk__reap(p->pid, p->pidfd, &res->outcome);
    p->reaped = true;
    close_fd(&p->pidfd);
    res->outcome.pid = p->pid;
    res->outcome.wall_ns = pk__now_ns() - p->start_ns;
    hand_over(&p->out, &res->out);
    hand_over(&p->err, &res->err);
    return rc != 0 ? rc : reap_rc;
}

void pk__process_close(struct pk_process *p)
{
    if (!p->reaped && p->pid > 0) {
        pk_outcome ignored = {0};
        (void)pk__signal(p->pid, p->pidfd, SIGKILL);
        (void)pk__reap(p->pid, p->pidfd, &ignored);
        p->reaped = true;
    }
    close_fd(&p->pidfd);
    for (int i = 0; i < 3; i++)
        close_fd(&p->fds[i]);
    free(p->out.data);
    free(p->err.data);
    p->out = p->err = (struct pk__buffer){0};
}

/* ---- public API ---------------------------------------------------------------------------- */

int pk_run(const pk_command *cmd, pk_result *res)
{
    if (res == NULL)
        return -EINVAL;
    memset(res, 0, sizeof *res);
    struct pk_process proc;
    int rc = pk__process_start(cmd, &proc, res);
    if (rc != 0)
        return rc;
    rc = pk__process_finish(&proc, res);
    pk__process_close(&proc);
    return rc;
}

void pk_result_release(pk_result *res)
{
    if (res == NULL)
        return;
    free(res->out.data);
    free(res->err.data);
    free(res->searched);
    memset(res, 0, sizeof *res);
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
    int rc = pk__process_start(cmd, proc, failure);
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
    if (proc->reaped)
        return -ECHILD;
    return pk__process_finish(proc, res);
}

int pk_process_signal(pk_process *proc, int signo)
{
    if (proc == NULL)
        return -EINVAL;
    if (proc->reaped)
        return -ESRCH;
    return pk__signal(proc->pid, proc->pidfd, signo);
}

int pk_process_pid(const pk_process *proc)
{
    return proc != NULL ? proc->pid : -1;
}

int pk_process_pidfd(const pk_process *proc)
{
    return proc != NULL ? proc->pidfd : -1;
}

int pk_process_fd(const pk_process *proc, int stream)
{
    if (proc == NULL || stream < 0 || stream > 2)
        return -1;
    return proc->fds[stream];
}

void pk_process_free(pk_process *proc)
{
    if (proc == NULL)
        return;
    pk__process_close(proc);
    free(proc);
}
