/*
 * The phases suite's environment, probed once before any series is prepared: what each series
 * needs from the host, and why a series cannot run when it cannot.
 *
 *   clone3      one child through the trampoline with CLONE_VM|CLONE_VFORK|CLONE_PIDFD and
 *               CLONE_CLEAR_SIGHAND (the library's flags), then without CLONE_CLEAR_SIGHAND;
 *   cgroup v2   the mount from /proc/self/mountinfo (the first cgroup2 line: /sys/fs/cgroup, or
 *               /sys/fs/cgroup/unified in the hybrid layout) joined with the `0::` line of
 *               /proc/self/cgroup, as tests/util.c finds it; a probe leaf made there is the
 *               delegation check, and stays (empty) for the cgroup.kill and cgroup.procs
 *               primitives until the environment is closed; a second one, never killed, is the
 *               one-shot ladder's pooled leaf, held by a sleeping child of ours as the library
 *               holds a leaf it lends again (lib/src/holder.linux.c);
 *   setpgid     setpgid(0, <our own group>) must work (not as a session leader): the primitive
 *               repeats it, and never moves pkbench out of the terminal's foreground group;
 *   PATH        its entries, and where the bare-name lookup finds its program.
 *
 * Leaves are named "pkb-phases-<pid>-<tag>-<n>" (tag: 8 random hex digits, as the library's
 * leaves have: a pid alone is not unique across PID namespaces sharing the cgroup). They follow the
 * library's ownership rule (lib/src/leaf.linux.c): the maker holds an exclusive flock on the
 * leaf's directory through the descriptor it keeps for the leaf's life, so a leaf whose lock
 * another process can take has no owner left. Those, when empty, are removed here; a populated one
 * is left alone, and a locked one is never touched, whatever its name says.
 */
#define _GNU_SOURCE
#include "phases/attribution/internal.h"

#include "processkit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

int pkb__stack_map(pkb__stack *s)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    s->len = PKB__STACK_SIZE + page;
    s->base =
        mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (s->base == MAP_FAILED) {
        s->base = s->low = NULL;
        return -errno;
    }
    (void)mprotect(s->base, page, PROT_NONE);
    s->low = s->base + page;
    return 0;
}

void pkb__stack_unmap(pkb__stack *s)
{
    if (s->base != NULL)
        munmap(s->base, s->len);
    s->base = s->low = NULL;
}

/* ---- leaves -------------------------------------------------------------------------------- */

void pkb__leaf_name(const pkb_phases_env *e, unsigned long n, char *name, size_t cap)
{
    snprintf(name, cap, PKB__LEAF_PREFIX "%d-%s-%lu", e->self_pid, e->leaf_tag, n);
}

int pkb__leaf_make(pkb_phases_env *e, char *name, size_t cap, int *dirfd)
{
    *dirfd = -1;
    for (int attempt = 0; attempt < 100; attempt++) {
        pkb__leaf_name(e, ++e->leaves, name, cap);
        if (mkdirat(e->cgroup_fd, name, 0755) != 0) {
            if (errno == EEXIST)
                continue;
            return -errno;
        }
        /* Locked for its life (see the top). A sweeper may take it between the mkdir and the
         * lock (it removes it then): another name. */
        int fd = openat(e->cgroup_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
            faccessat(fd, "cgroup.procs", F_OK, 0) == 0) {
            *dirfd = fd;
            return 0;
        }
        int rc = -errno;
        if (fd >= 0)
            close(fd);
        if (rc == -EWOULDBLOCK || rc == -ENOENT)
            continue;
        unlinkat(e->cgroup_fd, name, AT_REMOVEDIR);
        return rc;
    }
    return -EEXIST;
}

int pkb__leaf_remove(pkb_phases_env *e, const char *name, int dirfd)
{
    if (dirfd >= 0)
        close(dirfd);
    for (int tries = 0;; tries++) {
        if (unlinkat(e->cgroup_fd, name, AT_REMOVEDIR) == 0)
            return 0;
        if (errno != EBUSY || tries >= 1000)
            return -errno;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

/* Whether `s` is "<digits>-<8 hex>-<digits>", the rest of a leaf name after the prefix. */
static bool leaf_rest_ok(const char *s)
{
    const char *p = s;
    while (*p >= '0' && *p <= '9')
        p++;
    if (p == s || *p++ != '-')
        return false;
    for (int i = 0; i < 8; i++, p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    if (*p++ != '-' || *p < '0' || *p > '9')
        return false;
    while (*p >= '0' && *p <= '9')
        p++;
    return *p == '\0';
}

/* Leaves of earlier pkbench processes that are gone (nobody holds their lock): empty ones are
 * removed. */
static void sweep_stale(pkb_phases_env *e)
{
    int fd = openat(e->cgroup_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (d == NULL) {
        if (fd >= 0)
            close(fd);
        return;
    }
    size_t plen = strlen(PKB__LEAF_PREFIX);
    for (struct dirent *ent; (ent = readdir(d)) != NULL;) {
        if (strncmp(ent->d_name, PKB__LEAF_PREFIX, plen) != 0 || !leaf_rest_ok(ent->d_name + plen))
            continue;
        int leaf =
            openat(e->cgroup_fd, ent->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (leaf < 0)
            continue;
        if (flock(leaf, LOCK_EX | LOCK_NB) == 0)
            (void)unlinkat(e->cgroup_fd, ent->d_name, AT_REMOVEDIR); /* EBUSY when populated */
        close(leaf);
    }
    closedir(d);
}

/* ---- probes -------------------------------------------------------------------------------- */

__attribute__((no_sanitize("address", "undefined"))) static int probe_child(void *arg)
{
    (void)arg;
    return 0;
}

static long probe_clone3(pkb_phases_env *e, uint64_t extra)
{
    int pidfd = -1;
    struct pk_clone_args a = {
        .flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD | extra,
        .pidfd = (uint64_t)(uintptr_t)&pidfd,
        .exit_signal = SIGCHLD,
        .stack = (uint64_t)(uintptr_t)e->stack.low,
        .stack_size = PKB__STACK_SIZE,
    };
    long pid = raw_clone3(&a, sizeof a, probe_child, NULL);
    if (pid > 0) {
        siginfo_t si;
        while (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0 && errno == EINTR)
            ;
        close(pidfd);
    }
    return pid;
}

/* Starts the pooled leaf's holder: a fork-like clone3 child born in the leaf (CLONE_INTO_CGROUP),
 * with no exit signal (reaped by pid with __WALL, so no waitpid(-1) anywhere takes it), every
 * descriptor closed and every signal blocked, dead with us (PR_SET_PDEATHSIG). 0, or -1 with
 * errno set. */
static int start_holder(pkb_phases_env *e)
{
    struct pk_clone_args a = {.flags = PK_CLONE_INTO_CGROUP, .cgroup = (uint64_t)e->pool_fd};
    long pid = syscall(SYS_clone3, &a, (size_t)PK_CLONE_ARGS_SIZE_VER2);
    if (pid == 0) {
        sigset_t all;
        sigfillset(&all);
        sigprocmask(SIG_BLOCK, &all, NULL);
        syscall(SYS_close_range, 0U, ~0U, 0U);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != e->self_pid)
            _exit(0);
        for (;;)
            pause();
    }
    if (pid < 0)
        return -1;
    e->pool_holder = (int)pid;
    int n = snprintf(e->pool_holder_line, sizeof e->pool_holder_line, "%d\n", (int)pid);
    e->pool_holder_len = n > 0 ? (size_t)n : 0;
    return 0;
}

static void probe_cgroup(pkb_phases_env *e)
{
    char mount[PATH_MAX] = "", own[PATH_MAX] = "", line[4096];
    FILE *f = fopen("/proc/self/mountinfo", "re");
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        /* "id parent major:minor root mountpoint options ... - cgroup2 source options" */
        if (strstr(line, " - cgroup2 ") == NULL)
            continue;
        char *p = line;
        for (int field = 0; field < 4 && p != NULL; field++)
            p = strchr(p + 1, ' ');
        char *end = p != NULL ? strchr(p + 1, ' ') : NULL;
        if (end != NULL && end - p - 1 < (long)sizeof mount) {
            memcpy(mount, p + 1, (size_t)(end - p - 1));
            mount[end - p - 1] = '\0';
            break;
        }
    }
    if (f != NULL)
        fclose(f);
    f = fopen("/proc/self/cgroup", "re");
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(own, sizeof own, "%.*s", (int)sizeof own - 1, line + 3);
        }
    }
    if (f != NULL)
        fclose(f);
    e->cgroup_fd = e->probe_fd = e->pool_fd = e->pool_events_fd = e->pool_procs_fd = -1;
    e->pool_procs_rd = -1;
    if (mount[0] == '\0' || own[0] != '/') {
        snprintf(e->cgroup_why, sizeof e->cgroup_why, "no cgroup v2 here (%s)",
                 mount[0] == '\0' ? "no cgroup2 mount in /proc/self/mountinfo"
                                  : "no 0:: line in /proc/self/cgroup");
        return;
    }
    int n = snprintf(e->cgroup_dir, sizeof e->cgroup_dir, "%s%s", mount,
                     strcmp(own, "/") == 0 ? "" : own);
    if (n < 0 || (size_t)n >= sizeof e->cgroup_dir) {
        e->cgroup_dir[0] = '\0';
        snprintf(e->cgroup_why, sizeof e->cgroup_why, "the cgroup v2 path is too long");
        return;
    }
    e->cgroup_fd = open(e->cgroup_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (e->cgroup_fd < 0) {
        snprintf(e->cgroup_why, sizeof e->cgroup_why, "cannot open %s: %s", e->cgroup_dir,
                 strerror(errno));
        return;
    }
    sweep_stale(e);
    int rc = pkb__leaf_make(e, e->probe_name, sizeof e->probe_name, &e->probe_fd);
    if (rc == 0)
        rc = pkb__leaf_make(e, e->pool_name, sizeof e->pool_name, &e->pool_fd);
    if (rc != 0) {
        snprintf(e->cgroup_why, sizeof e->cgroup_why, "no cgroup v2 delegated: mkdir in %s: %s",
                 e->cgroup_dir, strerror(-rc));
        return;
    }
    e->pool_events_fd = openat(e->pool_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
    e->pool_procs_fd = openat(e->pool_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
    e->pool_procs_rd = openat(e->pool_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
    if (e->pool_events_fd < 0 || e->pool_procs_fd < 0 || e->pool_procs_rd < 0) {
        snprintf(e->cgroup_why, sizeof e->cgroup_why, "cannot open the files of %s/%s: %s",
                 e->cgroup_dir, e->pool_name, strerror(errno));
        return;
    }
    if (start_holder(e) != 0) {
        snprintf(e->cgroup_why, sizeof e->cgroup_why, "cannot start the holder of %s/%s: %s",
                 e->cgroup_dir, e->pool_name, strerror(errno));
        return;
    }
    e->cgroup_ok = true;
}

static void probe_path(pkb_phases_env *e)
{
    const char *path = getenv("PATH");
    if (path == NULL)
        path = "/usr/local/bin:/usr/bin:/bin"; /* what the library searches then */
    e->path_entries = 1;
    for (const char *p = path; *p; p++)
        e->path_entries += *p == ':';
    e->bare_name = "cat";
    char *found = NULL;
    int rc = pk_resolve_program(e->bare_name, NULL, &found, NULL);
    if (rc != 0) {
        snprintf(e->bare_why, sizeof e->bare_why, "%s is not in PATH: %s", e->bare_name,
                 pk_strerror(rc));
        return;
    }
    snprintf(e->bare_path, sizeof e->bare_path, "%s", found);
    free(found);
    e->bare_ok = true;
    /* Which entry held it: the first whose directory is the hit's directory. */
    size_t dir_len = strlen(e->bare_path) - strlen(e->bare_name) - 1;
    int index = 1;
    for (const char *p = path;; index++) {
        const char *end = strchrnul(p, ':');
        size_t len = (size_t)(end - p);
        while (len > 1 && p[len - 1] == '/')
            len--;
        if (len == dir_len && strncmp(p, e->bare_path, len) == 0) {
            e->bare_found_in = index;
            break;
        }
        if (*end == '\0')
            break;
        p = end + 1;
    }
}

int pkb_phases_env_open(const char *child, pkb_phases_env **out)
{
    *out = NULL;
    if (child == NULL || child[0] != '/' || access(child, X_OK) != 0)
        return -ENOENT;
    pkb_phases_env *e = calloc(1, sizeof *e);
    if (e == NULL)
        return -ENOMEM;
    snprintf(e->child, sizeof e->child, "%s", child);
    e->argv[0] = e->child;
    e->self_pid = (int)getpid();
    uint32_t tag;
    if (getrandom(&tag, sizeof tag, GRND_NONBLOCK) != (ssize_t)sizeof tag)
        tag = (uint32_t)time(NULL) ^ ((uint32_t)e->self_pid << 12) ^ (uint32_t)(uintptr_t)e;
    snprintf(e->leaf_tag, sizeof e->leaf_tag, "%08x", (unsigned)tag);
    int rc = pkb__stack_map(&e->stack);
    if (rc != 0) {
        free(e);
        return rc;
    }

    long pid = probe_clone3(e, PK_CLONE_CLEAR_SIGHAND);
    e->clear_sighand = pid > 0;
    if (pid <= 0)
        pid = probe_clone3(e, 0);
    e->clone3_ok = pid > 0;
    if (!e->clone3_ok)
        snprintf(e->clone3_why, sizeof e->clone3_why,
                 "clone3 with CLONE_PIDFD is not available: %s", strerror((int)-pid));

    e->pgid = (int)getpgrp();
    e->setpgid_ok = setpgid(0, e->pgid) == 0;
    if (!e->setpgid_ok)
        snprintf(e->setpgid_why, sizeof e->setpgid_why,
                 "setpgid(0, own group) fails here (%s): pkbench is a session leader",
                 strerror(errno));
    if (prctl(PR_GET_PDEATHSIG, &e->own_pdeathsig) != 0)
        e->own_pdeathsig = 0;

    e->null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    probe_cgroup(e);
    probe_path(e);
    (void)pkb_walk_snapshot(e->self_pid, &e->machine);
    *out = e;
    return 0;
}

void pkb_phases_env_close(pkb_phases_env *e)
{
    if (e == NULL)
        return;
    if (e->probe_fd >= 0)
        (void)pkb__leaf_remove(e, e->probe_name, e->probe_fd);
    if (e->pool_events_fd >= 0)
        close(e->pool_events_fd);
    if (e->pool_procs_fd >= 0)
        close(e->pool_procs_fd);
    if (e->pool_procs_rd >= 0)
        close(e->pool_procs_rd);
    if (e->pool_holder > 0) {
        /* Our child, unreaped: its pid cannot have been reused. */
        (void)kill(e->pool_holder, SIGKILL);
        while (waitpid(e->pool_holder, NULL, __WALL) < 0 && errno == EINTR)
            ;
    }
    if (e->pool_fd >= 0)
        (void)pkb__leaf_remove(e, e->pool_name, e->pool_fd);
    if (e->null_fd >= 0)
        close(e->null_fd);
    if (e->cgroup_fd >= 0)
        close(e->cgroup_fd);
    pkb__stack_unmap(&e->stack);
    free(e);
}

static json_t *str_or_null(bool present, const char *s)
{
    return present ? json_string(s) : json_null();
}

json_t *pkb_phases_env_json(const pkb_phases_env *e)
{
    json_t *o = json_object();
    json_object_set_new(o, "child", json_string(e->child));
    json_object_set_new(o, "clone3", json_boolean(e->clone3_ok));
    json_object_set_new(o, "clear_sighand", json_boolean(e->clear_sighand));
    json_object_set_new(o, "clone3_reason", str_or_null(!e->clone3_ok, e->clone3_why));
    json_object_set_new(o, "cgroup", json_boolean(e->cgroup_ok));
    json_object_set_new(o, "cgroup_dir", str_or_null(e->cgroup_dir[0] != '\0', e->cgroup_dir));
    json_object_set_new(o, "cgroup_reason", str_or_null(!e->cgroup_ok, e->cgroup_why));
    json_object_set_new(o, "setpgid", json_boolean(e->setpgid_ok));
    json_object_set_new(o, "setpgid_reason", str_or_null(!e->setpgid_ok, e->setpgid_why));
    json_object_set_new(o, "path_entries", json_integer((json_int_t)e->path_entries));
    json_object_set_new(o, "machine_processes", json_integer((json_int_t)e->machine.processes));
    json_object_set_new(o, "machine_threads", json_integer((json_int_t)e->machine.threads));
    return o;
}
