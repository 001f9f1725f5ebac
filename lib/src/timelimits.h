/*
 * A run's time limits as one policy for every platform (timelimits.c): the deadline, the idle
 * limit, a cancel, and the grace between the first signal and SIGKILL. The engines only carry out
 * what it decides (signal the tree, kill it) and sleep until it next needs them.
 */
#ifndef PK_TIMELIMITS_H
#define PK_TIMELIMITS_H

#include "processkit.h"

#include <stdbool.h>
#include <stdint.h>

struct pk__limits {
    int64_t deadline_ns;    /* absolute, 0: none */
    int64_t idle_ns;        /* inactivity limit, 0: none */
    int64_t last_io_ns;     /* the last output (or the start) */
    int64_t grace_ns;       /* from the first signal to SIGKILL, 0: SIGKILL at once */
    int64_t kill_at_ns;     /* while ending with grace: when SIGKILL follows */
    pk_outcome_kind ending; /* 0, or TIMED_OUT / IDLE_TIMED_OUT / CANCELLED once acting */
};

/* What the engine must do now. */
enum pk__limit_action {
    PK__LIMIT_NONE,
    PK__LIMIT_SIGNAL, /* send *signo to the tree (a grace period has begun) */
    PK__LIMIT_KILL,   /* SIGKILL the tree */
};

/* The limits of `cmd` for a run started at start_ns. */
void pk__limits_arm(struct pk__limits *l, const pk_command *cmd, int64_t start_ns);

/* Decides at `now`: the first limit that passed (a cancel first, then the deadline, then the
 * idle limit) starts the end — SIGNAL with cancel_signo or SIGTERM when there is a grace, else
 * KILL — and records which limit fired; once the grace runs out, KILL (once). */
enum pk__limit_action
pk__limits_due(struct pk__limits *l, int64_t now, bool cancelled, int cancel_signo, int *signo);

/* When pk__limits_due next has something to decide (absolute ns), 0: never. */
int64_t pk__limits_next(const struct pk__limits *l);

#endif /* PK_TIMELIMITS_H */
