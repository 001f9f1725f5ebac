/*
 * fork_exec — the textbook start: fork, dup2 of the stdin and stdout pipes onto 0 and 1, execve,
 * and _exit(127) if the exec fails; then the same O_CLOEXEC pipes, poll loop, memchr line count
 * and waitpid as the other raw baselines (raw.c), and one thread per child in the fan-out.
 *
 * Why it is here, and fair: fork copies the parent's page tables, so its cost grows with the
 * parent's resident memory (≈28 µs per MiB on the reference VM, ../shared/research/spawn.md);
 * libuv and GLib start their children this way too. The child runs only async-signal-safe calls
 * between fork and exec, so it is correct in a threaded parent (the fan-out). Like vfork_exec it
 * execs the workload's program_path, resolved once by the harness, untimed: a resolved series.
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
    pid_t child = fork();
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

const pkb_contender pkb_contender_fork_exec = {
    .name = "fork_exec",
    .description = "raw fork + dup2 + execve of the path resolved once by the harness (untimed) "
                   "+ O_CLOEXEC pipes + poll loop, memchr line count; one thread per child",
    .scenarios = PKB_SCENARIO_BIT(PKB_SPAWN_CAPTURE_SMALL) |
                 PKB_SCENARIO_BIT(PKB_STREAM_LARGE_STDOUT) |
                 PKB_SCENARIO_BIT(PKB_CONCURRENT_FAN_OUT) | PKB_SCENARIO_BIT(PKB_SPAWN_ONLY),
    .control = true, /* no processkit code: it moves only with the machine */
    .run = run,
};
