/*
 * Private declarations every platform shares, as libuv's uv-common.h: what the shared halves
 * (process.c, engine.c, loop.c, group.c, cancel.c) do once for both platforms, and what each
 * platform's half provides for them. Nothing here is part of the public API; internal non-static
 * functions carry the pk__ prefix.
 *
 * The platform's own declarations come first, from internal.posix.h or internal.windows.h: the
 * structs behind the handles (pk_process, pk_group, pk_cancel) differ, but the shared files use
 * only the fields both define with the same name and meaning — of pk_process: pid, start_ns,
 * in_data, in_len, streams, lim, cancel, on_line, line_user, pulling, group, own, has_own,
 * containment, exited, reaped, taken, heap, error, outcome; of pk_group: mech, heap; of pk_cancel:
 * signo, fired — and the signal numbers PK__SIGKILL, PK__SIGTERM and PK__SIGCONT.
 *
 * Module map of the shared halves:
 *   process.c     pk_run, pk_spawn, waiting; what every start begins with, the run's own group
 *   engine.c      delivering lines, the time limits, the pull API's loop, the result
 *   loop.c        pk_loop: its runs, reporting the finished ones (loop.h)
 *   group.c       the pk_group API          cancel.c      cancel handles
 *   command.c     validating a command, the streams' effective kinds (command.h)
 *   timelimits.c  the time-limit policy: which limit fired, the grace (timelimits.h)
 *   pump.c        line splitting, decoding, capture policies (pump.h; its ASCII scan: ascii.h)
 *   error.c       the errors' names and messages (errname.h)
 */
#ifndef PK_INTERNAL_H
#define PK_INTERNAL_H

#include "processkit.h"
#include "pump.h"
#include "timelimits.h"

#ifdef _WIN32
#include "internal.windows.h"
#else
#include "internal.posix.h"
#endif

/* The monotonic clock, in ns (wait.linux.c, text.windows.c). */
int64_t pk__now_ns(void);

/* ---- one run: the pk_process handle ------------------------------------------------------- */

/* Starts a run (process.posix.c, process.windows.c). `exit_only` says the caller only awaits the
 * end and hands out no handle (pk_run): on POSIX the child then gets a pidfd only when the engine
 * must poll for its exit next to pipes, time limits or a cancel handle; Windows waits on the
 * process handle either way. On failure the handle owns nothing. */
int pk__process_start(const pk_command *cmd,
                      struct pk_process *proc,
                      pk_result *failure,
                      bool exit_only);
/* The checks a start makes before anything exists (process.c): a malformed command, a cancel
 * handle already triggered. 0 with *program (what to start), else the error, said in *failure. */
int pk__process_check(const pk_command *cmd, pk_result *failure, const char **program);
/* Gives the run its own group unless the command names one or asks for none, so that nothing
 * the child starts outlives the run (process.c). */
int pk__process_contain(const pk_command *cmd, struct pk_process *proc);
/* The parent's side of a started run: what the engine needs to feed stdin (`fed`: the run has a
 * stdin pipe), deliver lines and enforce the limits (process.c). */
void pk__process_arm(const pk_command *cmd, struct pk_process *proc, bool fed);
/* Sends signo to the direct child alone, which is not reaped yet (process.posix.c,
 * process.windows.c). */
int pk__process_signal(struct pk_process *proc, int signo);
/* Runs the engine until the run is over, then fills *res (engine.linux.c, engine.windows.c). */
int pk__process_finish(struct pk_process *proc, pk_result *res);
/* Releases everything the run holds but its memory; a tree still running is killed first. */
void pk__process_close(struct pk_process *proc);

/* ---- the engine's shared steps (engine.c) ------------------------------------------------- */

/* Hands the complete lines of stream i to the callback, unless the caller pulls them. */
void pk__engine_deliver(struct pk_process *p, int i);
/* The pull API's loop (pk_process_read_line, once pulling): the next line of stdout or stderr,
 * waiting for the run while neither has one. 0 with *line, PK_EOF once both ended, or -errno. */
int pk__engine_pull(struct pk_process *p, pk_line *line);
/* Acts on passed deadlines and on a triggered cancel handle. */
void pk__engine_timers(struct pk_process *p, int64_t now);
/* The next time the engine must act (absolute ns), or 0 for none. */
int64_t pk__engine_next_wakeup(const struct pk_process *p);
/* Fills *res from a finished run and returns what pk_run returns. */
int pk__engine_result(struct pk_process *p, pk_result *res);

/* What each platform's engine provides (engine.linux.c, engine.windows.c). */

/* True when nothing remains to be done but building the result. */
bool pk__engine_done(const struct pk_process *p);
/* One wait for what the run waits for, and the steps it calls for. 0 or -errno. */
int pk__engine_wait(struct pk_process *p);
/* Stream i, which is pulled, has no complete line buffered: asks for more of it where the
 * platform must, and says whether more can still come. */
bool pk__engine_pull_more(struct pk_process *p, int i);
/* The first signal of an ending that has a grace: the tree gets it (on POSIX, with SIGCONT, so
 * that a stopped tree acts on it too; on Windows as Ctrl+Break, or a kill for SIGKILL). */
void pk__engine_signal(struct pk_process *p, int signo);
/* Kills the tree (the direct child alone when the run has no group of its own). */
void pk__engine_kill(struct pk_process *p);

/* Keeps the first error of the run. */
static inline void pk__engine_note_error(struct pk_process *p, int err)
{
    if (p->error == 0 && err != 0)
        p->error = err;
}

/* ---- groups: the pk_group API (group.c) over each platform's half ------------------------- */

/* Sets up g for mechanism `want` (AUTO picks); a private group (private_run: a run's own) may
 * borrow a pooled leaf. On failure g holds nothing. */
int pk__group_init(struct pk_group *g, pk_containment want, bool private_run);
/* Kill-on-close: kills the tree, waits, releases the cgroup or the job. The struct stays
 * allocated and may be set up again. */
void pk__group_teardown(struct pk_group *g);
/* The teardown, then what g holds besides (its locks): g is done with. */
void pk__group_close(struct pk_group *g);
int pk__group_signal(struct pk_group *g, int signo);
/* Kills every member, then waits up to timeout_ms until none is left. */
int pk__group_kill_wait(struct pk_group *g, int64_t timeout_ms);
/* Waits up to timeout_ms until no member is left: 0, -ETIMEDOUT or -errno. */
int pk__group_wait_empty(struct pk_group *g, int64_t timeout_ms);
/* Around a public call on a shared group: keeps its cgroup leaf from being replaced while the
 * call uses the leaf's descriptors (group.posix.c). Nothing on Windows, whose job never is. */
void pk__group_lock(struct pk_group *g);
void pk__group_unlock(struct pk_group *g);
/* Stops (frozen) or continues every member. */
int pk__group_freeze(struct pk_group *g, bool frozen);
int pk__group_members(struct pk_group *g, int *pids, size_t cap, size_t *count);
/* Fills *st, which the caller zeroed. */
int pk__group_stats(struct pk_group *g, pk_group_stats *st);

/* ---- cancel handles (cancel.c) ------------------------------------------------------------ */

/* What the handle is polled through (an eventfd, an event). 0 or -errno; nothing held on
 * failure. */
int pk__cancel_open(pk_cancel *c);
void pk__cancel_close(pk_cancel *c);

/* ---- the ab study's injected slowdown (inject_run.c) ---------------------------------------- */

/* For tests/ab/study.sh only (a build with -DPK_INJECT_EXTRA_RUN_PCT=N): whether this pk_run is
 * one of the (100/N)-th that first run their command once more, outcome discarded — true only
 * when no stream is a pipe: N% more of the same work. In every other build it is an inline
 * `false`, and pk_run's extra run is compiled away. */
#if defined(PK_INJECT_EXTRA_RUN_PCT) && PK_INJECT_EXTRA_RUN_PCT > 0
bool pk__inject_extra_run_due(const pk_command *cmd);
#else
static inline bool pk__inject_extra_run_due(const pk_command *cmd)
{
    (void)cmd;
    return false;
}
#endif

#endif /* PK_INTERNAL_H */
