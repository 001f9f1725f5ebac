/*
 * pk_loop's half that every platform shares: making and freeing a loop, the list of its runs,
 * and reporting a finished run — its result built, the run freed, then its callback called, so a
 * callback may start new runs on the loop. A run that ends is put on the loop's list of finished
 * runs as the wait sees it end, and a step reports that list: it never walks the runs still going,
 * so with thousands in flight a step costs what its own events cost (reports/notes/
 * 2026-12-05-fan-out-at-scale.md). How the loop waits and what it watches a run with are
 * the platform's (loop.linux.c: epoll; loop.windows.c: a completion port); the steps a wake-up
 * calls are the engine's, the same as pk_run's.
 */
#define _GNU_SOURCE
#include "loop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int pk_loop_new(pk_loop **out)
{
    if (out == NULL)
        return -EINVAL;
    *out = NULL;
    pk_loop *loop = calloc(1, sizeof *loop);
    if (loop == NULL)
        return -ENOMEM;
    loop->finished_tail = &loop->finished;
    int rc = pk__loop_open(loop);
    if (rc != 0) {
        free(loop);
        return rc;
    }
    *out = loop;
    return 0;
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
    struct pk__loop_run *r = calloc(1, sizeof *r);
    if (r == NULL)
        return -ENOMEM;
    r->done = done;
    r->user = user;
    int rc = pk__loop_add(loop, r, cmd, failure);
    if (rc != 0) {
        free(r);
        return rc;
    }
    r->next = loop->runs;
    if (loop->runs != NULL)
        loop->runs->prev = r;
    loop->runs = r;
    loop->active++;
    return 0;
}

static void unlink_run(pk_loop *loop, struct pk__loop_run *r)
{
    if (r->prev != NULL)
        r->prev->next = r->next;
    else
        loop->runs = r->next;
    if (r->next != NULL)
        r->next->prev = r->prev;
    loop->active--;
}

void pk__loop_finished(pk_loop *loop, struct pk__loop_run *r)
{
    if (r->finished)
        return;
    r->finished = true;
    r->next_finished = NULL;
    *loop->finished_tail = r;
    loop->finished_tail = &r->next_finished;
}

/* Reports and frees the runs the last wait finished, in the order they ended; returns how many.
 * The list is taken whole first: a callback may start runs, which the next wait sees. */
static int report_finished(pk_loop *loop)
{
    int finished = 0;
    struct pk__loop_run *r = loop->finished;
    loop->finished = NULL;
    loop->finished_tail = &loop->finished;
    while (r != NULL) {
        struct pk__loop_run *next = r->next_finished;
        unlink_run(loop, r);
        pk_result res;
        memset(&res, 0, sizeof res);
        int rc = pk__engine_result(&r->proc, &res);
        pk_done_fn done = r->done;
        void *user = r->user;
        pk__loop_drop(loop, r);
        free(r);
        done(user, rc, &res);
        finished++;
        r = next;
    }
    return finished;
}

int pk_loop_step(pk_loop *loop, int timeout_ms)
{
    if (loop == NULL)
        return -EINVAL;
    if (loop->active == 0)
        return 0;
    int rc = pk__loop_wait(loop, timeout_ms);
    if (rc < 0)
        return rc;
    return report_finished(loop);
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
    pk__loop_end(loop);
    struct pk__loop_run *r = loop->runs;
    while (r != NULL) {
        struct pk__loop_run *next = r->next;
        pk__loop_drop(loop, r); /* kill-on-close, reaped, no callback */
        free(r);
        r = next;
    }
    pk__loop_close(loop);
    free(loop);
}
