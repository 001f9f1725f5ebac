/*
 * Start-cost attribution: the series of the phases suite (`pkbench run --suite phases`, whose
 * runner and report live in harness/suites/phases/), which take a Linux start apart.
 *
 * Three kinds of series, all starting the same fixed absolute-path child (the tiny static helper),
 * so no series pays for a program lookup:
 *
 *   phase      a spawn+wait. `os_spawn_plain` (vfork + execve + waitpid) is the floor; every other
 *              phase series adds steps of the library's containment sequence, mirrored with raw
 *              system calls step for step (clone3 with a pidfd, setpgid, PR_SET_PDEATHSIG, a
 *              fresh cgroup leaf), and one way of finding the new child's threads or members:
 *              directly, or by a snapshot of the whole machine. `processkit` is the library's own
 *              spawn into a fresh group, for comparison with the raw sequence.
 *   primitive  one step alone, with no child involved, so no spawn outlier can hide it.
 *   lock       16 parallel spawns, with and without one process-global lock around the clone.
 *
 * Every composite phase series declares, once, in series.c's table next to its code, the
 * primitives it contains (`composition`) and, when it builds on another phase series than
 * os_spawn_plain, that series (`base`). The results file carries both, and the report
 * reconciles: base + the primitives against the measured composite (pkb_reconcile,
 * reconcile.c).
 *
 * This folder is a library like the programs beside it: it uses processkit's public API and
 * reports each iteration through the plugin contract (harness/plugin/sample.h), never through
 * the runner or the suite that drives it.
 */
#ifndef PKB_PHASES_H
#define PKB_PHASES_H

#include "plugin/sample.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* ---- the series ---------------------------------------------------------------------------- */

typedef enum pkb_phase_kind { PKB_KIND_PHASE, PKB_KIND_PRIMITIVE, PKB_KIND_LOCK } pkb_phase_kind;

/* "phase", "primitive", "lock": the `kind` field of a series in the results file. */
const char *pkb_phase_kind_name(pkb_phase_kind kind);

/* The steps a phase series adds to the plain spawn, in the order the library takes them. */
#define PKB_STEP_PIDFD     0x1u /* clone3(CLONE_VM|CLONE_VFORK|CLONE_PIDFD), waitid on the pidfd */
#define PKB_STEP_PGROUP    0x2u /* setpgid(0, 0) in the child */
#define PKB_STEP_PDEATHSIG 0x4u /* PR_SET_PDEATHSIG in the child, then getppid() vs the parent */
#define PKB_STEP_CGROUP    0x8u /* a fresh leaf, CLONE_INTO_CGROUP, cgroup.kill, rmdir */

/* The one-shot ladder: what a raw series takes on top of clone3(CLONE_VM|CLONE_VFORK|
 * CLONE_CLEAR_SIGHAND) reaped by pid — the path pk_run takes when only the exit is awaited. */
#define PKB_ONESHOT_PIDFD       0x1u /* CLONE_PIDFD, waitid(P_PIDFD), close */
#define PKB_ONESHOT_CLOSE_RANGE 0x2u /* close_range(3, ~0) in the child */
#define PKB_ONESHOT_POOLED_LEAF                                                                    \
    0x4u /* CLONE_INTO_CGROUP into a kept leaf, one cgroup.events                                  \
            pread after the reap */
#define PKB_ONESHOT_PROCS_JOIN                                                                     \
    0x8u /* the killed-leaf path: the child writes "0" to the kept                                 \
            leaf's cgroup.procs before exec (instead of being born in                              \
            it), the same pread after the reap */

/* How the launcher finds the new child's threads (or, in a cgroup, its members). */
typedef enum pkb_walk {
    PKB_WALK_NONE,
    PKB_WALK_DIRECT,   /* /proc/<pid>/task; cgroup.procs of the leaf in a cgroup series */
    PKB_WALK_SNAPSHOT, /* every /proc/<n>/task on the machine */
} pkb_walk;

/* What a series needs from the host; without it the series is refused with the reason. */
#define PKB_NEED_CLONE3    0x1u
#define PKB_NEED_CGROUP    0x2u
#define PKB_NEED_SETPGID   0x4u
#define PKB_NEED_BARE_NAME 0x8u /* the bare-name lookup's program in PATH */

/* What a series records from its untimed first iteration into its `extra` fields. */
typedef enum pkb_phase_record {
    PKB_RECORD_NONE,
    PKB_RECORD_THREADS,     /* threads_found: the direct walk's count */
    PKB_RECORD_MEMBERS,     /* members_found: the leaf's cgroup.procs lines */
    PKB_RECORD_MACHINE,     /* processes, threads: the snapshot's counts */
    PKB_RECORD_PROGRAM,     /* program: the absolute path looked up */
    PKB_RECORD_PATH,        /* program, resolved, path_entries, found_in_entry */
    PKB_RECORD_CONTAINMENT, /* containment: the library's group mechanism */
} pkb_phase_record;

typedef struct pkb_phase_run pkb_phase_run;

typedef struct pkb_phase_def {
    const char *group; /* "phase", "primitive", "spawn_lock": the series name is group/name */
    const char *name;
    pkb_phase_kind kind;
    const char *description;
    bool baseline; /* os_spawn_plain: deltas and reconciliations start from it */
    /* Composite phase series: the primitives (by name, group "primitive") it contains besides
     * its base, NULL-terminated (possibly empty when base is set). NULL for the baseline,
     * primitives and lock series. */
    const char *const *composition;
    /* The phase series (by name, group "phase") a composite builds on; NULL: os_spawn_plain. A
     * step only a child can take has no child-less primitive: against its base it is the
     * residual. */
    const char *base;
    unsigned oneshot; /* the one-shot ladder: PKB_ONESHOT_* */
    unsigned steps;   /* phase series: PKB_STEP_* */
    pkb_walk walk;
    unsigned needs; /* PKB_NEED_* */
    pkb_phase_record records;
    int children;                /* children one iteration starts and reaps */
    int calls;                   /* primitives: calls per iteration (0 means 1), so a call of
                                    well under a microsecond is not swamped by the runner's own
                                    per-iteration bookkeeping; the report divides by it */
    bool locked;                 /* lock series: the clone under one process-global lock */
    int (*run)(pkb_phase_run *); /* one iteration: 0 or a negative errno (message in the run) */
} pkb_phase_def;

/* Every series, in report order: phase, primitive, spawn_lock. */
extern const pkb_phase_def pkb_phase_defs[];
extern const size_t pkb_phase_def_count;

/* "phase/os_spawn_plain" -> its definition, or NULL. */
const pkb_phase_def *pkb_phase_find(const char *group, const char *name);

/* ---- running them -------------------------------------------------------------------------- */

typedef struct pkb_phases_env pkb_phases_env;

/* Probes the host once for every series: clone3 (and CLONE_CLEAR_SIGHAND), this process's
 * cgroup v2 directory (from /proc/self/mountinfo and the `0::` line of /proc/self/cgroup) and
 * whether a leaf can be made there, whether setpgid works here, PATH. `child` is the absolute
 * path of the tiny helper. Returns 0 or a negative errno (-ENOMEM, or the child is not an
 * executable absolute path). Leaves of a dead earlier run ("pkb-phases-<pid>-*") are removed. */
int pkb_phases_env_open(const char *child, pkb_phases_env **env);

/* Removes the probe leaf and frees the environment. Accepts NULL. */
void pkb_phases_env_close(pkb_phases_env *env);

/* The results file's top-level "phases" object: the child, the clone flags, cgroup
 * availability, setpgid, PATH, and the machine's process and thread counts. New reference. */
json_t *pkb_phases_env_json(const pkb_phases_env *env);

/* Prepares one series: its state (the lock series' 16 threads), then one untimed iteration that
 * must succeed, reap its children with exit 0, leave no leaf, and (for a /proc walk) find the
 * child. Returns 0 with *run set, or a negative errno with a one-line reason in `why`: the
 * series is refused, never timed. */
int pkb_phase_run_open(
    const pkb_phase_def *def, pkb_phases_env *env, pkb_phase_run **run, char *why, size_t why_len);

/* One iteration (a pkb_iterate_fn: ctx is the pkb_phase_run). */
int pkb_phase_iterate(void *run, pkb_sample *out);

/* The series' `extra` fields: kind, composition, steps, walk, and what it observed (threads and
 * processes seen, PATH entries, ...). New reference. Works on a NULL run (a refused series). */
json_t *pkb_phase_extra(const pkb_phase_def *def, const pkb_phase_run *run);

/* Stops the series' threads and frees it. Accepts NULL. */
void pkb_phase_run_close(pkb_phase_run *run);

/* ---- reconciliation ------------------------------------------------------------------------ */

/* A composite is flagged when |residual| > max(MIN_FRACTION x measured, SD_FACTOR x combined sd).
 */
#define PKB_RECON_MIN_FRACTION 0.05
#define PKB_RECON_SD_FACTOR    2.0

typedef struct pkb_recon_term {
    double mean_ns;
    double sd_ns; /* the sample standard deviation; NaN (one sample) counts as 0 */
} pkb_recon_term;

typedef struct pkb_reconciliation {
    double predicted_ns;      /* plain + every part */
    double measured_ns;       /* the composite's mean */
    double residual_ns;       /* measured − predicted */
    double residual_fraction; /* residual / measured */
    double combined_sd_ns;    /* sqrt(sd² of the composite + of plain + of every part) */
    double threshold_ns;      /* max(MIN_FRACTION x measured, SD_FACTOR x combined sd) */
    bool flagged;             /* |residual| > threshold */
} pkb_reconciliation;

/* Reconciles a composite with the plain spawn plus the primitives it contains. A pure function of
 * its arguments. Returns 0, or -EINVAL when a mean is not a positive finite number, an sd is
 * negative or infinite, or parts is NULL with nparts > 0. */
int pkb_reconcile(pkb_recon_term composite,
                  pkb_recon_term plain,
                  const pkb_recon_term *parts,
                  size_t nparts,
                  pkb_reconciliation *out);

#endif /* PKB_PHASES_H */
