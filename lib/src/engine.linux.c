/*
 * One run's engine and its single-run driver.
 *
 * The engine is a set of steps over a pk_process — feed stdin, read a stream and deliver its
 * lines, react to the exit, act on passed deadlines or a fired cancel handle — shared by two
 * drivers: the ppoll loop here (one run, no epoll set-up to pay for) and the epoll loop of
 * loop.linux.c (many runs). The child's exit is seen on its pidfd, never through SIGCHLD.
 *
 * The end of a run. It ends when the direct child exits: then a private group is torn down
 * before the reap (cgroup.kill, or SIGKILL to the process group while the zombie leader still
 * pins the group id, so no recycled id is ever hit), the child is reaped, and the pipes are
 * drained until end-of-file or, since the read ends are non-blocking, until nothing is buffered.
 * Everything the child wrote is in the pipe by the time it exits, and with the tree gone no
 * writer is left; so a daemonised grandchild holding the pipe can never hang a run.
 *
 * Time limits: a deadline, an inactivity limit (reset by any output) and a grace period. When a
 * limit passes (or the cancel handle fires) the tree gets SIGTERM (or the cancel's signal) and,
 * grace_ms later, SIGKILL; a tree that exits on the first signal ends the grace early since the
 * exit ends the run. SIGCONT follows the first signal, so a stopped tree acts on it too. Runs in
 * a shared group signal only their direct child, so one run's timeout never kills its
 * neighbours.
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
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

static void note_error(struct pk_process *p, int err)
{
    if (p->error == 0 && err != 0)
        p->error = err;
}

/* ---- engine steps -------------------------------------------------------------------------- */

void pk__engine_stdin(struct pk_process *p)
{
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    bool done = false;
    while (p->in_off < p->in_len) {
        ssize_t n = write(p->in_fd, p->in_data + p->in_off, p->in_len - p->in_off);
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
        close_fd(&p->in_fd);
}

/* Hands the complete lines of stream i to the callback (or drops them into the capture only). */
static void deliver(struct pk_process *p, int i)
{
    if (p->pulling)
        return;
    struct pk__stream *s = &p->streams[i];
    pk_line line;
    int r;
    while ((r = pk__stream_next_line(s, &line)) == 1)
        if (p->on_line != NULL)
            (void)p->on_line(p->line_user, &line);
    note_error(p, r < 0 ? r : 0);
}

void pk__engine_read(struct pk_process *p, int i)
{
    struct pk__stream *s = &p->streams[i];
    int r = pk__stream_fill(s);
    if (r > 0)
        p->last_io_ns = pk__now_ns();
    else if (r < 0)
        note_error(p, r);
    if (s->eof)
        close_fd(&s->fd);
    if (s->lines)
        deliver(p, i);
}

/* Reads whatever is buffered in every stream, until end-of-file or nothing more is there. */
static void drain_buffered(struct pk_process *p)
{
    for (int i = 1; i < 3; i++) {
        struct pk__stream *s = &p->streams[i];
        while (s->fd >= 0) {
            int r = pk__stream_fill(s);
            if (r < 0)
                note_error(p, r);
            if (r <= 0) {
                s->eof = true; /* after the exit, an empty pipe is the end */
                close_fd(&s->fd);
            }
            if (s->lines && !p->pulling)
                deliver(p, i);
        }
        if (s->lines) /* the final line without a newline, now that eof is known */
            deliver(p, i);
    }
}

void pk__engine_exited(struct pk_process *p)
{
    if (p->exited)
        return;
    if (p->has_own && p->own.mech == PK_CONTAIN_CGROUP) {
        /* Usually empty by now (the child was alone): one read of cgroup.events. */
        pk__cgroup_destroy(&p->own);
    } else if (p->has_own && p->own.pgid > 0) {
        pk__pgroup_signal(&p->own, SIGKILL);
    }
    int rc = pk__reap(p->pid, p->pidfd, &p->outcome);
    note_error(p, rc);
    p->reaped = true;
    p->exited = true;
    if (p->has_own && p->own.mech == PK_CONTAIN_PGROUP && p->own.pgid > 0) {
        pk__pgroup_wait_empty(&p->own, 1000);
        p->own.pgid = 0;
    }
    close_fd(&p->in_fd);
    drain_buffered(p);
}

static void tree_signal(struct pk_process *p, int signo)
{
    if (p->exited)
        return;
    if (p->has_own)
        (void)pk__group_signal(&p->own, signo);
    else
        (void)pk__signal(p->pid, p->pidfd, signo);
}

static void begin_end(struct pk_process *p, pk_outcome_kind kind, int signo, int64_t now)
{
    p->ending = kind;
    if (p->grace_ns > 0) {
        tree_signal(p, signo);
        /* A stopped process only acts on the signal once continued: without this, a stopped
         * tree would always wait out the grace and die of SIGKILL. */
        if (signo != SIGCONT)
            tree_signal(p, SIGCONT);
        p->kill_at_ns = now + p->grace_ns;
    } else {
        tree_signal(p, SIGKILL);
    }
}

void pk__engine_timers(struct pk_process *p, int64_t now)
{
    if (p->exited)
        return;
    if (p->ending == PK_OUTCOME_NONE) {
        if (p->cancel != NULL && p->cancel->fired)
            begin_end(p, PK_OUTCOME_CANCELLED, p->cancel->signo, now);
        else if (p->deadline_ns != 0 && now >= p->deadline_ns)
            begin_end(p, PK_OUTCOME_TIMED_OUT, SIGTERM, now);
        else if (p->idle_ns != 0 && now >= p->last_io_ns + p->idle_ns)
            begin_end(p, PK_OUTCOME_IDLE_TIMED_OUT, SIGTERM, now);
    } else if (p->kill_at_ns != 0 && now >= p->kill_at_ns) {
        tree_signal(p, SIGKILL);
        p->kill_at_ns = 0;
    }
}

int64_t pk__engine_next_wakeup(const struct pk_process *p)
{
    if (p->exited)
        return 0;
    int64_t t = 0;
    if (p->ending == PK_OUTCOME_NONE) {
        if (p->deadline_ns != 0)
            t = p->deadline_ns;
        if (p->idle_ns != 0 && (t == 0 || p->last_io_ns + p->idle_ns < t))
            t = p->last_io_ns + p->idle_ns;
    } else if (p->kill_at_ns != 0) {
        t = p->kill_at_ns;
    }
    return t;
}

bool pk__engine_done(const struct pk_process *p)
{
    return p->exited && p->streams[1].fd < 0 && p->streams[2].fd < 0;
}

int pk__engine_result(struct pk_process *p, pk_result *res)
{
    if (p->pulling) {
        /* Lines the caller did not pull are still accounted and captured. */
        p->pulling = false;
        for (int i = 1; i < 3; i++)
            if (p->streams[i].lines)
                deliver(p, i);
    }
    res->outcome = p->outcome;
    if (p->ending != PK_OUTCOME_NONE)
        res->outcome.kind = p->ending; /* code/signo keep how the child actually ended */
    res->outcome.pid = p->pid;
    res->outcome.wall_ns = pk__now_ns() - p->start_ns;
    res->containment = p->containment;
    int rc = p->error;
    bool too_large = false;
    for (int i = 1; i < 3; i++) {
        struct pk__stream *s = &p->streams[i];
        too_large |= s->keep == PK_KEEP_FAIL && s->truncated;
        int r = pk__stream_finish(s, i == 1 ? &res->out : &res->err);
        if (rc == 0)
            rc = r;
    }
    if (rc == 0 && too_large)
        rc = PK_ETOOLARGE;
    return rc;
}

/* ---- the ppoll driver ---------------------------------------------------------------------- */

enum { W_STDIN, W_OUT, W_ERR, W_PIDFD, W_CANCEL, W_COUNT };

/* One wait for events and the steps they call for. Returns 0 or a negative errno from poll. */
static int drive_once(struct pk_process *p)
{
    struct pollfd pfd[W_COUNT];
    int what[W_COUNT];
    nfds_t n = 0;
    if (p->in_fd >= 0) {
        pfd[n] = (struct pollfd){p->in_fd, POLLOUT, 0};
        what[n++] = W_STDIN;
    }
    for (int i = 1; i < 3; i++) {
        struct pk__stream *s = &p->streams[i];
        /* A pulling caller reads a stream only when its buffered lines are used up. */
        if (s->fd >= 0 && !(p->pulling && s->lines && s->scan < s->end)) {
            pfd[n] = (struct pollfd){s->fd, POLLIN, 0};
            what[n++] = i == 1 ? W_OUT : W_ERR;
        }
    }
    if (!p->exited && p->pidfd >= 0) {
        pfd[n] = (struct pollfd){p->pidfd, POLLIN, 0};
        what[n++] = W_PIDFD;
    }
    if (p->cancel != NULL && p->ending == PK_OUTCOME_NONE && !p->exited) {
        pfd[n] = (struct pollfd){p->cancel->efd, POLLIN, 0};
        what[n++] = W_CANCEL;
    }
    int64_t wake = pk__engine_next_wakeup(p), now = pk__now_ns();
    struct timespec ts, *tsp = NULL;
    if (wake != 0) {
        int64_t left = wake > now ? wake - now : 0;
        ts = (struct timespec){left / 1000000000, left % 1000000000};
        tsp = &ts;
    }
    if (p->pidfd < 0 && !p->exited) {
        /* No pidfd (kernel < 5.3): look for the exit every 10 ms. */
        if (tsp == NULL || ts.tv_sec > 0 || ts.tv_nsec > 10000000)
            ts = (struct timespec){0, 10000000};
        tsp = &ts;
    }
    int r = ppoll(pfd, n, tsp, NULL);
    if (r < 0)
        return errno == EINTR ? 0 : -errno;
    bool exited = false;
    for (nfds_t k = 0; k < n; k++) {
        if (pfd[k].revents == 0)
            continue;
        switch (what[k]) {
        case W_STDIN:
            pk__engine_stdin(p);
            break;
        case W_OUT:
        case W_ERR:
            pk__engine_read(p, what[k] == W_OUT ? 1 : 2);
            break;
        case W_PIDFD:
            exited = true;
            break;
        default:
            break;
        }
    }
    if (!exited && p->pidfd < 0 && !p->exited) {
        siginfo_t si = {0};
        exited = waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                 si.si_pid == p->pid;
    }
    /* The exit last: what became readable in the same wake-up was read first. */
    if (exited)
        pk__engine_exited(p);
    pk__engine_timers(p, pk__now_ns());
    return 0;
}

/* True when the exit is the only thing left to wait for: no pipe, no time limit, no cancel. */
static bool only_exit_left(const struct pk_process *p)
{
    return !p->exited && p->in_fd < 0 && p->streams[1].fd < 0 && p->streams[2].fd < 0 &&
           pk__engine_next_wakeup(p) == 0 && p->cancel == NULL;
}

/* Blocks in waitid itself instead of polling the pidfd first: one wake-up less per run. A private
 * group is torn down before the reap, so the exit is awaited without reaping (WNOWAIT) first. */
static void wait_exit(struct pk_process *p)
{
    if (p->has_own) {
        siginfo_t si;
        while (waitid(P_PIDFD, (id_t)p->pidfd, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
            ;
    }
    pk__engine_exited(p);
}

int pk__process_finish(struct pk_process *p, pk_result *res)
{
    if (p->in_fd >= 0 && p->in_len <= PIPE_BUF)
        pk__engine_stdin(p);
    while (!pk__engine_done(p)) {
        if (p->pidfd >= 0 && only_exit_left(p)) {
            wait_exit(p);
            break;
        }
        int rc = drive_once(p);
        if (rc != 0) {
            note_error(p, rc);
            break;
        }
    }
    if (!p->exited) /* poll failed: do not leave the child behind */
        tree_signal(p, SIGKILL), pk__engine_exited(p);
    return pk__engine_result(p, res);
}

void pk__process_close(struct pk_process *p)
{
    if (!p->reaped && p->pid > 0) {
        /* Kill-on-close: the whole tree when the run owns a group. */
        if (p->has_own)
            (void)pk__group_signal(&p->own, SIGKILL);
        else
            (void)pk__signal(p->pid, p->pidfd, SIGKILL);
        pk__engine_exited(p);
    }
    if (p->has_own) {
        pk__group_teardown(&p->own);
        pthread_mutex_destroy(&p->own.lock);
        p->has_own = false;
    }
    close_fd(&p->pidfd);
    close_fd(&p->in_fd);
    for (int i = 1; i < 3; i++)
        pk__stream_release(&p->streams[i]);
}

/* ---- the pull API and wait_any ------------------------------------------------------------- */

int pk_process_read_line(pk_process *p, pk_line *line)
{
    if (p == NULL || line == NULL)
        return -EINVAL;
    if (!p->pulling) {
        p->pulling = true;
        for (int i = 1; i < 3; i++)
            pk__stream_want_lines(&p->streams[i]);
    }
    if (p->in_fd >= 0 && p->in_len <= PIPE_BUF)
        pk__engine_stdin(p);
    for (;;) {
        bool any_open = false;
        for (int i = 1; i < 3; i++) {
            struct pk__stream *s = &p->streams[i];
            if (!s->lines)
                continue;
            int r = pk__stream_next_line(s, line);
            if (r == 1)
                return 0;
            if (r < 0)
                return r;
            any_open |= s->fd >= 0;
        }
        if (!any_open)
            return PK_EOF;
        int rc = drive_once(p);
        if (rc != 0)
            return rc;
    }
}

int pk_wait_any(pk_process *const *procs, size_t n, int timeout_ms, size_t *index)
{
    if ((procs == NULL && n > 0) || index == NULL || n > 1024)
        return -EINVAL;
    int64_t deadline = timeout_ms >= 0 ? pk__now_ns() + (int64_t)timeout_ms * 1000000 : 0;
    struct pollfd *pfd = malloc((n * 3 + 1) * sizeof *pfd);
    int *who = malloc((n * 3 + 1) * sizeof *who);
    if (pfd == NULL || who == NULL) {
        free(pfd);
        free(who);
        return -ENOMEM;
    }
    int rc = -ECHILD;
    for (;;) {
        /* Exited already (seen by an earlier call or step)? */
        nfds_t k = 0;
        for (size_t i = 0; i < n; i++) {
            struct pk_process *p = procs[i];
            if (p == NULL || p->reaped)
                continue;
            pfd[k] = (struct pollfd){p->pidfd, POLLIN, 0};
            who[k++] = (int)(i * 3);
            /* Keep the pipes drained meanwhile, so no child blocks on a full pipe. */
            for (int s = 1; s < 3; s++)
                if (p->streams[s].fd >= 0 && !p->pulling) {
                    pfd[k] = (struct pollfd){p->streams[s].fd, POLLIN, 0};
                    who[k++] = (int)(i * 3) + s;
                }
        }
        if (k == 0)
            break;
        int ms = -1;
        if (deadline != 0) {
            int64_t left = deadline - pk__now_ns();
            ms = left > 0 ? (int)((left + 999999) / 1000000) : 0;
        }
        int r = poll(pfd, k, ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = -errno;
            break;
        }
        if (r == 0) {
            rc = -ETIMEDOUT;
            break;
        }
        bool found = false;
        for (nfds_t j = 0; j < k; j++) {
            if (pfd[j].revents == 0)
                continue;
            size_t i = (size_t)who[j] / 3;
            int s = who[j] % 3;
            if (s == 0 && !found) {
                *index = i;
                found = true;
            } else if (s != 0) {
                pk__engine_read(procs[i], s);
            }
        }
        if (found) {
            rc = 0;
            break;
        }
    }
    free(pfd);
    free(who);
    return rc;
}
