/*
 * pk_floor's methods: one spawn+wait each (floor_methods.h).
 *
 * The raw ladder mirrors the library's contained spawn (lib/src/spawn.linux.c, child.linux.c,
 * engine.linux.c) one step at a time, with raw system calls only, so each step's price shows:
 *
 *   vfork_execve              vfork, execve, waitpid: the floor
 *   clone3_execve             clone3(CLONE_VM|CLONE_VFORK|CLONE_CLEAR_SIGHAND) on a reused stack,
 *                             execve, waitid(P_PID): the library's mechanism, nothing else
 *   clone3_pidfd_execve       + CLONE_PIDFD, waitid(P_PIDFD), close: what a pidfd costs
 *   clone3_close_range_execve + close_range(3, ~0) in the child: the descriptor guarantee
 *   clone3_cgroup_execve      + CLONE_INTO_CGROUP into a pooled leaf, then one pread of its
 *                             cgroup.events after the reap: containment. As in the library, the
 *                             leaf's cgroup.procs and our own cgroup's are held open (O_PATH), so
 *                             the kernel's write-permission check finds their inodes cached.
 *                             Unlike the library's pooled leaf, it has no holder task
 *                             (lib/src/holder.linux.c): every spawn empties it, and the kernel's
 *                             notice of that (at most one per 10 ms per leaf, from a timer) is part
 *                             of this series' cost, and of the mirror's below
 *   clone3_cgroup_cold_execve the same into a second leaf whose cgroup.procs nothing holds: the
 *                             kernel allocates and frees that file's inode on every spawn, which
 *                             is what the held descriptor saves
 *   clone3_contained_execve   close_range and the cgroup steps together: the raw mirror of
 *                             processkit's contained spawn, so processkit minus this is the
 *                             library's own bookkeeping
 *   clone3_busy5_execve       clone3_execve after 5 µs of spinning in the spawner: the busier
 *                             spawner, to see what it does to where the child runs
 *
 * processkit's own methods are pk_run with every stream inherited (no pipe, no /dev/null), with
 * its default private group (a pooled leaf), with inherit_fds (no close_range), and with
 * PK_CONTAIN_NONE; the capture path is pk_run with every default (stdin /dev/null, stdout and
 * stderr captured, contained) against vfork_pipes_poll, a hand-written loop doing the same I/O:
 * two pipes, the kept /dev/null on stdin, poll until both pipes end, read what comes, waitpid.
 * posix_spawn (glibc) and fork_execve are the peers.
 */
#define _GNU_SOURCE
#include "floor_methods.h"
#include "raw_clone3.h"
#include "processkit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

extern char **environ;

/* ---- shared state -------------------------------------------------------------------------- */

static char *child_argv[2];
static unsigned char clone_stack[64 * 1024] __attribute__((aligned(16)));
static int null_fd = -1;
static int leaf_dir = -1, leaf_events = -1, cgroup_dir = -1;
static int leaf_procs = -1, own_procs = -1; /* held only for their inodes */
static int cold_dir = -1, cold_events = -1;
static char leaf_name[64], cold_name[64];

static void set_argv(const char *path)
{
    child_argv[0] = (char *)path;
}

static int wait_ok(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

/* ---- processkit ---------------------------------------------------------------------------- */

static int pk_ok(int rc, pk_result *r)
{
    if (rc == 0 && (r->outcome.kind != PK_OUTCOME_EXITED || r->outcome.code != 0))
        rc = -ECHILD;
    pk_result_release(r);
    return rc;
}

static int run_inherit(const char *path, pk_containment containment, bool inherit_fds)
{
    pk_result r;
    int rc = pk_run(&(pk_command){.program = path,
                                  .in.kind = PK_STDIO_INHERIT,
                                  .out.kind = PK_STDIO_INHERIT,
                                  .err.kind = PK_STDIO_INHERIT,
                                  .containment = containment,
                                  .inherit_fds = inherit_fds},
                    &r);
    return pk_ok(rc, &r);
}

static int m_processkit(const char *path)
{
    return run_inherit(path, PK_CONTAIN_AUTO, false);
}

static int m_processkit_inherit_fds(const char *path)
{
    return run_inherit(path, PK_CONTAIN_AUTO, true);
}

static int m_processkit_uncontained(const char *path)
{
    return run_inherit(path, PK_CONTAIN_NONE, false);
}

static int run_defaults(const char *path, pk_containment containment)
{
    pk_result r;
    int rc = pk_run(&(pk_command){.program = path, .containment = containment}, &r);
    if (rc == 0 && (r.out.total_bytes != 0 || r.err.total_bytes != 0))
        rc = -EPROTO; /* the targets write nothing */
    return pk_ok(rc, &r);
}

static int m_processkit_defaults(const char *path)
{
    return run_defaults(path, PK_CONTAIN_AUTO);
}

/* The capture path without containment: the same work as vfork_pipes_poll, so the two differ by
 * the library's own capture work alone (a loaded machine inflates the cgroup step several-fold). */
static int m_processkit_defaults_uncontained(const char *path)
{
    return run_defaults(path, PK_CONTAIN_NONE);
}

/* ---- the raw peers ------------------------------------------------------------------------- */

static int m_vfork(const char *path)
{
    set_argv(path);
    pid_t pid = vfork();
    if (pid == 0) {
        execve(path, child_argv, environ);
        _exit(127);
    }
    return pid < 0 ? -errno : wait_ok(pid);
}

static int m_fork(const char *path)
{
    set_argv(path);
    pid_t pid = fork();
    if (pid == 0) {
        execve(path, child_argv, environ);
        _exit(127);
    }
    return pid < 0 ? -errno : wait_ok(pid);
}

static int m_posix_spawn(const char *path)
{
    set_argv(path);
    pid_t pid;
    int rc = posix_spawn(&pid, path, NULL, NULL, child_argv, environ);
    return rc != 0 ? -rc : wait_ok(pid);
}

/* The same I/O as processkit's defaults, by hand: the child's stdin is the kept /dev/null, its
 * stdout and stderr two pipes the parent polls and reads until both end. */
static int m_vfork_pipes_poll(const char *path)
{
    static char buf[65536];
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0)
        return -errno;
    if (pipe2(err, O_CLOEXEC) != 0) {
        int rc = -errno;
        close(out[0]);
        close(out[1]);
        return rc;
    }
    set_argv(path);
    pid_t pid = vfork();
    if (pid == 0) {
        if (dup2(null_fd, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
            _exit(126);
        execve(path, child_argv, environ);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    struct pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int open_ends = 2, rc = pid < 0 ? -errno : 0;
    size_t got = 0;
    while (open_ends > 0 && pid > 0) {
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; i++) {
            if (p[i].fd < 0 || p[i].revents == 0)
                continue;
            ssize_t n = read(p[i].fd, buf, sizeof buf);
            if (n > 0) {
                got += (size_t)n;
            } else if (n == 0 || errno != EINTR) {
                close(p[i].fd);
                p[i].fd = -1;
                open_ends--;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (p[i].fd >= 0)
            close(p[i].fd);
    if (pid > 0)
        rc = wait_ok(pid);
    return rc == 0 && got != 0 ? -EPROTO : rc;
}

/* ---- the raw clone3 ladder ----------------------------------------------------------------- */

#define STEP_PIDFD       0x1u
#define STEP_CLOSE_RANGE 0x2u
#define STEP_CGROUP      0x4u
#define STEP_COLD        0x8u /* with STEP_CGROUP: the leaf whose cgroup.procs nothing holds */

struct raw_plan {
    const char *path;
    bool close_range;
};

/* Runs on the child stack while the parent is suspended: raw system calls only. */
__attribute__((no_sanitize("address", "undefined"), noinline)) static int raw_child(void *arg)
{
    const struct raw_plan *p = arg;
    if (p->close_range)
        syscall(SYS_close_range, 3U, ~0U, 0U);
    syscall(SYS_execve, p->path, child_argv, environ);
    return 127;
}

static int raw_spawn(const char *path, unsigned steps)
{
    set_argv(path);
    struct raw_plan plan = {path, (steps & STEP_CLOSE_RANGE) != 0};
    int pidfd = -1;
    struct pk_clone_args a = {
        .flags = CLONE_VM | CLONE_VFORK | PK_CLONE_CLEAR_SIGHAND,
        .exit_signal = SIGCHLD,
        .stack = (uint64_t)(uintptr_t)clone_stack,
        .stack_size = sizeof clone_stack,
    };
    if (steps & STEP_PIDFD) {
        a.flags |= CLONE_PIDFD;
        a.pidfd = (uint64_t)(uintptr_t)&pidfd;
    }
    if (steps & STEP_CGROUP) {
        a.flags |= PK_CLONE_INTO_CGROUP;
        a.cgroup = (uint64_t)(steps & STEP_COLD ? cold_dir : leaf_dir);
    }
    long pid = raw_clone3(&a, PK_CLONE_ARGS_SIZE_VER2, raw_child, &plan);
    if (pid < 0)
        return (int)pid;
    siginfo_t si;
    int rc = 0;
    idtype_t type = pidfd >= 0 ? P_PIDFD : P_PID;
    id_t id = pidfd >= 0 ? (id_t)pidfd : (id_t)pid;
    while (waitid(type, id, &si, WEXITED) < 0)
        if (errno != EINTR) {
            rc = -errno;
            break;
        }
    if (pidfd >= 0)
        close(pidfd);
    if (rc == 0 && (si.si_code != CLD_EXITED || si.si_status != 0))
        rc = -ECHILD;
    if (rc == 0 && (steps & STEP_CGROUP)) {
        /* The library's end of a contained run: one read says the leaf is empty. */
        char ev[128];
        ssize_t n = pread(steps & STEP_COLD ? cold_events : leaf_events, ev, sizeof ev - 1, 0);
        if (n < 0)
            return -errno;
        ev[n] = '\0';
        if (strstr(ev, "populated 0") == NULL)
            rc = -EBUSY;
    }
    return rc;
}

static int m_clone3(const char *path)
{
    return raw_spawn(path, 0);
}

static int m_clone3_pidfd(const char *path)
{
    return raw_spawn(path, STEP_PIDFD);
}

static int m_clone3_close_range(const char *path)
{
    return raw_spawn(path, STEP_CLOSE_RANGE);
}

static int m_clone3_cgroup(const char *path)
{
    return raw_spawn(path, STEP_CGROUP);
}

static int m_clone3_cgroup_cold(const char *path)
{
    return raw_spawn(path, STEP_CGROUP | STEP_COLD);
}

static int m_clone3_contained(const char *path)
{
    return raw_spawn(path, STEP_CLOSE_RANGE | STEP_CGROUP);
}

/* clone3_execve after 5 µs of the spawner's own work (a spin on the clock): what a busier
 * spawner does to where the child runs (METHODOLOGY.md, "Where an unpinned spawn's extra time
 * goes"); pinned it costs the 5 µs and nothing more. */
static int m_clone3_busy5(const char *path)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 5000);
    return raw_spawn(path, 0);
}

/* ---- the table ----------------------------------------------------------------------------- */

const pkf_method pkf_methods[] = {
    {"vfork_execve", "vfork + execve + waitpid: the floor", 0, m_vfork},
    {"clone3_execve", "clone3(VM|VFORK|CLEAR_SIGHAND) on a reused stack + execve + waitid(P_PID)",
     PKF_NEED_CLONE3, m_clone3},
    {"clone3_pidfd_execve", "clone3_execve + CLONE_PIDFD, waitid(P_PIDFD), close", PKF_NEED_CLONE3,
     m_clone3_pidfd},
    {"clone3_close_range_execve", "clone3_execve + close_range(3, ~0) in the child",
     PKF_NEED_CLONE3, m_clone3_close_range},
    {"clone3_cgroup_execve",
     "clone3_execve + CLONE_INTO_CGROUP into a pooled leaf + one pread of cgroup.events",
     PKF_NEED_CLONE3 | PKF_NEED_CGROUP, m_clone3_cgroup},
    {"clone3_cgroup_cold_execve",
     "clone3_cgroup_execve into a leaf whose cgroup.procs no descriptor holds (inode made per "
     "spawn)",
     PKF_NEED_CLONE3 | PKF_NEED_CGROUP, m_clone3_cgroup_cold},
    {"clone3_contained_execve", "clone3_execve + close_range + the cgroup steps: the raw mirror",
     PKF_NEED_CLONE3 | PKF_NEED_CGROUP, m_clone3_contained},
    {"clone3_busy5_execve", "clone3_execve after 5 µs of the spawner's own work", PKF_NEED_CLONE3,
     m_clone3_busy5},
    {"processkit", "pk_run, streams inherited, the default private group (a pooled leaf)", 0,
     m_processkit},
    {"processkit_inherit_fds", "processkit with inherit_fds: no close_range", 0,
     m_processkit_inherit_fds},
    {"processkit_uncontained", "processkit with PK_CONTAIN_NONE", 0, m_processkit_uncontained},
    {"posix_spawn", "glibc posix_spawn + waitpid", 0, m_posix_spawn},
    {"fork_execve", "fork + execve + waitpid", 0, m_fork},
    {"vfork_pipes_poll",
     "vfork; stdin the kept /dev/null, stdout and stderr two pipes polled and read to the end; "
     "waitpid",
     0, m_vfork_pipes_poll},
    {"processkit_defaults",
     "pk_run with every default: stdin /dev/null, stdout and stderr captured, contained", 0,
     m_processkit_defaults},
    {"processkit_defaults_uncontained",
     "processkit_defaults with PK_CONTAIN_NONE: the capture path alone, as vfork_pipes_poll", 0,
     m_processkit_defaults_uncontained},
};

const size_t pkf_method_count = sizeof pkf_methods / sizeof pkf_methods[0];

int pkf_method_index(const char *name)
{
    for (size_t i = 0; i < pkf_method_count; i++)
        if (strcmp(pkf_methods[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* ---- set-up -------------------------------------------------------------------------------- */

/* This process's cgroup v2 directory (the cgroup2 mount joined with the `0::` path). */
static int own_cgroup_dir(char *dir, size_t cap)
{
    char mount[1024] = "", own[2048] = "", line[4096];
    FILE *f = fopen("/proc/self/mountinfo", "re");
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        char a[64], b[64], c[64], root[1024];
        if (strstr(line, " - cgroup2 ") != NULL &&
            sscanf(line, "%63s %63s %63s %1023s %1023s", a, b, c, root, mount) == 5)
            break;
        mount[0] = '\0';
    }
    if (f != NULL)
        fclose(f);
    f = fopen("/proc/self/cgroup", "re");
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "0::", 3) == 0)
            sscanf(line + 3, "%2047s", own);
    if (f != NULL)
        fclose(f);
    if (mount[0] == '\0' || own[0] != '/')
        return -ENOENT;
    int n = snprintf(dir, cap, "%s%s", mount, strcmp(own, "/") == 0 ? "" : own);
    return n > 0 && (size_t)n < cap ? 0 : -ENAMETOOLONG;
}

/* Removes the leaves of pk_floor runs that died without cleaning up. */
static void sweep_stale(void)
{
    int fd = openat(cgroup_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (d == NULL) {
        if (fd >= 0)
            close(fd);
        return;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        long pid = strncmp(e->d_name, "pkf-", 4) == 0 ? strtol(e->d_name + 4, NULL, 10) : 0;
        if (pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH)
            (void)unlinkat(cgroup_dir, e->d_name, AT_REMOVEDIR);
    }
    closedir(d);
}

/* Makes the leaf `name` under our cgroup (dir) and opens its directory and cgroup.events; false
 * with why set (and name emptied when it was not made) on failure. */
static bool
make_leaf(const char *dir, char *name, int *dirfd, int *events, char *why, size_t why_len)
{
    if (mkdirat(cgroup_dir, name, 0755) != 0) {
        snprintf(why, why_len, "no cgroup v2 delegated: mkdir in %s: %s", dir, strerror(errno));
        name[0] = '\0';
        return false;
    }
    *dirfd = openat(cgroup_dir, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
    *events = *dirfd < 0 ? -1 : openat(*dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
    if (*events < 0) {
        snprintf(why, why_len, "cannot open the leaf %s/%s: %s", dir, name, strerror(errno));
        return false;
    }
    return true;
}

static unsigned open_leaf(char *why, size_t why_len)
{
    char dir[4096];
    int rc = own_cgroup_dir(dir, sizeof dir);
    if (rc == 0 && (cgroup_dir = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        rc = -errno;
    if (rc != 0) {
        snprintf(why, why_len, "no cgroup v2 directory of ours (%s)", strerror(-rc));
        return 0;
    }
    sweep_stale();
    snprintf(leaf_name, sizeof leaf_name, "pkf-%d", (int)getpid());
    if (!make_leaf(dir, leaf_name, &leaf_dir, &leaf_events, why, why_len))
        return 0;
    /* The library's pins (lib/src/cgroup.linux.c): the inodes of the two cgroup.procs files the
     * kernel checks on every CLONE_INTO_CGROUP stay cached while these are open. */
    leaf_procs = openat(leaf_dir, "cgroup.procs", O_PATH | O_CLOEXEC);
    own_procs = openat(cgroup_dir, "cgroup.procs", O_PATH | O_CLOEXEC);
    /* The cold leaf: only the directory and cgroup.events are opened, never cgroup.procs (a
     * lookup would leave its dentry, and so its inode, in the cache). */
    snprintf(cold_name, sizeof cold_name, "pkf-%d-cold", (int)getpid());
    if (!make_leaf(dir, cold_name, &cold_dir, &cold_events, why, why_len))
        return 0;
    return PKF_NEED_CGROUP;
}

unsigned pkf_methods_open(char *why, size_t why_len)
{
    why[0] = '\0';
    null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    unsigned have = 0;
    /* A clone3 that cannot be made (no trampoline here, an old kernel) reports it at once. */
    struct pk_clone_args probe = {.flags = CLONE_VM | CLONE_VFORK, .exit_signal = SIGCHLD};
    long r = raw_clone3(&probe, 0, NULL, NULL); /* size 0: EINVAL when clone3 exists */
    if (r == -EINVAL)
        have |= PKF_NEED_CLONE3;
    else
        snprintf(why, why_len, "no raw clone3 here (%s)", strerror((int)-r));
    if (have & PKF_NEED_CLONE3)
        have |= open_leaf(why, why_len);
    return have;
}

void pkf_methods_close(void)
{
    int *fds[] = {&leaf_events, &leaf_dir, &leaf_procs, &own_procs, &cold_events, &cold_dir};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++) {
        if (*fds[i] >= 0)
            close(*fds[i]);
        *fds[i] = -1;
    }
    if (leaf_name[0] != '\0')
        (void)unlinkat(cgroup_dir, leaf_name, AT_REMOVEDIR);
    if (cold_name[0] != '\0')
        (void)unlinkat(cgroup_dir, cold_name, AT_REMOVEDIR);
    cold_name[0] = '\0';
    if (cgroup_dir >= 0)
        close(cgroup_dir);
    if (null_fd >= 0)
        close(null_fd);
    cgroup_dir = null_fd = -1;
    leaf_name[0] = '\0';
}
