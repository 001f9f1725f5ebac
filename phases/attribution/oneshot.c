/*
 * The phases suite's one-shot ladder and capture path: the path pk_run takes when only the
 * child's exit is awaited, mirrored with raw system calls one step at a time, the library itself
 * on that path, and the all-defaults run against a hand-written loop doing the same I/O.
 *
 *   raw ladder  clone3(CLONE_VM|CLONE_VFORK|CLONE_CLEAR_SIGHAND) on the suite's reused stack,
 *               execve, waitid(P_PID) — the library's mechanism, reaped by pid — and on top, as
 *               def->oneshot says: CLONE_PIDFD with waitid(P_PIDFD) and close; close_range(3, ~0)
 *               in the child; CLONE_INTO_CGROUP into the kept leaf with one pread of its
 *               cgroup.procs after the reap (the library's pooled leaf, held as the library
 *               holds it: env.c); or, instead, the killed-leaf path: the child writes "0" to the
 *               leaf's cgroup.procs before exec.
 *   library     pk_run with the streams inherited, contained (a pooled leaf of the library's own)
 *               or not; pk_run with every default (stdin /dev/null, both outputs captured).
 *   raw capture vfork; the child's stdin the kept /dev/null, stdout and stderr two pipes; the
 *               parent polls and reads both until they end, then waitpid.
 *
 * The child runs raw system calls only (it shares our memory while we wait); series.c's table
 * declares which series each one builds on (`base`) and the primitives it adds.
 */
#define _GNU_SOURCE
#include "phases/attribution/internal.h"

#include "processkit.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

extern char **environ;

static int fail(pkb_phase_run *run, int rc, const char *what)
{
    snprintf(run->error, sizeof run->error, "%s: %s", what, strerror(rc < 0 ? -rc : rc));
    return rc < 0 ? rc : -rc;
}

static int exited(pkb_phase_run *run, bool ok, const char *how)
{
    if (ok)
        return 0;
    snprintf(run->error, sizeof run->error, "the child %s", how);
    return -ECHILD;
}

struct oneshot_child {
    const pkb_phases_env *env;
    bool close_range;
    int procs_fd; /* >= 0: join the leaf through cgroup.procs */
};

/* Runs on the child stack while the parent is suspended: raw system calls only. */
__attribute__((no_sanitize("address", "undefined"), noinline)) static int oneshot_child(void *arg)
{
    const struct oneshot_child *c = arg;
    if (c->procs_fd >= 0 && syscall(SYS_write, c->procs_fd, "0", 1) != 1)
        return 126;
    if (c->close_range)
        syscall(SYS_close_range, 3U, ~0U, 0U);
    syscall(SYS_execve, c->env->child, c->env->argv, environ);
    return 127;
}

/* The leaf must read empty after the reap, as the library's end of a contained run checks: its
 * holder alone in cgroup.procs. */
static int leaf_empty(pkb_phase_run *run)
{
    const pkb_phases_env *e = run->env;
    char procs[64];
    ssize_t n = pread(e->pool_procs_rd, procs, sizeof procs, 0);
    if (n < 0)
        return fail(run, -errno, "pread of cgroup.procs");
    if ((size_t)n != e->pool_holder_len || memcmp(procs, e->pool_holder_line, (size_t)n) != 0) {
        snprintf(run->error, sizeof run->error, "the kept leaf is not empty after the reap");
        return -EBUSY;
    }
    return 0;
}

int pkb__run_oneshot(pkb_phase_run *run)
{
    pkb_phases_env *e = run->env;
    unsigned steps = run->def->oneshot;
    struct oneshot_child c = {e, (steps & PKB_ONESHOT_CLOSE_RANGE) != 0,
                              (steps & PKB_ONESHOT_PROCS_JOIN) ? e->pool_procs_fd : -1};
    int pidfd = -1;
    struct pk_clone_args a = {
        .flags = CLONE_VM | CLONE_VFORK | PK_CLONE_CLEAR_SIGHAND,
        .exit_signal = SIGCHLD,
        .stack = (uint64_t)(uintptr_t)e->stack.low,
        .stack_size = PKB__STACK_SIZE,
    };
    if (steps & PKB_ONESHOT_PIDFD) {
        a.flags |= CLONE_PIDFD;
        a.pidfd = (uint64_t)(uintptr_t)&pidfd;
    }
    if (steps & PKB_ONESHOT_POOLED_LEAF) {
        a.flags |= PK_CLONE_INTO_CGROUP;
        a.cgroup = (uint64_t)e->pool_fd;
    }
    long pid = raw_clone3(&a, sizeof a, oneshot_child, &c);
    if (pid < 0)
        return fail(run, (int)pid, "clone3");
    siginfo_t si;
    idtype_t type = pidfd >= 0 ? P_PIDFD : P_PID;
    id_t id = pidfd >= 0 ? (id_t)pidfd : (id_t)pid;
    int rc = 0;
    while (waitid(type, id, &si, WEXITED) != 0)
        if (errno != EINTR) {
            rc = fail(run, -errno, "waitid");
            break;
        }
    if (pidfd >= 0)
        close(pidfd);
    if (rc == 0)
        rc = exited(run, si.si_code == CLD_EXITED && si.si_status == 0,
                    si.si_code == CLD_EXITED ? "did not exit 0" : "was killed");
    if (rc == 0 && (steps & (PKB_ONESHOT_POOLED_LEAF | PKB_ONESHOT_PROCS_JOIN)))
        rc = leaf_empty(run);
    return rc;
}

/* ---- the library --------------------------------------------------------------------------- */

static int pk_ok(pkb_phase_run *run, int rc, pk_result *r)
{
    if (rc != 0)
        snprintf(run->error, sizeof run->error, "pk_run: %s", pk_strerror(rc));
    else if (r->outcome.kind != PK_OUTCOME_EXITED || r->outcome.code != 0)
        rc = exited(run, false, "did not exit 0");
    else if (r->out.total_bytes != 0 || r->err.total_bytes != 0)
        rc = exited(run, false, "wrote output (the tiny helper writes none)");
    pk_result_release(r);
    return rc;
}

static int pk_inherit(pkb_phase_run *run, pk_containment containment)
{
    pk_result r;
    int rc = pk_run(&(pk_command){.program = run->env->child,
                                  .in.kind = PK_STDIO_INHERIT,
                                  .out.kind = PK_STDIO_INHERIT,
                                  .err.kind = PK_STDIO_INHERIT,
                                  .containment = containment},
                    &r);
    return pk_ok(run, rc, &r);
}

int pkb__run_pk_contained(pkb_phase_run *run)
{
    return pk_inherit(run, PK_CONTAIN_CGROUP);
}

int pkb__run_pk_uncontained(pkb_phase_run *run)
{
    return pk_inherit(run, PK_CONTAIN_NONE);
}

int pkb__run_pk_defaults(pkb_phase_run *run)
{
    pk_result r;
    int rc = pk_run(&(pk_command){.program = run->env->child}, &r);
    return pk_ok(run, rc, &r);
}

/* ---- the raw capture loop ------------------------------------------------------------------ */

static int read_both(int out, int err)
{
    static char buf[65536];
    struct pollfd p[2] = {{out, POLLIN, 0}, {err, POLLIN, 0}};
    int open_ends = 2, rc = 0;
    while (open_ends > 0) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (p[i].fd < 0 || p[i].revents == 0)
                continue;
            ssize_t n = read(p[i].fd, buf, sizeof buf);
            if (n > 0)
                rc = -EPROTO; /* the tiny helper writes nothing */
            if (n == 0 || (n < 0 && errno != EINTR)) {
                close(p[i].fd);
                p[i].fd = -1;
                open_ends--;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (p[i].fd >= 0)
            close(p[i].fd);
    return rc;
}

int pkb__run_vfork_pipes_poll(pkb_phase_run *run)
{
    const pkb_phases_env *e = run->env;
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0)
        return fail(run, -errno, "pipe2");
    if (pipe2(err, O_CLOEXEC) != 0) {
        int rc = fail(run, -errno, "pipe2");
        close(out[0]);
        close(out[1]);
        return rc;
    }
    pid_t pid = vfork();
    if (pid == 0) {
        if (dup2(e->null_fd, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
            _exit(126);
        execve(e->child, e->argv, environ);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    int rc = pid < 0 ? fail(run, -errno, "vfork") : 0;
    int io = read_both(out[0], err[0]);
    if (pid < 0)
        return rc;
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return fail(run, -errno, "waitpid");
    if (io != 0)
        return fail(run, io, "reading the pipes");
    return exited(run, WIFEXITED(status) && WEXITSTATUS(status) == 0, "did not exit 0");
}

/* ---- primitives ---------------------------------------------------------------------------- */

int pkb__run_held_procs_read(pkb_phase_run *run)
{
    char procs[64];
    return pread(run->env->pool_procs_rd, procs, sizeof procs, 0) > 0
               ? 0
               : fail(run, -errno, "pread of cgroup.procs");
}

int pkb__run_events_read(pkb_phase_run *run)
{
    char ev[128];
    return pread(run->env->pool_events_fd, ev, sizeof ev, 0) > 0
               ? 0
               : fail(run, -errno, "pread of cgroup.events");
}
