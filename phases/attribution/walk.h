/*
 * Finding a child's threads or a group's members after a spawn, two ways: directly (the child's
 * own /proc/<pid>/task, or the leaf's cgroup.procs) or by a snapshot of the whole machine (every
 * /proc/<n>/task). They are the Linux analogues of the seed's per-process NtGetNextThread walk and
 * the system-wide ToolHelp snapshot: same answer for the child, very different cost, and the
 * snapshot's cost grows with everything else running on the machine.
 *
 * All three read directories and files with raw getdents64/read into stack buffers: no
 * allocation, so a walk costs what the kernel charges for it and nothing else.
 */
#ifndef PKB_PHASES_WALK_H
#define PKB_PHASES_WALK_H

#include <stddef.h>

typedef struct pkb_walk_counts {
    size_t processes;      /* process directories visited (1 for a direct walk) */
    size_t threads;        /* thread entries seen in all of them */
    size_t target_threads; /* thread entries of the target pid (0: not seen) */
} pkb_walk_counts;

/* The entries of /proc/<pid>/task. Returns 0 or a negative errno (-ENOENT: no such process). A
 * zombie that has not been reaped still lists its one thread. */
int pkb_walk_direct(int pid, pkb_walk_counts *out);

/* Every /proc/<n>/task on the machine, counting processes and threads, and the threads of `pid`
 * among them. A process that exits during the scan is skipped. Returns 0 or a negative errno. */
int pkb_walk_snapshot(int pid, pkb_walk_counts *out);

/* The members of a cgroup: the lines of cgroup.procs under `cgroup_dirfd` (an O_PATH directory
 * descriptor is enough). An exited process is no member, even before it is reaped. Returns 0 or
 * a negative errno. */
int pkb_walk_cgroup(int cgroup_dirfd, size_t *members);

#endif /* PKB_PHASES_WALK_H */
