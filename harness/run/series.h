/*
 * series — what a suite hands the runner (run/run.h, which includes this header): the series it
 * built (pkb_series), the profile and the run's options, and what every layer of the runner does
 * with a series (series.c: freed, written as the results file holds it, its disturbed share). The
 * bottom of the run room: the orchestrator (run.c), re-measuring (remeasure.c), the rounds
 * (rounds.c) and the collection layer (collect.c) all build on it, and it on none of them.
 */
#ifndef PKB_RUN_SERIES_H
#define PKB_RUN_SERIES_H

#include "common/buf.h"
#include "results/results.h"
#include "plugin/sample.h"

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

/* One measurement of a series: per-repetition arrays of nreps entries each (owned). */
typedef struct pkb_attempt {
    size_t nreps;
    double *samples_ns, *child_cpu_ns, *parent_cpu_ns;
    long long *iterations;
    pkb_disturbance *disturb;
    int *round; /* the round each repetition was taken in (rounds mode; 0 otherwise) */
} pkb_attempt;

/* Which build a series measures in `pkbench ab` (two builds in one run): none in a run. */
typedef enum pkb_side { PKB_SIDE_NONE = 0, PKB_SIDE_BASE, PKB_SIDE_HEAD } pkb_side;

typedef struct pkb_series {
    /* set by the suite */
    char name[160]; /* what --filter matches, e.g. "spawn_capture_small/processkit" */
    char scenario[64];
    char contender[64];
    const char *description;
    const char *unit;          /* throughput unit */
    double work_per_iteration; /* in the unit's numerator: runs, MiB, children */
    bool baseline;
    bool control; /* code that cannot change with the library: a drift control (results.h) */
    /* pkbench ab: the build this series measures. A suite lists a pair's two sides next to each
     * other, base first; the rounds then keep them together (run.c, "Two sides"). */
    pkb_side side;
    pkb_iterate_fn iterate;
    void *ctx;
    /* Optional, rounds mode: called before each measured sample (untimed, before its settling
     * calls; `renewing` below) to start the series' measuring process afresh. A process keeps what
     * it happened to get for its whole life (its addresses, its heap's layout, its cgroup leaf),
     * and that can shift its times by several percent; in one long-lived process per series it
     * would stay with one side of `pkbench ab` for the whole run, where pairing by round cannot see
     * it. A process per round makes it noise of the round, which the paired CI counts. 0, or a
     * negative errno with a reason in why. */
    int (*renew)(void *ctx, char *why, size_t why_len);
    /* When set, every timed iteration must reproduce these exactly (else the series fails). */
    bool check_counts;
    uint64_t expect_bytes, expect_lines;
    int expect_children;
    json_t *extra; /* suite-specific fields merged into the series object (owned, may be NULL) */

    /* filled by the runner (a suite that measures itself fills them too) */
    pkb_series_status status;
    char reason[256];
    bool environmental; /* refused or failed for a reason of the host, set by the suite */
    size_t nreps;
    double *samples_ns, *child_cpu_ns, *parent_cpu_ns; /* parent: every thread of pkbench */
    long long *iterations;
    pkb_disturbance *disturb; /* what disturbed each repetition (run/disturb.h) */
    int *round; /* rounds mode: the round of each repetition, counted over the whole run (a
                   re-measure's rounds continue the count); 0 in a sequential run */
    pkb_disturbance *calls; /* ... each call of the benchmark function */
    size_t ncalls, capcalls;
    long long rounds_iterations; /* rounds mode: the iteration count round 0 sized */
    pkb_calibration calib;       /* ... and how (run/calibrate.h) */
    bool calibrating;            /* round 0 is running it: its calls are candidates */
    bool recalibrate;            /* round 0 saw a disturbed call: calibrate once more */
    double settle_s; /* this call: the series' own iterations, untimed, this long before the
                        timed ones (rounds' measured calls; run.c, "Settling") */
    bool renewing;   /* this call is a measured round's: renew (above) first */
    /* Rounds until decided (run.c, "Rounds until decided"): settled, it takes no more rounds
     * (its samples stay). */
    bool retired;
    /* Re-measured ("Re-measuring" in run.c): `other` is the attempt the fields above do not
     * hold; other_first says it was measured first. */
    bool remeasuring, remeasured, other_first;
    pkb_attempt other;
    bool done;
    /* Self-timed (plugin/sample.h): the iterations were performed and timed by another process
     * (a worker, contenders/worker.h), whose own CPU is then parent_cpu_ns; the largest peak
     * resident memory (KiB) and descriptors in flight it reported, and its fewest descriptors
     * before a start (0: not reported). Written into the series' JSON when set. */
    bool self_timed;
    uint64_t peak_rss_kib;
    uint32_t peak_fds, idle_fds;
    /* Progress: the series' place among those the runner times (1-based; 0: not timed), and
     * whether its line was printed. */
    size_t line_no;
    bool shown;
} pkb_series;

typedef struct pkb_profile {
    const char *name;  /* "full", "quick" */
    int repetitions;   /* samples per series */
    double warmup_s;   /* discarded before the first sample */
    double min_time_s; /* per sample */
    double priming_budget_s;
    double settle_s; /* rounds: untimed calls of the series itself before each sample */
} pkb_profile;

/* What the runner tells a caller deciding whether to add rounds (pkb_suite_options.more_rounds). */
typedef struct pkb_rounds_look {
    const char *path; /* the results file, just rewritten with every round so far */
    int rounds;       /* measured rounds so far */
    double elapsed_s; /* since the first measured round began */
    double round_s;   /* how long one round of the series still in play took, lately */
    size_t n;         /* series, in the order the file lists them (retire[] has n entries) */
} pkb_rounds_look;

typedef struct pkb_suite_options {
    const char *suite;
    const pkb_profile *profile;
    const char *out_path;
    const char *filter; /* recorded in the file; the suite has applied it */
    bool prime;         /* spawn children until batch times settle before the first series */
    int argc;
    char **argv;           /* the command line, recorded */
    json_t *suite_section; /* merged into the results document under the suite's name */

    /* Rounds (run.c, "Rounds"): `interleave` samples the series in rounds, one repetition of
     * every series per round, instead of one series after another (pkbench's default; false is
     * --sequential); `aa` also runs an identical second copy (B) of every series next to it in
     * each round and writes each series' minimum detectable effect at `aa_alpha` (0: 0.05) into
     * the top-level "noise_floor" object. A suite that measures itself sets `interleave` when it
     * samples in rounds of its own. */
    bool interleave;
    bool aa;
    double aa_alpha;
    /* Rounds: before each measured sample the series runs untimed for this long, so the sample
     * starts in the series' own steady state and not in what the series before it left
     * (run.c, "Settling"); pkbench passes the profile's settle_s or --settle. 0: none. */
    double settle_s;
    /* A suite that measures before calling pkb_run_series (forkathon) sets these at its start,
     * so `created` and the environment's start fields describe the start of the measurement;
     * NULL: now. `environment` is borrowed (the end fields are added to it). */
    const char *created;
    json_t *environment;
    /* A suite that hands its settled series over more than once (observe: after every
     * repetition) sets this on every write but the last: the file then says complete: false. */
    bool partial;
    /* Progress: after the file was rewritten with a newly finished series, the runner prints one
     * line for it (stderr): its position, its name, what this function appends to `out` — the
     * series' summary as read back from the file at `path` (suites/suite.h's
     * pkb_report_series_line) — and the time left. Returns 0 or a negative errno. NULL, or an
     * error: the line gives the series' status only. */
    int (*series_line)(const char *path, const char *name, pkb_buf *out);
    /* Rounds until decided (rounds mode; pkbench ab). NULL: the profile's repetitions. Otherwise
     * after the profile's repetitions, and after every block of rounds since, the file rewritten,
     * the runner calls more_rounds(more_user, look, retire, &more): it sets `more` to the rounds
     * to add (0: stop) and retire[i] for every series i (in the file's order) that is settled
     * and takes no more rounds, and returns 0, or a negative errno to stop the run. Such a run
     * measures nothing again (no re-measure): whoever decides reads every round. `max_time_s`
     * (0: none) is the budget it decides within, for the announcement. */
    int (*more_rounds)(void *user, const pkb_rounds_look *look, bool *retire, int *more);
    void *more_user;
    double max_time_s;
    /* pkbench ab: the document's top-level "ab" object (borrowed; the document holds it, so
     * what more_rounds adds to it is in every later write). NULL: none. */
    json_t *ab;
    /* pkbench run --build: the top-level "build" object, the build whose worker ran the
     * contenders (borrowed). NULL: none. */
    json_t *build;
} pkb_suite_options;

/* Set by pkbench's SIGINT/SIGTERM handler; the runner stops at the next iteration and writes
 * every finished series. */
extern volatile sig_atomic_t pkb_interrupted;

/* A series with more than this share of its repetitions disturbed is re-measured once. */
#define PKB_REMEASURE_SHARE 0.25

void pkb_series_free(pkb_series *s);

/* The series as the results file holds it (results.h's pkb_results_series_json). New reference. */
json_t *pkb_series_json(const pkb_series *s);

/* The series' record for the results writer (results.h): its own fields and the arrays of the
 * attempt it uses (pkb_series_json adds both attempts of a re-measured series). */
pkb_series_record pkb__series_record(const pkb_series *s);

/* The share of a series' repetitions marked disturbed (run/disturb.h). */
double pkb__disturbed_share(const pkb_series *s);

#endif /* PKB_RUN_SERIES_H */
