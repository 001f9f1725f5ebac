/*
 * changepoint — where a series measured over a project's history changed level: E-divisive
 * means (Matteson & James, 2014) to place each candidate, and Student's two-sample t-test in
 * place of the method's permutation test to decide whether it is real (the rule DataStax's Hunter,
 * now Apache Otava, brought to CI histories; written here from the papers).
 *
 * The series is one value per run, in history order (`pkbench history` gives the median time of
 * a series, or its same-host ratio, per results file). Every statistic works on the logarithms
 * of the values, so a step is a ratio (5% slower is the same step at 10 µs and at 10 ms) and a
 * magnitude comes with a CI on that ratio.
 *
 *     pks_changepoints(x, n, &(pks_changepoint_options){0}, &cps, &count);
 *
 * How it decides (METHODOLOGY.md, "How change points are found"):
 *  1. In every segment between the change points found so far, the split τ that maximises the
 *     energy divergence between the points before and after it,
 *         Q(τ) = (m k / (m + k)) · (2/(m k) Σ|a_i − b_j| − Σ_{i<l}|a_i − a_l| / C(m,2)
 *                                                        − Σ_{j<l}|b_j − b_l| / C(k,2)),
 *     with m points a before it and k points b after it, both at least min_size.
 *  2. A candidate is tested with Student's t-test (pooled variance) between the two halves of its
 *     segment; of the
 *     candidates with p < alpha the one with the largest Q becomes a change point, and step 1
 *     runs again on the new segments. It stops when no candidate is significant.
 *  3. Then every change point is tested again between its neighbours (the previous and the next
 *     change point, or the ends), and the weakest one whose p is no longer below alpha, or whose
 *     magnitude is below min_magnitude, is removed, until all pass.
 * The p of a split is not corrected for having been chosen as the largest Q of its segment, and
 * a longer history offers more splits to choose from, so it is optimistic; the default alpha of
 * 0.0001 leaves room for that (tests/test_changepoint.c bounds the false change points on
 * synthetic histories without a change).
 *
 * Conventions as in stats.h: 0 or a negative errno, no global state, deterministic.
 */
#ifndef PK_CHANGEPOINT_H
#define PK_CHANGEPOINT_H

#include "common/stats.h"

#include <stddef.h>

/* ---- Student's t distribution -------------------------------------------------------------- */

/* The two-sided tail P(|T| ≥ |t|) of Student's t distribution with df > 0 degrees of freedom:
 * the regularised incomplete beta I_{df/(df+t²)}(df/2, 1/2). 1 at t = 0, NaN when df ≤ 0 or an
 * argument is NaN; an infinite t gives 0. */
double pks_t_two_sided(double t, double df);

/* The t with P(|T| ≥ t) = p (0 < p ≤ 1), for a confidence interval: 2.228 for p = 0.05 and
 * df = 10. NaN when p or df is out of range. */
double pks_t_critical(double p, double df);

/* Student's two-sample t-test: the t statistic of a − b with the variance pooled over both
 * samples, na + nb − 2 degrees of freedom. Pooled rather than Welch's: a short segment whose few
 * values happen to agree would make Welch's standard error, and so its p, far too small (on
 * synthetic histories without a change, Welch's form found several times the false change
 * points). */
typedef struct pks_t_test {
    double t;  /* (mean a − mean b) / se; ±INFINITY when both samples are constant and differ */
    double df; /* degrees of freedom */
    double p;  /* two-sided; 1 when both samples are constant and equal */
    double diff; /* mean a − mean b */
    double se;   /* standard error of diff */
} pks_t_test;

/* The test of a[0..na) against b[0..nb). Errors: -EINVAL (NULL, fewer than 2 values on a side,
 * a value not finite). */
int pks_student_t_test(const double *a, size_t na, const double *b, size_t nb, pks_t_test *out);

/* ---- change points ------------------------------------------------------------------------- */

#define PKS_CHANGEPOINT_ALPHA    0.0001 /* pks_changepoint_options.alpha = 0 */
#define PKS_CHANGEPOINT_MIN_SIZE 3      /* pks_changepoint_options.min_size = 0 */

/* Options; all-zero (or NULL) means the defaults noted. */
typedef struct pks_changepoint_options {
    double alpha;         /* a change point needs p < alpha; 0: PKS_CHANGEPOINT_ALPHA */
    size_t min_size;      /* fewest points on each side of a change point (≥ 2); 0: 3 */
    double min_magnitude; /* smallest |relative change| kept (0.02 = 2%); 0: any */
    double level;         /* the magnitude's confidence level, in (0, 1); 0: 0.95 */
} pks_changepoint_options;

/* One change point: the level changes between x[index − 1] and x[index]. */
typedef struct pks_changepoint {
    size_t index;       /* the first point of the new level */
    size_t from, to;    /* the segments it separates: [from, index) and [index, to) */
    double q;           /* the divergence Q that placed it */
    double p;           /* Student's p between those segments (of the logarithms) */
    double before;      /* geometric mean of the segment before */
    double after;       /* geometric mean of the segment after */
    pks_interval ratio; /* after / before with its CI (Student's, on the logarithms) */
} pks_changepoint;

/* The change points of x[0..n) (each value positive and finite), in increasing index, into a
 * malloc'd array *out (NULL when there are none) of *count entries; free() it. A series shorter
 * than 2 · min_size has none. Errors: -EINVAL (NULL, a value not finite, options out of range),
 * -EDOM (a value not positive), -ENOMEM. */
int pks_changepoints(const double *x,
                     size_t n,
                     const pks_changepoint_options *opts,
                     pks_changepoint **out,
                     size_t *count);

#endif /* PK_CHANGEPOINT_H */
