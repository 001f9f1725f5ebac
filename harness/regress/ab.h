/*
 * ab — the statistics of `pkbench ab`: two builds of the library measured in one interleaved run
 * (every series once per side in every round, the two sides of a series next to each other), the
 * two sides of each series paired by round, rounds added in blocks until every series is decided,
 * and the sequential rule that lets the run look at its data as it comes without raising more
 * false alarms than alpha.
 *
 * The rule. The m series compared each get alpha/m (Bonferroni over the series), spent over the
 * looks by Lan & DeMets' O'Brien-Fleming-type function (common/sequential.h): look k, after n_k
 * rounds, has a nominal level a_k, tiny early and close to alpha/m at the last look. At look k a
 * series still open is
 *
 *   regressed / improved   when Wilcoxon's signed-rank p of its per-round log ratios is below a_k
 *                          and |delta| exceeds the bar (the threshold, 2% by default), or, too
 *                          noisy for its point estimate, when its CI lies wholly beyond the bar
 *                          (results/verdict.h);
 *   unchanged              when its CI at level 1 − a_k lies within (−bar, +bar);
 *   open                   otherwise: it takes the next block of rounds.
 *
 * A decided series leaves the rounds (its verdict is final). The last look, when the time budget
 * is spent, spends what is left and gives every open series the usual verdict at its level: ~
 * when its p is not below it and its CI is narrow enough (half-width at most the cv limit),
 * undecidable when the CI is wider. Whatever the number of looks, the chance that a series that
 * did not change is called regressed or improved stays at most alpha/m, and for the m series at
 * most alpha (tests/test_ab.c simulates it). delta, its CI and p are those of the look that
 * decided the series, the CI at that look's level.
 *
 * The results file of an ab run carries an "ab" object: the two sides, the rule and every look
 * (its rounds, its information fraction, whether it was the last), so `pkbench compare FILE`
 * replays the same looks on the same samples and gives the same verdicts (regress/compare.c).
 */
#ifndef PKB_REGRESS_AB_H
#define PKB_REGRESS_AB_H

#include "common/sequential.h"
#include "regress/build.h"
#include "regress/compare.h"
#include "results/results.h"
#include "results/verdict.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define PKB_AB_THRESHOLD   0.02  /* |delta| at or below 2% is no change */
#define PKB_AB_MAX_TIME_S  300.0 /* --max-time */
#define PKB_AB_FIRST_BLOCK 10    /* rounds before the first look */
#define PKB_AB_LOOKS       10    /* the budget is looked at about this many times */

typedef struct pkb_ab_rule {
    double alpha;      /* family-wise, over every series and look; 0: 0.05 */
    double threshold;  /* the bar; 0: PKB_AB_THRESHOLD; negative: none */
    double cv_limit;   /* the last look's noise check on the CI's half-width; 0: 10% */
    size_t pairs;      /* m, the series compared; 0: as many as there are */
    size_t iterations; /* bootstrap resamples; 0: 10000 */
    uint64_t seed;     /* 0: PKB_VERDICT_SEED */
} pkb_ab_rule;

typedef struct pkb_ab_look {
    int rounds; /* measured rounds when it was taken */
    double t;   /* the share of the rounds the budget allows that they were */
    bool final; /* the budget was spent: it spent what was left */
} pkb_ab_look;

/* One series' two sides and what the looks made of them. */
typedef struct pkb_ab_pair {
    const char *name; /* the row: scenario/contender (borrowed) */
    const pkb_results_series *base, *head;
    pkb_verdict v;  /* at the look that decided it, else the last one it was judged at */
    int look;       /* that look, 0-based; -1 when none had enough rounds */
    double level;   /* that look's nominal level */
    bool decided;   /* regressed, improved or unchanged by the rule, at a look before the last */
    bool unchanged; /* decided unchanged: its CI within the bar (v.d says ~) */
    bool final;     /* judged at the last look */
} pkb_ab_pair;

/* What a results file's "ab" object says (pointers borrowed from the file). */
typedef struct pkb_ab_info {
    bool present;
    const char *base, *head; /* how each side was described ("HEAD~1 (3f2a9c1)") */
    bool base_dirty, head_dirty;
    pkb_ab_rule rule;
    pkb_ab_look looks[PKS_SEQ_MAX_LOOKS];
    size_t nlooks;
    const char *stopped; /* "decided", "budget", "interrupted" (the file says it was), or NULL */
    double max_time_s;
} pkb_ab_info;

/* Reads and checks r's "ab" object (path names the file). Returns 0 (info->present false when
 * there is none) or -EBADMSG with a one-line message. */
int pkb_ab_read(
    const pkb_results *r, const char *path, pkb_ab_info *info, char *err, size_t err_len);

/* Replays the looks on pairs[0..n): each pair's base and head series and name set by the
 * caller; the rule as given (rule->pairs 0: n). Returns 0, -EINVAL (a sample the statistics
 * reject) or -ENOMEM. */
int pkb_ab_judge(
    const pkb_ab_rule *rule, const pkb_ab_look *looks, size_t nlooks, pkb_ab_pair *pairs, size_t n);

/* `pkbench compare FILE` of an ab file: every series' head side against its base side, the
 * file's looks replayed (the rule as the file records it, unless opts sets alpha, threshold or
 * cv_limit), into *out as compare.h's (sides set, base_path the file). A side measured in base
 * and failed or refused in head is a missing series (status 2), as between two files. Errors as
 * pkb_compare_files, and -EINVAL for a file without an "ab" object. */
int pkb_ab_compare(
    const char *path, const pkb_compare_options *opts, pkb_compare *out, char *err, size_t err_len);

/* A side as the results file records it (new reference; NULL when out of memory): spec, commit,
 * describe, dirty, prebuilt, key, worker, build_s. */
json_t *pkb_ab_side_json(const pkb_ab_side *s);

/* ---- the run: rounds until decided ---------------------------------------------------------- */

typedef struct pkb_ab_session {
    pkb_ab_rule rule;
    double max_time_s;
    double start_s;  /* CLOCK_MONOTONIC when the measuring began (the budget counts from it) */
    json_t *section; /* the file's "ab" object: the runner writes it, the looks are added to it */
    bool quiet;
    int looks;
    bool done; /* every series decided, or the last look taken */
} pkb_ab_session;

/* The "ab" object of a run of base against head with `rule` and `max_time_s` (new reference;
 * NULL when out of memory), into s->section, and the clock started. */
int pkb_ab_session_begin(pkb_ab_session *s,
                         const pkb_ab_side *base,
                         const pkb_ab_side *head,
                         const pkb_ab_rule *rule,
                         double max_time_s,
                         bool quiet);

/* After a block of rounds (the file at `path` holds them): takes a look — its fraction from the
 * rounds so far and those the rest of the budget allows at `round_s` each, the last one when no
 * block fits any more — records it in the section, replays every look, and says which series
 * leave the rounds (retire[i], i in the file's order of n series) and how many rounds to add
 * (*more; 0: stop; the section's "stopped" then says why). One line on stderr per look. Returns
 * 0, or a negative errno with a message printed. */
int pkb_ab_after_block(pkb_ab_session *s,
                       const char *path,
                       int rounds,
                       double round_s,
                       size_t n,
                       bool *retire,
                       int *more);

void pkb_ab_session_free(pkb_ab_session *s);

#endif /* PKB_REGRESS_AB_H */
