/*
 * cgroup v2 containment: where leaves go, and what is done to one.
 *
 * Where: the v2 mount (from /proc/self/mountinfo: /sys/fs/cgroup when pure v2, /sys/fs/cgroup/
 * unified in the hybrid layout) joined with this process's own cgroup (the `0::` line of
 * /proc/self/cgroup). Leaves are made there (leaf.linux.c: names, ownership, the pool); the mkdir
 * itself is the delegation check (EACCES, EPERM or EROFS means we have none and AUTO falls back).
 *
 * Children are born inside the leaf (clone3 CLONE_INTO_CGROUP, see spawn.linux.c), so no process
 * of the tree ever runs outside it. The kernel checks that we may write the leaf's cgroup.procs and
 * that of the common ancestor (our own cgroup) on every such clone, by fetching each file's inode.
 * kernfs frees an inode that nothing holds, so for a file never opened that is an inode allocated,
 * initialised and freed (through RCU) per spawn: 6–16 µs of a 350–380 µs fork-like spawn here,
 * most of what CLONE_INTO_CGROUP cost. So a leaf lent more than once keeps a descriptor of its
 * cgroup.procs (open for reading, which a held leaf needs anyway), and the process an O_PATH one of
 * its own cgroup's: the inodes stay cached and the check finds them. A leaf keeps two descriptors
 * besides its directory's at most while lent: cgroup.events until it is held, cgroup.procs once it
 * is (cgroup.events is opened again only to wait for a killed tree: events_fd), so a process
 * running thousands of runs at once holds four descriptors per run, not five (leaf.linux.c).
 * Teardown writes cgroup.kill (the kernel kills the whole tree atomically, setsid and double-fork
 * descendants included) and waits for "populated 0" in cgroup.events, polling it with POLLPRI,
 * which kernfs raises on every change. An exited but unreaped child does not count as populated,
 * so teardown can run before the reap.
 *
 * A kernel quirk shapes reuse. On the kernel these machines run (6.18), once cgroup.kill has been
 * written to a leaf, every later child cloned into it with CLONE_INTO_CGROUP is killed at birth,
 * while a process that moves in through cgroup.procs lives (group_kill_repeatable_and_reusable
 * in tests/test_contain.c fails without the workaround).
 * (The kernel compares the leaf's kill sequence with the one it sampled from the spawner's own
 * cgroup.) So a killed leaf is marked. A killed pooled leaf is removed instead of going back to
 * the pool. A shared group's killed leaf is replaced by a fresh one at the next spawn, once it is
 * empty (pk__cgroup_renew): one mkdir, against ≈60 µs on every later spawn for a child that
 * moves itself in through cgroup.procs (the kernel's threadgroup lock for a migration). Only
 * while members are left does a spawn into a killed leaf take that path (the child writes "0"
 * before exec, so it still never runs outside the leaf). A leaf killed by someone else is found
 * by the child it kills at birth (spawn.linux.c) and replaced the same way (process.posix.c).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* Where leaves go, probed at first use. A probe that could not run for want of the caller's
 * resources (EMFILE, ENFILE, ENOMEM) decides nothing: the next use probes again, so a moment of
 * descriptor pressure never turns into "no cgroup here" for the rest of the process. */
enum { PARENT_UNKNOWN, PARENT_FOUND, PARENT_NONE };
static pthread_mutex_t parent_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int parent_state;
static char parent_dir[PATH_MAX];
static char own_path[PATH_MAX]; /* the `0::` path: our own cgroup, under the mount */

/* An fopen failure: -errno when the caller ran out of something, else "none here". */
static int open_failure(void)
{
    return errno == EMFILE || errno == ENFILE || errno == ENOMEM ? -errno : PK_ENOCONTAIN;
}

/* 0 with parent_dir set, PK_ENOCONTAIN when there is no cgroup v2 for us, or -errno. */
static int find_parent(void)
{
    char mount[PATH_MAX] = "";
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (f != NULL) {
        char line[4096];
        while (fgets(line, sizeof line, f) != NULL) {
            /* "... mountpoint ... - cgroup2 cgroup2 rw" : field 5 is the mount point */
            char *dash = strstr(line, " - cgroup2 ");
            if (dash == NULL)
                continue;
            char *p = line;
            for (int field = 0; field < 4 && p != NULL; field++)
                p = strchr(p + 1, ' ');
            if (p == NULL)
                continue;
            char *end = strchr(p + 1, ' ');
            if (end == NULL)
                continue;
            snprintf(mount, sizeof mount, "%.*s", (int)(end - p - 1), p + 1);
            break;
        }
        fclose(f);
    }
    if (mount[0] == '\0')
        return f == NULL ? open_failure() : PK_ENOCONTAIN;
    f = fopen("/proc/self/cgroup", "re");
    if (f == NULL)
        return open_failure();
    char line[PATH_MAX + 8];
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = '\0';
            if (snprintf(own_path, sizeof own_path, "%s", line + 3) >= (int)sizeof own_path)
                own_path[0] = '\0'; /* too deep to use */
            break;
        }
    }
    fclose(f);
    if (own_path[0] != '/')
        return PK_ENOCONTAIN;
    /* The root of the hierarchy is "/"; avoid a double slash. */
    int n = snprintf(parent_dir, sizeof parent_dir, "%s%s", mount,
                     strcmp(own_path, "/") == 0 ? "" : own_path);
    return n > 0 && (size_t)n < sizeof parent_dir - 64 ? 0 : PK_ENOCONTAIN;
}

int pk__cgroup_parent(const char **dir)
{
    int state = atomic_load_explicit(&parent_state, memory_order_acquire);
    int rc = 0;
    if (state == PARENT_UNKNOWN) {
        pthread_mutex_lock(&parent_lock);
        state = atomic_load_explicit(&parent_state, memory_order_relaxed);
        if (state == PARENT_UNKNOWN) {
            rc = find_parent();
            if (rc == 0 || rc == PK_ENOCONTAIN) {
                state = rc == 0 ? PARENT_FOUND : PARENT_NONE;
                atomic_store_explicit(&parent_state, state, memory_order_release);
            }
        }
        pthread_mutex_unlock(&parent_lock);
    }
    if (state == PARENT_FOUND) {
        *dir = parent_dir;
        return 0;
    }
    return state == PARENT_NONE ? PK_ENOCONTAIN : rc;
}

bool pk__cgroup_usable(void)
{
    const char *parent;
    /* A prediction only: the mkdir at group creation is the real check. */
    return pk__cgroup_parent(&parent) == 0 && access(parent, W_OK | X_OK) == 0;
}

/* ---- small file helpers -------------------------------------------------------------------- */

static ssize_t read_file_at(int dirfd, const char *name, char *buf, size_t cap)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, cap - 1);
    int err = errno;
    close(fd);
    if (n < 0)
        return -err;
    buf[n] = '\0';
    return n;
}

static int write_file_at(int dirfd, const char *name, const char *text)
{
    int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, text, strlen(text));
    int err = errno;
    close(fd);
    return n < 0 ? -err : 0;
}

/* The value of "key N" in a flat-keyed cgroup file, or -1. */
static long long keyed_value(const char *text, const char *key)
{
    size_t klen = strlen(key);
    for (const char *p = text; p != NULL && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, key, klen) == 0 && p[klen] == ' ')
            return atoll(p + klen + 1);
    return -1;
}

/* The CPU a leaf has accounted (cpu.stat), added to *user and *sys in µs. */
void pk__cgroup_add_cpu(int dirfd, int64_t *user, int64_t *sys)
{
    char buf[1024];
    if (read_file_at(dirfd, "cpu.stat", buf, sizeof buf) <= 0)
        return;
    long long u = keyed_value(buf, "user_usec"), k = keyed_value(buf, "system_usec");
    *user += u > 0 ? u : 0;
    *sys += k > 0 ? k : 0;
}

/* ---- operations on a leaf ------------------------------------------------------------------ */

/* A leaf's cgroup.events, opened again if it was closed (a held leaf's: leaf.linux.c). */
static int events_fd(struct pk_group *g)
{
    if (g->events_fd < 0)
        g->events_fd = openat(g->dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
    return g->events_fd;
}

int pk__cgroup_populated(struct pk_group *g)
{
    if (g->holder > 0)
        return pk__holder_populated(g->procs_pin, &g->holder);
    char buf[256];
    ssize_t n = pread(events_fd(g), buf, sizeof buf - 1, 0);
    if (n < 0)
        return -errno;
    buf[n] = '\0';
    /* The kernel writes "populated 0" or "populated 1" first: read it without a search and a
     * strtol, on the path every contained run takes once. */
    if (n > 11 && memcmp(buf, "populated ", 10) == 0 && buf[11] == '\n')
        return buf[10] != '0';
    return keyed_value(buf, "populated") > 0 ? 1 : 0;
}

/* Waits until `key` in cgroup.events has `want`, up to timeout_ms. */
static int wait_event(struct pk_group *g, const char *key, long long want, int64_t timeout_ms)
{
    int fd = events_fd(g);
    int64_t deadline = pk__now_ns() + timeout_ms * 1000000;
    int rc = -ETIMEDOUT;
    char buf[256];
    for (;;) {
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        if (n < 0) {
            rc = -errno;
            break;
        }
        buf[n] = '\0';
        if (keyed_value(buf, key) == want) {
            rc = 0;
            break;
        }
        int64_t left = deadline - pk__now_ns();
        if (left <= 0)
            break;
        /* kernfs raises POLLPRI when the file changes; cap the wait in case a change is missed
         * between the read and the poll. */
        struct pollfd pfd = {fd, POLLPRI, 0};
        int ms = (int)(left / 1000000) + 1;
        poll(&pfd, 1, ms < 50 ? ms : 50);
    }
    return rc;
}

int pk__cgroup_wait_empty(struct pk_group *g, int64_t timeout_ms)
{
    return wait_event(g, "populated", 0, timeout_ms);
}

/* What /proc/<pid>/cgroup says for a member of g: our own path, then the leaf's name. */
static void member_path(const struct pk_group *g, char *rel, size_t cap)
{
    snprintf(rel, cap, "%s/%s", strcmp(own_path, "/") != 0 ? own_path : "", g->name);
}

/* Whether process pid is in the cgroup whose path is rel (from member_path). */
static bool in_cgroup(int pid, const char *rel)
{
    char proc[64], cg[PATH_MAX + 8];
    snprintf(proc, sizeof proc, "/proc/%d/cgroup", pid);
    int cfd = open(proc, O_RDONLY | O_CLOEXEC);
    ssize_t len = cfd >= 0 ? read(cfd, cg, sizeof cg - 1) : -1;
    if (cfd >= 0)
        close(cfd);
    if (len <= 0)
        return false;
    cg[len] = '\0';
    char *line = strstr(cg, "0::");
    size_t n = strlen(rel);
    return line != NULL && strncmp(line + 3, rel, n) == 0 &&
           (line[3 + n] == '\n' || line[3 + n] == '\0');
}

int pk__cgroup_holds(const struct pk_group *g, int pid)
{
    char rel[PATH_MAX + 64];
    member_path(g, rel, sizeof rel);
    return in_cgroup(pid, rel);
}

static bool listed(const int *pids, size_t n, int pid)
{
    for (size_t i = 0; i < n; i++)
        if (pids[i] == pid)
            return true;
    return false;
}

/* Signals each member through a pidfd. A pid may be recycled between the listing and
 * pidfd_open, so the leaf is listed again once the pidfds are open: a process a pidfd holds that
 * is listed again under its number is a member (a number names one live process at a time), and
 * one that died meanwhile takes no signal anyway. Nothing is looked up in /proc, whose numbers
 * are those of the pid namespace it was mounted in, which need not be ours: as the first process
 * of `unshare --pid --fork` without --mount-proc, /proc/<pid> named other processes and no
 * member was ever signalled. cgroup.procs lists pids in the reader's namespace. */
static int signal_each(struct pk_group *g, int signo)
{
    enum { MAX = 512 };
    int pids[MAX], fds[MAX], again[MAX];
    size_t n = 0, m = 0;
    int rc = pk__cgroup_members(g, pids, MAX, &n);
    if (rc != 0)
        return rc;
    if (n > MAX)
        n = MAX;
    for (size_t i = 0; i < n; i++) /* the holder blocks every signal but SIGKILL and SIGSTOP */
        fds[i] = pids[i] == g->holder ? -1 : (int)syscall(SYS_pidfd_open, pids[i], 0);
    rc = pk__cgroup_members(g, again, MAX, &m);
    for (size_t i = 0; i < n; i++) {
        if (fds[i] < 0)
            continue; /* the holder, or already gone */
        if (rc == 0 && listed(again, m < MAX ? m : MAX, pids[i]))
            syscall(SYS_pidfd_send_signal, fds[i], signo, NULL, 0);
        close(fds[i]);
    }
    return rc;
}

int pk__cgroup_kill(struct pk_group *g)
{
    g->killed = true;
    int rc = write_file_at(g->dirfd, "cgroup.kill", "1");
    if (rc == -ENOENT) /* kernels before 5.14 */
        rc = signal_each(g, SIGKILL);
    return rc;
}

int pk__cgroup_signal(struct pk_group *g, int signo)
{
    if (signo == SIGKILL)
        return pk__cgroup_kill(g);
    return signal_each(g, signo);
}

int pk__cgroup_freeze(struct pk_group *g, bool frozen)
{
    int rc = write_file_at(g->dirfd, "cgroup.freeze", frozen ? "1" : "0");
    if (rc != 0)
        return rc;
    return wait_event(g, "frozen", frozen ? 1 : 0, 5000);
}

int pk__cgroup_members(struct pk_group *g, int *pids, size_t cap, size_t *count)
{
    int fd = openat(g->dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    char buf[8192];
    size_t n = 0, have = 0;
    ssize_t r;
    while ((r = read(fd, buf + have, sizeof buf - 1 - have)) > 0) {
        have += (size_t)r;
        buf[have] = '\0';
        char *p = buf, *nl;
        while ((nl = strchr(p, '\n')) != NULL) {
            if (n < cap)
                pids[n] = atoi(p);
            n++;
            p = nl + 1;
        }
        have = strlen(p);
        memmove(buf, p, have);
    }
    close(fd);
    *count = n;
    return 0;
}

int pk__cgroup_stats(struct pk_group *g, pk_group_stats *st)
{
    char buf[1024];
    ssize_t n = read_file_at(g->dirfd, "cpu.stat", buf, sizeof buf);
    if (n < 0)
        return (int)n;
    st->cpu_user_us = keyed_value(buf, "user_usec") + g->cpu_user_base;
    st->cpu_sys_us = keyed_value(buf, "system_usec") + g->cpu_sys_base;
    int pids[1024];
    size_t count = 0;
    int rc = pk__cgroup_members(g, pids, 1024, &count);
    if (rc != 0)
        return rc;
    st->processes = count;
    n = read_file_at(g->dirfd, "memory.current", buf, sizeof buf);
    if (n > 0) {
        st->memory_bytes = atoll(buf);
        return 0;
    }
    /* No memory controller here: the members' resident sets from /proc. */
    long page = sysconf(_SC_PAGESIZE);
    st->memory_bytes = 0;
    for (size_t i = 0; i < count && i < 1024; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/statm", pids[i]);
        if (read_file_at(AT_FDCWD, path, buf, sizeof buf) > 0) {
            long long size, resident;
            if (sscanf(buf, "%lld %lld", &size, &resident) == 2)
                st->memory_bytes += resident * page;
        }
    }
    return 0;
}
