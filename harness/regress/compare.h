/*
 * compare — `pkbench compare`: did a change make any series slower? Two results files (base and
 * new) matched series by series, or one file's contenders against one of them per scenario.
 *
 * Per compared series (stats.h does every computation; nothing is re-implemented here):
 *
 *     medians of both samples (samples_ns), ratio = median(new) / median(base) with its seeded
 *     percentile-bootstrap 95% CI (pks_series_compare), the Mann-Whitney U p-value (exact when
 *     both samples have ≤ 50 values and no ties, else the normal approximation with tie
 *     correction), then Holm's correction over every compared series (pks_holm), then
 *
 *         verdict = pks_decide(p_holm < alpha AND |ratio − 1| > max(threshold, noise floor))
 *
 *     where the noise floor is the series' minimum detectable effect from the base file's A/A run
 *     (`noise_floor`, written by `pkbench run --aa`), 0 when the base file has none. A series with
 *     fewer than 6 samples on either side, or a coefficient of variation above the limit, is
 *     undecidable (pks_check_samples), and says which and why.
 *
 *     The coefficient of variation is the robust one, PKS_MAD_NORMAL_SCALE · MAD / median (for a
 *     normal sample it estimates sd / mean): the verdict rests on medians and ranks, which one
 *     outlier does not move, so one outlier — a neighbour's burst during one repetition — must not
 *     make a series undecidable either; a sample whose bulk is spread (two modes, drift) still is.
 *
 * The statistics are results/verdict.h's, the ones the report's conclusions use.
 *
 * Plus a geometric-mean row over the ratios of every decided series, the series present in only
 * one file, the series present in both but not measured in one (refused or failed), the
 * environment keys whose values differ between the two files, and the run settings that differ
 * (profile, repetitions, time per sample, warm-up, interleaving).
 *
 * The gate fails safe: a series the base file measured that the new file lacks, or holds failed
 * or refused by its correctness check, counts as a regression; refused or failed for a reason of
 * the host (the series says `environmental`: no cgroup delegated, not a session leader, ...)
 * counts as undecidable, with the reason.
 *
 * Machine drift (two files; drift.h has the model): the series marked `control` in both files
 * (code that cannot change with the library) measure how much the machine itself changed between
 * the runs. Every other series is then judged on its drift-corrected samples — each divided by
 * its round's control index — so "the machine got slower" is not reported as "the code got
 * slower"; the bar of a corrected series also covers how far its controls moved apart (the
 * group's spread: none of them changed, so a series must move more than they disagree to be
 * called changed). A control is shown with its ratio and never gets a verdict of its own. When the
 * drift of a series' control group is too large or its controls disagree, the series is
 * undecidable, "machine changed" (exit 3). The raw verdicts are kept beside the corrected ones
 * (pkb_compare_row.raw, the `raw` counts) and are the gate's with no_drift_correction, or when
 * the files have no controls taken in rounds (the reason is given).
 *
 * Exit status of a comparison (pkb_compare.status): 2 when a series regressed or is missing from
 * the new file; else 3 when a series was undecidable (machine changed included) or could not run
 * there for an environmental reason; else 0. Errors (1 for the command line) are the negative
 * returns of pkb_compare_files.
 */
#ifndef PKB_COMPARE_H
#define PKB_COMPARE_H

#include "common/stats.h"
#include "regress/drift.h"
#include "results/verdict.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The environment keys compared by default: a difference in any of them makes two files' times
 * hard to compare. Load, process counts and the git commit are expected to differ. A key is looked
 * up in `environment`, then in `settings` (where the runner records cpu_affinity: pinned and
 * unpinned spawn timings differ by up to 2x on a small VM). */
#define PKB_COMPARE_ENV_KEYS "cpu_model,kernel,build_type,spawn_mechanism,cpu_affinity"

/* |delta| at or below 5% is never reported between two files; contenders of one file use the
 * report's 10% negligible-overhead threshold, so compare --baseline-contender and the report
 * agree. */
#define PKB_COMPARE_DEFAULT_THRESHOLD            PKB_VERDICT_THRESHOLD
#define PKB_COMPARE_DEFAULT_CONTENDERS_THRESHOLD PKB_VERDICT_NEGLIGIBLE
#define PKB_COMPARE_DEFAULT_SEED                 PKB_VERDICT_SEED

typedef enum pkb_compare_format {
    PKB_COMPARE_TEXT = 0, /* an aligned table for a terminal */
    PKB_COMPARE_MD,       /* a Markdown table */
    PKB_COMPARE_JSON,     /* schema "pkbench-compare", version 1 */
} pkb_compare_format;

/* Options; all-zero (or NULL) gives the defaults noted. */
typedef struct pkb_compare_options {
    double alpha;       /* family-wise significance level, in (0, 1); 0: 0.05 */
    double threshold;   /* smallest |delta| reported, a fraction; 0: 5% (two files) or 10%
                           (--baseline-contender); negative: none */
    double cv_limit;    /* largest coefficient of variation of a decidable sample; 0: 10%;
                           negative: no limit */
    const char *filter; /* extended regex over row names; NULL: every series */
    const char *baseline_contender; /* one file: per scenario, <scenario>/<this> is the base of
                                       every other <scenario>/<contender>; NULL: two files */
    const char *env_keys;           /* comma-separated keys of `environment` (else `settings`) to
                                       compare; NULL: PKB_COMPARE_ENV_KEYS; "": none */
    bool strict_env;                /* a differing key is an error (-EPROTO) instead of a warning */
    size_t iterations;              /* bootstrap resamples; 0: 10000 */
    uint64_t seed;            /* bootstrap seed (mixed with each series' name); 0: the default */
    bool no_drift_correction; /* judge the raw samples; the drift is still measured and shown */
    double drift_limit;       /* largest |drift| corrected, a fraction; 0: 25% */
} pkb_compare_options;

typedef struct pkb_compare_row {
    char *name;              /* the row: the series (two files), or <scenario>/<contender> */
    char *base_name;         /* the series it is compared with (the same name with two files) */
    pks_series s;            /* medians, CI of the ratio, Mann-Whitney (raw p) */
    double cv_base, cv_cand; /* the robust coefficients of variation the noise check used */
    double p_holm;           /* p after Holm's correction over every row */
    double noise_floor;      /* the MDE used from the base file's A/A run; 0 when unknown */
    pks_decision d;          /* verdict, why undecidable, and the bar |delta| had to pass */
    bool paired;             /* one file's series paired by round: s.ratio, s.delta and the p are
                                the per-round ratios' (results/verdict.h) */
    pks_paired pair;         /* when paired */
    /* The fields above are the gate's: drift-corrected when `corrected`. */
    bool control;          /* a drift control in both files: shown, never a verdict (d is its raw
                              one, not counted) */
    bool corrected;        /* judged on drift-corrected samples (medians then in base-machine ns) */
    bool by_round;         /* ... each sample paired with its own round's controls (else with the
                              run's index) */
    bool machine_changed;  /* its control group could not be corrected: undecidable */
    double control_spread; /* corrected: its group's spread (drift.h), part of the bar */
    const pkb_drift_group *group; /* the controls that corrected it (or could not); NULL: none */
    pkb_verdict raw; /* on the raw samples, Holm over the non-control rows: its statistics (its
                        inputs NULL: the files' samples are freed after the comparison) */
    /* pkbench ab (one file, two sides; regress/ab.h): the look whose statistics the fields above
     * are (0-based; -1: none had enough rounds), its rounds and nominal level; decided by the
     * sequential rule before the last look (`ab_unchanged`: within the bar), judged at the last
     * look, or still open when the run stopped (then undecidable). */
    int ab_look, ab_rounds;
    double ab_level, ab_ci_level; /* the look's nominal level, and its CI's (0: 95%) */
    bool ab_decided, ab_unchanged, ab_final, ab_open;
} pkb_compare_row;

/* What a note about a series not compared does to the exit status. */
typedef enum pkb_compare_note_kind {
    PKB_NOTE_INFO = 0,    /* nothing: e.g. the base file did not measure it */
    PKB_NOTE_MISSING,     /* 2: measured in base, failed or refused by its check in new */
    PKB_NOTE_ENVIRONMENT, /* 3: measured in base, could not run in new for a reason of the host */
} pkb_compare_note_kind;

typedef struct pkb_compare_note {
    char *name; /* a series */
    char *why;  /* e.g. "refused in new: ..." */
    pkb_compare_note_kind kind;
} pkb_compare_note;

typedef struct pkb_compare_env_diff {
    char *key, *base, *cand; /* values as text; "(absent)" when a file lacks the key */
} pkb_compare_env_diff;

typedef struct pkb_compare {
    char *base_path, *cand_path; /* cand_path NULL when comparing contenders in one file */
    pkb_compare_options opts;    /* as used: defaults filled in; its strings are the caller's,
                                    borrowed, and must outlive the comparison */
    bool noise_floor_known;      /* the base file carries an A/A noise floor */
    double noise_floor_alpha;    /* ... measured at this alpha (recomputed at opts.alpha when the
                                    file keeps the A/A samples and the two differ) */

    pkb_compare_row *rows; /* base file order (two files) or file order (contenders) */
    size_t nrows;
    char **only_base, **only_cand; /* series (matching the filter) present in one file only */
    size_t nonly_base, nonly_cand;
    char **absent; /* of only_base, those the base measured: missing from the new file */
    size_t nabsent;
    pkb_compare_note *skipped; /* present in both, not measured in one; or no base contender */
    size_t nskipped;
    pkb_compare_env_diff *env; /* differing environment keys */
    size_t nenv;
    pkb_compare_env_diff *settings; /* differing run settings: profile, repetitions, ... */
    size_t nsettings;
    size_t missing;       /* base series absent, failed or refused (by the check) in new */
    size_t environmental; /* base series that could not run in new for an environmental reason */

    size_t geomean_n;                           /* decided rows in the geomean */
    double geomean_base, geomean_cand, geomean; /* of medians (ns) and of ratios; NaN when n = 0 */
    size_t regressed, improved, unchanged, undecidable;
    int status; /* 0, 2 (a regression or a missing series) or 3 (none, but something undecidable
                   or not run for an environmental reason) */

    /* Machine drift (two files): always estimated when both files have controls; `applied` when
     * the verdicts above are the corrected ones. */
    pkb_drift drift;
    bool drift_applied;
    size_t controls;        /* control rows (not in the counts above) */
    size_t machine_changed; /* of undecidable: because their control group could not correct */
    size_t raw_regressed, raw_improved, raw_unchanged, raw_undecidable; /* non-control rows, raw */

    /* One file of `pkbench ab` (pkb_ab_compare): each series' head side against its base side,
     * decided by the sequential rule over the file's looks. */
    bool sides;
    char *ab_base, *ab_head; /* how the two sides were described */
    bool ab_base_dirty, ab_head_dirty;
    char *ab_stopped; /* "decided", "budget", "interrupted" or NULL */
    size_t ab_looks, ab_pairs;
    int ab_rounds; /* rounds at the last look */
    double ab_max_time_s;
} pkb_compare;

/* Compares `base_path` with `cand_path` (two files), or the contenders of `base_path` with
 * opts->baseline_contender (cand_path NULL). Returns 0 with *out filled (free it with
 * pkb_compare_free), or a negative errno with a one-line message in err (no newline):
 *   -EINVAL    an option out of range, an invalid filter, a missing or extra file for the mode,
 *              no series of the baseline contender in the file
 *   -ENOENT... a file cannot be read; -EBADMSG not JSON, not a results file, a bad field
 *              (results/load.c's checks, plus the noise_floor object); -ENOTSUP another
 *              schema_version
 *   -ENODATA   no series to compare (none in common, or none matches the filter)
 *   -EPROTO    opts->strict_env and an environment key or a run setting differs (named)
 *   -ENOMEM
 * On error *out needs no freeing. */
int pkb_compare_files(const char *base_path,
                      const char *cand_path,
                      const pkb_compare_options *opts,
                      pkb_compare *out,
                      char *err,
                      size_t err_len);

void pkb_compare_free(pkb_compare *c);

/* The counts, the geomean and the status of c from its rows and notes (compare.c; pkb_ab_compare
 * builds its rows itself and counts them with this). */
void pkb__compare_tally(pkb_compare *c);

/* A decided pair's statistics into the row's gate fields (compare.c; pkb_ab_compare's rows too). */
void pkb__compare_set_stats(pkb_compare_row *r, const pkb_verdict *v);

/* Reads and checks one results file as pkb_compare_files would (a baseline before `check` spends
 * minutes measuring). Returns 0, or its errors with the message in err. */
int pkb_compare_check_file(const char *path, char *err, size_t err_len);

/* The same for a file already in memory (`path` only names it in messages), as
 * pkb_results_load_buffer reads one: what the results fuzz target feeds arbitrary bytes. */
int pkb_compare_check_buffer(
    const char *path, const char *data, size_t len, char *err, size_t err_len);

/* Renders the comparison as text, Markdown or JSON into a malloc'd NUL-terminated string (*text,
 * the caller frees it). Returns 0 or -ENOMEM. */
int pkb_compare_render(const pkb_compare *c, pkb_compare_format format, char **text);

/* The comparison as a JSON object (a new reference; NULL when out of memory): what
 * pkb_compare_render writes for PKB_COMPARE_JSON. */
json_t *pkb_compare_json(const pkb_compare *c);

/* One line naming what made the status non-zero: "regressed: a (+12.3%), b (+8.0%)", "missing
 * in new: d (failed in new: ...)" or "cannot decide: c (too noisy: cv 14.1% in new > 10.0%)"
 * (robust cv), joined with "; "; "" when status is 0. Writes at most len bytes (truncated with
 * "..."). */
void pkb_compare_summary_line(const pkb_compare *c, char *buf, size_t len);

/* Why a row is undecidable, in words ("too few samples: 4 in base, need 6", "machine changed:
 * drift +31.2% beyond the 25.0% a correction is trusted for"). */
void pkb_compare_why(const pkb_compare *c, const pkb_compare_row *r, char *buf, size_t len);

/* The same for a row's raw verdict. */
void pkb_compare_why_raw(const pkb_compare *c, const pkb_compare_row *r, char *buf, size_t len);

/* The drift in one line, without a newline: "machine 7.9% slower [5.1%, 10.2%] (13 controls in
 * both files); corrected", or why it was not measured or not applied. */
void pkb_compare_drift_line(const pkb_compare *c, char *buf, size_t len);

/* Parses a format name ("text", "md", "json"); returns 0 or -EINVAL. */
int pkb_compare_parse_format(const char *name, pkb_compare_format *out);

/* The commands (regress/cli.c, linked into pkbench): argv[1] is "compare" or "check"; they
 * return pkbench's exit status. */
int pkb_cmd_compare(int argc, char **argv);
int pkb_cmd_check(int argc, char **argv);

#endif /* PKB_COMPARE_H */
