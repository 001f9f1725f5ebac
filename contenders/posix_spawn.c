/*
 * posix_spawn — the baseline every delta is computed against: glibc's posix_spawnp with two
 * file actions (dup2 of the stdin and stdout pipes onto 0 and 1), the pipes made with O_CLOEXEC,
 * a poll loop that feeds stdin while it counts stdout's lines with memchr, and waitpid; the
 * fan-out runs one thread per child. This is what a careful C programmer writes without a
 * library, through the one start API POSIX gives.
 *
 * Why it is fair: it does every step the libraries do for these workloads (start, full-duplex
 * transfer, every line counted before the reap) and nothing more: no containment, no decoding,
 * nothing kept. The program is the workload's bare name, so posix_spawnp searches PATH in the
 * child on every run, exactly as processkit resolves its bare name on every run; the two
 * bare-name series pay the same lookup. (glibc 2.36 runs the child with clone(CLONE_VM |
 * CLONE_VFORK) on a fresh stack and resets every signal handler in it; see
 * ../shared/research/spawn.md.) The I/O loop is shared with vfork_exec and fork_exec (raw.c), so
 * the three raw series differ only in how the child is started.
 */
#define _GNU_SOURCE
#include "contenders/contender.h"
#include "contenders/raw.h"

#include <spawn.h>

extern char **environ;

static int start(const pkb_workload *w, int in_fd, int out_fd, pid_t *pid)
{
    char *const argv[] = {(char *)w->program, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_t *actions = NULL;
    int rc = 0;
    if (in_fd >= 0 || out_fd >= 0) {
        posix_spawn_file_actions_init(&fa);
        actions = &fa;
        if (in_fd >= 0)
            rc = posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
        if (rc == 0 && out_fd >= 0)
            rc = posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    }
    if (rc == 0)
        rc = posix_spawnp(pid, w->program, actions, NULL, argv, environ);
    if (actions != NULL)
        posix_spawn_file_actions_destroy(actions);
    return -rc;
}

static int run(void *state, const pkb_workload *w, pkb_sample *out)
{
    (void)state;
    return pkb_raw_run(start, w, out);
}

const pkb_contender pkb_contender_posix_spawn = {
    .name = "posix_spawn",
    .description = "glibc posix_spawnp (PATH searched per run) + O_CLOEXEC pipes + poll loop, "
                   "memchr line count; one thread per child in the fan-out",
    .scenarios = PKB_SCENARIO_BIT(PKB_SPAWN_CAPTURE_SMALL) |
                 PKB_SCENARIO_BIT(PKB_STREAM_LARGE_STDOUT) |
                 PKB_SCENARIO_BIT(PKB_CONCURRENT_FAN_OUT) | PKB_SCENARIO_BIT(PKB_SPAWN_ONLY) |
                 PKB_SCENARIO_BIT(PKB_FAN_OUT_SCALE),
    .baseline = true,
    .control = true, /* no processkit code: it moves only with the machine */
    .run = run,
};
