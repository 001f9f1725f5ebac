/*
 * stats — the statistics behind `pkbench compare`: robust summaries, the Mann-Whitney U test,
 * Holm's step-down correction, a seeded bootstrap for the ratio of medians, the noise floor
 * measured by an A/A run, and the verdict for one series.
 *
 * How compare uses it, per series (base = the stored run, cand = the candidate run; both are
 * times, so lower is better):
 *
 *     pks_series_compare(base, nb, cand, nc, &opts, NULL, &s[i]);      medians, CI, MWU p
 *     ... once every series is compared ...
 *     pks_holm(p, nseries, p_adj, NULL);                               family-wise correction
 *     pks_decide(&(pks_decision_in){.p = p_adj[i], .delta = s[i].delta, .threshold = 0.05,
 *                .noise_floor = mde_from_base_file,
 *                .samples = pks_check_samples(s[i].base.n, s[i].cand.n, s[i].base.cv,
 *                                             s[i].cand.cv, 0)});
 *     pks_geomean(ratios, nseries, &g);                                the geomean row
 *
 * Conventions:
 *  - Fallible functions return 0 or a negative errno: -EINVAL for a NULL pointer, an empty
 *    sample, a non-finite value or a parameter out of range; -EDOM when the statistic is not
 *    defined for the data (a standard deviation of one value, a ratio or logarithm of a value
 *    that is not positive); -ENOMEM when an internal allocation fails. On error the outputs are
 *    unspecified.
 *  - Functions that need scratch memory take `double *work` (or `size_t *work`) of a documented
 *    size. Pass NULL and the function allocates the scratch itself and frees it before
 *    returning; nothing the module allocates outlives a call, and it keeps no caller pointer.
 *  - No global state: every function is thread-safe and reentrant. Randomness comes only from a
 *    caller-owned pks_rng seeded explicitly, so every result is reproducible from its seed.
 *  - Quantiles are the linear-interpolation kind (Hyndman & Fan type 7: R's default, numpy's
 *    "linear"), so the median of an even-sized sample is the mean of the two middle values.
 */
#ifndef PK_STATS_H
#define PK_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Random numbers
 * ------------------------------------------------------------------------------------------- */

/* xoshiro256** (Blackman & Vigna, 2018), its 256-bit state filled from the seed by splitmix64 as
 * its authors recommend. The output sequence is fully specified integer arithmetic, so a seed
 * gives the same numbers on every platform and compiler. Plain value; copy it to fork a stream. */
typedef struct pks_rng {
    uint64_t s[4];
} pks_rng;

/* Seeds `rng`. Every seed, 0 included, gives a valid (never all-zero) state. */
void pks_rng_seed(pks_rng *rng, uint64_t seed);

/* The next 64 random bits. */
uint64_t pks_rng_next(pks_rng *rng);

/* A uniform integer in [0, bound), without modulo bias (rejection sampling). Returns 0 when
 * bound is 0. */
uint64_t pks_rng_below(pks_rng *rng, uint64_t bound);

/* A uniform double in [0, 1) with 53 random bits. */
double pks_rng_uniform(pks_rng *rng);

/* A standard normal deviate (Box-Muller, one value per call; uses log, sqrt and cos from libm,
 * so unlike the integer outputs its last bits may differ between libm versions). */
double pks_rng_normal(pks_rng *rng);

/* ---------------------------------------------------------------------------------------------
 * Descriptive statistics
 * ------------------------------------------------------------------------------------------- */

/* Scale that turns the MAD into a consistent estimator of a normal distribution's sd. */
#define PKS_MAD_NORMAL_SCALE 1.4826022185056018

/* The arithmetic mean of x[0..n). Errors: -EINVAL (n == 0, non-finite value). */
int pks_mean(const double *x, size_t n, double *out);

/* The sample standard deviation, with n − 1 in the denominator (two-pass). Errors: -EINVAL,
 * -EDOM when n < 2. */
int pks_sd(const double *x, size_t n, double *out);

/* The coefficient of variation: sample sd / mean (a fraction, 0.03 = 3%). Errors: -EINVAL,
 * -EDOM when n < 2 or the mean is not positive. */
int pks_cv(const double *x, size_t n, double *out);

/* The q-quantile (0 ≤ q ≤ 1, type 7) of an already ascending-sorted sample. Cannot fail in
 * normal use: returns NaN when n == 0 or q is outside [0, 1]. */
double pks_quantile_sorted(const double *sorted, size_t n, double q);

/* The q-quantile (type 7) of x[0..n), which is not modified. work: n doubles or NULL. Errors:
 * -EINVAL (n == 0, non-finite value, q outside [0, 1]), -ENOMEM. */
int pks_quantile(const double *x, size_t n, double q, double *work, double *out);

/* The median: pks_quantile with q = 0.5. */
int pks_median(const double *x, size_t n, double *work, double *out);

/* The median absolute deviation from the median, unscaled: median(|x_i − median(x)|). Multiply
 * by PKS_MAD_NORMAL_SCALE for an sd-like figure. work: n doubles or NULL. Errors: -EINVAL,
 * -ENOMEM. */
int pks_mad(const double *x, size_t n, double *work, double *out);

/* The geometric mean exp(mean(log x_i)) — of ratios, for compare's geomean row. Errors: -EINVAL,
 * -EDOM when a value is not positive. */
int pks_geomean(const double *x, size_t n, double *out);

/* One sample at a glance. sd and cv are NaN when n < 2; cv is NaN when the mean is not positive. */
typedef struct pks_summary {
    size_t n;
    double min, max;
    double mean, sd, cv;
    double median, mad; /* mad unscaled, as pks_mad */
} pks_summary;

/* Fills *out for x[0..n). work: n doubles or NULL. Errors: -EINVAL, -ENOMEM. */
int pks_summarize(const double *x, size_t n, double *work, pks_summary *out);

/* ---------------------------------------------------------------------------------------------
 * Mann-Whitney U test (two-sided)
 * ------------------------------------------------------------------------------------------- */

/* The exact null distribution is used when both samples have at most this many values and the
 * pooled sample has no ties; otherwise the normal approximation. 50 is benchstat's cutoff
 * (golang.org/x/perf, internal/stats: MannWhitneyExactLimit = 50): at 50 × 50 the exact tail
 * takes at most ~3 M additions and 0.5 MB of scratch. Beyond it the normal approximation is
 * within ~1% of the exact p near p = 0.05 and errs on the safe side (too large) further out:
 * ~8% high at p ≈ 0.004, where Holm's threshold lies with a dozen series (scipy, n = 50 each). */
#define PKS_MWU_EXACT_MAX 50

typedef enum pks_mwu_method {
    /* Exact: p = 2 · P(U ≤ min(U, n1·n2 − U)) under H0, counted by dynamic programming over the
     * number of orderings of the pooled sample (all additions, no cancellation). */
    PKS_MWU_EXACT = 1,
    /* Normal approximation with tie correction and continuity correction, as
     * scipy.stats.mannwhitneyu(method="asymptotic", use_continuity=True):
     * z = (|U − n1·n2/2| − 0.5) / sqrt(n1·n2/12 · ((N + 1) − Σ(t³ − t) / (N(N − 1)))),
     * p = 2 · (1 − Φ(z)) capped at 1, where t runs over the sizes of tied groups. */
    PKS_MWU_NORMAL = 2,
} pks_mwu_method;

typedef struct pks_mwu {
    double u;              /* U of the first sample: pairs (a_i, b_j) with a_i > b_j, a tie 1/2 */
    double p;              /* two-sided p-value in [0, 1] */
    double z;              /* PKS_MWU_NORMAL: the continuity-corrected |z|; 0 for exact */
    pks_mwu_method method; /* which computation gave p */
    bool ties;             /* the pooled sample holds equal values */
} pks_mwu;

/* Doubles of scratch pks_mwu_test needs for samples of these sizes (saturates at SIZE_MAX). */
size_t pks_mwu_work_size(size_t na, size_t nb);

/* Tests H0 "a and b come from one distribution" against a two-sided shift. work:
 * pks_mwu_work_size(na, nb) doubles or NULL. Every value must be finite. When every value is tied
 * (no information), p is 1. Errors: -EINVAL (empty sample, non-finite value), -ENOMEM. */
int pks_mwu_test(
    const double *a, size_t na, const double *b, size_t nb, double *work, pks_mwu *out);

/* "exact" or "normal"; "?" for any other value. Static string. */
const char *pks_mwu_method_name(pks_mwu_method method);

/* ---------------------------------------------------------------------------------------------
 * Multiple comparisons
 * ------------------------------------------------------------------------------------------- */

/* Holm–Bonferroni step-down adjustment of the m = n p-values in p[0..n): with p sorted ascending
 * as p(1) ≤ … ≤ p(m), adj(i) = min(1, max over j ≤ i of (m − j + 1) · p(j)). The adjusted values
 * are written to adjusted[] in the original order, are monotone in p, and are capped at 1;
 * comparing them with alpha controls the family-wise error rate at alpha. adjusted may be p
 * itself (in place). work: n size_t's or NULL. Errors: -EINVAL (n == 0, a p outside [0, 1] or
 * NaN), -ENOMEM. */
int pks_holm(const double *p, size_t n, double *adjusted, size_t *work);

/* ---------------------------------------------------------------------------------------------
 * Bootstrap
 * ------------------------------------------------------------------------------------------- */

#define PKS_BOOTSTRAP_DEFAULT_ITERATIONS 10000
#define PKS_BOOTSTRAP_DEFAULT_LEVEL      0.95

/* Bootstrap options; all-zero (or a NULL pointer) means 10000 iterations at the 95% level with
 * seed 0. Seed 0 is as good as any other. */
typedef struct pks_bootstrap {
    size_t iterations; /* resamples; 0: PKS_BOOTSTRAP_DEFAULT_ITERATIONS */
    double level;      /* confidence level in (0, 1); 0: PKS_BOOTSTRAP_DEFAULT_LEVEL */
    uint64_t seed;     /* seeds a pks_rng private to the call */
} pks_bootstrap;

/* A point estimate with its confidence interval. */
typedef struct pks_interval {
    double lo, estimate, hi;
} pks_interval;

/* Doubles of scratch pks_bootstrap_ratio needs (saturates at SIZE_MAX). */
size_t pks_bootstrap_work_size(size_t nbase, size_t ncand, size_t iterations);

/* Samples of at most this many values are bootstrapped value by value; larger ones draw each
 * resample's median directly from its exact distribution (pks_bootstrap_ratio). */
#define PKS_BOOTSTRAP_RESAMPLE_MAX 100

/* Percentile bootstrap CI of median(cand) / median(base). Each iteration resamples base (nbase
 * draws with replacement), then cand (ncand draws), from one pks_rng seeded with opts->seed, and
 * records the ratio of the two resample medians; lo and hi are the (1 − level)/2 and
 * (1 + level)/2 quantiles (type 7) of those ratios. estimate is the ratio of the original
 * samples' medians. A sample of more than PKS_BOOTSTRAP_RESAMPLE_MAX values is not redrawn value
 * by value: the median of its resample is drawn from that median's exact distribution (an order
 * statistic of n uniform draws, through Beta deviates), the same distribution in O(1) per
 * resample, so 20,000 samples cost one sort, not 10,000. The same inputs and seed give
 * bit-identical output on any IEEE-754 platform for samples up to that size (no libm call is
 * involved); above it the deviates use log, sqrt, cos and pow from libm, whose last bits may
 * differ between libm versions. Cost: O(iterations · n log n) up to that size,
 * O(n log n + iterations) above it. work:
 * pks_bootstrap_work_size(nbase, ncand, iterations) doubles or NULL. Errors: -EINVAL (empty
 * sample, non-finite value, level outside (0, 1)), -EDOM (a value is not positive), -ENOMEM. */
int pks_bootstrap_ratio(const double *base,
                        size_t nbase,
                        const double *cand,
                        size_t ncand,
                        const pks_bootstrap *opts,
                        double *work,
                        pks_interval *out);

/* ---------------------------------------------------------------------------------------------
 * Noise floor: the minimum detectable effect of an A/A run
 * ------------------------------------------------------------------------------------------- */

/* The minimum detectable effect (MDE) of a series, from an A/A run: `first` and `second` are the
 * two interleaved halves (A B A B …) of the same build measured against itself.
 *
 * Definition: with [lo, hi] the (1 − alpha) percentile-bootstrap CI of median(second) /
 * median(first) (pks_bootstrap_ratio, level = 1 − alpha),
 *
 *     MDE = max(|lo − 1|, |hi − 1|),
 *
 * a relative change (0.03 = 3%): the farthest from "no change" that the ratio of medians of two
 * runs of the *same* code plausibly lands, at the confidence compare tests with.
 *
 * Why this one: (1) it is measured on the very estimator compare reports as delta (the ratio of
 * medians), with no distributional assumption; (2) it contains both the random spread at this
 * sample size (the CI's half-width) and any systematic offset between two halves of one
 * interleaved run (the CI's displacement from 1: drift, order effects), which a rank test assumes
 * away; (3) it is conservative — a chance offset in the A/A run raises the floor, making a false
 * "regressed" less likely, which is the expensive error for a CI gate. It is not the power-based
 * MDE of experimental design (no beta); it is a noise floor. It describes runs of about the A/A
 * run's sample size: a compare with many more samples could resolve smaller effects.
 *
 * alpha: 0 means 0.05. opts: iterations and seed as pks_bootstrap_ratio (NULL: defaults); its
 * level is ignored. ci, when not NULL, receives the A/A ratio's interval. work: as
 * pks_bootstrap_ratio. Errors: as pks_bootstrap_ratio, -EINVAL for alpha outside [0, 1). */
int pks_mde(const double *first,
            size_t nfirst,
            const double *second,
            size_t nsecond,
            double alpha,
            const pks_bootstrap *opts,
            double *work,
            double *mde,
            pks_interval *ci);

/* ---------------------------------------------------------------------------------------------
 * One series: everything compare prints before the verdict
 * ------------------------------------------------------------------------------------------- */

typedef struct pks_series {
    pks_summary base, cand;
    pks_interval ratio; /* median(cand) / median(base) with its bootstrap CI */
    double delta;       /* ratio.estimate − 1: +0.10 is 10% slower (times: lower is better) */
    pks_mwu mwu;        /* a = base, b = cand; mwu.p is not yet corrected for multiplicity */
} pks_series;

/* Doubles of scratch pks_series_compare needs (saturates at SIZE_MAX). */
size_t pks_series_work_size(size_t nbase, size_t ncand, size_t iterations);

/* Summarizes both samples, bootstraps the ratio of medians (opts as pks_bootstrap_ratio) and
 * runs the Mann-Whitney test. work: pks_series_work_size(nbase, ncand, opts->iterations or the
 * default) doubles or NULL. Errors: as pks_bootstrap_ratio and pks_mwu_test. */
int pks_series_compare(const double *base,
                       size_t nbase,
                       const double *cand,
                       size_t ncand,
                       const pks_bootstrap *opts,
                       double *work,
                       pks_series *out);

/* ---------------------------------------------------------------------------------------------
 * Verdict
 * ------------------------------------------------------------------------------------------- */

#define PKS_MIN_SAMPLES      6    /* fewer in either sample: undecidable */
#define PKS_DEFAULT_ALPHA    0.05 /* pks_decision_in.alpha = 0 */
#define PKS_DEFAULT_CV_LIMIT 0.10 /* pks_check_samples(cv_limit = 0); pyperf warns at sd ≥ 10% */

typedef enum pks_verdict {
    PKS_NO_CHANGE = 0, /* "~": not significant, or within max(threshold, noise floor) */
    PKS_IMPROVED,      /* significantly faster by more than the bar */
    PKS_REGRESSED,     /* significantly slower by more than the bar */
    PKS_UNDECIDABLE,   /* the samples cannot support a verdict; see pks_undecidable */
} pks_verdict;

typedef enum pks_undecidable {
    PKS_DECIDABLE = 0,
    PKS_TOO_FEW_SAMPLES, /* fewer than PKS_MIN_SAMPLES values in a sample */
    PKS_TOO_NOISY,       /* a coefficient of variation above the limit (or unknown) */
} pks_undecidable;

/* Whether two samples can support a verdict: too few samples is checked first, then noise. A cv
 * that is NaN counts as too noisy. cv_limit: the largest acceptable cv (fraction); 0 means
 * PKS_DEFAULT_CV_LIMIT, a negative value disables the check. */
pks_undecidable
pks_check_samples(size_t nbase, size_t ncand, double cv_base, double cv_cand, double cv_limit);

/* Inputs of pks_decide; all-zero fields mean "default" or "unknown" as noted. */
typedef struct pks_decision_in {
    double p;                /* the multiplicity-adjusted p-value (pks_holm) */
    double alpha;            /* significance level; 0: PKS_DEFAULT_ALPHA */
    double delta;            /* median(cand) / median(base) − 1 */
    double threshold;        /* smallest |delta| worth reporting; 0: none */
    double noise_floor;      /* MDE from the base file's A/A run (pks_mde); 0: unknown */
    pks_undecidable samples; /* pks_check_samples of the two samples */
    /* The delta's confidence interval (ratio CI − 1), when `ci_known`: a series too noisy for
     * the point estimate is still decided when this whole interval lies beyond the bar widened
     * by `widen` (a fraction ≥ 0: the noise the check found, e.g. the larger robust cv). */
    bool ci_known;
    double ci_lo, ci_hi, widen;
} pks_decision_in;

typedef struct pks_decision {
    pks_verdict verdict;
    pks_undecidable reason; /* why, when verdict is PKS_UNDECIDABLE; else PKS_DECIDABLE */
    double bar;             /* max(threshold, noise_floor): |delta| had to exceed this (when
                               `noisy`, the whole CI had to clear it, widened) */
    bool noisy;             /* too noisy for the point estimate, decided by its CI */
} pks_decision;

/* The verdict for one series, lower being better: REGRESSED when p < alpha and delta > bar,
 * IMPROVED when p < alpha and delta < −bar, else NO_CHANGE; UNDECIDABLE first when in->samples
 * says so — except that a series only too noisy (PKS_TOO_NOISY) whose CI is known and lies
 * wholly beyond the bar widened by `widen` (ci_lo > bar + widen, or ci_hi < −(bar + widen)) with
 * p < alpha is REGRESSED or IMPROVED (`noisy` set, `bar` the widened one): the noise check
 * guards the point estimate, and may raise the bar, but never vetoes a result the interval
 * settles. Comparisons are strict; a NaN p or delta gives NO_CHANGE. `in` must not be NULL.
 * Pure function of its input. */
pks_decision pks_decide(const pks_decision_in *in);

/* "improved", "regressed", "~" or "undecidable" (benchstat's "~" for no change); "?" for any
 * other value. Static string. */
const char *pks_verdict_name(pks_verdict verdict);

/* "decidable", "too few samples" or "too noisy"; "?" for any other value. Static string. */
const char *pks_undecidable_name(pks_undecidable reason);

#ifdef __cplusplus
}
#endif

#endif /* PK_STATS_H */
