/*
 * The statistics module (harness/common/stats.h) against values computed independently of this
 * code: scipy 1.10.1 / numpy 1.24.2 under /usr/bin/python3 for the Mann-Whitney p-values and the
 * descriptive statistics, a ten-line Python Holm for the adjustments, and a Python transcription
 * of splitmix64 + xoshiro256** for the generator. Each block quotes the snippet that produced
 * its numbers, so anyone can recompute them. The synthetic tests then run the whole compare
 * pipeline on generated data: A/A pairs must not regress more often than alpha, a 10% slowdown
 * must be caught, a 1% one under a 5% threshold must not be reported.
 */
#include "test.h"

#include "common/stats.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* |a − b| ≤ tol · max(|b|, tiny): a relative comparison that also works near zero. */
#define ASSERT_NEAR_REL(a, b, tol)                                                                 \
    do {                                                                                           \
        double a_ = (a), b_ = (b), t_ = (tol);                                                     \
        if (!(fabs(a_ - b_) <= t_ * fmax(fabs(b_), 1e-300)))                                       \
            pk_test_fail(__FILE__, __LINE__, "%s ≈ %s (rel %g): %.17g vs %.17g", #a, #b, t_, a_,   \
                         b_);                                                                      \
    } while (0)

#define ASSERT_NEAR_ABS(a, b, tol)                                                                 \
    do {                                                                                           \
        double a_ = (a), b_ = (b), t_ = (tol);                                                     \
        if (!(fabs(a_ - b_) <= t_))                                                                \
            pk_test_fail(__FILE__, __LINE__, "%s ≈ %s (abs %g): %.17g vs %.17g", #a, #b, t_, a_,   \
                         b_);                                                                      \
    } while (0)

#define ASSERT_DBL_EQ(a, b)                                                                        \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(a_ == b_))                                                                           \
            pk_test_fail(__FILE__, __LINE__, "%s == %s: %.17g vs %.17g", #a, #b, a_, b_);          \
    } while (0)

#define N_OF(arr) (sizeof(arr) / sizeof((arr)[0]))

/* n values m · exp(sd · N(0, 1)): lognormal noise, the shape benchmark times tend to have. */
static void lognormal(pks_rng *rng, double *x, size_t n, double m, double sd)
{
    for (size_t i = 0; i < n; i++)
        x[i] = m * exp(sd * pks_rng_normal(rng));
}

/* ==== Random numbers ========================================================================= */

/* Reference outputs from an independent Python transcription of the published algorithms:
 *
 *   M = (1 << 64) - 1
 *   def splitmix(st):
 *       st = (st + 0x9E3779B97F4A7C15) & M; z = st
 *       z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
 *       z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
 *       return st, z ^ (z >> 31)
 *   rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & M
 *   def xoshiro(seed):
 *       s = []; st = seed
 *       for _ in range(4): st, z = splitmix(st); s.append(z)
 *       while True:
 *           r = (rotl((s[1] * 5) & M, 7) * 9) & M; t = (s[1] << 17) & M
 *           s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t
 *           s[3] = rotl(s[3], 45); yield r
 */
TEST_IMPL(stats_rng_reference)
{
    static const uint64_t seed0[] = {0x99ec5f36cb75f2b4u, 0xbf6e1f784956452au, 0x1a5f849d4933e6e0u,
                                     0x6aa594f1262d2d2cu};
    static const uint64_t seed42[] = {0x15780b2e0c2ec716u, 0x6104d9866d113a7eu, 0xae17533239e499a1u,
                                      0xecb8ad4703b360a1u};
    pks_rng a, b;
    pks_rng_seed(&a, 0);
    pks_rng_seed(&b, 42);
    for (size_t i = 0; i < 4; i++) {
        ASSERT(pks_rng_next(&a) == seed0[i]);
        ASSERT(pks_rng_next(&b) == seed42[i]);
    }
    /* Derived draws stay in range and are roughly what they claim to be. */
    pks_rng_seed(&a, 7);
    double sum = 0, sumsq = 0, usum = 0;
    size_t hist[10] = {0};
    for (int i = 0; i < 100000; i++) {
        uint64_t k = pks_rng_below(&a, 10);
        ASSERT_LT(k, 10);
        hist[k]++;
        double u = pks_rng_uniform(&a);
        ASSERT(u >= 0 && u < 1);
        usum += u;
        double z = pks_rng_normal(&a);
        sum += z;
        sumsq += z * z;
    }
    for (size_t k = 0; k < 10; k++)
        ASSERT(hist[k] > 9500 && hist[k] < 10500);
    ASSERT_NEAR_ABS(usum / 100000, 0.5, 0.01);
    ASSERT_NEAR_ABS(sum / 100000, 0.0, 0.02);
    ASSERT_NEAR_ABS(sumsq / 100000, 1.0, 0.02);
    ASSERT_EQ(pks_rng_below(&a, 0), 0);
    ASSERT_EQ(pks_rng_below(&a, 1), 0);
}

/* ==== Descriptive statistics ================================================================= */

/* numpy 1.24.2 / scipy 1.10.1:
 *
 *   import numpy as np; from scipy.stats import median_abs_deviation, gmean
 *   x = [12.5, 10.25, 11.0, 14.75, 10.5, 13.0, 11.75]
 *   np.mean(x), np.std(x, ddof=1), np.std(x, ddof=1) / np.mean(x)
 *       -> 11.964285714285714, 1.5905225257008795, 0.13293919617798397
 *   np.median(x), median_abs_deviation(x, scale=1.0)                -> 11.75, 1.25
 *   [np.quantile(x, q) for q in (0, .1, .25, .9, 1)]
 *       -> 10.25, 10.4, 10.75, 13.700000000000001, 14.75
 *   y = [4.0, 1.0, 3.0, 2.0]
 *   np.median(y), median_abs_deviation(y, scale=1.0), np.quantile(y, .3)  -> 2.5, 1.0, 1.9
 *   gmean([1.10, 0.95, 1.02, 0.80, 1.25])                            -> 1.012845708831957
 */
TEST_IMPL(stats_descriptive)
{
    static const double x[] = {12.5, 10.25, 11.0, 14.75, 10.5, 13.0, 11.75};
    const size_t n = N_OF(x);
    double v, work[N_OF(x)];
    ASSERT_OK(pks_mean(x, n, &v));
    ASSERT_NEAR_REL(v, 11.964285714285714, 1e-14);
    ASSERT_OK(pks_sd(x, n, &v));
    ASSERT_NEAR_REL(v, 1.5905225257008795, 1e-14);
    ASSERT_OK(pks_cv(x, n, &v));
    ASSERT_NEAR_REL(v, 0.13293919617798397, 1e-14);
    ASSERT_OK(pks_median(x, n, NULL, &v));
    ASSERT_DBL_EQ(v, 11.75);
    ASSERT_OK(pks_mad(x, n, work, &v));
    ASSERT_DBL_EQ(v, 1.25);
    static const double qs[] = {0, 0.1, 0.25, 0.9, 1};
    static const double qv[] = {10.25, 10.4, 10.75, 13.700000000000001, 14.75};
    for (size_t i = 0; i < N_OF(qs); i++) {
        ASSERT_OK(pks_quantile(x, n, qs[i], work, &v));
        ASSERT_NEAR_REL(v, qv[i], 1e-14);
    }

    static const double y[] = {4.0, 1.0, 3.0, 2.0};
    ASSERT_OK(pks_median(y, 4, NULL, &v));
    ASSERT_DBL_EQ(v, 2.5);
    ASSERT_OK(pks_mad(y, 4, NULL, &v));
    ASSERT_DBL_EQ(v, 1.0);
    ASSERT_OK(pks_quantile(y, 4, 0.3, NULL, &v));
    ASSERT_NEAR_REL(v, 1.9, 1e-14);
    ASSERT_DBL_EQ(y[0], 4.0); /* the input is not sorted in place */

    static const double ratios[] = {1.10, 0.95, 1.02, 0.80, 1.25};
    ASSERT_OK(pks_geomean(ratios, N_OF(ratios), &v));
    ASSERT_NEAR_REL(v, 1.012845708831957, 1e-14);

    pks_summary s;
    ASSERT_OK(pks_summarize(x, n, NULL, &s));
    ASSERT_EQ(s.n, n);
    ASSERT_DBL_EQ(s.min, 10.25);
    ASSERT_DBL_EQ(s.max, 14.75);
    ASSERT_DBL_EQ(s.median, 11.75);
    ASSERT_DBL_EQ(s.mad, 1.25);
    ASSERT_NEAR_REL(s.mean, 11.964285714285714, 1e-14);
    ASSERT_NEAR_REL(s.sd, 1.5905225257008795, 1e-14);
    ASSERT_NEAR_REL(s.cv, 0.13293919617798397, 1e-14);
    ASSERT_OK(pks_summarize(x, 1, NULL, &s));
    ASSERT(isnan(s.sd) && isnan(s.cv));
    ASSERT_DBL_EQ(s.median, 12.5);

    /* Errors: empty, non-finite, undefined. */
    static const double bad[] = {1.0, NAN};
    static const double nonpos[] = {1.0, 0.0};
    ASSERT_EQ(pks_mean(x, 0, &v), -EINVAL);
    ASSERT_EQ(pks_mean(bad, 2, &v), -EINVAL);
    ASSERT_EQ(pks_median(NULL, 3, NULL, &v), -EINVAL);
    ASSERT_EQ(pks_quantile(x, n, 1.5, NULL, &v), -EINVAL);
    ASSERT_EQ(pks_sd(x, 1, &v), -EDOM);
    ASSERT_EQ(pks_geomean(nonpos, 2, &v), -EDOM);
    ASSERT(isnan(pks_quantile_sorted(x, 0, 0.5)));
}

/* ==== Mann-Whitney U ========================================================================= */

/* The generated samples of the larger cases, identical in C and Python:
 *   a_i = 1000 + (i*37) % 101 + i/1000,  b_j = 1010 + shift + (j*53) % 97 + j/1000. */
static void gen(double *a, size_t n1, double *b, size_t n2, double shift)
{
    for (size_t i = 0; i < n1; i++)
        a[i] = (double)(1000 + (i * 37) % 101) + (double)i / 1000;
    for (size_t j = 0; j < n2; j++)
        b[j] = (1010 + shift + (double)((j * 53) % 97)) + (double)j / 1000;
}

struct mwu_case {
    const char *name;
    double a[12], b[12];
    size_t na, nb;
    double u, p;
    pks_mwu_method method;
};

/* scipy 1.10.1, two-sided, U of the first sample:
 *
 *   from scipy.stats import mannwhitneyu
 *   r = mannwhitneyu(a, b, method=M, use_continuity=True, alternative="two-sided")
 *   r.statistic, r.pvalue
 *
 * with M = "exact" for the tie-free cases and "asymptotic" for those with ties (our module picks
 * the same method by itself). For gen(n1, n2, shift) see gen() above:
 *
 *   def gen(n1, n2, shift=0):
 *       return ([1000 + ((i*37) % 101) + i/1000 for i in range(n1)],
 *               [1010 + shift + ((j*53) % 97) + j/1000 for j in range(n2)])
 */
static const struct mwu_case mwu_small[] = {
    {"separated_5x5",
     {1.1, 2.3, 3.5, 4.0, 5.2},
     {6.1, 7.3, 8.0, 9.9, 10.4},
     5,
     5,
     0.0,
     0.007936507936507936,
     PKS_MWU_EXACT},
    {"overlap_6x7",
     {10.2, 11.5, 9.8, 12.1, 10.9, 11.1},
     {11.9, 12.4, 10.7, 13.0, 12.8, 11.7, 12.2},
     6,
     7,
     6.0,
     0.03496503496503496,
     PKS_MWU_EXACT},
    {"overlap_8x8",
     {101.3, 99.7, 102.5, 100.4, 98.9, 103.1, 100.9, 101.8},
     {102.2, 104.0, 100.1, 103.6, 105.2, 101.5, 104.7, 102.9},
     8,
     8,
     12.0,
     0.037917637917637914,
     PKS_MWU_EXACT},
    {"unequal_3x9",
     {5.5, 7.25, 6.0},
     {6.5, 8.0, 9.1, 7.0, 8.6, 9.9, 7.75, 10.3, 8.3},
     3,
     9,
     2.0,
     0.03636363636363636,
     PKS_MWU_EXACT},
    {"centered_2x2", {1, 4}, {2, 3}, 2, 2, 2.0, 1.0, PKS_MWU_EXACT},
    {"ties_7x8",
     {3, 4, 4, 5, 6, 6, 7},
     {5, 6, 6, 7, 8, 8, 9, 9},
     7,
     8,
     8.0,
     0.02216484700286512,
     PKS_MWU_NORMAL},
    {"ties_timings_10x9",
     {120, 121, 121, 122, 125, 119, 121, 123, 122, 124},
     {123, 125, 125, 126, 122, 127, 124, 125, 128},
     10,
     9,
     9.5,
     0.003937315969400781,
     PKS_MWU_NORMAL},
    {"all_tied_6x6", {2, 2, 2, 2, 2, 2}, {2, 2, 2, 2, 2, 2}, 6, 6, 18.0, 1.0, PKS_MWU_NORMAL},
};

TEST_IMPL(stats_mwu_small_reference)
{
    for (size_t i = 0; i < N_OF(mwu_small); i++) {
        const struct mwu_case *c = &mwu_small[i];
        pks_mwu r;
        ASSERT_OK(pks_mwu_test(c->a, c->na, c->b, c->nb, NULL, &r));
        if (r.method != c->method || r.u != c->u || !(fabs(r.p - c->p) <= 1e-12 * c->p))
            pk_test_fail(__FILE__, __LINE__, "%s: got %s U=%g p=%.17g, want %s U=%g p=%.17g",
                         c->name, pks_mwu_method_name(r.method), r.u, r.p,
                         pks_mwu_method_name(c->method), c->u, c->p);
        ASSERT_EQ(r.ties, c->method == PKS_MWU_NORMAL);
        /* Swapping the samples mirrors U and keeps p. */
        pks_mwu s;
        ASSERT_OK(pks_mwu_test(c->b, c->nb, c->a, c->na, NULL, &s));
        ASSERT_DBL_EQ(s.u, (double)(c->na * c->nb) - c->u);
        ASSERT_NEAR_REL(s.p, r.p, 1e-12);
    }
    static const double one[] = {1.0};
    pks_mwu r;
    ASSERT_EQ(pks_mwu_test(one, 0, one, 1, NULL, &r), -EINVAL);
    ASSERT_EQ(pks_mwu_test(one, 1, NULL, 1, NULL, &r), -EINVAL);
}

/* scipy 1.10.1 on gen():
 *   gen(20, 20)        exact       U=186   p=0.7179502760583187
 *   gen(50, 50)        exact       U=1127  p=0.4000290322923764
 *   gen(50, 50, 25.5)  exact       U=603   p=4.540652550898871e-06
 *   gen(50, 50, 60.5)  exact       U=152   p=9.662382344738617e-18
 *   gen(50, 51)        asymptotic  U=1156  p=0.4208807363371543
 *   gen(60, 45)        asymptotic  U=1209  p=0.36294324344964735
 *   gen(50, 50, 60.5)  asymptotic          p=3.849888582197091e-14  (what exact avoids)
 */
TEST_IMPL(stats_mwu_large_reference)
{
    static const struct {
        size_t n1, n2;
        double shift, u, p;
        pks_mwu_method method;
    } cases[] = {
        {20, 20, 0, 186, 0.7179502760583187, PKS_MWU_EXACT},
        {50, 50, 0, 1127, 0.4000290322923764, PKS_MWU_EXACT},
        {50, 50, 25.5, 603, 4.540652550898871e-06, PKS_MWU_EXACT},
        {50, 50, 60.5, 152, 9.662382344738617e-18, PKS_MWU_EXACT},
        {50, 51, 0, 1156, 0.4208807363371543, PKS_MWU_NORMAL},
        {60, 45, 0, 1209, 0.36294324344964735, PKS_MWU_NORMAL},
    };
    double a[60], b[60];
    for (size_t i = 0; i < N_OF(cases); i++) {
        gen(a, cases[i].n1, b, cases[i].n2, cases[i].shift);
        size_t need = pks_mwu_work_size(cases[i].n1, cases[i].n2);
        double *work = malloc(need * sizeof *work);
        ASSERT(work != NULL);
        pks_mwu r, r2;
        ASSERT_OK(pks_mwu_test(a, cases[i].n1, b, cases[i].n2, work, &r));
        ASSERT_OK(pks_mwu_test(a, cases[i].n1, b, cases[i].n2, NULL, &r2));
        free(work);
        ASSERT(!r.ties);
        ASSERT_EQ(r.method, cases[i].method);
        ASSERT_DBL_EQ(r.u, cases[i].u);
        ASSERT_NEAR_REL(r.p, cases[i].p, 1e-10);
        ASSERT_DBL_EQ(r2.p, r.p); /* own scratch or ours: the same answer */
    }
}

/* ==== Holm =================================================================================== */

/* By hand and in Python (statsmodels is not installed; this is its "holm" definition):
 *
 *   def holm(p):
 *       m = len(p); order = sorted(range(m), key=lambda i: p[i]); adj = [0] * m; run = 0
 *       for k, i in enumerate(order):
 *           run = max(run, min(1, (m - k) * p[i])); adj[i] = run
 *       return adj
 *
 *   holm([0.01, 0.04, 0.03, 0.005, 0.5]) -> [0.04, 0.09, 0.09, 0.025, 0.5]
 *       (sorted: .005·5 = .025, .01·4 = .04, .03·3 = .09, .04·2 = .08 → .09 monotone, .5·1)
 *   holm([0.02, 0.02, 0.9, 0.001])        -> [0.06, 0.06, 0.9, 0.004]
 *   holm([0.3, 0.6, 0.2])                 -> [0.6000000000000001] * 3
 *   holm([0.6, 0.7])                      -> [1, 1]   (capped)
 */
TEST_IMPL(stats_holm_reference)
{
    static const struct {
        size_t n;
        double p[5], adj[5];
    } cases[] = {
        {5, {0.01, 0.04, 0.03, 0.005, 0.5}, {0.04, 0.09, 0.09, 0.025, 0.5}},
        {4, {0.02, 0.02, 0.9, 0.001}, {0.06, 0.06, 0.9, 0.004}},
        {3, {0.3, 0.6, 0.2}, {0.6000000000000001, 0.6000000000000001, 0.6000000000000001}},
        {2, {0.6, 0.7}, {1, 1}},
        {1, {0.03}, {0.03}},
    };
    for (size_t c = 0; c < N_OF(cases); c++) {
        double adj[5], inplace[5];
        size_t work[5];
        ASSERT_OK(pks_holm(cases[c].p, cases[c].n, adj, work));
        memcpy(inplace, cases[c].p, sizeof inplace);
        ASSERT_OK(pks_holm(inplace, cases[c].n, inplace, NULL));
        for (size_t i = 0; i < cases[c].n; i++) {
            ASSERT_NEAR_REL(adj[i], cases[c].adj[i], 1e-15);
            ASSERT_DBL_EQ(inplace[i], adj[i]);
            ASSERT(adj[i] >= cases[c].p[i] && adj[i] <= 1);
        }
    }
    static const double bad[] = {0.5, 1.5};
    double out[2];
    ASSERT_EQ(pks_holm(bad, 2, out, NULL), -EINVAL);
    ASSERT_EQ(pks_holm(bad, 0, out, NULL), -EINVAL);
}

/* ==== Bootstrap ============================================================================== */

TEST_IMPL(stats_bootstrap_deterministic)
{
    pks_rng rng;
    pks_rng_seed(&rng, 2024);
    double base[20], cand[20];
    lognormal(&rng, base, 20, 100.0, 0.03);
    lognormal(&rng, cand, 20, 105.0, 0.03);

    pks_bootstrap opts = {.iterations = 4000, .level = 0.95, .seed = 1};
    size_t need = pks_bootstrap_work_size(20, 20, opts.iterations);
    double *work = malloc(need * sizeof *work);
    ASSERT(work != NULL);
    pks_interval a, b, c;
    ASSERT_OK(pks_bootstrap_ratio(base, 20, cand, 20, &opts, NULL, &a));
    ASSERT_OK(pks_bootstrap_ratio(base, 20, cand, 20, &opts, work, &b));
    free(work);
    ASSERT(memcmp(&a, &b, sizeof a) == 0); /* same seed: bit-identical */
    opts.seed = 2;
    ASSERT_OK(pks_bootstrap_ratio(base, 20, cand, 20, &opts, NULL, &c));
    ASSERT(c.lo != a.lo || c.hi != a.hi);  /* another seed: other resamples */
    ASSERT_DBL_EQ(c.estimate, a.estimate); /* the point estimate takes no randomness */
    ASSERT_NEAR_ABS(c.lo, a.lo, 0.01);
    ASSERT_NEAR_ABS(c.hi, a.hi, 0.01);
    ASSERT(a.lo < a.estimate && a.estimate < a.hi);
    ASSERT(a.lo > 1.0 && a.hi < 1.10); /* a 5% shift with 3% noise: CI near 1.05 */

    /* Defaults (NULL options) work; a wider level gives a wider interval. */
    pks_interval d, e;
    ASSERT_OK(pks_bootstrap_ratio(base, 20, cand, 20, NULL, NULL, &d));
    ASSERT_OK(pks_bootstrap_ratio(base, 20, cand, 20,
                                  &(pks_bootstrap){.level = 0.99, .iterations = 10000}, NULL, &e));
    ASSERT(e.lo <= d.lo && e.hi >= d.hi);

    /* Constant samples: the interval collapses onto the ratio. */
    static const double two[] = {2, 2, 2, 2, 2, 2}, three[] = {3, 3, 3, 3, 3, 3};
    ASSERT_OK(pks_bootstrap_ratio(two, 6, three, 6, &opts, NULL, &d));
    ASSERT_DBL_EQ(d.lo, 1.5);
    ASSERT_DBL_EQ(d.hi, 1.5);

    static const double nonpos[] = {1, 0, 2};
    ASSERT_EQ(pks_bootstrap_ratio(nonpos, 3, two, 6, NULL, NULL, &d), -EDOM);
    ASSERT_EQ(pks_bootstrap_ratio(two, 6, two, 6, &(pks_bootstrap){.level = 1.5}, NULL, &d),
              -EINVAL);
}

/* ==== Minimum detectable effect ============================================================== */

TEST_IMPL(stats_mde_from_aa)
{
    pks_rng rng;
    pks_rng_seed(&rng, 99);
    double a1[20], a2[20];
    lognormal(&rng, a1, 20, 100.0, 0.03);
    lognormal(&rng, a2, 20, 100.0, 0.03);
    pks_bootstrap opts = {.iterations = 4000, .seed = 5};
    double mde, mde2;
    pks_interval ci;
    ASSERT_OK(pks_mde(a1, 20, a2, 20, 0.05, &opts, NULL, &mde, &ci));
    ASSERT_OK(pks_mde(a1, 20, a2, 20, 0, &opts, NULL, &mde2, NULL)); /* 0: alpha 0.05 */
    ASSERT_DBL_EQ(mde, mde2);
    ASSERT_DBL_EQ(mde, fmax(fabs(ci.lo - 1), fabs(ci.hi - 1)));
    /* With 3% noise and n = 20 the ratio of medians wanders about ±2–3%. */
    ASSERT(mde > 0.005 && mde < 0.06);
    printf("A/A n=20, 3%% lognormal noise: ratio %.4f [%.4f, %.4f], MDE %.2f%%\n", ci.estimate,
           ci.lo, ci.hi, 100 * mde);
    /* A stricter alpha means a wider CI: a higher floor. */
    double strict;
    ASSERT_OK(pks_mde(a1, 20, a2, 20, 0.01, &opts, NULL, &strict, NULL));
    ASSERT(strict >= mde);
    /* More noise, higher floor. */
    double n1[20], n2[20], noisy;
    lognormal(&rng, n1, 20, 100.0, 0.10);
    lognormal(&rng, n2, 20, 100.0, 0.10);
    ASSERT_OK(pks_mde(n1, 20, n2, 20, 0.05, &opts, NULL, &noisy, NULL));
    ASSERT(noisy > mde);
    ASSERT_EQ(pks_mde(a1, 20, a2, 20, 1.0, &opts, NULL, &mde, NULL), -EINVAL);
}

/* ==== Verdict ================================================================================ */

TEST_IMPL(stats_verdict_rules)
{
    static const struct {
        double p, alpha, delta, threshold, floor;
        pks_verdict want;
    } cases[] = {
        {0.001, 0.05, 0.10, 0.05, 0, PKS_REGRESSED},
        {0.001, 0.05, -0.10, 0.05, 0, PKS_IMPROVED},
        {0.001, 0, 0.10, 0.05, 0, PKS_REGRESSED},       /* alpha 0: default 0.05 */
        {0.06, 0.05, 0.10, 0.05, 0, PKS_NO_CHANGE},     /* not significant */
        {0.05, 0.05, 0.10, 0.05, 0, PKS_NO_CHANGE},     /* p < alpha is strict */
        {0.001, 0.05, 0.03, 0.05, 0, PKS_NO_CHANGE},    /* below the threshold */
        {0.001, 0.05, 0.05, 0.05, 0, PKS_NO_CHANGE},    /* |delta| > bar is strict */
        {0.001, 0.05, 0.04, 0.02, 0.05, PKS_NO_CHANGE}, /* the noise floor raises the bar */
        {0.001, 0.05, -0.04, 0.02, 0.05, PKS_NO_CHANGE},
        {0.001, 0.05, 0.04, 0.02, 0.03, PKS_REGRESSED}, /* above both */
        {0.001, 0.05, 0.01, 0, 0, PKS_REGRESSED},       /* no threshold, no floor */
        {NAN, 0.05, 0.10, 0, 0, PKS_NO_CHANGE},
        {0.001, 0.05, NAN, 0, 0, PKS_NO_CHANGE},
    };
    for (size_t i = 0; i < N_OF(cases); i++) {
        pks_decision d = pks_decide(&(pks_decision_in){
            .p = cases[i].p,
            .alpha = cases[i].alpha,
            .delta = cases[i].delta,
            .threshold = cases[i].threshold,
            .noise_floor = cases[i].floor,
        });
        if (d.verdict != cases[i].want || d.reason != PKS_DECIDABLE)
            pk_test_fail(__FILE__, __LINE__, "case %zu: got %s, want %s", i,
                         pks_verdict_name(d.verdict), pks_verdict_name(cases[i].want));
        ASSERT_DBL_EQ(d.bar, fmax(cases[i].threshold, cases[i].floor));
    }
    ASSERT_STR_EQ(pks_verdict_name(PKS_NO_CHANGE), "~");
    ASSERT_STR_EQ(pks_verdict_name(PKS_REGRESSED), "regressed");
    ASSERT_STR_EQ(pks_verdict_name(PKS_IMPROVED), "improved");
    ASSERT_STR_EQ(pks_mwu_method_name(PKS_MWU_EXACT), "exact");
}

TEST_IMPL(stats_undecidable)
{
    ASSERT_EQ(pks_check_samples(6, 6, 0.01, 0.01, 0.10), PKS_DECIDABLE);
    ASSERT_EQ(pks_check_samples(5, 20, 0.01, 0.01, 0.10), PKS_TOO_FEW_SAMPLES);
    ASSERT_EQ(pks_check_samples(20, 5, 0.01, 0.01, 0.10), PKS_TOO_FEW_SAMPLES);
    ASSERT_EQ(pks_check_samples(20, 20, 0.15, 0.01, 0.10), PKS_TOO_NOISY);
    ASSERT_EQ(pks_check_samples(20, 20, 0.01, 0.15, 0.10), PKS_TOO_NOISY);
    ASSERT_EQ(pks_check_samples(20, 20, 0.10, 0.10, 0.10), PKS_DECIDABLE);   /* ≤ limit */
    ASSERT_EQ(pks_check_samples(3, 3, 0.5, 0.5, 0.10), PKS_TOO_FEW_SAMPLES); /* checked first */
    ASSERT_EQ(pks_check_samples(20, 20, 0.12, 0.01, 0), PKS_TOO_NOISY);      /* default 0.10 */
    ASSERT_EQ(pks_check_samples(20, 20, 0.50, 0.50, -1), PKS_DECIDABLE);     /* disabled */
    ASSERT_EQ(pks_check_samples(20, 20, NAN, 0.01, 0.10), PKS_TOO_NOISY);

    /* Through the pipeline: a strong shift on 5 samples is still undecidable, and so is one
     * measured with 20% noise. */
    pks_rng rng;
    pks_rng_seed(&rng, 3);
    double base[20], cand[20];
    lognormal(&rng, base, 5, 100.0, 0.01);
    lognormal(&rng, cand, 5, 150.0, 0.01);
    pks_series s;
    ASSERT_OK(pks_series_compare(base, 5, cand, 5, &(pks_bootstrap){.iterations = 500}, NULL, &s));
    pks_decision d = pks_decide(&(pks_decision_in){
        .p = s.mwu.p,
        .delta = s.delta,
        .samples = pks_check_samples(s.base.n, s.cand.n, s.base.cv, s.cand.cv, 0.10),
    });
    ASSERT_EQ(d.verdict, PKS_UNDECIDABLE);
    ASSERT_EQ(d.reason, PKS_TOO_FEW_SAMPLES);
    ASSERT_STR_EQ(pks_undecidable_name(d.reason), "too few samples");

    lognormal(&rng, base, 20, 100.0, 0.20);
    lognormal(&rng, cand, 20, 100.0, 0.20);
    ASSERT_OK(
        pks_series_compare(base, 20, cand, 20, &(pks_bootstrap){.iterations = 500}, NULL, &s));
    ASSERT(s.base.cv > 0.10 || s.cand.cv > 0.10);
    d = pks_decide(&(pks_decision_in){
        .p = s.mwu.p,
        .delta = s.delta,
        .samples = pks_check_samples(s.base.n, s.cand.n, s.base.cv, s.cand.cv, 0.10),
    });
    ASSERT_EQ(d.verdict, PKS_UNDECIDABLE);
    ASSERT_EQ(d.reason, PKS_TOO_NOISY);
    ASSERT_STR_EQ(pks_undecidable_name(d.reason), "too noisy");
}

/* ==== Synthetic runs ========================================================================= */

/* One series through the compare pipeline: series statistics, the (single-series) Holm step, the
 * sample check and the verdict. */
static pks_decision
judge(const double *base, const double *cand, size_t n, double threshold, double noise)
{
    pks_series s;
    ASSERT_OK(pks_series_compare(base, n, cand, n, &(pks_bootstrap){.iterations = 500}, NULL, &s));
    double p;
    ASSERT_OK(pks_holm(&s.mwu.p, 1, &p, NULL));
    return pks_decide(&(pks_decision_in){
        .p = p,
        .alpha = 0.05,
        .delta = s.delta,
        .threshold = threshold,
        .noise_floor = noise,
        .samples = pks_check_samples(s.base.n, s.cand.n, s.base.cv, s.cand.cv, 0.10),
    });
}

/* 200 A/A pairs, n = 20 each, from one lognormal with 4% noise, judged with no threshold and no
 * noise floor (the p-value alone decides): "regressed" must come out at most alpha = 5% of the
 * time. A second pass corrects the 200 p-values together with Holm, as compare would across 200
 * series: then not one may be flagged. */
TEST_IMPL(stats_synthetic_aa_false_positive)
{
    enum { PAIRS = 200, N = 20 };
    pks_rng rng;
    pks_rng_seed(&rng, 20240601);
    double base[N], cand[N], p[PAIRS], delta[PAIRS];
    int regressed = 0, improved = 0;
    for (int i = 0; i < PAIRS; i++) {
        lognormal(&rng, base, N, 1000.0, 0.04);
        lognormal(&rng, cand, N, 1000.0, 0.04);
        pks_decision d = judge(base, cand, N, 0, 0);
        ASSERT_NE(d.verdict, PKS_UNDECIDABLE);
        regressed += d.verdict == PKS_REGRESSED;
        improved += d.verdict == PKS_IMPROVED;
        pks_mwu r;
        double mb, mc;
        ASSERT_OK(pks_mwu_test(base, N, cand, N, NULL, &r));
        ASSERT_EQ(r.method, PKS_MWU_EXACT);
        ASSERT_OK(pks_median(base, N, NULL, &mb));
        ASSERT_OK(pks_median(cand, N, NULL, &mc));
        p[i] = r.p;
        delta[i] = mc / mb - 1;
    }
    printf("A/A: %d/%d regressed (%.1f%%), %d/%d improved, alpha 5%%\n", regressed, PAIRS,
           100.0 * regressed / PAIRS, improved, PAIRS);
    ASSERT_LE(regressed, PAIRS * 5 / 100);
    ASSERT_LE(regressed + improved, PAIRS * 5 / 100 * 2);

    ASSERT_OK(pks_holm(p, PAIRS, p, NULL));
    int flagged = 0;
    for (int i = 0; i < PAIRS; i++)
        flagged +=
            pks_decide(&(pks_decision_in){.p = p[i], .delta = delta[i]}).verdict != PKS_NO_CHANGE;
    printf("A/A with Holm across %d: %d flagged\n", PAIRS, flagged);
    ASSERT_EQ(flagged, 0);
}

/* A 10% slowdown with n = 20 and 3% noise is caught every time, with a 5% threshold and the noise
 * floor of an A/A run; a 1% slowdown under the same 5% threshold is never reported, even when
 * its p-value is small. */
TEST_IMPL(stats_synthetic_shift)
{
    enum { TRIALS = 25, N = 20 };
    pks_rng rng;
    pks_rng_seed(&rng, 777);
    double a1[N], a2[N], base[N], cand[N];
    lognormal(&rng, a1, N, 1000.0, 0.03);
    lognormal(&rng, a2, N, 1000.0, 0.03);
    double noise;
    ASSERT_OK(pks_mde(a1, N, a2, N, 0.05, &(pks_bootstrap){.iterations = 2000, .seed = 1}, NULL,
                      &noise, NULL));
    ASSERT(noise < 0.10);

    int caught = 0, small_reported = 0, small_significant = 0;
    for (int t = 0; t < TRIALS; t++) {
        lognormal(&rng, base, N, 1000.0, 0.03);
        lognormal(&rng, cand, N, 1100.0, 0.03);
        caught += judge(base, cand, N, 0.05, noise).verdict == PKS_REGRESSED;

        lognormal(&rng, base, N, 1000.0, 0.03);
        lognormal(&rng, cand, N, 1010.0, 0.03);
        pks_decision d = judge(base, cand, N, 0.05, noise);
        small_reported += d.verdict == PKS_REGRESSED || d.verdict == PKS_IMPROVED;
        ASSERT_NE(d.verdict, PKS_UNDECIDABLE);
        /* Without any bar the same data would sometimes look significant. */
        small_significant += judge(base, cand, N, 0, 0).verdict != PKS_NO_CHANGE;
    }
    printf("noise floor (A/A MDE) %.2f%%; 10%% slowdown: %d/%d regressed; 1%% slowdown under a "
           "5%% threshold: %d/%d reported (%d/%d significant with no bar)\n",
           100 * noise, caught, TRIALS, small_reported, TRIALS, small_significant, TRIALS);
    ASSERT_EQ(caught, TRIALS);
    ASSERT_EQ(small_reported, 0);
}
