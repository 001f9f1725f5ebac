/*
 * cgroup v2 containment.
 *
 * Where: the v2 mount (from /proc/self/mountinfo: /sys/fs/cgroup when pure v2, /sys/fs/cgroup/
 * unified in the hybrid layout) joined with this process's own cgroup (the `0::` line of
 * /proc/self/cgroup). Leaves are made there, named "pk-<pid>-<n>"; the mkdir itself is the
 * delegation check (EACCES, EPERM or EROFS means we have none and AUTO falls back).
 *
 * Why a pool: creating a leaf costs ≈47 µs on these machines, half a spawn, and every kernfs
 * open of a control file a few more. A private group for a one-shot run therefore borrows an
 * empty leaf from a per-process pool, with its directory and cgroup.events (or, once held,
 * cgroup.procs) descriptors already open, and returns it empty: a run pays one pread to learn that
 * its tree is gone. A leaf lent a
 * second time keeps a holder task in it from then on (holder.linux.c), so that runs never flip it
 * between populated and empty, which the kernel would notify; its pread is of cgroup.procs, where
 * the holder alone means empty. pk_cleanup() releases the pool. Leaves are removed when the process
 * exits (atexit), and a later process removes leaves whose owner died without cleaning up (named by
 * pid), killing any orphaned tree in them first.
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
 * is (cgroup.events is opened again only to wait for a killed tree), so a process running
 * thousands of runs at once holds four descriptors per run, not five. Teardown writes cgroup.kill
 * (the kernel kills the whole tree atomically, setsid and double-fork descendants included) and
 * waits for "populated 0" in cgroup.events, polling it with POLLPRI, which kernfs raises on every
 * change. An exited but unreaped child does not count as populated, so teardown can run before the
 * reap.
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
 * before exec, so it still never runs outside the leaf).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
static char own_path[PATH_MAX]; /* the `0::` path, for membership checks */

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
typedef char leaf_name[48];
_Static_assert(sizeof(leaf_name) == sizeof(((struct pk_group *)0)->name),
               "a group's leaf name and a pooled leaf's are copied whole");
/* An empty leaf ready for a private run, with its descriptors kept open so that a run costs no
 * path lookup in kernfs: the directory (for CLONE_INTO_CGROUP) and cgroup.events (one pread
 * tells whether the tree is empty at the end). */
struct pooled_leaf {
    leaf_name name;
    int dirfd, events_fd, procs_pin;
    int holder; /* holder.linux.c; 0: none yet */
};
/* O_PATH on our own cgroup's cgroup.procs, for its inode (see the top): opened with the first
 * leaf, tried once (a failure costs only time). */
static int ancestor_pin = -1;
static bool ancestor_tried;
static struct pooled_leaf *pool_free;
static size_t pool_n, pool_cap;
static leaf_name *made;
static size_t made_n, made_cap;
static unsigned long leaf_counter;
static bool exit_hook, swept;

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

/* ---- leaves and the pool ------------------------------------------------------------------- */

/* A leaf's directory: the parent joined with its name (find_parent leaves room for it). */
static void leaf_path(const char *name, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", parent_dir, name);
}

/* Opens a leaf's descriptors: the directory and cgroup.events (0 or -errno, nothing left open),
 * and, when `pin`, the cgroup.procs pin, which only saves time and so may fail. A pooled leaf
 * takes its pin at its second lend, with its holder (pk__cgroup_create): at the first, opening the
 * file would allocate the very inode the clone's check then finds, saving nothing, and a leaf
 * lent to a run keeps two descriptors, not three (reports/notes/2026-12-05-fan-out-at-scale.md). */
static int open_leaf(const char *name, struct pooled_leaf *e, bool pin)
{
    char path[PATH_MAX + 64];
    leaf_path(name, path, sizeof path);
    e->dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    e->events_fd = e->dirfd < 0 ? -1 : openat(e->dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
    if (e->events_fd < 0) {
        int rc = -errno;
        if (e->dirfd >= 0)
            close(e->dirfd);
        e->dirfd = e->procs_pin = -1;
        return rc;
    }
    /* Readable, not O_PATH: a held leaf's emptiness is read from it (holder.linux.c). */
    e->procs_pin = pin ? openat(e->dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC) : -1;
    return 0;
}

/* A leaf's cgroup.events, opened again if it was closed (a held leaf's: pk__cgroup_create). */
static int events_fd(struct pk_group *g)
{
    if (g->events_fd < 0)
        g->events_fd = openat(g->dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
    return g->events_fd;
}

/* Closes a leaf's descriptors, pooled or held by a group, and marks them closed. */
static void close_leaf_fds(int *dirfd, int *events_fd, int *procs_pin)
{
    close(*dirfd);
    if (*events_fd >= 0)
        close(*events_fd);
    if (*procs_pin >= 0)
        close(*procs_pin);
    *dirfd = *events_fd = *procs_pin = -1;
}

static void close_leaf(struct pooled_leaf *e)
{
    close_leaf_fds(&e->dirfd, &e->events_fd, &e->procs_pin);
}

static void close_ancestor_pin(void)
{
    if (ancestor_pin >= 0)
        close(ancestor_pin);
    ancestor_pin = -1;
    ancestor_tried = false;
}

static int remove_leaf(const char *dir)
{
    if (rmdir(dir) == 0)
        return 0;
    if (errno != EBUSY)
        return -errno;
    /* Still populated: an orphaned tree. Kill it, wait a moment, try again. */
    struct pk_group tmp = {.dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)};
    if (tmp.dirfd < 0)
        return -errno;
    tmp.events_fd = openat(tmp.dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
    pk__cgroup_kill(&tmp);
    if (tmp.events_fd >= 0) {
        pk__cgroup_wait_empty(&tmp, 2000);
        close(tmp.events_fd);
    }
    close(tmp.dirfd);
    return rmdir(dir) == 0 ? 0 : -errno;
}

static void remove_made_leaves(void)
{
    pthread_mutex_lock(&pool_lock);
    for (size_t i = 0; i < pool_n; i++) {
        pk__holder_end(&pool_free[i].holder);
        close_leaf(&pool_free[i]);
    }
    pk__holder_release();
    close_ancestor_pin();
    char dir[PATH_MAX + 64];
    for (size_t i = 0; i < made_n; i++) {
        snprintf(dir, sizeof dir, "%s/%s", parent_dir, made[i]);
        (void)remove_leaf(dir);
    }
    made_n = pool_n = 0;
    pthread_mutex_unlock(&pool_lock);
}

/* A forked child must not hand out (or remove) its parent's leaves. */
static void forget_after_fork(void)
{
    for (size_t i = 0; i < pool_n; i++)
        close_leaf(&pool_free[i]); /* their holders are the parent's children, not ours */
    made_n = pool_n = 0;
    pk__holder_forget();
    pthread_mutex_init(&pool_lock, NULL);
}

/* Removes leaves of processes that died without cleaning up ("pk-<pid>-*" with a dead pid).
 * False when the directory could not be read (then a later creation tries again). */
static bool sweep_stale(void)
{
    DIR *d = opendir(parent_dir);
    if (d == NULL)
        return false;
    struct dirent *e;
    char dir[PATH_MAX + 300];
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "pk-", 3) != 0)
            continue;
        long pid = strtol(e->d_name + 3, NULL, 10);
        if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        snprintf(dir, sizeof dir, "%s/%s", parent_dir, e->d_name);
        (void)remove_leaf(dir);
    }
    closedir(d);
    return true;
}

static int grow(leaf_name **arr, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    leaf_name *p = realloc(*arr, ncap * sizeof **arr);
    if (p == NULL)
        return -ENOMEM;
    *arr = p;
    *cap = ncap;
    return 0;
}

static int grow_pool(size_t need)
{
    if (need <= pool_cap)
        return 0;
    size_t ncap = pool_cap ? pool_cap * 2 : 16;
    struct pooled_leaf *p = realloc(pool_free, ncap * sizeof *p);
    if (p == NULL)
        return -ENOMEM;
    pool_free = p;
    pool_cap = ncap;
    return 0;
}

static void forget_made(const char *name)
{
    for (size_t i = 0; i < made_n; i++)
        if (strcmp(made[i], name) == 0) {
            memmove(&made[i], &made[i + 1], (made_n - i - 1) * sizeof *made);
            made_n--;
            return;
        }
}

/* Releases the pool: closes its descriptors and removes its (empty) leaves. Leaves lent to runs
 * still going come back later and are pooled again; process exit removes everything. */
void pk_cleanup(void)
{
    pk__stream_cache_release();
    pk__null_close();
    pthread_mutex_lock(&pool_lock);
    char dir[PATH_MAX + 64];
    while (pool_n > 0) {
        struct pooled_leaf *e = &pool_free[--pool_n];
        pk__holder_end(&e->holder);
        close_leaf(e);
        snprintf(dir, sizeof dir, "%s/%s", parent_dir, e->name);
        if (remove_leaf(dir) == 0)
            forget_made(e->name);
    }
    close_ancestor_pin();
    pthread_mutex_unlock(&pool_lock);
    /* Holders of leaves still lent to runs see end-of-file and exit; those leaves simply empty. */
    pk__holder_release();
}

static int make_leaf(leaf_name name)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(name, sizeof(leaf_name), "pk-%d-%lu", (int)getpid(), ++leaf_counter);
        char dir[PATH_MAX + 64];
        snprintf(dir, sizeof dir, "%s/%s", parent_dir, name);
        if (mkdir(dir, 0755) == 0) {
            if (grow(&made, &made_cap, made_n + 1) != 0) {
                rmdir(dir);
                return -ENOMEM;
            }
            memcpy(made[made_n++], name, sizeof(leaf_name));
            return 0;
        }
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}

int pk__cgroup_create(struct pk_group *g, bool pooled)
{
    const char *parent;
    int prc = pk__cgroup_parent(&parent);
    if (prc != 0)
        return prc; /* PK_ENOCONTAIN, or the caller's -EMFILE / -ENOMEM */
    struct pooled_leaf e = {.dirfd = -1, .events_fd = -1, .procs_pin = -1, .holder = 0};
    int rc = 0;
    pthread_mutex_lock(&pool_lock);
    if (!exit_hook) {
        exit_hook = true;
        atexit(remove_made_leaves);
        pthread_atfork(NULL, NULL, forget_after_fork);
    }
    if (!swept)
        swept = sweep_stale();
    if (!ancestor_tried) {
        ancestor_tried = true;
        char procs[PATH_MAX + 16];
        snprintf(procs, sizeof procs, "%s/cgroup.procs", parent_dir);
        ancestor_pin = open(procs, O_PATH | O_CLOEXEC);
    }
    bool reused = pooled && pool_n > 0;
    if (reused)
        e = pool_free[--pool_n];
    else
        rc = make_leaf(e.name);
    pthread_mutex_unlock(&pool_lock);
    if (rc != 0)
        return rc;
    if (!reused)
        pk__holder_prepare(); /* the holders' pipe, low in the table while it is small */
    /* Both NUL-terminated arrays of the same size: a copy, not a formatted print per run. */
    memcpy(g->name, e.name, sizeof g->name);
    if (e.dirfd < 0) {
        rc = open_leaf(e.name, &e, !pooled);
        if (rc != 0) {
            char path[PATH_MAX + 64];
            leaf_path(e.name, path, sizeof path);
            pthread_mutex_lock(&pool_lock);
            if (rmdir(path) == 0)
                forget_made(e.name);
            pthread_mutex_unlock(&pool_lock);
            return rc;
        }
    }
    if (reused && e.holder == 0) {
        /* A leaf lent a second time: from now on it is pinned and held (holder.linux.c); its
         * emptiness is read from cgroup.procs, so cgroup.events is closed until a killed tree
         * must be waited for (events_fd). */
        if (e.procs_pin < 0)
            e.procs_pin = openat(e.dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
        int h = e.procs_pin >= 0 ? pk__holder_start(e.dirfd) : 0;
        e.holder = h > 0 ? h : 0;
        if (e.holder > 0)
            pk__close_fd(&e.events_fd);
    }
    g->dirfd = e.dirfd;
    g->events_fd = e.events_fd;
    g->procs_pin = e.procs_pin;
    g->holder = e.holder;
    g->pooled = pooled;
    g->killed = false;
    g->mech = PK_CONTAIN_CGROUP;
    return 0;
}

void pk__cgroup_destroy(struct pk_group *g)
{
    if (g->dirfd < 0)
        return;
    int populated = pk__cgroup_populated(g);
    if (populated != 0) {
        pk__cgroup_kill(g);
        populated = pk__cgroup_wait_empty(g, 5000) == 0 ? 0 : 1;
    }
    pthread_mutex_lock(&pool_lock);
    /* A killed leaf is not reused for private runs (see pk__group_plan): remove it. */
    if (g->pooled && populated == 0 && !g->killed && grow_pool(pool_n + 1) == 0) {
        struct pooled_leaf *e = &pool_free[pool_n++];
        memcpy(e->name, g->name, sizeof e->name);
        e->dirfd = g->dirfd;
        e->events_fd = g->events_fd;
        e->procs_pin = g->procs_pin;
        e->holder = g->holder;
    } else {
        pk__holder_end(&g->holder);
        close_leaf_fds(&g->dirfd, &g->events_fd, &g->procs_pin);
        char path[PATH_MAX + 64];
        leaf_path(g->name, path, sizeof path);
        if (remove_leaf(path) == 0)
            forget_made(g->name);
    }
    g->dirfd = g->events_fd = g->procs_pin = -1;
    g->holder = 0;
    pthread_mutex_unlock(&pool_lock);
}

/* The CPU a leaf has accounted (cpu.stat), added to *user and *sys in µs. */
static void add_cpu(int dirfd, int64_t *user, int64_t *sys)
{
    char buf[1024];
    if (read_file_at(dirfd, "cpu.stat", buf, sizeof buf) <= 0)
        return;
    long long u = keyed_value(buf, "user_usec"), k = keyed_value(buf, "system_usec");
    *user += u > 0 ? u : 0;
    *sys += k > 0 ? k : 0;
}

int pk__cgroup_renew(struct pk_group *g)
{
    int populated = pk__cgroup_populated(g);
    if (populated != 0)
        return populated < 0 ? populated : -EBUSY;
    leaf_name name;
    pthread_mutex_lock(&pool_lock);
    int rc = make_leaf(name);
    pthread_mutex_unlock(&pool_lock);
    if (rc != 0)
        return rc;
    char path[PATH_MAX + 64];
    leaf_path(name, path, sizeof path);
    struct pooled_leaf fresh;
    rc = open_leaf(name, &fresh, true);
    if (rc != 0) {
        pthread_mutex_lock(&pool_lock);
        if (rmdir(path) == 0)
            forget_made(name);
        pthread_mutex_unlock(&pool_lock);
        return rc;
    }
    add_cpu(g->dirfd, &g->cpu_user_base, &g->cpu_sys_base);
    close_leaf_fds(&g->dirfd, &g->events_fd, &g->procs_pin);
    leaf_path(g->name, path, sizeof path);
    pthread_mutex_lock(&pool_lock);
    if (remove_leaf(path) == 0)
        forget_made(g->name);
    pthread_mutex_unlock(&pool_lock);
    snprintf(g->name, sizeof g->name, "%s", name);
    g->dirfd = fresh.dirfd;
    g->events_fd = fresh.events_fd;
    g->procs_pin = fresh.procs_pin;
    g->killed = false;
    return 0;
}

/* ---- operations on a leaf ------------------------------------------------------------------ */

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

static int signal_each(struct pk_group *g, int signo)
{
    int pids[512];
    size_t n = 0;
    int rc = pk__cgroup_members(g, pids, 512, &n);
    if (rc != 0)
        return rc;
    if (n > 512)
        n = 512;
    /* What /proc/<pid>/cgroup says for a member: our own path, then the leaf's name. */
    char rel[PATH_MAX + 64];
    snprintf(rel, sizeof rel, "%s/%s", strcmp(own_path, "/") != 0 ? own_path : "", g->name);
    for (size_t i = 0; i < n; i++) {
        if (pids[i] == g->holder)
            continue; /* it blocks every signal but SIGKILL and SIGSTOP anyway */
        int fd = (int)syscall(SYS_pidfd_open, pids[i], 0);
        if (fd < 0)
            continue; /* already gone */
        /* The pid may have been recycled between the listing and pidfd_open: signal it only if
         * the process the pidfd holds is still in this leaf. */
        char proc[64], cg[PATH_MAX + 8];
        snprintf(proc, sizeof proc, "/proc/%d/cgroup", pids[i]);
        int cfd = open(proc, O_RDONLY | O_CLOEXEC);
        ssize_t len = cfd >= 0 ? read(cfd, cg, sizeof cg - 1) : -1;
        if (cfd >= 0)
            close(cfd);
        if (len > 0) {
            cg[len] = '\0';
            char *line = strstr(cg, "0::");
            if (line != NULL && strncmp(line + 3, rel, strlen(rel)) == 0 &&
                (line[3 + strlen(rel)] == '\n' || line[3 + strlen(rel)] == '\0'))
                syscall(SYS_pidfd_send_signal, fd, signo, NULL, 0);
        }
        close(fd);
    }
    return 0;
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
