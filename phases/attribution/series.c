/*
 * The phases suite's series: their code, and next to it the one table that declares them, with
 * the composition of every composite (the primitives it contains). phases.h says what the kinds
 * mean; METHODOLOGY.md ("Where a Linux start goes") how to read the result.
 *
 * The sequence series mirror the library's spawn (lib/src/spawn.linux.c, child.linux.c,
 * cgroup.linux.c) step for step with raw system calls, never through library internals:
 *
 *   parent   [mkdir a leaf "pkb-phases-<pid>-<tag>-<n>" under our cgroup, open it, flock it]
 *            [getpid() for the pdeathsig check]
 *            clone3(CLONE_VM|CLONE_VFORK|CLONE_PIDFD|CLONE_CLEAR_SIGHAND [|CLONE_INTO_CGROUP])
 *            on a reused 64 KiB stack, through phases/raw_clone3.<arch>.S;
 *   child    [setpgid(0, 0)] [prctl(PR_SET_PDEATHSIG, SIGKILL); getppid() == parent, else exit]
 *            execve — raw syscalls only: it runs on our memory while we are suspended;
 *   parent   find the child's threads: /proc/<pid>/task (or the leaf's cgroup.procs), or every
 *            /proc/<n>/task on the machine;
 *            waitid(P_PIDFD) — in a leaf first WNOWAIT, then cgroup.kill (the kill-on-close
 *            guarantee), then the reap — close the pidfd, [rmdir the leaf].
 *
 * The library takes setpgid only in process-group mode and pdeathsig only when asked; the ladder
 * adds them one by one all the same, so each step's cost shows, and `processkit` (a fresh cgroup
 * group, pdeathsig, the library's own spawn and wait) is there to compare with the full sequence.
 */
#define _GNU_SOURCE
#include "phases/attribution/internal.h"

#include "processkit.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int fail(pkb_phase_run *run, int rc, const char *what)
{
    snprintf(run->error, sizeof run->error, "%s: %s", what, strerror(rc < 0 ? -rc : rc));
    return rc < 0 ? rc : -rc;
}

/* ---- the child and the spawn ----------------------------------------------------------------- */

struct child_plan {
    const char *path;
    char *const *argv;
    char *const *envp;
    bool setpgid;
    int pdeathsig;
    long parent_pid;
};

/* Runs on the child stack while the parent is suspended: raw system calls only, nothing that an
 * instrumented or interposed libc function could do; its return value is the exit status. */
__attribute__((no_sanitize("address", "undefined"), noinline)) static int child_main(void *arg)
{
    const struct child_plan *p = arg;
    if (p->setpgid && syscall(SYS_setpgid, 0, 0) != 0)
        return 126;
    if (p->pdeathsig > 0) {
        if (syscall(SYS_prctl, PR_SET_PDEATHSIG, p->pdeathsig, 0, 0, 0) != 0)
            return 126;
        if (syscall(SYS_getppid) != p->parent_pid)
            return 0; /* the spawner is already gone */
    }
    syscall(SYS_execve, p->path, p->argv, p->envp);
    return 127;
}

static long spawn(const pkb_phases_env *e,
                  const pkb__stack *stack,
                  const struct child_plan *plan,
                  int cgroup_fd,
                  int *pidfd)
{
    struct pk_clone_args a = {
        .flags =
            CLONE_VM | CLONE_VFORK | CLONE_PIDFD | (e->clear_sighand ? PK_CLONE_CLEAR_SIGHAND : 0),
        .pidfd = (uint64_t)(uintptr_t)pidfd,
        .exit_signal = SIGCHLD,
        .stack = (uint64_t)(uintptr_t)stack->low,
        .stack_size = PKB__STACK_SIZE,
    };
    if (cgroup_fd >= 0) {
        a.flags |= PK_CLONE_INTO_CGROUP;
        a.cgroup = (uint64_t)cgroup_fd;
    }
    return raw_clone3(&a, sizeof a, child_main, (void *)plan);
}

static int wait_pidfd(int pidfd, int options, siginfo_t *si)
{
    while (waitid(P_PIDFD, (id_t)pidfd, si, options) != 0)
        if (errno != EINTR)
            return -errno;
    return 0;
}

/* 0 when the child exited 0, else -ECHILD with the reason in run->error. */
static int exited_ok(pkb_phase_run *run, int code, int signo)
{
    if (signo == 0 && code == 0)
        return 0;
    if (signo != 0)
        snprintf(run->error, sizeof run->error, "the child died of signal %d", signo);
    else
        snprintf(run->error, sizeof run->error, "the child exited %d%s", code,
                 code == 127   ? " (execve failed)"
                 : code == 126 ? " (a child step failed)"
                               : "");
    return -ECHILD;
}

static int siginfo_ok(pkb_phase_run *run, const siginfo_t *si)
{
    return si->si_code == CLD_EXITED ? exited_ok(run, si->si_status, 0)
                                     : exited_ok(run, 0, si->si_status);
}

/* ---- phase series ------------------------------------------------------------------------------
 */

/* vfork + execve + waitpid: the floor every phase is measured from. */
static int run_plain(pkb_phase_run *run)
{
    const pkb_phases_env *e = run->env;
    pid_t pid = vfork();
    if (pid == 0) {
        execve(e->child, e->argv, environ);
        _exit(127);
    }
    if (pid < 0)
        return fail(run, -errno, "vfork");
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return fail(run, -errno, "waitpid");
    return WIFEXITED(status) ? exited_ok(run, WEXITSTATUS(status), 0)
                             : exited_ok(run, 0, WTERMSIG(status));
}

static int cgroup_kill(int leaf_fd)
{
    int fd = openat(leaf_fd, "cgroup.kill", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = write(fd, "1", 1) == 1 ? 0 : -errno;
    close(fd);
    return rc;
}

/* The containment sequence up to the def's steps, and its walk (see the file comment). */
static int run_sequence(pkb_phase_run *run)
{
    pkb_phases_env *e = run->env;
    const pkb_phase_def *d = run->def;
    bool in_leaf = d->steps & PKB_STEP_CGROUP;
    char leaf[64];
    int leaf_fd = -1, rc;
    if (in_leaf && (rc = pkb__leaf_make(e, leaf, sizeof leaf, &leaf_fd)) != 0)
        return fail(run, rc, "mkdir of a cgroup leaf");
    struct child_plan plan = {
        .path = e->child,
        .argv = e->argv,
        .envp = environ,
        .setpgid = d->steps & PKB_STEP_PGROUP,
        .pdeathsig = d->steps & PKB_STEP_PDEATHSIG ? SIGKILL : 0,
    };
    if (plan.pdeathsig > 0)
        plan.parent_pid = getpid();
    int pidfd = -1;
    long pid = spawn(e, &e->stack, &plan, leaf_fd, &pidfd);
    if (pid < 0) {
        if (in_leaf)
            (void)pkb__leaf_remove(e, leaf, leaf_fd);
        return fail(run, (int)pid, "clone3");
    }
    int walk_rc = 0;
    if (d->walk == PKB_WALK_DIRECT && in_leaf)
        walk_rc = pkb_walk_cgroup(leaf_fd, &run->members);
    else if (d->walk == PKB_WALK_DIRECT)
        walk_rc = pkb_walk_direct((int)pid, &run->walk);
    else if (d->walk == PKB_WALK_SNAPSHOT)
        walk_rc = pkb_walk_snapshot((int)pid, &run->walk);
    siginfo_t si;
    if (in_leaf) {
        /* Kill-on-close: the exit seen without reaping, the whole tree killed, then the reap. */
        rc = wait_pidfd(pidfd, WEXITED | WNOWAIT, &si);
        int kill_rc = cgroup_kill(leaf_fd);
        int reap_rc = wait_pidfd(pidfd, WEXITED, &si);
        close(pidfd);
        int rm_rc = pkb__leaf_remove(e, leaf, leaf_fd);
        if (rc == 0)
            rc = reap_rc;
        if (rc != 0)
            return fail(run, rc, "waitid");
        if (kill_rc != 0)
            return fail(run, kill_rc, "cgroup.kill");
        if (rm_rc != 0)
            return fail(run, rm_rc, "rmdir of the leaf");
    } else {
        rc = wait_pidfd(pidfd, WEXITED, &si);
        close(pidfd);
        if (rc != 0)
            return fail(run, rc, "waitid");
    }
    if (walk_rc != 0)
        return fail(run, walk_rc, d->walk == PKB_WALK_SNAPSHOT ? "/proc scan" : "direct walk");
    return siginfo_ok(run, &si);
}

/* The library itself: a fresh cgroup group, pk_spawn into it with pdeathsig, wait, free both. */
static int run_processkit(pkb_phase_run *run)
{
    pk_group *g;
    int rc = pk_group_new(&(pk_group_options){.containment = PK_CONTAIN_CGROUP}, &g);
    if (rc != 0) {
        snprintf(run->error, sizeof run->error, "pk_group_new: %s", pk_strerror(rc));
        return rc;
    }
    pk_process *p;
    pk_result r;
    memset(&r, 0, sizeof r);
    rc = pk_spawn(&(pk_command){.program = run->env->child,
                                .in.kind = PK_STDIO_INHERIT,
                                .out.kind = PK_STDIO_INHERIT,
                                .err.kind = PK_STDIO_INHERIT,
                                .group = g,
                                .pdeathsig = SIGKILL},
                  &p, &r);
    if (rc == 0) {
        rc = pk_process_wait(p, &r);
        pk_process_free(p);
    }
    if (rc != 0)
        snprintf(run->error, sizeof run->error, "pk_spawn: %s", pk_strerror(rc));
    else if (r.outcome.kind != PK_OUTCOME_EXITED || r.outcome.code != 0)
        rc = exited_ok(run, r.outcome.code, r.outcome.kind == PK_OUTCOME_EXITED ? 0 : 1);
    pk_result_release(&r);
    pk_group_free(g);
    return rc;
}

/* ---- primitives: no child ------------------------------------------------------------------ */

static int run_pidfd_open(pkb_phase_run *run)
{
    long fd = syscall(SYS_pidfd_open, run->env->self_pid, 0);
    if (fd < 0)
        return fail(run, -errno, "pidfd_open");
    close((int)fd);
    return 0;
}

static int run_pipe2_pair(pkb_phase_run *run)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return fail(run, -errno, "pipe2");
    close(fds[0]);
    close(fds[1]);
    return 0;
}

/* Joins the process group we are already in: the kernel's setpgid path, no change of group. */
static int run_setpgid(pkb_phase_run *run)
{
    return setpgid(0, run->env->pgid) == 0 ? 0 : fail(run, -errno, "setpgid");
}

/* The pdeathsig step's three calls: the parent's getpid, the child's prctl and getppid (setting
 * the value this process already has). */
static int run_pdeathsig(pkb_phase_run *run)
{
    (void)getpid();
    if (prctl(PR_SET_PDEATHSIG, run->env->own_pdeathsig, 0, 0, 0) != 0)
        return fail(run, -errno, "prctl");
    (void)getppid();
    return 0;
}

/* mkdir of a leaf, its locked descriptor (open, flock, the check that it is still there), close,
 * rmdir. */
static int run_cgroup_create_rmdir(pkb_phase_run *run)
{
    char leaf[64];
    int fd, rc = pkb__leaf_make(run->env, leaf, sizeof leaf, &fd);
    if (rc == 0)
        rc = pkb__leaf_remove(run->env, leaf, fd);
    return rc == 0 ? 0 : fail(run, rc, "leaf");
}

/* cgroup.kill written to an empty leaf (the probe leaf: never cloned into). */
static int run_cgroup_kill(pkb_phase_run *run)
{
    int rc = cgroup_kill(run->env->probe_fd);
    return rc == 0 ? 0 : fail(run, rc, "cgroup.kill");
}

static int run_cgroup_procs_read(pkb_phase_run *run)
{
    int rc = pkb_walk_cgroup(run->env->probe_fd, &run->members);
    return rc == 0 ? 0 : fail(run, rc, "cgroup.procs");
}

static int run_direct_walk(pkb_phase_run *run)
{
    int rc = pkb_walk_direct(run->env->self_pid, &run->walk);
    return rc == 0 ? 0 : fail(run, rc, "/proc/self/task");
}

static int run_snapshot_walk(pkb_phase_run *run)
{
    int rc = pkb_walk_snapshot(run->env->self_pid, &run->walk);
    return rc == 0 ? 0 : fail(run, rc, "/proc scan");
}

static int lookup(pkb_phase_run *run, const char *program)
{
    char *path = NULL;
    int rc = pk_resolve_program(program, NULL, &path, NULL);
    free(path);
    if (rc != 0)
        snprintf(run->error, sizeof run->error, "resolving %.100s: %s", program, pk_strerror(rc));
    return rc;
}

static int run_lookup_absolute(pkb_phase_run *run)
{
    return lookup(run, run->env->child);
}

static int run_lookup_bare(pkb_phase_run *run)
{
    return lookup(run, run->env->bare_name);
}

/* ---- the spawn lock -------------------------------------------------------------------------- */

/* One lock for the whole process, as a library would hold around every child creation. */
static pthread_mutex_t spawn_lock = PTHREAD_MUTEX_INITIALIZER;

struct lock_worker {
    pthread_t thread;
    struct pkb__lock_pool *pool;
    pkb__stack stack;
    unsigned generation;
    int rc;
    char error[96];
};

/* PKB__LOCK_SPAWNS threads that each spawn one child per iteration, released together. */
struct pkb__lock_pool {
    pthread_mutex_t m;
    pthread_cond_t go, finished;
    unsigned generation;
    int pending, started;
    bool stop, locked;
    pkb_phases_env *env;
    struct lock_worker w[PKB__LOCK_SPAWNS];
};

static void *lock_worker_main(void *arg)
{
    struct lock_worker *w = arg;
    struct pkb__lock_pool *p = w->pool;
    const struct child_plan plan = {.path = p->env->child, .argv = p->env->argv, .envp = environ};
    for (;;) {
        pthread_mutex_lock(&p->m);
        while (!p->stop && p->generation == w->generation)
            pthread_cond_wait(&p->go, &p->m);
        bool stop = p->stop;
        w->generation = p->generation;
        pthread_mutex_unlock(&p->m);
        if (stop)
            return NULL;
        int pidfd = -1;
        if (p->locked)
            pthread_mutex_lock(&spawn_lock);
        long pid = spawn(p->env, &w->stack, &plan, -1, &pidfd);
        if (p->locked)
            pthread_mutex_unlock(&spawn_lock);
        siginfo_t si;
        w->rc = pid < 0 ? (int)pid : wait_pidfd(pidfd, WEXITED, &si);
        if (pid >= 0)
            close(pidfd);
        if (w->rc != 0)
            snprintf(w->error, sizeof w->error, "%s: %s", pid < 0 ? "clone3" : "waitid",
                     strerror(-w->rc));
        else if (si.si_code != CLD_EXITED || si.si_status != 0)
            w->rc = -ECHILD, snprintf(w->error, sizeof w->error, "a child did not exit 0");
        pthread_mutex_lock(&p->m);
        if (--p->pending == 0)
            pthread_cond_signal(&p->finished);
        pthread_mutex_unlock(&p->m);
    }
}

static void lock_pool_free(struct pkb__lock_pool *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->m);
    p->stop = true;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->m);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->w[i].thread, NULL);
    for (int i = 0; i < PKB__LOCK_SPAWNS; i++)
        pkb__stack_unmap(&p->w[i].stack);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->finished);
    pthread_mutex_destroy(&p->m);
    free(p);
}

static int lock_pool_new(pkb_phase_run *run)
{
    struct pkb__lock_pool *p = calloc(1, sizeof *p);
    if (p == NULL)
        return fail(run, -ENOMEM, "the spawn threads");
    pthread_mutex_init(&p->m, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->finished, NULL);
    p->env = run->env;
    p->locked = run->def->locked;
    run->lock = p;
    for (int i = 0; i < PKB__LOCK_SPAWNS; i++) {
        struct lock_worker *w = &p->w[i];
        w->pool = p;
        int rc = pkb__stack_map(&w->stack);
        if (rc == 0)
            rc = -pthread_create(&w->thread, NULL, lock_worker_main, w);
        if (rc != 0)
            return fail(run, rc, "the spawn threads");
        p->started++;
    }
    return 0;
}

/* The lock series whose threads exist: at most one, and only while it is the series being run,
 * so that no other series — a walk of this process's own threads above all — ever runs next to
 * sixteen idle threads. The pool starts in the series' first iteration (the untimed check, then
 * the runner's warm-up) and stops when another lock series starts or the series is closed. */
static pkb_phase_run *lock_owner;

void pkb__lock_release(pkb_phase_run *run)
{
    lock_pool_free(run->lock);
    run->lock = NULL;
    if (lock_owner == run)
        lock_owner = NULL;
}

static int run_lock(pkb_phase_run *run)
{
    if (run->lock == NULL) {
        if (lock_owner != NULL)
            pkb__lock_release(lock_owner);
        int rc = lock_pool_new(run);
        if (rc != 0) {
            pkb__lock_release(run);
            return rc;
        }
        lock_owner = run;
    }
    struct pkb__lock_pool *p = run->lock;
    pthread_mutex_lock(&p->m);
    p->pending = PKB__LOCK_SPAWNS;
    p->generation++;
    pthread_cond_broadcast(&p->go);
    while (p->pending > 0)
        pthread_cond_wait(&p->finished, &p->m);
    pthread_mutex_unlock(&p->m);
    for (int i = 0; i < PKB__LOCK_SPAWNS; i++) {
        if (p->w[i].rc != 0) {
            snprintf(run->error, sizeof run->error, "spawn %d: %s", i, p->w[i].error);
            return p->w[i].rc;
        }
    }
    return 0;
}

/* ---- the table ------------------------------------------------------------------------------ */

/* Designated-initializer fragments, so that each row below reads as one declaration. */
#define PHASE(name_, steps_, walk_, needs_)                                                        \
    .group = "phase", .name = (name_), .kind = PKB_KIND_PHASE, .steps = (steps_), .walk = (walk_), \
    .needs = (needs_), .children = 1, .run = run_sequence,                                         \
    .records = (walk_) == PKB_WALK_SNAPSHOT      ? PKB_RECORD_MACHINE                              \
               : ((steps_)&PKB_STEP_CGROUP) != 0 ? PKB_RECORD_MEMBERS                              \
                                                 : PKB_RECORD_THREADS
#define PRIMITIVE(name_, run_)                                                                     \
    .group = "primitive", .name = (name_), .kind = PKB_KIND_PRIMITIVE, .run = (run_)
#define PARTS(...)                                                                                 \
    (const char *const[])                                                                          \
    {                                                                                              \
        __VA_ARGS__, NULL                                                                          \
    }
#define NONE                                                                                       \
    (const char *const[])                                                                          \
    {                                                                                              \
        NULL                                                                                       \
    }
#define ONESHOT(name_, steps_, needs_)                                                             \
    .group = "phase", .name = (name_), .kind = PKB_KIND_PHASE, .oneshot = (steps_),                \
    .needs = PKB_NEED_CLONE3 | (needs_), .children = 1, .run = pkb__run_oneshot
#define PIDFD  PKB_STEP_PIDFD
#define PGROUP (PIDFD | PKB_STEP_PGROUP)
#define PDEATH (PGROUP | PKB_STEP_PDEATHSIG)
#define CGROUP (PDEATH | PKB_STEP_CGROUP)

const pkb_phase_def pkb_phase_defs[] = {
    {.group = "phase",
     .name = "os_spawn_plain",
     .kind = PKB_KIND_PHASE,
     .baseline = true,
     .description = "vfork + execve + waitpid: the floor",
     .children = 1,
     .run = run_plain},

    /* The ladder. Each composite is os_spawn_plain + the primitives of its PARTS: the
     * reconciliation's declaration, written into the results file as `composition`. */
    {PHASE("pidfd_direct", PIDFD, PKB_WALK_DIRECT, PKB_NEED_CLONE3),
     .description = "+pidfd: clone3 with CLONE_PIDFD, waitid on the pidfd; /proc/<pid>/task",
     .composition = PARTS("pidfd_open", "direct_thread_walk")},
    {PHASE("pgroup_direct", PGROUP, PKB_WALK_DIRECT, PKB_NEED_CLONE3 | PKB_NEED_SETPGID),
     .description = "+pgroup: setpgid(0, 0) in the child; /proc/<pid>/task",
     .composition = PARTS("pidfd_open", "setpgid", "direct_thread_walk")},
    {PHASE("pdeathsig_direct", PDEATH, PKB_WALK_DIRECT, PKB_NEED_CLONE3 | PKB_NEED_SETPGID),
     .description = "+pdeathsig: PR_SET_PDEATHSIG and the getppid check; /proc/<pid>/task",
     .composition = PARTS("pidfd_open", "setpgid", "pdeathsig_prctl", "direct_thread_walk")},
    {PHASE("containment_sequence_direct",
           CGROUP,
           PKB_WALK_DIRECT,
           PKB_NEED_CLONE3 | PKB_NEED_SETPGID | PKB_NEED_CGROUP),
     .description = "+cgroup: a fresh leaf, CLONE_INTO_CGROUP, cgroup.kill, rmdir; the leaf's "
                    "cgroup.procs",
     .composition = PARTS("pidfd_open",
                          "setpgid",
                          "pdeathsig_prctl",
                          "cgroup_create_rmdir",
                          "cgroup_kill",
                          "cgroup_procs_read")},
    {.group = "phase",
     .name = "processkit",
     .kind = PKB_KIND_PHASE,
     .description = "the library: pk_group_new (a fresh cgroup leaf), pk_spawn into it with "
                    "pdeathsig, pk_process_wait, pk_group_free",
     .composition = PARTS("pidfd_open", "pdeathsig_prctl", "cgroup_create_rmdir"),
     .needs = PKB_NEED_CGROUP,
     .records = PKB_RECORD_CONTAINMENT,
     .children = 1,
     .run = run_processkit},
    {PHASE("pidfd_snapshot", PIDFD, PKB_WALK_SNAPSHOT, PKB_NEED_CLONE3),
     .description = "+pidfd, then every /proc/<n>/task on the machine",
     .composition = PARTS("pidfd_open", "thread_snapshot_walk")},
    {PHASE("pgroup_snapshot", PGROUP, PKB_WALK_SNAPSHOT, PKB_NEED_CLONE3 | PKB_NEED_SETPGID),
     .description = "+pgroup, then every /proc/<n>/task on the machine",
     .composition = PARTS("pidfd_open", "setpgid", "thread_snapshot_walk")},
    {PHASE("pdeathsig_snapshot", PDEATH, PKB_WALK_SNAPSHOT, PKB_NEED_CLONE3 | PKB_NEED_SETPGID),
     .description = "+pdeathsig, then every /proc/<n>/task on the machine",
     .composition = PARTS("pidfd_open", "setpgid", "pdeathsig_prctl", "thread_snapshot_walk")},
    {PHASE("containment_sequence_snapshot",
           CGROUP,
           PKB_WALK_SNAPSHOT,
           PKB_NEED_CLONE3 | PKB_NEED_SETPGID | PKB_NEED_CGROUP),
     .description = "+cgroup, then every /proc/<n>/task on the machine",
     .composition = PARTS("pidfd_open",
                          "setpgid",
                          "pdeathsig_prctl",
                          "cgroup_create_rmdir",
                          "cgroup_kill",
                          "thread_snapshot_walk")},

    /* The one-shot ladder (oneshot.c): the path pk_run takes when only the exit is awaited,
     * one step at a time. A step only a child can take (close_range, CLONE_INTO_CGROUP) has no
     * child-less primitive: it is measured against the series before it (`base`), where its
     * cost is the residual. */
    {ONESHOT("clone3_by_pid", 0, 0),
     .description = "clone3(CLONE_VM|CLONE_VFORK|CLONE_CLEAR_SIGHAND), execve, waitid(P_PID): "
                    "the library's mechanism, no pidfd",
     .composition = NONE},
    {ONESHOT("clone3_pidfd", PKB_ONESHOT_PIDFD, 0),
     .description = "clone3_by_pid + CLONE_PIDFD, waitid(P_PIDFD), close", .base = "clone3_by_pid",
     .composition = PARTS("pidfd_open")},
    {ONESHOT("clone3_close_range", PKB_ONESHOT_CLOSE_RANGE, 0),
     .description = "clone3_by_pid + close_range(3, ~0) in the child (the residual is its cost)",
     .base = "clone3_by_pid", .composition = NONE},
    {ONESHOT("clone3_pooled_leaf", PKB_ONESHOT_POOLED_LEAF, PKB_NEED_CGROUP),
     .description = "clone3_by_pid + CLONE_INTO_CGROUP into a kept, held leaf, one pread of its "
                    "cgroup.procs after the reap (the residual is CLONE_INTO_CGROUP)",
     .base = "clone3_by_pid", .composition = PARTS("held_procs_read")},
    {ONESHOT(
         "clone3_contained", PKB_ONESHOT_CLOSE_RANGE | PKB_ONESHOT_POOLED_LEAF, PKB_NEED_CGROUP),
     .description = "close_range and the kept leaf together: the raw mirror of a contained pk_run",
     .base = "clone3_close_range", .composition = PARTS("held_procs_read")},
    {ONESHOT("clone3_procs_join", PKB_ONESHOT_PROCS_JOIN, PKB_NEED_CGROUP),
     .description = "the killed-leaf path: the child writes \"0\" to the kept leaf's cgroup.procs "
                    "before exec instead of being born in it; the same pread after the reap",
     .base = "clone3_by_pid", .composition = PARTS("held_procs_read")},
    {.group = "phase",
     .name = "processkit_contained",
     .kind = PKB_KIND_PHASE,
     .description = "the library: pk_run with the streams inherited and its default private "
                    "group (a pooled leaf); the residual is the library's own work",
     .base = "clone3_contained",
     .composition = NONE,
     .needs = PKB_NEED_CLONE3 | PKB_NEED_CGROUP,
     .children = 1,
     .run = pkb__run_pk_contained},
    {.group = "phase",
     .name = "processkit_uncontained",
     .kind = PKB_KIND_PHASE,
     .description = "pk_run with the streams inherited and PK_CONTAIN_NONE",
     .base = "clone3_close_range",
     .composition = NONE,
     .needs = PKB_NEED_CLONE3,
     .children = 1,
     .run = pkb__run_pk_uncontained},
    {.group = "phase",
     .name = "vfork_pipes_poll",
     .kind = PKB_KIND_PHASE,
     .description = "the capture path by hand: vfork, stdin the kept /dev/null, stdout and "
                    "stderr two pipes polled and read until both end, waitpid",
     .composition = PARTS("pipe2_pair", "pipe2_pair"),
     .children = 1,
     .run = pkb__run_vfork_pipes_poll},
    {.group = "phase",
     .name = "processkit_defaults",
     .kind = PKB_KIND_PHASE,
     .description = "pk_run with every default: stdin /dev/null, stdout and stderr captured, "
                    "contained (a pooled leaf)",
     .base = "vfork_pipes_poll",
     .composition = PARTS("pidfd_open", "held_procs_read"),
     .needs = PKB_NEED_CLONE3 | PKB_NEED_CGROUP,
     .children = 1,
     .run = pkb__run_pk_defaults},

    /* The primitives. A call well under a microsecond runs `calls` times per iteration. */
    {PRIMITIVE("pidfd_open", run_pidfd_open), .description = "pidfd_open of this process + close"},
    {PRIMITIVE("setpgid", run_setpgid), .calls = 16, .needs = PKB_NEED_SETPGID,
     .description = "setpgid(0, our own group): the kernel's path, no change of group"},
    {PRIMITIVE("pdeathsig_prctl", run_pdeathsig), .calls = 16,
     .description = "getpid + prctl(PR_SET_PDEATHSIG, the value we have) + getppid"},
    {PRIMITIVE("cgroup_create_rmdir", run_cgroup_create_rmdir), .needs = PKB_NEED_CGROUP,
     .description = "mkdir of a cgroup leaf + open + flock + faccessat + close + rmdir"},
    {PRIMITIVE("cgroup_kill", run_cgroup_kill), .needs = PKB_NEED_CGROUP,
     .description = "open + write \"1\" + close of an empty leaf's cgroup.kill"},
    {PRIMITIVE("held_procs_read", pkb__run_held_procs_read), .calls = 16, .needs = PKB_NEED_CGROUP,
     .description = "one pread of a kept, held leaf's cgroup.procs (its holder's pid): the end of "
                    "a contained run"},
    {PRIMITIVE("cgroup_events_read", pkb__run_events_read), .calls = 16, .needs = PKB_NEED_CGROUP,
     .description = "one pread of a kept leaf's cgroup.events: how a leaf without a holder (a "
                    "group's, a pooled one lent once) is found empty"},
    {PRIMITIVE("cgroup_procs_read", run_cgroup_procs_read), .needs = PKB_NEED_CGROUP,
     .records = PKB_RECORD_MEMBERS,
     .description = "open + read + close of an empty leaf's cgroup.procs"},
    {PRIMITIVE("direct_thread_walk", run_direct_walk), .records = PKB_RECORD_THREADS,
     .description = "the entries of /proc/<our pid>/task"},
    {PRIMITIVE("thread_snapshot_walk", run_snapshot_walk), .records = PKB_RECORD_MACHINE,
     .description = "the entries of every /proc/<n>/task on the machine"},
    {PRIMITIVE("pipe2_pair", run_pipe2_pair),
     .description = "pipe2(O_CLOEXEC) + two closes: what one captured stream adds"},
    {PRIMITIVE("program_lookup_absolute_path", run_lookup_absolute), .calls = 64,
     .records = PKB_RECORD_PROGRAM,
     .description = "pk_resolve_program of the tiny helper's absolute path (used as is)"},
    {PRIMITIVE("program_lookup_bare_name", run_lookup_bare), .needs = PKB_NEED_BARE_NAME,
     .records = PKB_RECORD_PATH, .description = "pk_resolve_program(\"cat\"): a PATH search"},

    /* The spawn lock: not reconciled, compared with each other. */
    {.group = "spawn_lock",
     .name = "parallel16_unlocked",
     .kind = PKB_KIND_LOCK,
     .description = "16 threads, each clone3 + execve + waitid of one child, released together",
     .needs = PKB_NEED_CLONE3,
     .children = PKB__LOCK_SPAWNS,
     .run = run_lock},
    {.group = "spawn_lock",
     .name = "parallel16_locked",
     .kind = PKB_KIND_LOCK,
     .description = "the same 16 spawns, each clone3 under one process-global mutex",
     .needs = PKB_NEED_CLONE3,
     .children = PKB__LOCK_SPAWNS,
     .locked = true,
     .run = run_lock},
};

const size_t pkb_phase_def_count = sizeof pkb_phase_defs / sizeof pkb_phase_defs[0];

const char *pkb_phase_kind_name(pkb_phase_kind kind)
{
    switch (kind) {
    case PKB_KIND_PHASE:
        return "phase";
    case PKB_KIND_PRIMITIVE:
        return "primitive";
    case PKB_KIND_LOCK:
        return "lock";
    }
    return "unknown";
}

const pkb_phase_def *pkb_phase_find(const char *group, const char *name)
{
    for (size_t i = 0; i < pkb_phase_def_count; i++)
        if (strcmp(pkb_phase_defs[i].group, group) == 0 &&
            strcmp(pkb_phase_defs[i].name, name) == 0)
            return &pkb_phase_defs[i];
    return NULL;
}
