/*
 * The event loop's half on Windows: one thread drives many runs through one I/O completion port
 * (the rest of pk_loop is shared with POSIX: loop.c). Every run's pipes are associated with the
 * loop's port at its start, and its exit and cancel waits post there, so one
 * GetQueuedCompletionStatus serves them all; the engine steps are the single-run driver's
 * (engine.windows.c). Time limits are checked after every batch of packets, the wait bounded by
 * the earliest deadline of any run.
 *
 * A completion port is not a waitable object nor a descriptor, so pk_loop_fd returns -1 here: a
 * host loop embeds this one by calling pk_loop_step(loop, 0) when it has time.
 */
#include "loop.h"

int pk__loop_open(pk_loop *loop)
{
    loop->iocp = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 1);
    return loop->iocp == NULL ? pk__win_error(GetLastError()) : 0;
}

void pk__loop_close(pk_loop *loop)
{
    CloseHandle(loop->iocp);
}

int pk_loop_fd(const pk_loop *loop)
{
    (void)loop;
    return -1;
}

int pk__loop_add(pk_loop *loop, struct pk__loop_run *r, const pk_command *cmd, pk_result *failure)
{
    int rc = pk__process_start_on(cmd, &r->proc, loop->iocp, failure);
    if (rc == 0)
        pk__engine_start_reads(&r->proc);
    return rc;
}

void pk__loop_drop(pk_loop *loop, struct pk__loop_run *r)
{
    (void)loop;
    pk__process_close(&r->proc);
}

/* Kill-on-close for every run, then every packet still to come is taken before any run is
 * dropped: a packet names memory of its run. */
void pk__loop_end(pk_loop *loop)
{
    bool pending = false;
    for (struct pk__loop_run *r = loop->runs; r != NULL; r = r->next) {
        pk__process_quiesce(&r->proc);
        pending |= r->proc.pending > 0;
    }
    while (pending && pk__engine_wait_packet(loop->iocp, 5000, NULL) > 0) {
        pending = false;
        for (struct pk__loop_run *r = loop->runs; r != NULL; r = r->next)
            pending |= r->proc.pending > 0;
    }
}

/* Milliseconds until the earliest deadline of any run, capped by timeout_ms (-1: none). */
static DWORD wait_ms(const pk_loop *loop, int timeout_ms)
{
    int64_t now = pk__now_ns(), wake = 0;
    for (const struct pk__loop_run *r = loop->runs; r != NULL; r = r->next) {
        int64_t w = pk__engine_next_wakeup(&r->proc);
        if (w != 0 && (wake == 0 || w < wake))
            wake = w;
    }
    DWORD ms = timeout_ms < 0 ? INFINITE : (DWORD)timeout_ms;
    if (wake != 0) {
        int64_t left = wake > now ? (wake - now + 999999) / 1000000 : 0;
        if (ms == INFINITE || (int64_t)ms > left)
            ms = (DWORD)left;
    }
    return ms;
}

int pk__loop_wait(pk_loop *loop, int timeout_ms)
{
    int rc = pk__engine_wait_packet(loop->iocp, wait_ms(loop, timeout_ms), NULL);
    /* Whatever else is ready goes in the same step. */
    for (int k = 0; rc > 0 && k < 64; k++)
        rc = pk__engine_wait_packet(loop->iocp, 0, NULL);
    if (rc < 0)
        return rc;
    int64_t now = pk__now_ns();
    for (struct pk__loop_run *r = loop->runs; r != NULL; r = r->next) {
        pk__engine_timers(&r->proc, now);
        if (pk__engine_done(&r->proc))
            pk__loop_finished(loop, r);
    }
    return 0;
}
