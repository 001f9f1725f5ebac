/*
 * Groups on POSIX: kill-on-close containers for process trees, and the choice between mechanisms.
 *
 * A group is a cgroup v2 leaf when the host delegates one to us (cgroup.linux.c), else a POSIX
 * process group (pgroup.posix.c). AUTO tries the cgroup first — the mkdir is the delegation check
 * — and falls back on a permission or absence error; the mechanism actually in use is always
 * reported (pk_group_mechanism, pk_result.containment, pkrun's JSON), so a downgrade is never
 * silent. This file dispatches; the two mechanism files do the work, and the public API over it
 * is shared with Windows (group.c).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

pk_containment pk_host_containment(void)
{
    return pk__cgroup_usable() ? PK_CONTAIN_CGROUP : PK_CONTAIN_PGROUP;
}

/* The mechanism for `want`: a cgroup leaf (borrowed from the pool for a private run), else a
 * process group when AUTO may fall back to one. */
static int choose(struct pk_group *g, pk_containment want, bool private_run)
{
    if (want == PK_CONTAIN_NONE || (int)want < 0 || want > PK_CONTAIN_JOB)
        return -EINVAL;
    if (want == PK_CONTAIN_JOB)
        return PK_ENOCONTAIN; /* a Windows Job Object */
    if (want == PK_CONTAIN_AUTO || want == PK_CONTAIN_CGROUP) {
        int rc = pk__cgroup_create(g, private_run);
        if (rc == 0)
            return 0;
        bool no_delegation = rc == PK_ENOCONTAIN || rc == -EACCES || rc == -EPERM || rc == -EROFS ||
                             rc == -ENOENT || rc == -ENOTDIR;
        if (!no_delegation)
            return rc;
        if (want == PK_CONTAIN_CGROUP)
            return PK_ENOCONTAIN;
    }
    g->mech = PK_CONTAIN_PGROUP;
    g->pgid = 0;
    return 0;
}

int pk__group_init(struct pk_group *g, pk_containment want, bool private_run)
{
    memset(g, 0, sizeof *g);
    g->dirfd = g->events_fd = g->procs_pin = -1;
    pthread_mutex_init(&g->lock, NULL);
    int rc = choose(g, want, private_run);
    if (rc != 0) {
        pthread_mutex_destroy(&g->lock);
        return rc;
    }
    /* Only a shared group's leaf is ever renewed, so only it needs the leaf's lock. */
    if (!private_run)
        pthread_rwlock_init(&g->leaf_lock, NULL);
    return 0;
}

void pk__group_teardown(struct pk_group *g)
{
    if (g->mech == PK_CONTAIN_CGROUP) {
        pk__cgroup_destroy(g);
    } else if (g->mech == PK_CONTAIN_PGROUP && g->pgid > 0) {
        pk__pgroup_signal(g, SIGKILL);
        pk__pgroup_wait_empty(g, 5000);
        g->pgid = 0;
    }
}

int pk__group_signal(struct pk_group *g, int signo)
{
    return g->mech == PK_CONTAIN_CGROUP ? pk__cgroup_signal(g, signo) : pk__pgroup_signal(g, signo);
}

bool pk__group_holds(struct pk_group *g, int pid)
{
    if (g->mech == PK_CONTAIN_CGROUP)
        return pk__cgroup_holds(g, pid) == 1;
    return g->pgid > 0 && getpgid(pid) == g->pgid;
}

void pk__group_close(struct pk_group *g)
{
    pk__group_teardown(g);
    pthread_mutex_destroy(&g->lock);
    if (g->heap) /* a shared group (pk_group_new's): its leaf's lock too */
        pthread_rwlock_destroy(&g->leaf_lock);
}

int pk__group_wait_empty(struct pk_group *g, int64_t timeout_ms)
{
    return g->mech == PK_CONTAIN_CGROUP ? pk__cgroup_wait_empty(g, timeout_ms)
                                        : pk__pgroup_wait_empty(g, timeout_ms);
}

int pk__group_kill_wait(struct pk_group *g, int64_t timeout_ms)
{
    int rc = pk__group_signal(g, SIGKILL);
    if (rc != 0)
        return rc;
    return pk__group_wait_empty(g, timeout_ms);
}

/* A shared cgroup group's leaf, held while its descriptors are used (see leaf_lock). */
static bool shared_leaf(const struct pk_group *g)
{
    return g->heap && g->mech == PK_CONTAIN_CGROUP;
}

void pk__group_lock(struct pk_group *g)
{
    if (shared_leaf(g))
        pthread_rwlock_rdlock(&g->leaf_lock);
}

void pk__group_unlock(struct pk_group *g)
{
    if (shared_leaf(g))
        pthread_rwlock_unlock(&g->leaf_lock);
}

/* A shared group whose leaf was killed gets a fresh one when it is empty, so the next child is
 * cloned into it again (cgroup.linux.c, pk__cgroup_renew). Called holding the leaf as a reader;
 * returns holding it again. */
static void renew_killed_leaf(struct pk_group *g)
{
    pthread_rwlock_unlock(&g->leaf_lock);
    pthread_rwlock_wrlock(&g->leaf_lock);
    if (g->killed)
        (void)pk__cgroup_renew(g); /* members left: the leaf stays, joined via cgroup.procs */
    pthread_rwlock_unlock(&g->leaf_lock);
    pthread_rwlock_rdlock(&g->leaf_lock);
}

int pk__group_plan(struct pk_group *g, struct pk__child_plan *plan)
{
    if (g->mech == PK_CONTAIN_CGROUP) {
        /* Held until pk__group_plan_done: the leaf cannot be replaced under the clone. */
        pk__group_lock(g);
        if (g->killed && shared_leaf(g) && pk__spawn_into_cgroup())
            renew_killed_leaf(g);
        /* Not into a leaf that was ever killed: the kernel kills such clones (cgroup.linux.c). */
        if (pk__spawn_into_cgroup() && !g->killed) {
            plan->cgroup_fd = g->dirfd;
        } else {
            /* The child moves itself by writing "0" to cgroup.procs before exec. */
            plan->cgroup_procs_fd = openat(g->dirfd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
            if (plan->cgroup_procs_fd < 0) {
                int err = -errno;
                pk__group_unlock(g);
                return err;
            }
        }
        return 0;
    }
    /* Held until pk__group_plan_done, so two first spawns cannot both lead a new group. */
    pthread_mutex_lock(&g->lock);
    if (g->pgid > 0 && !pk__pgroup_alive(g))
        g->pgid = 0; /* every member is gone: the next child leads a new group */
    plan->pgid = g->pgid;
    return 0;
}

void pk__group_joined(struct pk_group *g, int pid)
{
    if (g->mech == PK_CONTAIN_PGROUP && g->pgid == 0)
        g->pgid = pid;
}

int pk__group_recover(struct pk_group *g)
{
    if (g->mech != PK_CONTAIN_CGROUP)
        return 0;
    if (g->pooled) /* a private run's leaf: nobody else uses the group */
        return pk__cgroup_replace(g);
    /* A shared group: as after a kill of our own, the next spawn renews the leaf once it is empty
     * (or moves the child in through cgroup.procs while members are left). */
    g->killed = true;
    return 0;
}

void pk__group_plan_done(struct pk_group *g, struct pk__child_plan *plan)
{
    if (plan->cgroup_procs_fd >= 0) {
        close(plan->cgroup_procs_fd);
        plan->cgroup_procs_fd = -1;
    }
    if (g->mech == PK_CONTAIN_PGROUP)
        pthread_mutex_unlock(&g->lock);
    else
        pk__group_unlock(g);
}

/* ---- the work behind the public API (group.c holds the leaf around it) ------------------- */

int pk__group_freeze(struct pk_group *g, bool frozen)
{
    if (g->mech != PK_CONTAIN_CGROUP)
        return pk__pgroup_signal(g, frozen ? SIGSTOP : SIGCONT);
    return pk__cgroup_freeze(g, frozen);
}

int pk__group_members(struct pk_group *g, int *pids, size_t cap, size_t *count)
{
    if (g->mech != PK_CONTAIN_CGROUP)
        return pk__pgroup_members(g, pids, cap, count);
    return pk__cgroup_members(g, pids, cap, count);
}

int pk__group_stats(struct pk_group *g, pk_group_stats *st)
{
    if (g->mech != PK_CONTAIN_CGROUP)
        return pk__pgroup_stats(g, st);
    return pk__cgroup_stats(g, st);
}
