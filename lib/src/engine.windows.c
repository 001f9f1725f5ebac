/*
 * One run's engine on Windows, and its single-run driver.
 *
 * Everything a run waits for arrives as a packet on one I/O completion port: an overlapped read
 * on a stdout/stderr pipe, an overlapped write of stdin, the process's exit and the cancel
 * handle's event (each seen by a thread-pool wait that posts a packet). The steps are the POSIX
 * engine's — feed stdin, read a stream into the pump and deliver its lines, react to the exit,
 * act on passed deadlines (those that do not depend on how we wait are shared: engine.c) —
 * shared by the single-run driver here (a port of the run's own) and by pk_loop (loop.windows.c:
 * one port for many runs). Releasing a run ends its I/O and drains its port, so no packet can
 * arrive for memory that is gone.
 *
 * A read goes straight into the pump's buffer (pk__stream_space), so bytes are never copied
 * twice. At most one read per stream and one write are in flight; a pulling caller's stream is
 * read again only when its buffered lines are used up.
 *
 * The end of a run, as on POSIX: when the direct child exits, a private job is terminated (the
 * whole tree, grandchildren included), then the outcome is read. A stream whose pipe is still
 * held open (by a process outside the run's job) ends as soon as it is empty: a pending read is
 * cancelled when PeekNamedPipe finds nothing in the pipe. So a daemonised grandchild can never
 * hang a run.
 *
 * Outcomes. Exit codes are 32 bits. A code that is a Microsoft NTSTATUS of error severity
 * (0xC0000000-0xDFFFFFFF) or one of the exception codes of warning severity is a crash:
 * PK_OUTCOME_CRASHED with .ntstatus. PK__KILL_CODE (the library's own termination) is reported as
 * SIGKILL, and STATUS_CONTROL_C_EXIT after a Ctrl+Break we sent as that signal. exit(-1) is
 * 0xFFFFFFFF, which has the customer bit set: an ordinary exit with code -1.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define STATUS_CONTROL_C_EXIT_ 0xC000013Au

/* ---- issuing I/O --------------------------------------------------------------------------- */

static void issue_write(struct pk_process *p)
{
    struct pk__op *op = &p->ops[PK__OP_STDIN];
    size_t left = p->in_len - p->in_off;
    if (p->in == NULL || op->pending || p->closing)
        return;
    if (left == 0) {
        pk__close_handle(&p->in); /* the child reads end-of-file */
        return;
    }
    DWORD n = left > 65536 ? 65536 : (DWORD)left;
    memset(&op->ov, 0, sizeof op->ov);
    if (!WriteFile(p->in, p->in_data + p->in_off, n, NULL, &op->ov) &&
        GetLastError() != ERROR_IO_PENDING) {
        /* The child closed its stdin: the rest is discarded, as on POSIX. */
        pk__close_handle(&p->in);
        return;
    }
    op->pending = true;
    p->pending++;
}

static bool want_read(const struct pk_process *p, int i)
{
    const struct pk__stream *s = &p->streams[i];
    return p->pipe[i] != NULL && !p->ops[i].pending && !s->eof && !p->closing &&
           !(p->pulling && s->lines && s->scan < s->end);
}

/* The stream's end: a final line without a newline becomes a line now, so a line callback gets it
 * whichever packet (a read, the exit, a cancelled read) ends the stream. */
static void end_stream(struct pk_process *p, int i)
{
    if (!p->streams[i].eof) {
        pk__stream_commit(&p->streams[i], 0);
        if (p->streams[i].lines)
            pk__engine_deliver(p, i);
    }
    pk__close_handle(&p->pipe[i]);
}

static void issue_read(struct pk_process *p, int i)
{
    if (!want_read(p, i))
        return;
    struct pk__op *op = &p->ops[i];
    char *buf;
    size_t cap;
    int rc = pk__stream_space(&p->streams[i], &buf, &cap);
    if (rc != 0) {
        pk__engine_note_error(p, rc);
        end_stream(p, i);
        return;
    }
    memset(&op->ov, 0, sizeof op->ov);
    DWORD n = cap > 1u << 20 ? 1u << 20 : (DWORD)cap;
    if (!ReadFile(p->pipe[i], buf, n, NULL, &op->ov) && GetLastError() != ERROR_IO_PENDING) {
        DWORD err = GetLastError();
        if (err != ERROR_BROKEN_PIPE)
            pk__engine_note_error(p, pk__win_error(err));
        end_stream(p, i);
        return;
    }
    op->pending = true;
    p->pending++;
}

/* ---- thread-pool waits: the exit and the cancel event ------------------------------------- */

static void CALLBACK posted(PVOID ctx, BOOLEAN timed_out)
{
    (void)timed_out;
    struct pk__op *op = ctx;
    InterlockedExchange(&op->posted, 1);
    PostQueuedCompletionStatus(op->proc->iocp, 0, 0, &op->ov);
}

static int watch(struct pk_process *p, enum pk__op_kind kind, HANDLE object, HANDLE *wait)
{
    struct pk__op *op = &p->ops[kind];
    memset(&op->ov, 0, sizeof op->ov);
    op->posted = 0;
    /* Not WT_EXECUTEINWAITTHREAD, though the callback is short: Wine (8.0) runs such a callback
     * in its wait thread with the wait counted as pending but not queued, and a blocking
     * UnregisterWaitEx at that moment (pk_process_free of a run that was just killed) unlinks
     * an entry from a list it is not on and crashes (seen 1 run in 5 of the 1,000-run test). A
     * pool worker costs a thread hop and is correct on both. */
    if (!RegisterWaitForSingleObject(wait, object, posted, op, INFINITE, WT_EXECUTEONLYONCE))
        return pk__win_error(GetLastError());
    op->pending = true;
    p->pending++;
    return 0;
}

/* Stops a wait (blocking until its callback is not running). A callback that already posted
 * leaves its packet to come; one that never ran will post nothing. */
static void unwatch(struct pk_process *p, enum pk__op_kind kind, HANDLE *wait)
{
    if (*wait == NULL)
        return;
    UnregisterWaitEx(*wait, INVALID_HANDLE_VALUE);
    *wait = NULL;
    struct pk__op *op = &p->ops[kind];
    if (op->pending && !op->posted) {
        op->pending = false;
        p->pending--;
    }
}

void pk__engine_start_reads(struct pk_process *p)
{
    for (int i = 1; i < 3; i++)
        issue_read(p, i);
}

int pk__engine_arm(struct pk_process *p)
{
    issue_write(p);
    int rc = watch(p, PK__OP_EXIT, p->process, &p->exit_wait);
    if (rc == 0 && p->cancel != NULL)
        rc = watch(p, PK__OP_CANCEL, p->cancel->event, &p->cancel_wait);
    return rc;
}

/* ---- the exit ------------------------------------------------------------------------------ */

static bool is_crash(uint32_t code)
{
    if ((code & 0xE0000000u) == 0xC0000000u) /* error severity, not a customer code */
        return true;
    return code == 0x80000002u || code == 0x80000003u || code == 0x80000004u;
}

static void read_outcome(struct pk_process *p)
{
    DWORD code = 0;
    FILETIME c, e, k, u;
    GetExitCodeProcess(p->process, &code);
    if (GetProcessTimes(p->process, &c, &e, &k, &u)) {
        p->outcome.user_us = (int64_t)(((uint64_t)u.dwHighDateTime << 32 | u.dwLowDateTime) / 10);
        p->outcome.sys_us = (int64_t)(((uint64_t)k.dwHighDateTime << 32 | k.dwLowDateTime) / 10);
    }
    if (code == PK__KILL_CODE) {
        p->outcome.kind = PK_OUTCOME_SIGNALED;
        p->outcome.signo = PK__SIGKILL;
    } else if (code == STATUS_CONTROL_C_EXIT_ && p->break_signo != 0) {
        p->outcome.kind = PK_OUTCOME_SIGNALED;
        p->outcome.signo = p->break_signo;
    } else if (is_crash(code)) {
        p->outcome.kind = PK_OUTCOME_CRASHED;
        p->outcome.ntstatus = code;
    } else {
        p->outcome.kind = PK_OUTCOME_EXITED;
        p->outcome.code = (int)code;
    }
}

/* After the exit an empty pipe is the end: a read still waiting is cancelled. */
static void drain_after_exit(struct pk_process *p, int i)
{
    DWORD avail = 0;
    if (p->pipe[i] == NULL)
        return;
    if (!PeekNamedPipe(p->pipe[i], NULL, 0, NULL, &avail, NULL)) {
        if (!p->ops[i].pending)
            end_stream(p, i); /* broken: the writers are gone and nothing is left */
        return;
    }
    if (avail > 0)
        issue_read(p, i);
    else if (p->ops[i].pending)
        CancelIoEx(p->pipe[i], &p->ops[i].ov);
    else if (!(p->pulling && p->streams[i].lines && p->streams[i].scan < p->streams[i].end))
        end_stream(p, i);
}

void pk__process_quiesce(struct pk_process *p)
{
    if (!p->exited && p->process != NULL) {
        pk__engine_kill(p);
        WaitForSingleObject(p->process, 5000);
    }
    p->closing = true;
    unwatch(p, PK__OP_EXIT, &p->exit_wait);
    unwatch(p, PK__OP_CANCEL, &p->cancel_wait);
    p->exited = p->reaped = true;
    HANDLE h[3] = {p->in, p->pipe[1], p->pipe[2]};
    for (int k = 0; k < 3; k++)
        if (p->ops[k].pending)
            CancelIoEx(h[k], &p->ops[k].ov);
}

static void exited(struct pk_process *p)
{
    if (p->exited)
        return;
    if (p->has_own)
        TerminateJobObject(p->own.job, PK__KILL_CODE); /* what the child left behind */
    read_outcome(p);
    p->exited = p->reaped = true;
    unwatch(p, PK__OP_CANCEL, &p->cancel_wait);
    if (p->ops[PK__OP_STDIN].pending)
        CancelIoEx(p->in, &p->ops[PK__OP_STDIN].ov);
    else
        pk__close_handle(&p->in);
    for (int i = 1; i < 3; i++)
        drain_after_exit(p, i);
}

/* ---- packets ------------------------------------------------------------------------------- */

static void read_done(struct pk_process *p, int i, DWORD bytes, DWORD err)
{
    struct pk__stream *s = &p->streams[i];
    if (err != 0 || bytes == 0) {
        if (err != 0 && err != ERROR_BROKEN_PIPE && err != ERROR_OPERATION_ABORTED)
            pk__engine_note_error(p, pk__win_error(err));
        if (err != 0)
            end_stream(p, i);
    } else {
        pk__stream_commit(s, bytes);
        p->lim.last_io_ns = pk__now_ns();
    }
    if (s->lines)
        pk__engine_deliver(p, i);
    if (p->closing)
        end_stream(p, i);
    else if (p->exited)
        drain_after_exit(p, i);
    else
        issue_read(p, i);
}

void pk__engine_packet(struct pk_process *p, struct pk__op *op, DWORD bytes, DWORD err)
{
    op->pending = false;
    p->pending--;
    switch (op->kind) {
    case PK__OP_STDIN:
        if (err != 0 || p->exited) {
            pk__close_handle(&p->in);
        } else {
            p->in_off += bytes;
            issue_write(p);
        }
        break;
    case PK__OP_OUT:
    case PK__OP_ERR:
        read_done(p, (int)op->kind, bytes, err);
        break;
    case PK__OP_EXIT:
        UnregisterWaitEx(p->exit_wait, NULL);
        p->exit_wait = NULL;
        exited(p);
        break;
    case PK__OP_CANCEL:
        UnregisterWaitEx(p->cancel_wait, NULL);
        p->cancel_wait = NULL;
        pk__engine_timers(p, pk__now_ns());
        break;
    case PK__OP_COUNT:
        break;
    }
}

int pk__engine_wait_packet(HANDLE port, DWORD timeout_ms, struct pk_process **who)
{
    DWORD bytes = 0;
    ULONG_PTR key;
    OVERLAPPED *ov = NULL;
    BOOL ok = GetQueuedCompletionStatus(port, &bytes, &key, &ov, timeout_ms);
    DWORD err = ok ? 0 : GetLastError();
    if (ov == NULL)
        return err == WAIT_TIMEOUT ? 0 : pk__win_error(err);
    struct pk__op *op = CONTAINING_RECORD(ov, struct pk__op, ov);
    if (who != NULL)
        *who = op->proc;
    pk__engine_packet(op->proc, op, bytes, err);
    return 1;
}

/* ---- time limits and the end --------------------------------------------------------------- */

void pk__engine_kill(struct pk_process *p)
{
    if (p->exited)
        return;
    p->terminated = true;
    if (p->has_own)
        TerminateJobObject(p->own.job, PK__KILL_CODE);
    else
        TerminateProcess(p->process, PK__KILL_CODE);
}

static void tree_signal(struct pk_process *p, int signo)
{
    if (p->exited)
        return;
    if (signo == PK__SIGKILL) {
        pk__engine_kill(p);
        return;
    }
    /* Ctrl+Break to the child's process group; without a console to share it cannot arrive,
     * and the grace then simply runs out. */
    p->break_signo = signo;
    (void)GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, (DWORD)p->pid);
}

void pk__engine_signal(struct pk_process *p, int signo)
{
    tree_signal(p, signo);
}

bool pk__engine_done(const struct pk_process *p)
{
    return p->exited && p->pipe[1] == NULL && p->pipe[2] == NULL && p->pending == 0;
}

/* ---- the single-run driver ----------------------------------------------------------------- */

/* Waits for the next packet of this run (or its next deadline) and acts. 0 or -errno. */
int pk__engine_wait(struct pk_process *p)
{
    int64_t wake = pk__engine_next_wakeup(p), now = pk__now_ns();
    DWORD ms = INFINITE;
    if (wake != 0)
        ms = wake > now ? (DWORD)((wake - now + 999999) / 1000000) : 0;
    int r = pk__engine_wait_packet(p->iocp, ms, NULL);
    pk__engine_timers(p, pk__now_ns());
    return r < 0 ? r : 0;
}

int pk__process_finish(struct pk_process *p, pk_result *res)
{
    pk__engine_start_reads(p);
    if (p->pulling) {
        /* Lines the caller did not pull are still delivered, accounted and captured. */
        p->pulling = false;
        for (int i = 1; i < 3; i++) {
            if (p->streams[i].lines)
                pk__engine_deliver(p, i);
            if (p->exited)
                drain_after_exit(p, i);
            else
                issue_read(p, i);
        }
    }
    while (!pk__engine_done(p)) {
        int rc = pk__engine_wait(p);
        if (rc != 0) {
            pk__engine_note_error(p, rc);
            pk__engine_kill(p);
            break;
        }
    }
    return pk__engine_result(p, res);
}

void pk__process_close(struct pk_process *p)
{
    /* On a loop's port, draining also hands other runs their packets: they are alive. */
    if (!p->closing)
        pk__process_quiesce(p);
    while (p->pending > 0 && pk__engine_wait_packet(p->iocp, 5000, NULL) > 0)
        ;
    pk__close_handle(&p->in);
    for (int i = 1; i < 3; i++) {
        pk__close_handle(&p->pipe[i]);
        pk__stream_release(&p->streams[i]);
    }
    pk__close_handle(&p->process);
    if (p->has_own)
        pk__group_close(&p->own);
    p->has_own = false;
    if (p->own_iocp && p->iocp != NULL)
        CloseHandle(p->iocp);
    p->iocp = NULL;
}

int pk_process_read_line(pk_process *p, pk_line *line)
{
    if (p == NULL || line == NULL)
        return -EINVAL;
    if (!p->pulling) {
        /* A read already in flight on the bulk path (pk_wait_any started it) lands in the
         * capture buffer: it is taken back first, so the stream can switch to lines when
         * nothing was read yet. */
        for (int i = 1; i < 3; i++)
            if (p->ops[i].pending && !p->streams[i].lines)
                CancelIoEx(p->pipe[i], &p->ops[i].ov);
        while (p->ops[1].pending || p->ops[2].pending) {
            int rc = pk__engine_wait_packet(p->iocp, INFINITE, NULL);
            if (rc < 0)
                return rc;
        }
        p->pulling = true;
        for (int i = 1; i < 3; i++)
            pk__stream_want_lines(&p->streams[i]);
    }
    return pk__engine_pull(p, line);
}

bool pk__engine_pull_more(struct pk_process *p, int i)
{
    if (p->exited && !p->ops[i].pending && p->pipe[i] != NULL)
        drain_after_exit(p, i);
    else
        issue_read(p, i);
    return p->pipe[i] != NULL || p->ops[i].pending;
}
