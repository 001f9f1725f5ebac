/*
 * The pk_process handle on Windows: pk_run, pk_spawn, waiting, signalling, freeing, and
 * pk_wait_any. A run started here owns a completion port of its own (a loop's runs share the
 * loop's); releasing a handle ends its I/O and drains the port, so no packet can arrive for
 * memory that is gone.
 *
 * Signals. Windows has none, so the POSIX numbers the API takes are mapped: SIGKILL (9)
 * terminates (TerminateProcess, or TerminateJobObject for a tree) with PK__KILL_CODE, reported
 * back as signaled/SIGKILL; SIGTERM (15) and SIGINT (2) send Ctrl+Break to the child's process
 * group, which a console program handles like Ctrl+C (-ENOTSUP when no console is shared with
 * it); 0 probes. Any other number is -EINVAL.
 */
#include "internal.windows.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void pk__process_close(struct pk_process *p)
{
    /* On a loop's port, draining also hands other runs their packets: they are alive. */
    if (!p->closing)
        pk__process_quiesce(p);
    while (p->pending > 0 && pk__engine_wait_packet(p->iocp, 5000, NULL) > 0)
        ;
    if (p->in != NULL)
        CloseHandle(p->in);
    p->in = NULL;
    for (int i = 1; i < 3; i++) {
        if (p->pipe[i] != NULL)
            CloseHandle(p->pipe[i]);
        p->pipe[i] = NULL;
        pk__stream_release(&p->streams[i]);
    }
    if (p->process != NULL)
        CloseHandle(p->process);
    p->process = NULL;
    if (p->has_own)
        pk__group_teardown(&p->own);
    p->has_own = false;
    if (p->own_iocp && p->iocp != NULL)
        CloseHandle(p->iocp);
    p->iocp = NULL;
}

int pk_run(const pk_command *cmd, pk_result *res)
{
    if (res == NULL)
        return -EINVAL;
    memset(res, 0, sizeof *res);
    struct pk_process proc;
    int rc = pk__process_start(cmd, &proc, NULL, res);
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
    struct pk_process *p = malloc(sizeof *p);
    if (p == NULL)
        return -ENOMEM;
    int rc = pk__process_start(cmd, p, NULL, failure);
    if (rc != 0) {
        free(p);
        return rc;
    }
    p->heap = true;
    *out = p;
    return 0;
}

int pk_process_wait(pk_process *p, pk_result *res)
{
    if (p == NULL || res == NULL)
        return -EINVAL;
    memset(res, 0, sizeof *res);
    if (p->taken)
        return -ECHILD;
    p->taken = true;
    return pk__process_finish(p, res);
}

static int signal_one(struct pk_process *p, int signo)
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

int pk_process_signal(pk_process *p, int signo)
{
    if (p == NULL)
        return -EINVAL;
    if (p->reaped)
        return -ESRCH;
    return signal_one(p, signo);
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

pk_containment pk_process_containment(const pk_process *p)
{
    return p != NULL ? p->containment : PK_CONTAIN_NONE;
}

int pk_process_pid(const pk_process *p)
{
    return p != NULL ? p->pid : -1;
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

void pk_process_free(pk_process *p)
{
    if (p == NULL)
        return;
    pk__process_close(p);
    free(p);
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
