/*
 * The event loop's half on Linux: one thread drives many runs with epoll (the rest of pk_loop is
 * shared with Windows: loop.c).
 *
 * Each run registers its stdin pipe (EPOLLOUT), its captured streams (EPOLLIN), its pidfd (the
 * exit), a private duplicate of its cancel handle's eventfd, and — only when it has a time limit —
 * a timerfd armed at the engine's next wake-up. Its child gets its pipes through the loop's low
 * slots (lowfd.linux.c), so a spawn does not copy the descriptors of every run in flight. Events
 * call the same engine steps as the single- run driver (engine.linux.c), so both behave
 * identically: runs are isolated, and one run's timeout signals only its own tree.
 *
 * The timerfd is re-armed only when the next wake-up moves earlier or the timer fires: an
 * inactivity limit that output keeps pushing back costs no system call per read; when the timer
 * fires early the engine sees that the limit has not passed and the timer is armed again.
 *
 * A run that finishes during a batch of events is only marked; it is reported and freed after the
 * batch, so later events of the same batch never touch freed memory. The epoll descriptor is the
 * loop's pollable fd, so a host loop can wait on it and call pk_loop_step(loop, 0).
 */
#define _GNU_SOURCE
#include "loop.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

enum { W_STDIN, W_OUT, W_ERR, W_PIDFD, W_TIMER, W_CANCEL, W_COUNT };
_Static_assert(W_COUNT == PK__LOOP_WATCHES, "one watch for each kind of descriptor");

int pk__loop_open(pk_loop *loop)
{
    loop->low = (struct pk__low_fds){.anchor = -1, .slot = {-1, -1, -1}};
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    return loop->epfd < 0 ? -errno : 0;
}

void pk__loop_close(pk_loop *loop)
{
    pk__low_close(&loop->low);
    close(loop->epfd);
}

int pk_loop_fd(const pk_loop *loop)
{
    return loop != NULL ? loop->epfd : -1;
}

static int watch(pk_loop *loop, struct pk__loop_run *r, int what, int fd, uint32_t events)
{
    r->w[what] = (struct pk__loop_watch){r, what};
    struct epoll_event ev = {.events = events, .data.ptr = &r->w[what]};
    return epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -errno;
}

/* Arms the run's timer for the engine's next wake-up when that is earlier than what is armed. */
static int arm(struct pk__loop_run *r, bool fired)
{
    int64_t wake = pk__engine_next_wakeup(&r->proc);
    if (fired)
        r->armed_ns = 0;
    if (wake == 0 || r->timerfd < 0 || (r->armed_ns != 0 && r->armed_ns <= wake))
        return 0;
    struct itimerspec its = {.it_value = {wake / 1000000000, wake % 1000000000}};
    if (timerfd_settime(r->timerfd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
        return -errno;
    r->armed_ns = wake;
    return 0;
}

/* Stops watching the cancel duplicate. It must be removed explicitly: an epoll registration
 * belongs to the open file description, which the cancel handle's own eventfd keeps open, so
 * closing our duplicate alone would leave it registered (pointing at this run). */
static void unwatch_cancel(pk_loop *loop, struct pk__loop_run *r)
{
    if (r->cancel_fd >= 0)
        epoll_ctl(loop->epfd, EPOLL_CTL_DEL, r->cancel_fd, NULL);
    pk__close_fd(&r->cancel_fd);
}

void pk__loop_drop(pk_loop *loop, struct pk__loop_run *r)
{
    unwatch_cancel(loop, r);
    pk__process_close(&r->proc); /* unwatches the run's pipes and pidfd as it closes them */
    if (r->timerfd >= 0)
        epoll_ctl(loop->epfd, EPOLL_CTL_DEL, r->timerfd, NULL);
    pk__close_fd(&r->timerfd);
}

void pk__loop_end(pk_loop *loop)
{
    (void)loop; /* each run is killed and reaped as it is dropped */
}

/* Registers what the run waits for: its pipes, its pidfd, its cancel handle and its timer. */
static int watch_run(pk_loop *loop, struct pk__loop_run *r)
{
    struct pk_process *p = &r->proc;
    int rc = 0;
    if (p->in_fd >= 0)
        rc = watch(loop, r, W_STDIN, p->in_fd, EPOLLOUT);
    for (int i = 1; i < 3 && rc == 0; i++)
        if (p->streams[i].fd >= 0)
            rc = watch(loop, r, i == 1 ? W_OUT : W_ERR, p->streams[i].fd, EPOLLIN);
    if (rc == 0)
        rc = watch(loop, r, W_PIDFD, p->pidfd, EPOLLIN);
    if (rc == 0 && p->cancel != NULL) {
        /* A duplicate of its own: one handle may serve many runs in one epoll set. */
        r->cancel_fd = fcntl(p->cancel->efd, F_DUPFD_CLOEXEC, 3);
        rc = r->cancel_fd < 0 ? -errno : watch(loop, r, W_CANCEL, r->cancel_fd, EPOLLIN);
    }
    if (rc == 0 && pk__engine_next_wakeup(p) != 0) {
        r->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        rc = r->timerfd < 0 ? -errno : watch(loop, r, W_TIMER, r->timerfd, EPOLLIN);
        if (rc == 0)
            rc = arm(r, false);
    }
    return rc;
}

int pk__loop_add(pk_loop *loop, struct pk__loop_run *r, const pk_command *cmd, pk_result *failure)
{
    r->timerfd = r->cancel_fd = -1;
    if (!loop->low_ready) {
        /* At the first run, while the table is at its smallest (lowfd.linux.c). */
        loop->low_ready = true;
        pk__low_open(&loop->low);
    }
    int rc = pk__process_start_low(cmd, &r->proc, failure, false, &loop->low);
    if (rc != 0)
        return rc;
    struct pk_process *p = &r->proc;
    p->epfd = loop->epfd; /* the engine unwatches each descriptor before it closes it */
    if (p->in_fd >= 0 && p->in_len <= PIPE_BUF)
        pk__engine_stdin(p);
    rc = watch_run(loop, r);
    if (rc != 0) {
        if (failure != NULL) {
            failure->outcome.kind = PK_OUTCOME_SPAWN_FAILED;
            failure->outcome.stage = PK_STAGE_PREPARE;
            failure->outcome.error = rc;
        }
        pk__loop_drop(loop, r); /* kills and reaps the child that did start */
    }
    return rc;
}

static void handle(pk_loop *loop, struct pk__loop_watch *w)
{
    struct pk__loop_run *r = w->run;
    struct pk_process *p = &r->proc;
    if (r->finished)
        return;
    switch (w->what) {
    case W_STDIN:
        pk__engine_stdin(p);
        break;
    case W_OUT:
    case W_ERR:
        /* Even EPOLLHUP alone: only a read returning 0 is end-of-file (engine.linux.c). */
        pk__engine_read(p, w->what == W_OUT ? 1 : 2);
        break;
    case W_PIDFD:
        epoll_ctl(loop->epfd, EPOLL_CTL_DEL, p->pidfd, NULL);
        pk__engine_exited(p);
        break;
    case W_TIMER: {
        uint64_t ticks;
        ssize_t n = read(r->timerfd, &ticks, sizeof ticks);
        (void)n;
        pk__engine_timers(p, pk__now_ns());
        arm(r, true);
        break;
    }
    case W_CANCEL:
        /* The eventfd stays readable: stop watching it once the engine has acted. */
        unwatch_cancel(loop, r);
        pk__engine_timers(p, pk__now_ns());
        arm(r, false);
        break;
    }
    if (pk__engine_done(p))
        pk__loop_finished(loop, r);
    else if (w->what == W_OUT || w->what == W_ERR)
        arm(r, false);
}

int pk__loop_wait(pk_loop *loop, int timeout_ms)
{
    struct epoll_event ev[64];
    int n = epoll_wait(loop->epfd, ev, 64, timeout_ms);
    if (n < 0)
        return errno == EINTR ? 0 : -errno;
    for (int i = 0; i < n; i++)
        handle(loop, ev[i].data.ptr);
    return 0;
}
