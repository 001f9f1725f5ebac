/*
 * Process-group containment: the fallback when no cgroup is delegated to us.
 *
 * The first child of a group leads a new process group (setpgid(0, 0) in the child, before
 * exec); later children join it. Signals go to the whole group with kill(-pgid). Its limits are
 * POSIX's: a descendant that calls setsid() (or setpgid) leaves the group and escapes every
 * signal, which is why pk_group_mechanism says PK_CONTAIN_PGROUP instead of pretending. Liveness
 * is probed with kill(-pgid, 0); EPERM counts as alive (a member that changed credentials).
 * Members are found by scanning /proc for the group id (an introspection path, not a hot one).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int pk__pgroup_signal(struct pk_group *g, int signo)
{
    if (g->pgid <= 0)
        return 0;
    if (kill(-g->pgid, signo) != 0 && errno != ESRCH)
        return -errno;
    return 0;
}

int pk__pgroup_alive(struct pk_group *g)
{
    if (g->pgid <= 0)
        return 0;
    if (kill(-g->pgid, 0) == 0 || errno == EPERM)
        return 1;
    return 0;
}

static int scan(struct pk_group *g, int *pids, size_t cap, size_t *count, pk_group_stats *st);

/* kill(-pgid, 0) also succeeds while an exited but unreaped member (a zombie the caller has not
 * waited for yet) holds the group id; the /proc scan, which skips zombies, decides then. */
static bool live_member(struct pk_group *g)
{
    if (!pk__pgroup_alive(g))
        return false;
    size_t n = 0;
    return scan(g, NULL, 0, &n, NULL) != 0 || n > 0;
}

int pk__pgroup_wait_empty(struct pk_group *g, int64_t timeout_ms)
{
    int64_t deadline = pk__now_ns() + timeout_ms * 1000000;
    while (live_member(g)) {
        if (pk__now_ns() >= deadline)
            return -ETIMEDOUT;
        struct timespec ts = {0, 1000000}; /* 1 ms: there is nothing to wait on but time */
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* Process group id and state from /proc/<pid>/stat (fields 3 and 5, after the comm). */
static int
stat_of(int pid, int *pgrp, char *state, long long *utime, long long *stime, long long *rss)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    if (p == NULL)
        return -1;
    int ppid;
    long long skip;
    /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
     * cutime cstime priority nice threads itrealvalue starttime vsize rss */
    if (sscanf(p + 2,
               "%c %d %d %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld "
               "%lld %lld %lld %lld %lld %lld %lld",
               state, &ppid, pgrp, &skip, &skip, &skip, &skip, &skip, &skip, &skip, &skip, utime,
               stime, &skip, &skip, &skip, &skip, &skip, &skip, &skip, &skip, rss) != 22)
        return -1;
    return 0;
}

static int scan(struct pk_group *g, int *pids, size_t cap, size_t *count, pk_group_stats *st)
{
    *count = 0;
    if (g->pgid <= 0)
        return 0;
    DIR *d = opendir("/proc");
    if (d == NULL)
        return -errno;
    long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        int pid = atoi(e->d_name), pgrp;
        char state;
        long long ut, stt, rss;
        if (stat_of(pid, &pgrp, &state, &ut, &stt, &rss) != 0 || pgrp != g->pgid || state == 'Z')
            continue;
        if (pids != NULL && *count < cap)
            pids[*count] = pid;
        (*count)++;
        if (st != NULL) {
            st->cpu_user_us += ut * 1000000 / tick;
            st->cpu_sys_us += stt * 1000000 / tick;
            st->memory_bytes += rss * page;
        }
    }
    closedir(d);
    return 0;
}

int pk__pgroup_members(struct pk_group *g, int *pids, size_t cap, size_t *count)
{
    return scan(g, pids, cap, count, NULL);
}

int pk__pgroup_stats(struct pk_group *g, pk_group_stats *st)
{
    size_t count = 0;
    int rc = scan(g, NULL, 0, &count, st);
    st->processes = count;
    return rc;
}
