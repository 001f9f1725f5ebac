/*
 * cgroup v2 leaves: making them, owning them, lending them (the pool), and removing them — ours,
 * and those of owners that are gone, never anyone else's.
 *
 * Names. A leaf is "pk-<pid>-<tag>-<n>" in our cgroup (cgroup.linux.c finds it): the pid for
 * people reading `ls`, a random tag drawn once per process (a pid is not unique: processes in
 * other PID namespaces share the directory and can have ours), and a counter. The mkdir is
 * exclusive, so two processes never share a leaf whatever their names.
 *
 * Ownership. Many processes use one delegated cgroup at once — containers, CI runners, build
 * sandboxes, each in its own PID namespace — and a process that dies without cleaning up leaves
 * its leaves behind for someone to remove. Whether a leaf's owner is gone cannot be read from its
 * name: a pid seen from another namespace names someone else or no one, and a dead pid can be
 * reused. So the owner proves it is alive by something it holds: an exclusive flock on the leaf's
 * directory, held by the descriptor it keeps open for the leaf's whole life (the one children are
 * cloned into). The kernel drops the lock when the last copy of that descriptor is closed — when
 * the owner exits, dies or execs (O_CLOEXEC) — and never otherwise. A leaf whose lock another
 * process can take therefore has no owner, and only then is it touched: its tree killed and the
 * leaf removed (sweep_stale, once per process, at its first leaf). The owner itself removes a leaf
 * before it closes the locked descriptor, never after. Between the mkdir and the lock a sweeper
 * could take a fresh leaf; the maker then finds the lock taken or the leaf gone and makes another
 * (claim). Only names of this form are swept: a directory named otherwise is not ours to judge.
 *
 * When the owner dies, its guardian (guard.linux.c) kills its trees at once and removes its
 * leaves; the sweep is for what that could not do (no guardian on this architecture, more leaves
 * than it lists, a guardian killed too).
 *
 * Why a pool: creating a leaf costs ≈47 µs on these machines, half a spawn, and every kernfs open
 * of a control file a few more. A private group for a one-shot run therefore borrows an empty
 * leaf from a per-process pool, with its directory and cgroup.events (or, once held, cgroup.procs)
 * descriptors already open, and returns it empty: a run pays one pread to learn that its tree is
 * gone. A leaf lent a second time keeps a holder task in it from then on (holder.linux.c), so that
 * runs never flip it between populated and empty, which the kernel would notify; its pread is of
 * cgroup.procs, where the holder alone means empty. A pooled leaf keeps two descriptors besides its
 * directory's at most: cgroup.procs is opened at its second lend, with its holder (at the first,
 * opening it would allocate the very inode the clone's check then finds, saving nothing), and
 * cgroup.events is closed once the holder is in, so a process with thousands of runs in flight
 * holds four descriptors per run (reports/notes/2026-12-05-fan-out-at-scale.md).
 * pk_cleanup() releases the pool; process exit removes every leaf we made (atexit).
 *
 * A leaf taken from outside. Someone with the rights (an administrator, an older processkit that
 * judged owners by pid) may remove or kill a leaf of ours. A run that finds its pooled leaf gone
 * (clone fails with ENOENT) or killed (the kernel kills every child cloned into a killed leaf at
 * birth: cgroup.linux.c) gets a fresh leaf and is started again (pk__cgroup_replace, called from
 * process.posix.c). A pooled leaf's holder killed with it is reaped when the leaf's emptiness is
 * next read, and the pool's other leaves are looked at for a dead holder at most once a second
 * when a leaf comes back, so no holder stays a zombie.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
typedef char leaf_name[48];
_Static_assert(sizeof(leaf_name) == sizeof(((struct pk_group *)0)->name),
               "a group's leaf name and a pooled leaf's are copied whole");
/* An empty leaf ready for a private run, with its descriptors kept open so that a run costs no
 * path lookup in kernfs: the directory (locked: see the top; for CLONE_INTO_CGROUP) and
 * cgroup.events (one pread tells whether the tree is empty at the end) or, once held, cgroup.procs
 * (events_fd is then -1: see the top). */
struct pooled_leaf {
    leaf_name name;
    int dirfd, events_fd, procs_pin;
    int holder; /* holder.linux.c; 0: none yet */
};
/* O_PATH on the directory leaves are made in, opened with the first leaf (the guardian keeps a
 * copy of its own). */
static int parent_fd = -1;
/* O_PATH on our own cgroup's cgroup.procs, for its inode (cgroup.linux.c's top): opened with the
 * first leaf, tried once (a failure costs only time). */
static int ancestor_pin = -1;
static bool ancestor_tried;
static struct pooled_leaf *pool_free;
static size_t pool_n, pool_cap;
static leaf_name *made; /* every leaf of ours that exists: removed at exit */
static size_t made_n, made_cap;
static unsigned long leaf_counter;
static char tag[9]; /* 8 hex digits, drawn with the first leaf (again in a forked child) */
static bool exit_hook, swept;
static int64_t holders_checked_ns; /* when the pool's holders were last looked at */

/* ---- names and the directory --------------------------------------------------------------- */

static void draw_tag(void)
{
    uint32_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = (uint32_t)((uint64_t)pk__now_ns() ^ ((uint64_t)getpid() << 20) ^ (uintptr_t)&r);
    snprintf(tag, sizeof tag, "%08x", (unsigned)r);
}

static const char *digits(const char *s)
{
    const char *p = s;
    while (*p >= '0' && *p <= '9')
        p++;
    return p > s ? p : NULL;
}

/* Whether `s` is a leaf name of the form we make: "pk-<digits>-<8 hex>-<digits>". */
static bool leaf_name_ok(const char *s)
{
    if (strncmp(s, "pk-", 3) != 0 || (s = digits(s + 3)) == NULL || *s++ != '-')
        return false;
    for (int i = 0; i < 8; i++, s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return false;
    return *s++ == '-' && (s = digits(s)) != NULL && *s == '\0';
}

/* The directory leaves are made in, opened once (O_PATH). Under pool_lock. */
static int leaf_dir(void)
{
    if (parent_fd >= 0)
        return parent_fd;
    const char *dir;
    int rc = pk__cgroup_parent(&dir);
    if (rc != 0)
        return rc;
    parent_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    return parent_fd >= 0 ? parent_fd : -errno;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* ---- removing ------------------------------------------------------------------------------ */

/* Removes the cgroups below the leaf `fd`, deepest first: a tree that used processkit itself made
 * leaves of its own in ours. Its processes are dead by then (cgroup.kill reaches the subtree). */
static void remove_below(int fd, int depth)
{
    int list = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = list >= 0 ? fdopendir(list) : NULL;
    if (d == NULL) {
        close_fd(&list);
        return;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0 && depth < 16)
            remove_below(sub, depth + 1);
        close_fd(&sub);
        (void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
    }
    closedir(d);
}

/* Removes leaf `name` from `dir`: rmdir, and when something still lives in it (an orphaned tree),
 * cgroup.kill, a wait for it to empty, the cgroups its tree made below it, rmdir again. fd: a
 * descriptor of the leaf, or -1. A leaf of ours is removed while its locked descriptor is still
 * open, so no sweeper takes it meanwhile. */
static int remove_leaf(int dir, const char *name, int fd)
{
    if (unlinkat(dir, name, AT_REMOVEDIR) == 0)
        return 0;
    if (errno != EBUSY)
        return -errno;
    struct pk_group tmp = {.dirfd = fd, .events_fd = -1, .holder = 0};
    snprintf(tmp.name, sizeof tmp.name, "%s", name);
    if (fd < 0 && (tmp.dirfd = openat(dir, name, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        return -errno;
    tmp.events_fd = openat(tmp.dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
    pk__cgroup_kill(&tmp);
    if (tmp.events_fd >= 0) {
        pk__cgroup_wait_empty(&tmp, 2000);
        close(tmp.events_fd);
    }
    remove_below(tmp.dirfd, 0);
    if (fd < 0)
        close(tmp.dirfd);
    return unlinkat(dir, name, AT_REMOVEDIR) == 0 ? 0 : -errno;
}

static void forget_made(const char *name)
{
    pk__guard_remove(name);
    for (size_t i = 0; i < made_n; i++)
        if (strcmp(made[i], name) == 0) {
            memmove(&made[i], &made[i + 1], (made_n - i - 1) * sizeof *made);
            made_n--;
            return;
        }
}

/* Ends a leaf of ours: its holder, its tree, the directory (forgotten once gone), and last its
 * descriptors, the lock with them. Under pool_lock. */
static void drop_leaf(const char *name, int *dirfd, int *events_fd, int *procs_pin, int *holder)
{
    pk__holder_end(holder);
    int dir = leaf_dir();
    if (dir >= 0) {
        int rc = remove_leaf(dir, name, *dirfd);
        if (rc == 0 || rc == -ENOENT)
            forget_made(name);
    }
    close_fd(dirfd);
    close_fd(events_fd);
    close_fd(procs_pin);
}

static void drop_pooled(struct pooled_leaf *e)
{
    drop_leaf(e->name, &e->dirfd, &e->events_fd, &e->procs_pin, &e->holder);
}

/* Removes the leaves of owners that are gone: those whose lock we can take (see the top). False
 * when the directory could not be read (then a later creation tries again). Our own leaves are
 * locked by our descriptors, so they are never taken here. */
static bool sweep_stale(int dir)
{
    int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (d == NULL) {
        close_fd(&fd);
        return false;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!leaf_name_ok(e->d_name))
            continue;
        int leaf = openat(dir, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (leaf < 0)
            continue;
        if (flock(leaf, LOCK_EX | LOCK_NB) == 0) /* nobody holds it: its owner is gone */
            (void)remove_leaf(dir, e->d_name, leaf);
        close(leaf);
    }
    closedir(d);
    return true;
}

/* ---- making -------------------------------------------------------------------------------- */

/* Opens a leaf just made and takes its lock, then its files (cgroup.procs only when `pin`: see the
 * top): 0, -EAGAIN when a sweeper took it in the instant between our mkdir and our lock (it
 * removes the leaf), or -errno. */
static int claim(int dir, struct pooled_leaf *e, bool pin)
{
    e->events_fd = e->procs_pin = -1;
    e->dirfd = openat(dir, e->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (e->dirfd < 0)
        return errno == ENOENT ? -EAGAIN : -errno;
    if (flock(e->dirfd, LOCK_EX | LOCK_NB) != 0) {
        int err = errno;
        close_fd(&e->dirfd);
        return err == EWOULDBLOCK ? -EAGAIN : -err;
    }
    /* Ours now; but a sweeper that held the lock before us may have removed it: then its files
     * are gone. */
    e->events_fd = openat(e->dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
    if (e->events_fd < 0) {
        int err = errno;
        close_fd(&e->dirfd);
        return err == ENOENT ? -EAGAIN : -err;
    }
    /* Readable, not O_PATH: a held leaf's emptiness is read from it (holder.linux.c). Only saves
     * time otherwise, so it may fail. */
    e->procs_pin = pin ? openat(e->dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC) : -1;
    return 0;
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

/* Makes, locks and opens a fresh leaf into *e, listed as ours (and with the guardian); `pin`: its
 * cgroup.procs too (claim). Under pool_lock. */
static int make_leaf(struct pooled_leaf *e, bool pin)
{
    int dir = leaf_dir();
    if (dir < 0)
        return dir;
    if (grow(&made, &made_cap, made_n + 1) != 0)
        return -ENOMEM;
    if (tag[0] == '\0')
        draw_tag();
    e->holder = 0;
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(e->name, sizeof e->name, "pk-%d-%s-%lu", (int)getpid(), tag, ++leaf_counter);
        if (mkdirat(dir, e->name, 0755) != 0) {
            if (errno == EEXIST)
                continue;
            return -errno;
        }
        int rc = claim(dir, e, pin);
        if (rc == -EAGAIN)
            continue;
        if (rc != 0) {
            (void)unlinkat(dir, e->name, AT_REMOVEDIR);
            return rc;
        }
        memcpy(made[made_n++], e->name, sizeof(leaf_name));
        (void)pk__guard_add(dir, e->name); /* unguarded where it cannot: the sweep remains */
        return 0;
    }
    return -EEXIST;
}

/* ---- the pool ------------------------------------------------------------------------------ */

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

/* Whether pooled leaf e's holder has died (its leaf was killed from outside); reaps it. */
static bool holder_died(struct pooled_leaf *e)
{
    if (e->holder <= 0)
        return false;
    siginfo_t si = {0};
    if (waitid(P_PID, (id_t)e->holder, &si, WEXITED | WNOHANG | __WALL) != 0 ||
        si.si_pid != e->holder)
        return false;
    e->holder = 0; /* reaped */
    return true;
}

/* Drops the pooled leaves [0, n) that `dead` says were taken from outside. Under pool_lock. */
static void drop_dead(size_t n, bool (*dead)(struct pooled_leaf *))
{
    for (size_t i = 0; i < n && i < pool_n;) {
        if (!dead(&pool_free[i])) {
            i++;
            continue;
        }
        drop_pooled(&pool_free[i]);
        memmove(&pool_free[i], &pool_free[i + 1], (pool_n - i - 1) * sizeof *pool_free);
        pool_n--;
        n--;
    }
}

/* A pooled leaf removed (its cgroup.events, or a held leaf's cgroup.procs, reads ENODEV) or killed
 * with its holder. */
static bool leaf_gone(struct pooled_leaf *e)
{
    char buf[64];
    int fd = e->events_fd >= 0 ? e->events_fd : e->procs_pin;
    return pread(fd, buf, sizeof buf, 0) < 0 || holder_died(e);
}

/* Once a second at most, when a leaf comes back: the pool's other leaves (the top one's emptiness
 * was just read) are looked at for a holder that died, which is reaped and its leaf dropped, so a
 * leaf killed from outside while pooled never leaves a zombie behind. Under pool_lock. */
static void check_pool(void)
{
    if (pool_n < 2)
        return;
    int64_t now = pk__now_ns();
    if (holders_checked_ns != 0 && now - holders_checked_ns < 1000000000)
        return;
    bool first = holders_checked_ns == 0;
    holders_checked_ns = now;
    if (!first)
        drop_dead(pool_n - 1, holder_died);
}

static void close_ancestor_pin(void)
{
    close_fd(&ancestor_pin);
    ancestor_tried = false;
}

static void remove_made_leaves(void)
{
    pthread_mutex_lock(&pool_lock);
    while (pool_n > 0)
        drop_pooled(&pool_free[--pool_n]);
    pk__holder_release();
    close_ancestor_pin();
    /* Leaves still lent to runs or groups: their trees are killed with them. */
    int dir = leaf_dir();
    for (size_t i = 0; i < made_n && dir >= 0; i++)
        (void)remove_leaf(dir, made[i], -1);
    made_n = 0;
    pk__guard_release(true, false);
    pthread_mutex_unlock(&pool_lock);
}

/* A forked child must not hand out (or remove) its parent's leaves. */
static void forget_after_fork(void)
{
    for (size_t i = 0; i < pool_n; i++) {
        /* their holders are the parent's children, not ours; closing our copies leaves the
         * parent's locks held (a lock lives as long as any copy of its descriptor) */
        close_fd(&pool_free[i].dirfd);
        close_fd(&pool_free[i].events_fd);
        close_fd(&pool_free[i].procs_pin);
    }
    made_n = pool_n = 0;
    tag[0] = '\0'; /* the child draws its own */
    pk__holder_forget();
    pk__guard_forget();
    pthread_mutex_init(&pool_lock, NULL);
}

/* Releases the pool: removes its (empty) leaves and closes their descriptors. Leaves lent to runs
 * still going come back later and are pooled again; process exit removes everything. */
void pk_cleanup(void)
{
    pk__stream_cache_release();
    pk__null_close();
    pthread_mutex_lock(&pool_lock);
    while (pool_n > 0)
        drop_pooled(&pool_free[--pool_n]);
    close_ancestor_pin();
    pk__guard_release(false, true); /* only once no leaf of ours is left */
    close_fd(&parent_fd);
    pthread_mutex_unlock(&pool_lock);
    /* Holders of leaves still lent to runs see end-of-file and exit; those leaves simply empty. */
    pk__holder_release();
}

/* ---- groups' leaves ------------------------------------------------------------------------ */

static void lend(struct pk_group *g, const struct pooled_leaf *e, bool pooled)
{
    /* Both NUL-terminated arrays of the same size: a copy, not a formatted print per run. */
    memcpy(g->name, e->name, sizeof g->name);
    g->dirfd = e->dirfd;
    g->events_fd = e->events_fd;
    g->procs_pin = e->procs_pin;
    g->holder = e->holder;
    g->pooled = pooled;
    g->killed = false;
    g->mech = PK_CONTAIN_CGROUP;
}

int pk__cgroup_create(struct pk_group *g, bool pooled)
{
    const char *parent;
    int rc = pk__cgroup_parent(&parent);
    if (rc != 0)
        return rc; /* PK_ENOCONTAIN, or the caller's -EMFILE / -ENOMEM */
    struct pooled_leaf e = {.dirfd = -1, .events_fd = -1, .procs_pin = -1, .holder = 0};
    pthread_mutex_lock(&pool_lock);
    if (!exit_hook) {
        exit_hook = true;
        atexit(remove_made_leaves);
        pthread_atfork(NULL, NULL, forget_after_fork);
    }
    int dir = leaf_dir();
    if (dir >= 0 && !swept)
        swept = sweep_stale(dir);
    if (!ancestor_tried && dir >= 0) {
        ancestor_tried = true;
        ancestor_pin = openat(dir, "cgroup.procs", O_PATH | O_CLOEXEC);
    }
    bool reused = pooled && pool_n > 0;
    if (reused)
        e = pool_free[--pool_n];
    else
        rc = dir < 0 ? dir : make_leaf(&e, !pooled);
    pthread_mutex_unlock(&pool_lock);
    if (rc != 0)
        return rc;
    if (!reused)
        pk__holder_prepare(); /* the holders' pipe, low in the table while it is small */
    if (reused && e.holder == 0) {
        /* A leaf lent a second time: from now on it is pinned and held (holder.linux.c); its
         * emptiness is read from cgroup.procs, so cgroup.events is closed until a killed tree
         * must be waited for (cgroup.linux.c). */
        if (e.procs_pin < 0)
            e.procs_pin = openat(e.dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
        int h = e.procs_pin >= 0 ? pk__holder_start(e.dirfd) : 0;
        e.holder = h > 0 ? h : 0;
        if (e.holder > 0)
            close_fd(&e.events_fd);
    }
    lend(g, &e, pooled);
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
        check_pool();
    } else {
        drop_leaf(g->name, &g->dirfd, &g->events_fd, &g->procs_pin, &g->holder);
    }
    g->dirfd = g->events_fd = g->procs_pin = -1;
    g->holder = 0;
    pthread_mutex_unlock(&pool_lock);
}

int pk__cgroup_renew(struct pk_group *g)
{
    int populated = pk__cgroup_populated(g);
    /* A leaf removed from outside (ENODEV) is as empty as can be. */
    if (populated > 0 || (populated < 0 && populated != -ENODEV && populated != -ENOENT))
        return populated > 0 ? -EBUSY : populated;
    struct pooled_leaf fresh;
    pthread_mutex_lock(&pool_lock);
    int rc = make_leaf(&fresh, true);
    pthread_mutex_unlock(&pool_lock);
    if (rc != 0)
        return rc;
    pk__cgroup_add_cpu(g->dirfd, &g->cpu_user_base, &g->cpu_sys_base);
    pthread_mutex_lock(&pool_lock);
    drop_leaf(g->name, &g->dirfd, &g->events_fd, &g->procs_pin, &g->holder);
    pthread_mutex_unlock(&pool_lock);
    lend(g, &fresh, g->pooled);
    return 0;
}

int pk__cgroup_replace(struct pk_group *g)
{
    struct pooled_leaf fresh;
    pthread_mutex_lock(&pool_lock);
    drop_leaf(g->name, &g->dirfd, &g->events_fd, &g->procs_pin, &g->holder);
    g->holder = 0;
    /* Whoever took this leaf may have taken the pool's others: drop those found gone (a leaf
     * killed without a holder in it cannot be told, and is replaced when a run finds it). */
    drop_dead(pool_n, leaf_gone);
    int rc = make_leaf(&fresh, !g->pooled);
    pthread_mutex_unlock(&pool_lock);
    if (rc != 0)
        return rc;
    lend(g, &fresh, g->pooled);
    return 0;
}
