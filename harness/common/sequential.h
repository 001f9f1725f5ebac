/*
 * sequential — looking at the data as it comes without inflating false alarms. `pkbench ab`
 * adds rounds until every series is decided and tests after every block of rounds; tested at a
 * fixed level at each look, a series that never changed would cross it at some look far more
 * often than that level (ten looks at 5% raise the false alarms to about 20%). So each series'
 * level is *spent* over the looks (Lan & DeMets 1983): by the share t of the planned information
 * seen so far, at most
 *
 *     alpha(t) = 2 − 2·Φ(z_{1−alpha/2} / √t)        (O'Brien & Fleming's shape; alpha(1) = alpha)
 *
 * may have been spent, and the boundary of each look is the |Z| that spends exactly the
 * increment alpha(t_k) − alpha(t_{k−1}) given that no earlier look crossed its own. Early looks
 * then need overwhelming evidence (|Z| ≈ 4.9 at t = 0.2 for alpha 0.05), the last one little
 * more than a single test would (≈ 2.0): a clear regression is called early, a close call is
 * left to the end, and the chance that a series that did not change crosses any boundary stays
 * alpha. The boundaries take the correlation between looks into account (the looks share their
 * earlier rounds): the statistic is treated as Brownian motion in t, the way the group-sequential
 * literature does (Jennison & Turnbull, "Group Sequential Methods", 2000, ch. 19), and the
 * probability of crossing at look k is integrated numerically over the sub-density of not having
 * crossed before (the recursion of Armitage, McPherson & Rowe, 1969).
 *
 * The looks need not be planned: each is added with the information fraction it has (the rounds
 * taken over the rounds the time budget allows), and the last look (the budget spent) spends
 * what is left. The information fraction must not depend on the data, only on time.
 *
 * Conventions as stats.h: 0 or a negative errno, no global state.
 */
#ifndef PK_SEQUENTIAL_H
#define PK_SEQUENTIAL_H

#include <stdbool.h>
#include <stddef.h>

/* The most looks a plan takes; later non-final looks spend nothing. */
#define PKS_SEQ_MAX_LOOKS 64

/* Φ(x), the standard normal distribution function, and its upper tail 1 − Φ(x) (computed from
 * erfc, so accurate far into the tail). */
double pks_norm_cdf(double x);
double pks_norm_sf(double x);

/* The z with pks_norm_sf(z) = p, for p in (0, 1); ±INFINITY at 0 and 1, NaN outside. */
double pks_norm_isf(double p);

/* The two-sided O'Brien-Fleming-type spending function of Lan & DeMets: the share of `alpha`
 * spent by information fraction t (0 at t ≤ 0, alpha at t ≥ 1). */
double pks_spend_obf(double alpha, double t);

/* A plan: the looks so far and their boundaries. Owns a small grid (pks_seq_free). */
typedef struct pks_seq {
    double alpha;                      /* the two-sided level spent over every look */
    size_t k;                          /* looks taken */
    double info[PKS_SEQ_MAX_LOOKS];    /* the information each look had (rounds), increasing */
    double t[PKS_SEQ_MAX_LOOKS];       /* its share of the most there will be, increasing, ≤ 1 */
    double spent[PKS_SEQ_MAX_LOOKS];   /* alpha spent up to and including each look */
    double z[PKS_SEQ_MAX_LOOKS];       /* the boundary on |Z| (INFINITY: nothing spent there) */
    double nominal[PKS_SEQ_MAX_LOOKS]; /* 2·(1 − Φ(z)): the two-sided p a test must get below */
    bool final;                        /* the last look spent what was left */
    /* The sub-density of the score S = Z·√info over the values that did not cross, after the
     * last look: n points from lo with step h. */
    double *f, lo, h;
    size_t n;
} pks_seq;

/* An empty plan spending `alpha` (in (0, 1)). Errors: -EINVAL. */
int pks_seq_init(pks_seq *s, double alpha);

/* Adds a look that has `info` information (any unit proportional to it: the rounds measured so
 * far) and is the fraction t of the most the run will have (clamped to [previous, 1]), and
 * returns its nominal two-sided level in *nominal (0 when nothing is spent: no p is small
 * enough). The boundaries follow the statistic's real correlation between looks, √(info_j /
 * info_k), whatever the fractions said, so a maximum re-estimated on the way (the pace of the
 * rounds changed) keeps the level: t only says how much may be spent by now. An info that does
 * not grow spends nothing. `final`: the last look, which spends what is left whatever t is. A
 * look after the final one, or beyond PKS_SEQ_MAX_LOOKS, spends nothing. Errors: -EINVAL (info
 * or t not finite, info not positive), -ENOMEM. */
int pks_seq_look(pks_seq *s, double info, double t, bool final, double *nominal);

void pks_seq_free(pks_seq *s);

#endif /* PK_SEQUENTIAL_H */
