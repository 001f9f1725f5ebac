/*
 * The event loop on Windows: one thread drives many runs through one I/O completion port. Every
 * run's pipes are associated with the loop's port at its start, and its exit and cancel waits post
 * there, so one GetQueuedCompletionStatus serves them all; the engine steps are the single-run
 * driver's (engine.windows.c). Time limits are checked after every batch of packets, the wait
 * bounded by the earliest deadline of any run.
 *
 * A completion port is not a waitable object nor a descriptor, so pk_loop_fd returns -1 here: a
 * host loop embeds this one by calling pk_loop_step(loop, 0) when it has time.
 */
#include "internal.windows.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct run {
    struct pk_process proc;
    pk_done_fn done;
    void *user;
    struct run *prev, *next;
};

struct pk_loop {
    HANDLE iocp;
    struct run *runs;
    size_t active;
};

int pk_loop_new(pk_loop **out)
{
    if (out == NULL)
        return -EINVAL;
    *out = NULL;
    pk_loop *loop = calloc(1, sizeof *loop);
    if (loop == NULL)
        return -ENOMEM;
    loop->iocp = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 1);
    if (loop->iocp == NULL) {
        int err = pk__win_error(GetLastError());
        free(loop);
        return err;
    }
    *out = loop;
    return 0;
}

int pk_loop_fd(const pk_loop *loop)
{
    (void)loop;
    return -1;
}

size_t pk_loop_active(const pk_loop *loop)
{
    return loop != NULL ? loop->active : 0;
}

int pk_loop_start(
    pk_loop *loop, const pk_command *cmd, pk_done_fn done, void *user, pk_result *failure)
{
    if (failure != NULL)
        memset(failure, 0, sizeof *failure);
    if (loop == NULL || done == NULL)
        return -EINVAL;
    struct run *r = calloc(1, sizeof *r);
    if (r == NULL)
        return -ENOMEM;
    r->done = done;
    r->user = user;
    int rc = pk__process_start(cmd, &r->proc, loop->iocp, failure);
    if (rc != 0) {
        free(r);
        return rc;
    }
    r->proc.loop_run = r;
    pk__engine_start_reads(&r->proc);
    r->next = loop->runs;
    if (loop->runs != NULL)
        loop->runs->prev = r;
    loop->runs = r;
    loop->active++;
    return 0;
}

static void unlink_run(pk_loop *loop, struct run *r)
{
    if (r->prev != NULL)
        r->prev->next = r->next;
    else
        loop->runs = r->next;
    if (r->next != NULL)
        r->next->prev = r->prev;
    loop->active--;
}

/* Milliseconds until the earliest deadline of any run, capped by timeout_ms (-1: none). */
static DWORD wait_ms(const pk_loop *loop, int timeout_ms)
{
    int64_t now = pk__now_ns(), wake = 0;
    for (const struct run *r = loop->runs; r != NULL; r = r->next) {
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

int pk_loop_step(pk_loop *loop, int timeout_ms)
{
    if (loop == NULL)
        return -EINVAL;
    if (loop->active == 0)
        return 0;
    int rc = pk__engine_wait_packet(loop->iocp, wait_ms(loop, timeout_ms), NULL);
    /* Whatever else is ready goes in the same step. */
    for (int k = 0; rc > 0 && k < 64; k++)
        rc = pk__engine_wait_packet(loop->iocp, 0, NULL);
    if (rc < 0)
        return rc;
    int64_t now = pk__now_ns();
    int finished = 0;
    struct run *r = loop->runs;
    while (r != NULL) {
        struct run *next = r->next;
        pk__engine_timers(&r->proc, now);
        if (pk__engine_done(&r->proc)) {
            unlink_run(loop, r);
            pk_result res;
            memset(&res, 0, sizeof res);
            int result = pk__engine_result(&r->proc, &res);
            pk__process_close(&r->proc);
            pk_done_fn done = r->done;
            void *user = r->user;
            free(r);
            done(user, result, &res);
            finished++;
        }
        r = next;
    }
    return finished;
}

int pk_loop_run(pk_loop *loop)
{
    if (loop == NULL)
        return -EINVAL;
    while (loop->active > 0) {
        int rc = pk_loop_step(loop, -1);
        if (rc < 0)
            return rc;
    }
    return 0;
}

void pk_loop_free(pk_loop *loop)
{
    if (loop == NULL)
        return;
    /* Kill-on-close for every run, then every packet still to come is taken before anything is
     * freed: a packet names memory of its run. */
    bool pending = false;
    for (struct run *r = loop->runs; r != NULL; r = r->next) {
        pk__process_quiesce(&r->proc);
        pending |= r->proc.pending > 0;
    }
    while (pending && pk__engine_wait_packet(loop->iocp, 5000, NULL) > 0) {
        pending = false;
        for (struct run *r = loop->runs; r != NULL; r = r->next)
            pending |= r->proc.pending > 0;
    }
    struct run *r = loop->runs;
    while (r != NULL) {
        struct run *next = r->next;
        pk__process_close(&r->proc);
        free(r);
        r = next;
    }
    CloseHandle(loop->iocp);
    free(loop);
}
