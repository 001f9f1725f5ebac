/*
 * The portable fallbacks of the spawn chain: vfork, then posix_spawn.
 *
 * vfork shares the parent's memory and suspends it like CLONE_VFORK, so the same child code
 * (child.linux.c) runs unchanged and reports failures the same way. posix_spawn is the last
 * resort: glibc reports only an errno, so a failed chdir and a failed exec are told apart by
 * checking the working directory in the parent first (a check that can race, which is why this
 * path is last); descriptors above 2 are closed with posix_spawn_file_actions_addclosefrom_np.
 * It cannot set a parent-death signal, and it joins a cgroup only after the start.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int pk__spawn_vfork(struct pk__child_plan *plan);
int pk__spawn_posix_spawn(struct pk__child_plan *plan);

int pk__spawn_vfork(struct pk__child_plan *plan)
{
    pid_t pid = vfork();
    if (pid == 0)
        pk__child_main(plan);
    return pid < 0 ? -errno : pid;
}

static int add_io(posix_spawn_file_actions_t *fa, const struct pk__io_plan *io, int target)
{
    switch (io->action) {
    case PK__IO_KEEP:
        return 0;
    case PK__IO_DUP:
        return posix_spawn_file_actions_adddup2(fa, io->fd, target);
    case PK__IO_OPEN:
        return posix_spawn_file_actions_addopen(fa, target, io->path, io->flags, 0666);
    case PK__IO_SAME_AS_1:
        return posix_spawn_file_actions_adddup2(fa, 1, 2);
    }
    return EINVAL;
}

int pk__spawn_posix_spawn(struct pk__child_plan *plan)
{
    if (plan->cwd != NULL) {
        struct stat st;
        if (stat(plan->cwd, &st) != 0 || !S_ISDIR(st.st_mode)) {
            plan->err_stage = PK_STAGE_CHDIR;
            plan->err_errno = errno != 0 ? errno : ENOTDIR;
            return PK__ECHILD_FAILED;
        }
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc != 0)
        return -rc;
    rc = posix_spawnattr_init(&attr);
    if (rc != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return -rc;
    }
    for (int t = 0; t < 3 && rc == 0; t++)
        rc = add_io(&fa, &plan->io[t], t);
    if (rc == 0 && !plan->inherit_fds)
        rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    if (rc == 0 && plan->cwd != NULL)
        rc = posix_spawn_file_actions_addchdir_np(&fa, plan->cwd);
    if (rc == 0)
        rc = posix_spawnattr_setsigmask(&attr, &plan->mask);
    short flags = POSIX_SPAWN_SETSIGMASK;
    if (rc == 0 && plan->pgid >= 0) {
        flags |= POSIX_SPAWN_SETPGROUP;
        rc = posix_spawnattr_setpgroup(&attr, plan->pgid);
    }
    if (rc == 0)
        rc = posix_spawnattr_setflags(&attr, flags);
    pid_t pid = 0;
    if (rc == 0) {
        rc = posix_spawn(&pid, plan->path, &fa, &attr, plan->argv, plan->envp);
        if (rc != 0) {
            plan->err_stage = PK_STAGE_EXEC;
            plan->err_errno = rc;
            rc = PK__ECHILD_FAILED;
        }
    } else {
        rc = -rc;
    }
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    if (rc == 0 && plan->cgroup_procs_fd >= 0) {
        /* posix_spawn has no hook to run in the child: move it afterwards. It may have forked
         * in between; this last-resort path is the only one with that race. */
        char num[16];
        int len = snprintf(num, sizeof num, "%d", (int)pid);
        if (write(plan->cgroup_procs_fd, num, (size_t)len) != len) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            plan->err_stage = PK_STAGE_CONTAIN;
            plan->err_errno = errno;
            return PK__ECHILD_FAILED;
        }
    }
    return rc != 0 ? rc : pid;
}
