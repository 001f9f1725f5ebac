/*
 * Private to the phases suite's series (env.c, series.c, run.c here): the probed environment,
 * cgroup leaves, child stacks, and a series being run. The raw clone3 the sequence series use is
 * phases/raw_clone3.h.
 */
#ifndef PKB_PHASES_INTERNAL_H
#define PKB_PHASES_INTERNAL_H

#include "phases/attribution/phases.h"
#include "phases/attribution/walk.h"
#include "phases/raw_clone3.h"

#include <limits.h>
#include <stdint.h>

/* A child stack: 64 KiB above a guard page, like the library's per-thread stack. */
#define PKB__STACK_SIZE (64 * 1024)

typedef struct pkb__stack {
    unsigned char *base; /* the mapping, guard page first */
    unsigned char *low;  /* the lowest usable byte: clone3's .stack */
    size_t len;
} pkb__stack;

int pkb__stack_map(pkb__stack *s);
void pkb__stack_unmap(pkb__stack *s);

struct pkb_phases_env {
    char child[PATH_MAX]; /* the tiny helper, absolute */
    char *argv[2];
    int self_pid;
    pkb__stack stack; /* the sequence series' child stack (the parent waits: one is enough) */

    bool clone3_ok, clear_sighand;
    char clone3_why[160];

    int pgid; /* our own process group: the setpgid primitive joins it again */
    bool setpgid_ok;
    char setpgid_why[160];
    int own_pdeathsig; /* the pdeathsig primitive sets this, the value we already have */

    bool cgroup_ok;
    char cgroup_dir[PATH_MAX]; /* this process's cgroup v2 directory, "" when none */
    char cgroup_why[PATH_MAX + 96];
    int cgroup_fd; /* O_PATH of cgroup_dir; leaves are made under it */
    int probe_fd;  /* an empty leaf (locked) kept for the cgroup.kill and cgroup.procs primitives */
    char probe_name[64];
    /* A leaf kept for the one-shot ladder, never killed (children are born in it, as in the
     * library's pool): its locked descriptor, its cgroup.events, its cgroup.procs for the
     * killed-leaf path, and for reading. It is held, as the library holds a leaf it lends again: a
     * child of ours sleeps in it (pool_holder), so the ladder's runs never flip it between
     * populated and empty, and "<holder pid>\n" alone in its cgroup.procs means empty. */
    int pool_fd, pool_events_fd, pool_procs_fd, pool_procs_rd;
    int pool_holder; /* 0: none (the leaf then reads empty when cgroup.procs is) */
    char pool_holder_line[16];
    size_t pool_holder_len;
    char pool_name[64];
    int null_fd;          /* /dev/null, kept open for the raw capture loop */
    unsigned long leaves; /* leaves made so far: the next name */
    char leaf_tag[9];     /* 8 hex digits drawn at open: this process's leaves' names */

    const char *bare_name; /* the bare-name lookup's program */
    char bare_path[PATH_MAX];
    bool bare_ok;
    char bare_why[160];
    size_t path_entries;
    int bare_found_in; /* 1-based PATH entry of the hit, 0 when not found */

    pkb_walk_counts machine; /* one snapshot when probed */
};

#define PKB__LEAF_PREFIX "pkb-phases-"

/* The name of this process's leaf number n: "pkb-phases-<pid>-<tag>-<n>". */
void pkb__leaf_name(const pkb_phases_env *e, unsigned long n, char *name, size_t cap);

/* Makes a fresh leaf under the environment's cgroup: mkdir, then a descriptor of it (what
 * CLONE_INTO_CGROUP takes) holding its flock, as the library's leaves do (env.c). Returns 0 or a
 * negative errno. */
int pkb__leaf_make(pkb_phases_env *e, char *name, size_t cap, int *dirfd);

/* Closes dirfd (when >= 0) and removes the leaf; an exited task can still pin it for a moment,
 * so EBUSY is retried for up to a second. Returns 0 or a negative errno. */
int pkb__leaf_remove(pkb_phases_env *e, const char *name, int dirfd);

/* ---- the one-shot ladder and the capture path (oneshot.c) ----------------------------------- */

int pkb__run_oneshot(pkb_phase_run *run);          /* the raw ladder, by def->oneshot */
int pkb__run_pk_contained(pkb_phase_run *run);     /* pk_run, inherited streams, default group */
int pkb__run_pk_uncontained(pkb_phase_run *run);   /* the same with PK_CONTAIN_NONE */
int pkb__run_pk_defaults(pkb_phase_run *run);      /* pk_run with every default */
int pkb__run_vfork_pipes_poll(pkb_phase_run *run); /* the raw capture loop */
int pkb__run_events_read(pkb_phase_run *run);      /* primitive: one pread of cgroup.events */
int pkb__run_held_procs_read(
    pkb_phase_run *run); /* primitive: one pread of the held leaf's procs */

/* ---- a series being run (run.c) ------------------------------------------------------ */

#define PKB__LOCK_SPAWNS 16

struct pkb__lock_pool;

struct pkb_phase_run {
    const pkb_phase_def *def;
    pkb_phases_env *env;
    char error[160];      /* why the last iteration failed */
    pkb_walk_counts walk; /* what the last walk saw */
    size_t members;       /* ... in a leaf's cgroup.procs */
    struct pkb__lock_pool *lock;
};

/* A lock series' PKB__LOCK_SPAWNS threads start in its first iteration (series.c); this
 * stops and joins them. Safe when they are not running. */
void pkb__lock_release(pkb_phase_run *run);

#endif /* PKB_PHASES_INTERNAL_H */
