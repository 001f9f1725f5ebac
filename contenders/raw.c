/*
 * The raw baselines' iteration, shared by posix_spawn, vfork_exec and fork_exec (see raw.h).
 *
 * One child. Two pipes made with pipe2(O_CLOEXEC), so a child started meanwhile by another thread
 * of the fan-out never inherits them: only the start step's dup2 onto 0 and 1 survives the exec.
 * The parent keeps the stdin write end, made non-blocking (one fcntl) so a 1 MB payload never
 * blocks it, and the stdout read end. It writes stdin at once (the 32-byte payload fits the pipe
 * and goes in one write), then polls both ends: stdin for POLLOUT until the payload is in, then
 * closes it so cat sees end-of-file; stdout for POLLIN, read in 64 KiB chunks (processkit's read
 * size too) whose newlines are counted with memchr. Only after stdout's end-of-file, with every
 * line counted, does it waitpid. Nothing is kept: the raw baselines count, as the capture-free
 * processkit stream does.
 *
 * spawn_only: no pipes at all; the child inherits this process's 0, 1 and 2, then waitpid.
 *
 * Fan-out: one thread per child, created and joined in the iteration (what a C programmer without
 * an event loop writes, and what std::thread::scope does in the seed's std baseline); each thread
 * runs the one-child path above, with the default thread attributes, at any size (4096 threads at
 * the fan-out at scale). When a measuring process counts descriptors (w->count_fds, an untimed
 * iteration) each thread waits after starting its child and feeding it until every thread has,
 * the main thread counts, and all go on: the count is taken with every child in flight.
 *
 * A final line without a newline counts as a line, as processkit's totals count it. No signal
 * disposition is touched: cat reads all of its stdin, so no write here can meet a closed pipe.
 */
#define _GNU_SOURCE
#include "contenders/raw.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { CHUNK = 64 * 1024 };

static int fail(pkb_sample *out, const char *what, int err)
{
    if (out->error[0] == '\0')
        snprintf(out->error, sizeof out->error, "%s: %s", what, strerror(err));
    return -err;
}

static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

static int reap(pid_t pid, pkb_sample *out)
{
    int status;
    pid_t r;
    while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    if (r < 0)
        return fail(out, "waitpid", errno);
    out->children++;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        out->failures++;
    return 0;
}

/* Writes what the pipe takes now; closes stdin once the payload is in (or the reader is gone). */
static int feed(const pkb_workload *w, int *in_fd, size_t *off, pkb_sample *out)
{
    while (*off < w->input_len) {
        ssize_t n = write(*in_fd, w->input + *off, w->input_len - *off);
        if (n > 0)
            *off += (size_t)n;
        else if (n < 0 && errno == EAGAIN)
            return 0;
        else if (n < 0 && errno != EINTR)
            return fail(out, "write stdin", errno);
    }
    close_fd(in_fd);
    return 0;
}

static void count(const unsigned char *p, size_t n, pkb_sample *out, bool *partial)
{
    const unsigned char *end = p + n, *nl;
    out->bytes += n;
    while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        out->lines++;
        p = nl + 1;
    }
    *partial = p < end;
}

/* Where a fan-out's threads wait for one another when descriptors are counted (NULL: never). */
struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int arrived, expected;
    bool open;
};

/* One more thread has its child started and fed; blocks until the main thread opens the gate. */
static void gate_arrive(struct gate *g)
{
    if (g == NULL)
        return;
    pthread_mutex_lock(&g->lock);
    g->arrived++;
    pthread_cond_broadcast(&g->cond);
    while (!g->open)
        pthread_cond_wait(&g->cond, &g->lock);
    pthread_mutex_unlock(&g->lock);
}

/* The duplex loop over one child's pipes; closes both descriptors whatever happens. */
static int pump(const pkb_workload *w, int in_fd, int out_fd, pkb_sample *out, struct gate *g)
{
    unsigned char buf[CHUNK];
    size_t off = 0;
    bool partial = false;
    int rc = 0;
    if (fcntl(in_fd, F_SETFL, O_NONBLOCK) < 0)
        rc = fail(out, "fcntl O_NONBLOCK", errno);
    if (rc == 0)
        rc = feed(w, &in_fd, &off, out);
    gate_arrive(g);
    while (rc == 0 && (in_fd >= 0 || out_fd >= 0)) {
        /* A closed end is -1, which poll skips. */
        struct pollfd pfd[2] = {{out_fd, POLLIN, 0}, {in_fd, POLLOUT, 0}};
        if (poll(pfd, 2, -1) < 0) {
            if (errno != EINTR)
                rc = fail(out, "poll", errno);
            continue;
        }
        if (pfd[1].revents != 0)
            rc = feed(w, &in_fd, &off, out);
        if (rc == 0 && pfd[0].revents != 0) {
            ssize_t n = read(out_fd, buf, sizeof buf);
            if (n > 0)
                count(buf, (size_t)n, out, &partial);
            else if (n == 0)
                close_fd(&out_fd);
            else if (errno != EINTR && errno != EAGAIN)
                rc = fail(out, "read stdout", errno);
        }
    }
    if (partial)
        out->lines++;
    close_fd(&in_fd);
    close_fd(&out_fd);
    return rc;
}

static int one_child(pkb_raw_start_fn start, const pkb_workload *w, pkb_sample *out, struct gate *g)
{
    int in[2], res[2];
    if (pipe2(in, O_CLOEXEC) < 0) {
        gate_arrive(g);
        return fail(out, "pipe2", errno);
    }
    if (pipe2(res, O_CLOEXEC) < 0) {
        int err = errno;
        close(in[0]);
        close(in[1]);
        gate_arrive(g);
        return fail(out, "pipe2", err);
    }
    pid_t pid;
    int rc = start(w, in[0], res[1], &pid);
    close(in[0]);
    close(res[1]);
    if (rc < 0) {
        close(in[1]);
        close(res[0]);
        gate_arrive(g);
        return fail(out, "start", -rc);
    }
    rc = pump(w, in[1], res[0], out, g);
    /* Both pipe ends are closed now, so the child cannot block on them: the reap always ends. */
    int reaped = reap(pid, out);
    return rc != 0 ? rc : reaped;
}

static int no_pipes(pkb_raw_start_fn start, const pkb_workload *w, pkb_sample *out)
{
    pid_t pid;
    int rc = start(w, -1, -1, &pid);
    if (rc < 0)
        return fail(out, "start", -rc);
    return reap(pid, out);
}

struct job {
    pkb_raw_start_fn start;
    const pkb_workload *w;
    struct gate *gate;
    pkb_sample sample;
    int rc;
    pthread_t thread;
    bool started;
};

static void *job_main(void *arg)
{
    struct job *j = arg;
    j->rc = one_child(j->start, j->w, &j->sample, j->gate);
    return NULL;
}

/* With descriptors counted: waits until the `started` threads have their children in flight,
 * counts, and lets them go on. */
static void count_at_gate(struct gate *g, int started, pkb_sample *out)
{
    pthread_mutex_lock(&g->lock);
    while (g->arrived < started)
        pthread_cond_wait(&g->cond, &g->lock);
    out->peak_fds = pkb_count_fds();
    g->open = true;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

static int fan_out(pkb_raw_start_fn start, const pkb_workload *w, pkb_sample *out)
{
    if (w->children < 1 || w->children > PKB_FAN_OUT_MAX)
        return fail(out, "fan-out size", EINVAL);
    struct job *jobs = calloc((size_t)w->children, sizeof *jobs);
    if (jobs == NULL)
        return fail(out, "fan-out", ENOMEM);
    struct gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, w->children, false};
    int rc = 0, started = 0;
    for (int i = 0; i < w->children; i++) {
        jobs[i] = (struct job){.start = start, .w = w, .gate = w->count_fds ? &gate : NULL};
        int err = pthread_create(&jobs[i].thread, NULL, job_main, &jobs[i]);
        if (err != 0)
            rc = rc != 0 ? rc : fail(out, "pthread_create", err);
        jobs[i].started = err == 0;
        started += err == 0;
    }
    if (w->count_fds)
        count_at_gate(&gate, started, out);
    for (int i = 0; i < w->children; i++) {
        if (!jobs[i].started)
            continue;
        pthread_join(jobs[i].thread, NULL);
        const pkb_sample *s = &jobs[i].sample;
        out->bytes += s->bytes;
        out->lines += s->lines;
        out->children += s->children;
        out->failures += s->failures;
        if (out->error[0] == '\0' && s->error[0] != '\0')
            memcpy(out->error, s->error, sizeof out->error);
        if (rc == 0)
            rc = jobs[i].rc;
    }
    free(jobs);
    return rc;
}

int pkb_raw_run(pkb_raw_start_fn start, const pkb_workload *w, pkb_sample *out)
{
    if (w->scenario == PKB_SPAWN_ONLY)
        return no_pipes(start, w, out);
    if (pkb_scenario_fans_out(w->scenario))
        return fan_out(start, w, out);
    return one_child(start, w, out, NULL);
}
