/*
 * The pk_group API, one way on every platform: each call checks its arguments and, around the
 * platform's work, keeps a shared group's cgroup leaf from being replaced under it (see
 * pk__group_lock). The mechanisms are the platforms' own: a cgroup v2 leaf or a process group on
 * POSIX (group.posix.c, with cgroup.linux.c and pgroup.posix.c), a Job Object on Windows
 * (group.windows.c).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int pk_group_new(const pk_group_options *opts, pk_group **out)
{
    if (out == NULL)
        return -EINVAL;
    *out = NULL;
    pk_group *g = malloc(sizeof *g);
    if (g == NULL)
        return -ENOMEM;
    int rc = pk__group_init(g, opts != NULL ? opts->containment : PK_CONTAIN_AUTO, false);
    if (rc != 0) {
        free(g);
        return rc;
    }
    g->heap = true;
    *out = g;
    return 0;
}

void pk_group_free(pk_group *g)
{
    if (g == NULL)
        return;
    pk__group_close(g);
    free(g);
}

pk_containment pk_group_mechanism(const pk_group *g)
{
    return g != NULL ? g->mech : PK_CONTAIN_NONE;
}

int pk_group_signal(pk_group *g, int signo)
{
    if (g == NULL)
        return -EINVAL;
    pk__group_lock(g);
    int rc = pk__group_signal(g, signo);
    pk__group_unlock(g);
    return rc;
}

int pk_group_kill(pk_group *g)
{
    if (g == NULL)
        return -EINVAL;
    pk__group_lock(g);
    int rc = pk__group_kill_wait(g, 5000);
    pk__group_unlock(g);
    return rc;
}

int pk_group_shutdown(pk_group *g, int64_t grace_ms, bool escalate)
{
    if (g == NULL || grace_ms < 0)
        return -EINVAL;
    pk__group_lock(g);
    int rc = pk__group_signal(g, PK__SIGTERM);
    if (rc == 0) {
        /* A stopped member acts on SIGTERM only once continued. (Windows has no SIGCONT: its
         * group refuses the number and nothing happens.) */
        (void)pk__group_signal(g, PK__SIGCONT);
        rc = pk__group_wait_empty(g, grace_ms);
    }
    if (rc == -ETIMEDOUT && escalate)
        rc = pk__group_kill_wait(g, 5000);
    pk__group_unlock(g);
    return rc;
}

int pk_group_suspend(pk_group *g)
{
    if (g == NULL)
        return -EINVAL;
    pk__group_lock(g);
    int rc = pk__group_freeze(g, true);
    pk__group_unlock(g);
    return rc;
}

int pk_group_resume(pk_group *g)
{
    if (g == NULL)
        return -EINVAL;
    pk__group_lock(g);
    int rc = pk__group_freeze(g, false);
    pk__group_unlock(g);
    return rc;
}

int pk_group_members(pk_group *g, int *pids, size_t cap, size_t *count)
{
    if (g == NULL || count == NULL || (pids == NULL && cap > 0))
        return -EINVAL;
    pk__group_lock(g);
    int rc = pk__group_members(g, pids, cap, count);
    pk__group_unlock(g);
    return rc;
}

int pk_group_stats_get(pk_group *g, pk_group_stats *st)
{
    if (g == NULL || st == NULL)
        return -EINVAL;
    memset(st, 0, sizeof *st);
    pk__group_lock(g);
    int rc = pk__group_stats(g, st);
    pk__group_unlock(g);
    return rc;
}
