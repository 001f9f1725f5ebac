/*
 * Paired by round (harness/common/paired.h, results/verdict.h): Wilcoxon's signed-rank test
 * against scipy 1.10.1 under /usr/bin/python3 (each block quotes the call), the per-round ratios'
 * median, CI and cv, and the verdict that uses them: two series whose every round moved both
 * alike (a drifting machine) are too noisy apart, yet their per-round ratios decide the pair.
 */
#include "test.h"

#include "common/paired.h"
#include "common/stats.h"
#include "results/verdict.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NEAR_REL(a, b, tol) (fabs((a) - (b)) <= (tol)*fabs(b))

TEST_IMPL(paired_wilcoxon_reference)
{
    /* n = 10, no ties, the negative differences at ranks 1 and 7 (W− = 8):
     *   d = [(-1 if k in (1,7) else 1) * 0.001 * k for k in range(1, 11)]
     *   stats.wilcoxon(d, method='exact')  ->  statistic=8.0, pvalue=0.048828125 */
    double d[12];
    for (int k = 1; k <= 10; k++)
        d[k - 1] = (k == 1 || k == 7 ? -1 : 1) * 0.001 * k;
    pks_wilcoxon w;
    ASSERT_EQ(pks_wilcoxon_test(d, 10, NULL, &w), 0);
    ASSERT_EQ(w.method, PKS_MWU_EXACT);
    ASSERT(w.w_plus == 47 && w.n == 10 && !w.ties);
    ASSERT(w.p == 0.048828125);

    /* Zero differences are dropped first (Wilcoxon's rule), then the rest is exact: the same
     * p. (scipy switches to the normal approximation when zeros are present.) */
    d[10] = d[11] = 0;
    ASSERT_EQ(pks_wilcoxon_test(d, 12, NULL, &w), 0);
    ASSERT(w.n == 10 && w.p == 0.048828125 && w.method == PKS_MWU_EXACT);

    /* Ties among |d| (log 1.02 twice): the normal approximation with the tie and continuity
     * corrections.
     *   r = [1.01,1.03,0.99,1.05,1.02,1.04,0.98,1.06,1.07,1.02]
     *   stats.wilcoxon(np.log(r), method='approx', correction=True).pvalue
     *     -> 0.04135891048189439 */
    const double r[] = {1.01, 1.03, 0.99, 1.05, 1.02, 1.04, 0.98, 1.06, 1.07, 1.02};
    double lr[10];
    for (int i = 0; i < 10; i++)
        lr[i] = log(r[i]);
    ASSERT_EQ(pks_wilcoxon_test(lr, 10, NULL, &w), 0);
    ASSERT(w.ties && w.method == PKS_MWU_NORMAL);
    ASSERT(NEAR_REL(w.p, 0.04135891048189439, 1e-12));

    /* Beyond 50 pairs, the normal approximation:
     *   d3 = np.sin(np.arange(1, 61) * 1.7) * 0.05 + 0.01
     *   stats.wilcoxon(d3, method='approx', correction=True) -> statistic=608.0,
     *     pvalue=0.02404988931934012 */
    double big[60];
    for (int k = 1; k <= 60; k++)
        big[k - 1] = sin(k * 1.7) * 0.05 + 0.01;
    ASSERT_EQ(pks_wilcoxon_test(big, 60, NULL, &w), 0);
    ASSERT(w.method == PKS_MWU_NORMAL && fmin(w.w_plus, 1830 - w.w_plus) == 608);
    ASSERT(NEAR_REL(w.p, 0.02404988931934012, 1e-12));

    /* 60 differences of which 15 are zero: the other 45 are ranked exactly, as if alone (the
     * scratch must hold the exact table although 60 is past the limit; ASan checks it). */
    double some_zero[60], nonzero[45];
    for (int k = 0, z = 0; k < 60; k++) {
        some_zero[k] = k % 4 == 3 ? 0 : sin((k + 1) * 1.3) * 0.05 + 0.005;
        if (k % 4 != 3)
            nonzero[z++] = some_zero[k];
    }
    pks_wilcoxon alone;
    ASSERT_EQ(pks_wilcoxon_test(some_zero, 60, NULL, &w), 0);
    ASSERT_EQ(pks_wilcoxon_test(nonzero, 45, NULL, &alone), 0);
    ASSERT(w.n == 45 && w.method == PKS_MWU_EXACT && w.p == alone.p && w.w_plus == alone.w_plus);

    /* All 20 positive: stats.wilcoxon(np.arange(1, 21) * 0.01, method='exact') ->
     * pvalue=1.9073486328125e-06 (2 / 2^20). */
    double pos[20];
    for (int k = 0; k < 20; k++)
        pos[k] = 0.01 * (k + 1);
    ASSERT_EQ(pks_wilcoxon_test(pos, 20, NULL, &w), 0);
    ASSERT(w.p == 1.9073486328125e-06);

    /* Nothing to rank: p = 1. Bad input: -EINVAL. */
    double zeros[3] = {0, 0, 0};
    ASSERT_EQ(pks_wilcoxon_test(zeros, 3, NULL, &w), 0);
    ASSERT(w.p == 1 && w.n == 0);
    double bad[2] = {1, NAN};
    ASSERT_EQ(pks_wilcoxon_test(bad, 2, NULL, &w), -EINVAL);
    ASSERT_EQ(pks_wilcoxon_test(NULL, 2, NULL, &w), -EINVAL);
}

TEST_IMPL(paired_compare_ratios)
{
    /* Per-round ratios 1.00 .. 1.10 in 11 rounds whose level swings by 2x: the median ratio is
     * 1.05 whatever the level did, and the CI brackets it. */
    double base[11], cand[11];
    for (int i = 0; i < 11; i++) {
        double level = i % 2 ? 2.0e5 : 1.0e5;
        base[i] = level;
        cand[i] = level * (1.00 + 0.01 * ((i * 7) % 11)); /* every ratio 1.00..1.10 once */
    }
    pks_paired a, b;
    pks_bootstrap boot = {.iterations = 2000, .seed = 7};
    ASSERT_EQ(pks_paired_compare(base, cand, 11, &boot, NULL, &a), 0);
    ASSERT(a.n == 11);
    ASSERT(NEAR_REL(a.ratio.estimate, 1.05, 1e-12));
    ASSERT(a.ratio.lo <= 1.05 && a.ratio.hi >= 1.05 && a.ratio.lo >= 1.0 && a.ratio.hi <= 1.1);
    /* MAD of 1.00..1.10 about 1.05 is 0.03: cv = 1.4826 · 0.03 / 1.05 */
    ASSERT(NEAR_REL(a.cv, PKS_MAD_NORMAL_SCALE * 0.03 / 1.05, 1e-9));
    /* The ratio 1.00 is a zero log ratio, dropped; the other ten are positive: p = 2 / 2^10. */
    ASSERT(a.test.n == 10 && a.test.p < 0.01);
    /* The same seed gives the same numbers. */
    ASSERT_EQ(pks_paired_compare(base, cand, 11, &boot, NULL, &b), 0);
    ASSERT(a.ratio.lo == b.ratio.lo && a.ratio.hi == b.ratio.hi && a.test.p == b.test.p);

    /* The unpaired ratio of medians of the same samples cannot see it: the level dominates. */
    pks_interval apart;
    ASSERT_EQ(pks_bootstrap_ratio(base, 11, cand, 11, &boot, NULL, &apart), 0);
    ASSERT(apart.hi - apart.lo > 5 * (a.ratio.hi - a.ratio.lo));

    base[3] = 0;
    ASSERT_EQ(pks_paired_compare(base, cand, 11, &boot, NULL, &a), -EDOM);
    ASSERT_EQ(pks_paired_compare(base, cand, 0, &boot, NULL, &a), -EINVAL);
}

TEST_IMPL(verdict_paired_by_round_decides_through_drift)
{
    /* 20 rounds on a machine whose speed drifts by ±30% from round to round; the candidate is
     * 8% slower than its base in every round, give or take 1%. Each series alone has a robust
     * cv far above 10%: too noisy apart. Paired, the ratios' cv is about 1%: slower, with a CI
     * around +8%. */
    enum { N = 20 };
    double base[N], cand[N];
    int rb[N], rc[N], shifted[N];
    pks_rng rng;
    pks_rng_seed(&rng, 11);
    for (int i = 0; i < N; i++) {
        double level = 1.0e6 * (1 + 0.3 * sin(i * 2.1));
        base[i] = level * exp(0.005 * pks_rng_normal(&rng));
        cand[i] = level * 1.08 * exp(0.005 * pks_rng_normal(&rng));
        rb[i] = rc[i] = i + 1;
        shifted[i] = i + 1 + N; /* another attempt's rounds: nothing in common */
    }
    pkb_verdict v[3] = {
        {.name = "s/paired",
         .base = base,
         .nbase = N,
         .cand = cand,
         .ncand = N,
         .base_round = rb,
         .cand_round = rc},
        {.name = "s/apart", .base = base, .nbase = N, .cand = cand, .ncand = N},
        {.name = "s/no-common-round",
         .base = base,
         .nbase = N,
         .cand = cand,
         .ncand = N,
         .base_round = rb,
         .cand_round = shifted},
    };
    ASSERT_EQ(pkb_verdict_family(v, 3, &(pkb_verdict_options){.threshold = 0.05}), 0);

    ASSERT(v[0].paired && v[0].pair.n == N);
    ASSERT_EQ(v[0].d.verdict, PKS_REGRESSED);
    ASSERT(v[0].s.ratio.lo > 1.06 && v[0].s.ratio.hi < 1.10);
    ASSERT(NEAR_REL(v[0].s.delta, 0.08, 0.1));
    ASSERT(pkb_target_check(&v[0], 1.10, false) == PKB_TARGET_MET);

    ASSERT(!v[1].paired);
    ASSERT_EQ(v[1].d.verdict, PKS_UNDECIDABLE);
    ASSERT_EQ(v[1].d.reason, PKS_TOO_NOISY);
    ASSERT(!v[2].paired);
    ASSERT_EQ(v[2].d.verdict, PKS_UNDECIDABLE);

    /* A paired pair whose ratios themselves scatter is too noisy, and says which cv. */
    for (int i = 0; i < N; i++)
        cand[i] = base[i] * (i % 2 ? 1.4 : 0.8);
    pkb_verdict w = {.name = "s/scatter",
                     .base = base,
                     .nbase = N,
                     .cand = cand,
                     .ncand = N,
                     .base_round = rb,
                     .cand_round = rc};
    ASSERT_EQ(pkb_verdict_family(&w, 1, NULL), 0);
    ASSERT(w.paired && w.d.verdict == PKS_UNDECIDABLE && w.d.reason == PKS_TOO_NOISY);
    char why[200];
    pkb_verdict_why(&w, 0, "base", "new", why, sizeof why);
    ASSERT(strstr(why, "the 95% CI of the 20 per-round ratios spans ±") != NULL);

    /* 40 rounds of a rival twice as slow whose own noise scatters the ratios by about 12%: a cv
     * above the limit, which no number of rounds would bring down, but the ratio's CI is a few
     * percent wide, so the rounds decide it (the noise check holds the CI's half-width). */
    double b40[40], c40[40];
    int r40[40];
    for (int i = 0; i < 40; i++) {
        double level = 1.0e6 * (1 + 0.3 * sin(i * 2.1));
        b40[i] = level * 2 * exp(0.12 * pks_rng_normal(&rng));
        c40[i] = level;
        r40[i] = i + 1;
    }
    pkb_verdict x = {.name = "s/rival",
                     .base = b40,
                     .nbase = 40,
                     .cand = c40,
                     .ncand = 40,
                     .base_round = r40,
                     .cand_round = r40};
    ASSERT_EQ(pkb_verdict_family(&x, 1, NULL), 0);
    ASSERT(x.paired && x.pair.cv > 0.10);
    ASSERT(pks_paired_half_width(&x.pair) < 0.06);
    ASSERT_EQ(x.d.verdict, PKS_IMPROVED);
    ASSERT(pkb_target_check(&x, 1.0, true) == PKB_TARGET_MET);

    /* 8 rounds whose ratios scatter from 0.70 to 0.98: too noisy for a verdict at the 10%
     * threshold (the CI is more than ±10% wide), but the whole CI lies below 1, so "ahead" is
     * settled (the fan-out at scale's rust_tokio at N = 4096, 2026-12-06); scattered from 0.80 to
     * 1.08 it is not. */
    static const double ahead[8] = {0.70, 0.98, 0.76, 0.96, 0.84, 0.92, 0.74, 0.97};
    static const double astride[8] = {0.80, 1.08, 0.86, 1.04, 0.92, 1.00, 0.84, 1.06};
    for (int k = 0; k < 2; k++) {
        double b8[8], c8[8];
        int r8[8];
        for (int i = 0; i < 8; i++) {
            b8[i] = 1.0e6 * (1 + 0.2 * sin(i * 1.3));
            c8[i] = b8[i] * (k == 0 ? ahead : astride)[i];
            r8[i] = i + 1;
        }
        pkb_verdict y = {.name = "s/noisy",
                         .base = b8,
                         .nbase = 8,
                         .cand = c8,
                         .ncand = 8,
                         .base_round = r8,
                         .cand_round = r8};
        ASSERT_EQ(pkb_verdict_family(&y, 1, &(pkb_verdict_options){.threshold = 0.10}), 0);
        ASSERT(y.paired && y.d.verdict == PKS_UNDECIDABLE && y.d.reason == PKS_TOO_NOISY);
        if (k == 0) {
            ASSERT(y.s.ratio.hi < 1.0);
            ASSERT(pkb_target_check(&y, 1.0, true) == PKB_TARGET_MET);
            ASSERT(pkb_target_check(&y, 0.6, false) == PKB_TARGET_NOT_MET);
            ASSERT(pkb_target_check(&y, 0.8, false) == PKB_TARGET_UNDECIDABLE);
        } else {
            ASSERT(y.s.ratio.lo < 1.0 && y.s.ratio.hi > 1.0);
            ASSERT(pkb_target_check(&y, 1.0, true) == PKB_TARGET_UNDECIDABLE);
        }
    }
    /* Apart, the limit is widened by the noisier sample's cv: v[1] above (too noisy) meets a
     * limit only when its CI clears the limit by that cv, and fails one only the same way. */
    double wide = fmax(v[1].cv_base, v[1].cv_cand);
    ASSERT(wide > 0.10 && isfinite(v[1].s.ratio.lo) && isfinite(v[1].s.ratio.hi));
    ASSERT(pkb_target_check(&v[1], v[1].s.ratio.hi + wide / 2, false) == PKB_TARGET_UNDECIDABLE);
    ASSERT(pkb_target_check(&v[1], v[1].s.ratio.hi + wide * 1.01, false) == PKB_TARGET_MET);
    ASSERT(pkb_target_check(&v[1], v[1].s.ratio.lo - wide / 2, false) == PKB_TARGET_UNDECIDABLE);
    ASSERT(pkb_target_check(&v[1], v[1].s.ratio.lo - wide * 1.01, false) == PKB_TARGET_NOT_MET);
}
