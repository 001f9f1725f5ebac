/*
 * One run's engine on Linux and its single-run driver.
 *
 * The engine is a set of steps over a pk_process — feed stdin, read a stream and deliver its
 * lines, react to the exit, act on passed deadlines or a fired cancel handle (the steps that do
 * not depend on how we wait are shared with Windows: engine.c) — shared by two drivers: the ppoll
 * loop here (one run, no epoll set-up to pay for) and the epoll loop of loop.linux.c (many runs).
 * The child's exit is seen on its pidfd, never through SIGCHLD. A pk_run without time limits, a
 * cancel handle or more than PIPE_BUF of stdin to feed (see the end of this comment) has no pidfd
 * at first: with no pipe it blocks in waitid on the child's pid; with pipes it polls them, learns
 * the exit when they end (then the same waitid), and takes a pidfd with pidfd_open only if the
 * child outlives PK__LAZY_PIDFD_NS, so that a grandchild holding a pipe cannot keep the run going
 * past the child's exit.
 *
 * The end of a run. It ends when the direct child exits: then the child is reaped and a private
 * group torn down (a cgroup leaf after the reap: one read of cgroup.events, cgroup.kill only when
 * something is left; a process group before it, while the zombie leader still pins the group id,
 * so no recycled id is ever hit), and the pipes are drained until end-of-file or, since the read
 * ends are non-blocking, until nothing is buffered.
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
 * ignored it. The parent therefore keeps its own copy of the stdin pipe's read end until the
 * payload is in (or the run ends): a pipe with a reader never raises SIGPIPE nor fails with
 * EPIPE, so stdin writes need no signal mask around them (two system calls per write step, each
 * ~1 µs on the VMs measured). A child that stops reading leaves the pipe full; what is left of
 * the payload is discarded when the run ends, as a shell would discard it.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

/* Closes a descriptor a pk_loop may be watching. Its registration goes first: epoll forgets a
 * descriptor only once its open file description is gone, and a copy can outlive our close (a
 * holder being born with a copy of our table until it closes it, a host thread's fork), whose
 * events would then name a run already freed. */
static void close_watched(struct pk_process *p, int *fd)
{
    if (*fd >= 0 && p->epfd >= 0)
        (void)epoll_ctl(p->epfd, EPOLL_CTL_DEL, *fd, NULL);
    pk__close_fd(fd);
}

/* ---- engine steps -------------------------------------------------------------------------- */

/* stdin is done (all written, or the run ended): the child sees end-of-file once no writer is
 * left, and our copy of the read end goes with the write end. */
static void close_stdin(struct pk_process *p)
{
    close_watched(p, &p->in_fd);
    pk__close_fd(&p->in_reader);
}

void pk__engine_stdin(struct pk_process *p)
{
    bool failed = false;
    while (p->in_off < p->in_len) {
        ssize_t n = write(p->in_fd, p->in_data + p->in_off, p->in_len - p->in_off);
        if (n > 0) {
            /* Even after a short write, write again rather than poll: on one CPU the reader
             * woken by the first write often drains the pipe before the retry (measured: a run of
             * 1 MB through cat switched context 30 times instead of 24 when it polled). */
            p->in_off += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN) {
            break;
        } else {
            /* Not EPIPE (our reader is open): a failure the run reports. */
            pk__engine_note_error(p, n < 0 ? -errno : -EIO);
            failed = true;
            break;
        }
    }
    if (failed || p->in_off >= p->in_len)
        close_stdin(p);
}

void pk__engine_read(struct pk_process *p, int i)
{
    struct pk__stream *s = &p->streams[i];
    int r = pk__stream_fill(s);
    if (r > 0)
        p->lim.last_io_ns = pk__now_ns();
    else if (r < 0)
        pk__engine_note_error(p, r);
    if (s->eof)
        close_watched(p, &s->fd);
    if (s->lines)
        pk__engine_deliver(p, i);
}

/* Reads whatever is buffered in every stream, until end-of-file or nothing more is there. */
static void drain_buffered(struct pk_process *p)
{
    for (int i = 1; i < 3; i++) {
        struct pk__stream *s = &p->streams[i];
        if (s->fd >= 0 && s->blocking) {
            /* A grandchild may hold the write end: reading until the pipe is empty must not
             * wait for it (process.posix.c, prepare_stdio). */
            if (fcntl(s->fd, F_SETFL, O_NONBLOCK) < 0) {
                pk__engine_note_error(p, -errno);
                s->eof = true;
                close_watched(p, &s->fd);
            }
            s->blocking = false;
        }
        while (s->fd >= 0) {
            int r = pk__stream_fill(s);
            if (r < 0)
                pk__engine_note_error(p, r);
            if (r <= 0) {
                s->eof = true; /* after the exit, an empty pipe is the end */
                close_watched(p, &s->fd);
            }
            if (s->lines && !p->pulling)
                pk__engine_deliver(p, i);
        }
        if (s->lines) /* the final line without a newline, now that eof is known */
            pk__engine_deliver(p, i);
    }
}

void pk__engine_exited(struct pk_process *p)
{
    if (p->exited)
        return;
    /* A process group is killed before the reap: the zombie leader pins its id, so the signal
     * can never reach a group that reused it. */
    bool pgroup = p->has_own && p->own.mech == PK_CONTAIN_PGROUP && p->own.pgid > 0;
    if (pgroup)
        pk__pgroup_signal(&p->own, SIGKILL);
    int rc = pk__reap(p->pid, p->pidfd, &p->outcome);
    pk__inject_slowdown(p->start_ns); /* nothing, except in the drift study's slowed build */
    pk__engine_note_error(p, rc);
    p->reaped = true;
    p->exited = true;
    /* A cgroup leaf names no pid, so it is checked after the reap, which spares a waitid(WNOWAIT)
     * before it: one read of cgroup.events, which says empty when the child was alone (an exited
     * task no longer counts); what is left is killed and waited for. */
    if (p->has_own && p->own.mech == PK_CONTAIN_CGROUP)
        pk__cgroup_destroy(&p->own);
    if (pgroup) {
        pk__pgroup_wait_empty(&p->own, 1000);
        p->own.pgid = 0;
    }
    close_stdin(p);
    drain_buffered(p);
}

/* Signals the run's tree: its group, and the direct child itself when it is no longer in the
 * group (as root a command can move itself out of its leaf, e.g. into the root cgroup; only its
 * pid reaches it then). SIGKILL goes to both at once: twice is harmless, and no check is needed.
 * Other signals go to the child only when it left, or it would get them twice. */
static void tree_signal(struct pk_process *p, int signo)
{
    if (p->exited)
        return;
    if (p->has_own) {
        (void)pk__group_signal(&p->own, signo);
        if (signo != SIGKILL && pk__group_holds(&p->own, p->pid))
            return;
    }
    (void)pk__signal(p->pid, p->pidfd, signo);
}

void pk__engine_signal(struct pk_process *p, int signo)
{
    tree_signal(p, signo);
    /* A stopped process only acts on the signal once continued: without this, a stopped tree
     * would always wait out the grace and die of SIGKILL. */
    if (signo != SIGCONT)
        tree_signal(p, SIGCONT);
}

void pk__engine_kill(struct pk_process *p)
{
    tree_signal(p, SIGKILL);
}

bool pk__engine_done(const struct pk_process *p)
{
    return p->exited && p->streams[1].fd < 0 && p->streams[2].fd < 0;
}

/* ---- the ppoll driver ---------------------------------------------------------------------- */

enum { W_STDIN, W_OUT, W_ERR, W_PIDFD, W_CANCEL, W_COUNT };

/* What one wait watches: the descriptors, and what each one is (W_*). */
struct watch_set {
    struct pollfd pfd[W_COUNT];
    int what[W_COUNT];
    nfds_t n;
};

static void watch(struct watch_set *w, int fd, short events, int what)
{
    w->pfd[w->n] = (struct pollfd){fd, events, 0};
    w->what[w->n++] = what;
}

/* The descriptors whose events the run waits for now. */
static void watch_set(struct pk_process *p, struct watch_set *w)
{
    w->n = 0;
    if (p->in_fd >= 0)
        watch(w, p->in_fd, POLLOUT, W_STDIN);
    for (int i = 1; i < 3; i++) {
        struct pk__stream *s = &p->streams[i];
        /* A pulling caller reads a stream only when its buffered lines are used up. */
        if (s->fd >= 0 && !(p->pulling && s->lines && s->scan < s->end))
            watch(w, s->fd, POLLIN, i == 1 ? W_OUT : W_ERR);
    }
    if (!p->exited && p->pidfd >= 0)
        watch(w, p->pidfd, POLLIN, W_PIDFD);
    if (p->cancel != NULL && p->lim.ending == PK_OUTCOME_NONE && !p->exited)
        watch(w, p->cancel->efd, POLLIN, W_CANCEL);
}

/* How long the wait may last, into *ts: until the engine's next wake-up, and without a pidfd no
 * longer than until the exit must be looked for. NULL when it may last until an event. */
static struct timespec *wait_limit(const struct pk_process *p, struct timespec *ts)
{
    int64_t wake = pk__engine_next_wakeup(p), now = pk__now_ns();
    struct timespec *tsp = NULL;
    if (wake != 0) {
        int64_t left = wake > now ? wake - now : 0;
        *ts = (struct timespec){left / 1000000000, left % 1000000000};
        tsp = ts;
    }
    if (p->pidfd < 0 && !p->exited) {
        /* No pidfd yet (a lazy one is due at pidfd_at_ns), or none at all (kernel < 5.3: look
         * for the exit every 10 ms). */
        int64_t left = p->pidfd_at_ns != 0 ? p->pidfd_at_ns - now : 10000000;
        left = left > 0 ? left : 0;
        if (tsp == NULL || ts->tv_sec * 1000000000 + ts->tv_nsec > left)
            *ts = (struct timespec){left / 1000000000, left % 1000000000};
        tsp = ts;
    }
    return tsp;
}

/* For a child still running without a pidfd, after a wake-up that did not show its exit: takes
 * the lazy pidfd once it is due, and otherwise looks for the exit by its pid. True when it
 * exited (not reaped yet). */
static bool exit_without_pidfd(struct pk_process *p)
{
    if (p->pidfd_at_ns != 0 && pk__now_ns() >= p->pidfd_at_ns) {
        /* The child outlived the short-run window: from now on its exit is polled like a
         * handle's, whether or not its pipes end. */
        p->pidfd_at_ns = 0;
        int fd = pk__pidfd_open(p->pid);
        p->pidfd = fd >= 0 ? fd : -1;
    }
    if (p->pidfd >= 0 || p->pidfd_at_ns != 0)
        return false;
    siginfo_t si = {0};
    return waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           si.si_pid == p->pid;
}

/* One wait for events and the steps they call for. Returns 0 or a negative errno from poll. */
int pk__engine_wait(struct pk_process *p)
{
    struct watch_set w;
    watch_set(p, &w);
    struct timespec ts;
    int r = ppoll(w.pfd, w.n, wait_limit(p, &ts), NULL);
    if (r < 0)
        return errno == EINTR ? 0 : -errno;
    bool exited = false;
    for (nfds_t k = 0; k < w.n; k++) {
        if (w.pfd[k].revents == 0)
            continue;
        switch (w.what[k]) {
        case W_STDIN:
            pk__engine_stdin(p);
            break;
        case W_OUT:
        case W_ERR:
            /* POLLHUP alone is not end-of-file: the kernel's pipe_poll checks "empty" and "no
             * writer" without a lock, so bytes written just before the last close can sit
             * behind a POLLHUP without POLLIN. Only a read returning 0 ends the stream. */
            pk__engine_read(p, w.what[k] == W_OUT ? 1 : 2);
            break;
        case W_PIDFD:
            exited = true;
            break;
        default:
            break;
        }
    }
    if (!exited && p->pidfd < 0 && !p->exited)
        exited = exit_without_pidfd(p);
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

/* Blocks in waitid itself instead of polling for the exit first: one wake-up less per run. A
 * private process group is killed before the reap, so there the exit is awaited without reaping
 * (WNOWAIT) first; a cgroup leaf is checked after the reap (pk__engine_exited). Without a pidfd
 * the child is awaited by its pid, which cannot be reused before we reap it. */
static void wait_exit(struct pk_process *p)
{
    if (p->has_own && p->own.mech == PK_CONTAIN_PGROUP && p->own.pgid > 0) {
        siginfo_t si;
        idtype_t type = p->pidfd >= 0 ? P_PIDFD : P_PID;
        id_t id = p->pidfd >= 0 ? (id_t)p->pidfd : (id_t)p->pid;
        while (waitid(type, id, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
            ;
    }
    pk__engine_exited(p);
}

int pk__process_finish(struct pk_process *p, pk_result *res)
{
    /* The wait ends the pull API: no call may take a line at once any more (the result hands
     * what was not pulled to the capture). */
    p->pull_fast = false;
    if (p->in_fd >= 0 && p->in_len <= PIPE_BUF)
        pk__engine_stdin(p);
    while (!pk__engine_done(p)) {
        if (only_exit_left(p)) {
            wait_exit(p);
            break;
        }
        int rc = pk__engine_wait(p);
        if (rc != 0) {
            pk__engine_note_error(p, rc);
            break;
        }
    }
    if (!p->exited) /* poll failed: do not leave the child behind */
        tree_signal(p, SIGKILL), pk__engine_exited(p);
    return pk__engine_result(p, res);
}

void pk__process_close(struct pk_process *p)
{
    /* A pk_loop stops watching the pidfd when it sees the exit (loop.linux.c). */
    bool pidfd_watched = !p->exited;
    if (!p->reaped && p->pid > 0) {
        /* Kill-on-close: the whole tree when the run owns a group, and the child in any case. */
        tree_signal(p, SIGKILL);
        pk__engine_exited(p);
    }
    if (p->has_own) {
        pk__group_close(&p->own);
        p->has_own = false;
    }
    if (pidfd_watched)
        close_watched(p, &p->pidfd);
    else
        pk__close_fd(&p->pidfd);
    close_stdin(p);
    for (int i = 1; i < 3; i++) {
        close_watched(p, &p->streams[i].fd);
        pk__stream_release(&p->streams[i]);
    }
}

/* ---- the pull API and wait_any ------------------------------------------------------------- */

/* pk_process_read_line's slow path: the first call, and any call that finds no complete line
 * buffered in stdout's splitter (the next read, stderr's lines, the end). */
static __attribute__((noinline)) int read_line_slow(pk_process *p, pk_line *line)
{
    if (!p->pulling) {
        p->pulling = true;
        for (int i = 1; i < 3; i++)
            pk__stream_want_lines(&p->streams[i]);
    }
    if (p->in_fd >= 0 && p->in_len <= PIPE_BUF)
        pk__engine_stdin(p);
    /* A small stdin is written here first (above), so only without one can a call skip this. */
    p->pull_fast = p->streams[1].lines && (p->in_fd < 0 || p->in_len > PIPE_BUF);
    return pk__engine_pull(p, line);
}

bool pk__engine_pull_more(struct pk_process *p, int i)
{
    return p->streams[i].fd >= 0; /* the next wait reads it */
}

int pk_process_read_line(pk_process *p, pk_line *line)
{
    if (p == NULL || line == NULL)
        return -EINVAL;
    /* Most calls find a line already read into stdout's splitter: take it here, with nothing
     * saved and restored around a call that cannot poll. The slow path looks at stdout first
     * too, so the order in which streams are served is the same either way. */
    if (p->pull_fast) {
        int r = pk__stream_take_line(&p->streams[1], line);
        if (r != 0)
            return r == 1 ? 0 : r;
    }
    return read_line_slow(p, line);
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
