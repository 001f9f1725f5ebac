/*
 * Starting a described command on Windows: the pk_process handle's birth, signals, and
 * pk_wait_any. A start validates the command (process.c), makes the program's text and the
 * child's standard handles (spawn.windows.c), attaches our pipe ends to the run's completion port
 * (its own, or its loop's), makes its job (process.c), creates the child (spawn.windows.c) and arms
 * the engine's waits (engine.windows.c). The rest of the handle (pk_run, pk_spawn, waiting) is
 * shared with POSIX (process.c).
 *
 * Signals. Windows has none, so the POSIX numbers the API takes are mapped: SIGKILL (9)
 * terminates (TerminateProcess, or TerminateJobObject for a tree) with PK__KILL_CODE, reported
 * back as signaled/SIGKILL; SIGTERM (15) and SIGINT (2) send Ctrl+Break to the child's process
 * group, which a console program handles like Ctrl+C (-ENOTSUP when no console is shared with
 * it); 0 probes. Any other number is -EINVAL.
 */
#include "command.h"
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- the start ----------------------------------------------------------------------------- */

static void init_handle(struct pk_process *p)
{
    memset(p, 0, sizeof *p);
    for (int i = 1; i < 3; i++)
        p->streams[i].fd = -1;
    for (int k = 0; k < PK__OP_COUNT; k++)
        p->ops[k] = (struct pk__op){.proc = p, .kind = (enum pk__op_kind)k};
    p->start_ns = pk__now_ns();
}

/* Undoes a start that failed: the handle owns nothing afterwards. */
static int
fail_start(struct pk_process *p, struct pk__start *st, pk_result *failure, pk_stage stage, int rc)
{
    pk__set_failure(failure, stage, rc);
    pk__spawn_release(st);
    pk__close_handle(&p->in);
    for (int i = 1; i < 3; i++) {
        pk__close_handle(&p->pipe[i]);
        pk__stream_release(&p->streams[i]);
    }
    if (p->has_own)
        pk__group_close(&p->own);
    p->has_own = false;
    if (p->own_iocp)
        pk__close_handle(&p->iocp);
    return rc;
}

/* Our pipe ends complete on the port; the exit and cancel waits post there too. */
static int attach_port(struct pk_process *p, HANDLE iocp)
{
    p->iocp = iocp;
    if (iocp == NULL) {
        p->iocp = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 1);
        if (p->iocp == NULL)
            return pk__win_error(GetLastError());
        p->own_iocp = true;
    }
    HANDLE ends[3] = {p->in, p->pipe[1], p->pipe[2]};
    for (int i = 0; i < 3; i++)
        if (ends[i] != NULL && CreateIoCompletionPort(ends[i], p->iocp, 0, 0) == NULL)
            return pk__win_error(GetLastError());
    return 0;
}

int pk__process_start_on(const pk_command *cmd,
                         struct pk_process *p,
                         HANDLE iocp,
                         pk_result *failure)
{
    init_handle(p);
    const char *program;
    int rc = pk__process_check(cmd, failure, &program);
    if (rc != 0)
        return rc;
    struct pk__start st = {0};
    pk_stage stage;
    rc = pk__spawn_text(cmd, program, &st, failure, &stage);
    if (rc == 0) {
        stage = PK_STAGE_STDIO;
        rc = pk__spawn_stdio(cmd, p, &st);
    }
    if (rc == 0) {
        stage = PK_STAGE_PREPARE;
        rc = attach_port(p, iocp);
    }
    if (rc == 0) {
        stage = PK_STAGE_CONTAIN;
        rc = pk__process_contain(cmd, p);
    }
    if (rc == 0)
        rc = pk__spawn_create(p, &st, &stage);
    if (rc != 0)
        return fail_start(p, &st, failure, stage, rc);
    pk__spawn_release(&st); /* the child has its copies: we keep only our ends */
    pk__process_arm(cmd, p, p->in != NULL);
    rc = pk__engine_arm(p);
    if (rc != 0) {
        pk__set_failure(failure, PK_STAGE_PREPARE, rc);
        pk__process_close(p);
    }
    return rc;
}

int pk__process_start(const pk_command *cmd,
                      struct pk_process *p,
                      pk_result *failure,
                      bool exit_only)
{
    (void)exit_only; /* every run waits for its exit on the process handle */
    return pk__process_start_on(cmd, p, NULL, failure);
}

/* ---- signals and the accessors ------------------------------------------------------------ */

int pk__process_signal(struct pk_process *p, int signo)
{
    switch (signo) {
    case 0:
        return 0;
    case PK__SIGKILL:
        p->terminated = true;
        return TerminateProcess(p->process, PK__KILL_CODE) ? 0 : pk__win_error(GetLastError());
    case PK__SIGTERM:
    case PK__SIGINT:
        p->break_signo = signo;
        return GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, (DWORD)p->pid) ? 0 : -ENOTSUP;
    default:
        return -EINVAL;
    }
}

int pk_process_signal_tree(pk_process *p, int signo)
{
    if (p == NULL)
        return -EINVAL;
    if (p->group != NULL) {
        if (signo == PK__SIGTERM || signo == PK__SIGINT)
            p->break_signo = signo;
        return pk__group_signal(p->group, signo);
    }
    return pk_process_signal(p, signo);
}

int pk_process_pidfd(const pk_process *p)
{
    (void)p;
    return -1; /* Windows has handles, not descriptors */
}

int pk_process_fd(const pk_process *p, int stream)
{
    (void)p, (void)stream;
    return -1;
}

/* Handles whatever packets are ready on each run's port, without blocking. */
static void drain_ready(pk_process *const *procs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (procs[i] != NULL && procs[i]->iocp != NULL && !procs[i]->pulling)
            pk__engine_start_reads(procs[i]);
    for (size_t i = 0; i < n; i++)
        if (procs[i] != NULL && procs[i]->iocp != NULL)
            while (pk__engine_wait_packet(procs[i]->iocp, 0, NULL) > 0)
                ;
}

int pk_wait_any(pk_process *const *procs, size_t n, int timeout_ms, size_t *index)
{
    if ((procs == NULL && n > 0) || index == NULL || n > MAXIMUM_WAIT_OBJECTS)
        return -EINVAL;
    int64_t deadline = timeout_ms >= 0 ? pk__now_ns() + (int64_t)timeout_ms * 1000000 : 0;
    HANDLE h[MAXIMUM_WAIT_OBJECTS];
    size_t who[MAXIMUM_WAIT_OBJECTS];
    for (;;) {
        /* The pipes are drained between waits of at most 10 ms, so no child blocks on a full
         * pipe while we wait for another (a completion port is not a waitable object). */
        drain_ready(procs, n);
        DWORD k = 0;
        for (size_t i = 0; i < n; i++) {
            if (procs[i] == NULL || procs[i]->reaped)
                continue;
            h[k] = procs[i]->process;
            who[k++] = i;
        }
        if (k == 0)
            return -ECHILD;
        DWORD ms = 10;
        if (deadline != 0) {
            int64_t left = deadline - pk__now_ns();
            if (left <= 0)
                ms = 0;
            else if (left < 10000000)
                ms = (DWORD)((left + 999999) / 1000000);
        }
        DWORD r = WaitForMultipleObjects(k, h, FALSE, ms);
        if (r < WAIT_OBJECT_0 + k) {
            *index = who[r - WAIT_OBJECT_0];
            return 0;
        }
        if (r == WAIT_FAILED)
            return pk__win_error(GetLastError());
        if (deadline != 0 && pk__now_ns() >= deadline)
            return -ETIMEDOUT;
    }
}
