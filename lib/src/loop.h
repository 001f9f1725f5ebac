/*
 * pk_loop's private declarations: the loop and its runs as both platforms lay them out (loop.c
 * keeps the list of runs and reports the finished ones), and what each platform's half provides
 * (loop.linux.c: an epoll set; loop.windows.c: a completion port) — the poller, watching a run,
 * one wait. A platform adds its own fields to both structs, as libuv adds its private fields:
 * PK__LOOP_FIELDS and PK__LOOP_RUN_FIELDS (internal.posix.h, internal.windows.h).
 */
#ifndef PK_LOOP_H
#define PK_LOOP_H

#include "internal.h"

struct pk__loop_run {
    struct pk_process proc;
    pk_done_fn done;
    void *user;
    bool finished; /* over: reported and freed after the wait that ended it */
    struct pk__loop_run *prev, *next;
    struct pk__loop_run *next_finished; /* the loop's list of runs to report */
    PK__LOOP_RUN_FIELDS
};

struct pk_loop {
    struct pk__loop_run *runs;
    size_t active;
    /* The runs over since the last report, in the order they ended: a step reports them without
     * looking at the runs still going, so its cost does not grow with how many are in flight. */
    struct pk__loop_run *finished, **finished_tail;
    PK__LOOP_FIELDS
};

/* Marks run r over (once): it is reported and freed after the current wait (loop.c). */
void pk__loop_finished(pk_loop *loop, struct pk__loop_run *r);

/* Makes the loop's poller. 0 or -errno. */
int pk__loop_open(pk_loop *loop);
/* Starts cmd as run r (r->done and r->user are set) and watches it. On failure nothing is left
 * but r's memory: a child that did start is killed and reaped, and *failure says why. */
int pk__loop_add(pk_loop *loop, struct pk__loop_run *r, const pk_command *cmd, pk_result *failure);
/* Waits up to timeout_ms (-1: no limit) for what the runs wait for, carries out the engine's steps
 * and marks the runs that are over (pk__loop_finished). 0 or -errno. */
int pk__loop_wait(pk_loop *loop, int timeout_ms);
/* Stops watching run r and releases all it holds but its memory (kill-on-close for a run still
 * going). */
void pk__loop_drop(pk_loop *loop, struct pk__loop_run *r);
/* Before pk_loop_free drops every run: what must happen to all of them first. */
void pk__loop_end(pk_loop *loop);
/* Closes the poller, once no run is left. */
void pk__loop_close(pk_loop *loop);

#endif /* PK_LOOP_H */
