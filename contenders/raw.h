/*
 * What the three raw baselines (posix_spawn, vfork_exec, fork_exec) share: everything but the
 * start itself. One child's pipes, the full-duplex poll loop that feeds its stdin while it reads
 * and counts its stdout, the reap, and fan-out on one thread per child. Sharing it is what makes
 * the three series differ in their start mechanism and in nothing else.
 */
#ifndef PKB_RAW_H
#define PKB_RAW_H

#include "contenders/contender.h"

#include <sys/types.h>

/* Starts w's program with stdin on `in_fd` and stdout on `out_fd` (-1: inherited from this
 * process, as are stderr and anything else not close-on-exec). Returns 0 with *pid set, or a
 * negative errno. Called concurrently from several threads in the fan-out. */
typedef int (*pkb_raw_start_fn)(const pkb_workload *w, int in_fd, int out_fd, pid_t *pid);

/* One iteration of any scenario, with `start` as the start step. */
int pkb_raw_run(pkb_raw_start_fn start, const pkb_workload *w, pkb_sample *out);

#endif /* PKB_RAW_H */
