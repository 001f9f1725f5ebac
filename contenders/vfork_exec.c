/*
 * vfork_exec — the cheapest start a C program can write by hand: vfork, dup2 of the stdin and
 * stdout pipes onto 0 and 1, execve, and _exit(127) if the exec fails; then the same O_CLOEXEC
 * pipes, poll loop, memchr line count and waitpid as the other raw baselines (raw.c), and one
 * thread per child in the fan-out.
 *
 * Why it is fair: vfork shares the parent's memory until the exec, so the start copies no page
 * tables, which makes this the floor a start mechanism can reach (processkit's clone3 with
 * CLONE_VM|CLONE_VFORK is the same idea with a pidfd). The child runs only dup2, execve and
 * _exit, all async-signal-safe, and touches no memory of the parent's. execve needs a path, so
 * this series runs the workload's program_path, which the harness resolved once, untimed: it is
 * a resolved series, to be compared with processkit_resolved_program, not with the bare-name
 * ones. No signal handler is reset in the child (there are none to reset here); a host that
 * installs handlers would have to, as glibc's posix_spawn does.
 */
#define _GNU_SOURCE
#include "contenders/contender.h"
#include "contenders/raw.h"

#include <errno.h>
#include <unistd.h>

extern char **environ;

static int start(const pkb_workload *w, int in_fd, int out_fd, pid_t *pid)
{
    char *const argv[] = {(char *)w->program, NULL};
    pid_t child = vfork();
    if (child == 0) {
        if ((in_fd >= 0 && dup2(in_fd, 0) < 0) || (out_fd >= 0 && dup2(out_fd, 1) < 0))
            _exit(127);
        execve(w->program_path, argv, environ);
        _exit(127);
    }
    if (child < 0)
        return -errno;
    *pid = child;
    return 0;
}

static int run(void *state, const pkb_workload *w, pkb_sample *out)
{
    (void)state;
    return pkb_raw_run(start, w, out);
}

const pkb_contender pkb_contender_vfork_exec = {
    .name = "vfork_exec",
    .description = "raw vfork + dup2 + execve of the path resolved once by the harness (untimed) "
                   "+ O_CLOEXEC pipes + poll loop, memchr line count; one thread per child",
    .scenarios = PKB_SCENARIO_BIT(PKB_SPAWN_CAPTURE_SMALL) |
                 PKB_SCENARIO_BIT(PKB_STREAM_LARGE_STDOUT) |
                 PKB_SCENARIO_BIT(PKB_CONCURRENT_FAN_OUT) | PKB_SCENARIO_BIT(PKB_SPAWN_ONLY),
    .control = true, /* no processkit code: it moves only with the machine */
    .run = run,
};
