/*
 * drift — how much the machine changed between two runs, measured from their control series, and
 * the other series corrected for it: what lets `pkbench compare` tell "the machine got slower"
 * from "the code got slower" (METHODOLOGY.md, "Comparing two separate runs: machine drift").
 *
 * A control is a series whose code cannot change with the library under test (results.h's
 * `control`: the raw posix_spawn, vfork_exec and fork_exec contenders and the pure-CPU
 * calibration/cpu_loop). Between two runs of one machine its times move only with the machine.
 *
 * The model. In file f (base or new), the sample of series s taken in round r is
 *
 *     x(s, f, r) = μ(s) · δ(s)^[f = new] · m(f, r) · ε
 *
 * μ the series' own cost, δ the change under test (1 for a control, by definition), m the
 * machine's state — shared and multiplicative: every series taken in the same round of the same
 * run is slowed by the same factor — and ε the series' own noise. The controls of a group (a
 * scenario's controls; `all` for every control) estimate m round by round:
 *
 *     g(f, r) = geometric mean over the group's controls k of  x(k, f, r) / median of k in base
 *
 * (each control divided by its own base median first, so controls of different cost weigh
 * alike), and each sample of a series becomes a ratio to its round's index,
 *
 *     y(s, f, r) = x(s, f, r) / g(f, r),
 *
 * in which m cancels and δ remains: the verdict on y (results/verdict.h's, unchanged) is the
 * drift-corrected verdict. Dividing by g(f, r) also adds the controls' own noise; it is kept only
 * when it leaves the series' samples (both files together) no more spread than they were (robust
 * spread, MAD / median) — the series moves with its round's controls. Otherwise, as below, the
 * run's index corrects the drift alone. A round is paired by its number in the file (`round`),
 * which counts a re-measure's rounds after the first ones, so a re-measured series meets the
 * controls measured with it (every attempt of a control is used), never the first rounds' controls.
 * When a sample's round has no control of the group (a series re-measured alone, a file without
 * `round`), the whole series falls back to the run's index: y = x / median over rounds of g(f, r).
 *
 * The drift itself, per group: the geometric mean over its controls of median(new) / median(base),
 * with a percentile-bootstrap CI that resamples rounds (the same positions for every control, so
 * their shared state stays together), and its spread: how far the group's controls moved apart
 * — the between-run noise floor of a corrected series (none of them changed, yet they disagree by
 * that much), which compare adds to a corrected verdict's bar. A group cannot be corrected — its
 * series are undecidable, "machine changed" — when
 *   - its drift is too large: |drift − 1| above opts.limit (the model's assumptions are the
 *     weaker the larger the change), or
 *   - its controls disagree: two of them whose ratios' 95% CIs do not overlap and differ by more
 *     than opts.threshold, i.e. the machine did not slow everything alike, or
 *   - it is uneven: its drift and that of every control together differ by more than
 *     PKB_DRIFT_UNEVEN_ABOVE. Beside a CPU hog the fan-out's thread-per-child controls slowed by
 *     2-37% and the single-threaded event loops' fan-outs by 17-74%, the machine as a whole by
 *     48-115%: the scenario's controls no longer shared its series' exposure, and the whole
 *     machine said so; or
 *   - another scenario is uneven — one with series to judge (the calibration loop, alone in its
 *     scenario, is pure CPU and never moves with spawns): then the machine did not slow its
 *     scenarios alike, and no scenario's controls are trusted to stand for their series. On a
 *     quieter host a single hog slowed the fan-out by 23-35% and the other scenarios' controls
 *     by -3% to +8%, yet GLib's streaming moved +7% to +42% and the event loops' spawn_only -4% to
 *     -14% beside them: corrected scenario by scenario, 5 of 8 such pairs reported changes. No
 *     A/A or slowed pair of two studies had a scenario more than 12.7% from the whole.
 */
#ifndef PKB_REGRESS_DRIFT_H
#define PKB_REGRESS_DRIFT_H

#include "common/stats.h"
#include "results/results.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PKB_DRIFT_DEFAULT_LIMIT 0.25 /* |drift| beyond 25%: the machine changed too much */
/* A scenario's drift more than 15% away from that of every control together: the machine did not
 * slow everything alike (reports/notes/2026-12-02-drift-study.md: on a quiet machine, 20 A/A and
 * 20 slowed pairs, no scenario's drift was more than 12% from the whole; beside a CPU hog the
 * fan-out's was 28-40%). */
#define PKB_DRIFT_UNEVEN_ABOVE 0.15
#define PKB_DRIFT_ALL          "all" /* the group of every control */

/* Options; all-zero means the defaults noted. */
typedef struct pkb_drift_options {
    double limit;      /* largest |drift − 1| corrected, a fraction; 0: PKB_DRIFT_DEFAULT_LIMIT */
    double threshold;  /* controls disagree only by more than this (and beyond their CIs); 0:
                          none beyond the CIs */
    size_t iterations; /* bootstrap resamples; 0: PKS_BOOTSTRAP_DEFAULT_ITERATIONS */
    uint64_t seed;     /* bootstrap seed; 0: PKB_VERDICT_SEED */
} pkb_drift_options;

/* One control measured in both files. */
typedef struct pkb_drift_control {
    char *name, *scenario; /* the series' (owned: the files are freed after compare) */
    pks_interval ratio;    /* median(new) / median(base), bootstrap CI of its own samples */
    double scale;          /* its base median: every sample is divided by it */
    double *by_round[2];   /* [0] base, [1] new: sample / scale at index round (1-based);
                              NaN where it has none (owned) */
    size_t nrounds[2];     /* entries of by_round[f] (the largest round + 1) */
} pkb_drift_control;

typedef enum pkb_drift_state {
    PKB_DRIFT_OK = 0,       /* corrected */
    PKB_DRIFT_TOO_LARGE,    /* |drift − 1| above the limit */
    PKB_DRIFT_INCONSISTENT, /* two controls disagree */
    PKB_DRIFT_UNEVEN,       /* far from the drift of every control together */
} pkb_drift_state;

/* A group of controls: those of one scenario, or PKB_DRIFT_ALL. */
typedef struct pkb_drift_group {
    char *name;            /* a scenario, or PKB_DRIFT_ALL (owned) */
    size_t *members;       /* indexes into pkb_drift.controls (owned) */
    size_t n;              /* ≥ 1 */
    pks_interval ratio;    /* the group's drift: geomean of the members' ratios, with its CI */
    double spread;         /* how far its controls moved apart: the largest |ratio_k / ratio − 1|
                              over its members (0 with one). Controls cannot have changed, so a
                              series corrected by this group must move more than this to be
                              called changed (compare adds it to the bar) */
    pkb_drift_state state; /* OK, or why its series cannot be corrected */
    size_t disagree[2];    /* INCONSISTENT: the two controls (indexes into controls) */
} pkb_drift_group;

typedef struct pkb_drift {
    bool available;         /* both files hold controls measured in both, taken in rounds */
    char why_not[200];      /* when not available: why, in words ("base has no control series") */
    pkb_drift_options opts; /* as used: defaults filled in */
    pkb_drift_control *controls;
    size_t ncontrols;
    pkb_drift_group *groups; /* groups[0] is PKB_DRIFT_ALL; then one per scenario with controls */
    size_t ngroups;
    const pkb_drift_group *uneven; /* the first uneven scenario with series to judge, which makes
                                      every scenario uneven; NULL when none is */
} pkb_drift;

/* Estimates the drift from `base` to `cand` (the series marked control in both, measured in both,
 * whatever a --filter selects). A pair of files without usable controls is not an error: *out is
 * filled with available false and why_not set. Returns 0, or -ENOMEM / -EINVAL (a sample the
 * statistics reject) with a one-line message in err; on error *out needs no freeing. */
int pkb_drift_estimate(const pkb_results *base,
                       const pkb_results *cand,
                       const pkb_drift_options *opts,
                       pkb_drift *out,
                       char *err,
                       size_t err_len);

/* The group that corrects a series of `scenario`: that scenario's controls when it has any, else
 * every control (groups[0]). NULL when the drift is not available. */
const pkb_drift_group *pkb_drift_group_for(const pkb_drift *d, const char *scenario);

/* The samples of a series, `b` in base and `n` in new, as ratios to group g's index (see the top
 * of this file): yb[0..b->n) and yn[0..n->n), caller-allocated. *by_round says whether every
 * sample was paired with its own round (else both sides used the run's index: a sample without
 * its round's controls, or pairing that would have spread the samples more). Returns 0, or
 * -EDOM when the group has no sample in a file at all. */
int pkb_drift_correct(const pkb_drift *d,
                      const pkb_drift_group *g,
                      const pkb_results_series *b,
                      const pkb_results_series *n,
                      double *yb,
                      double *yn,
                      bool *by_round);

/* "corrected", "too large", "controls disagree", "uneven". */
const char *pkb_drift_state_name(pkb_drift_state s);

/* Why group g cannot be corrected, in words: "drift +31.2% beyond the 25.0% limit" or "controls
 * disagree: a +12.0% [+8.1%, +15.3%] vs b -3.1% [-5.0%, -1.2%]"; "" when it can. */
void pkb_drift_why(const pkb_drift *d, const pkb_drift_group *g, char *buf, size_t len);

void pkb_drift_free(pkb_drift *d);

#endif /* PKB_REGRESS_DRIFT_H */
