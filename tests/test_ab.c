/*
 * pkbench ab's statistics (harness/common/sequential.h, harness/regress/ab.h) and the rule that
 * a decisive result is decided (harness/common/stats.h's pks_decide): the group-sequential
 * boundaries against scipy, the false alarms of an A/A run looked at block after block (with
 * the rule: at most alpha; looking naively: several times alpha), the looks of an ab file
 * replayed as the run took them, and a regression whose whole CI clears the bar no longer
 * called undecidable for the noise of its samples. The end-to-end runs are in test_ab_run.c.
 */
#include "test.h"

#include "common/paired.h"
#include "common/sequential.h"
#include "common/stats.h"
#include "regress/ab.h"
#include "regress/compare.h"
#include "synth.h"
#include "verdict_test.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The boundaries of a plan looked at t[0..k), the last one final. */
static void plan(pks_seq *s, const double *t, size_t k, double alpha, double scale)
{
    ASSERT_OK(pks_seq_init(s, alpha));
    for (size_t i = 0; i < k; i++) {
        double nominal;
        ASSERT_OK(pks_seq_look(s, t[i] * scale, t[i], i + 1 == k, &nominal));
        ASSERT(nominal == s->nominal[i]);
    }
}

TEST_IMPL(sequential_boundaries_match_reference)
{
    /* The reference: scipy 1.10.1 (/usr/bin/python3), each boundary solved with brentq so that
     * P(no |Z_j| ≥ z_j, j ≤ k) = 1 − alpha(t_k) under the looks' correlation √(t_i / t_j),
     * the probability from scipy.stats.multivariate_normal.cdf (Genz, abseps 1e-8):
     *   def spend(a, t): return a if t >= 1 else 2 - 2 * norm.cdf(norm.ppf(1 - a/2) / sqrt(t))
     *   t = [.2,.4,.6,.8,1], alpha .05  -> 4.38261, 3.09973, 2.55335, 2.25385, 2.06350
     *   t = [.3,.7,1],       alpha .05  -> 3.57839, 2.34544, 2.02381
     *   t = [.25,.5,1],      alpha .01  -> 5.15166, 3.64288, 2.57967 */
    static const double t5[] = {.2, .4, .6, .8, 1},
                        z5[] = {4.38261, 3.09973, 2.55335, 2.25385, 2.06350};
    static const double t3[] = {.3, .7, 1}, z3[] = {3.57839, 2.34544, 2.02381};
    static const double t3b[] = {.25, .5, 1}, z3b[] = {5.15166, 3.64288, 2.57967};
    struct {
        const double *t, *z;
        size_t k;
        double alpha;
    } cases[] = {{t5, z5, 5, 0.05}, {t3, z3, 3, 0.05}, {t3b, z3b, 3, 0.01}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int scaled = 0; scaled < 2; scaled++) { /* information in any unit: rounds */
            pks_seq s;
            plan(&s, cases[c].t, cases[c].k, cases[c].alpha, scaled ? 137 : 1);
            for (size_t i = 0; i < cases[c].k; i++) {
                if (fabs(s.z[i] - cases[c].z[i]) > 2e-4)
                    pk_test_fail(__FILE__, __LINE__, "case %zu look %zu: z %.5f, scipy %.5f", c, i,
                                 s.z[i], cases[c].z[i]);
                ASSERT(i == 0 || s.nominal[i] > s.nominal[i - 1]); /* early looks stricter */
                ASSERT(fabs(s.spent[i] - pks_spend_obf(cases[c].alpha, cases[c].t[i])) < 1e-6);
            }
            ASSERT(fabs(s.spent[cases[c].k - 1] - cases[c].alpha) < 1e-9);
            pks_seq_free(&s);
        }
    }

    /* A maximum re-estimated on the way: a fraction that goes back spends nothing new, and the
     * last look still spends exactly what is left. */
    pks_seq s;
    ASSERT_OK(pks_seq_init(&s, 0.05));
    double n1, n2, n3, n4;
    ASSERT_OK(pks_seq_look(&s, 10, 0.5, false, &n1));
    ASSERT_OK(pks_seq_look(&s, 20, 0.4, false, &n2)); /* the budget allowed more than thought */
    ASSERT(s.spent[1] == s.spent[0] && n2 == 0);
    ASSERT_OK(pks_seq_look(&s, 20, 0.9, false, &n3)); /* no new rounds: nothing to spend */
    ASSERT(n3 == 0 && s.spent[2] == s.spent[1]);
    ASSERT_OK(pks_seq_look(&s, 40, 0.95, true, &n4));
    ASSERT(fabs(s.spent[3] - 0.05) < 1e-9 && n4 > n1);
    double after;
    ASSERT_OK(pks_seq_look(&s, 50, 1, true, &after)); /* after the last look: nothing */
    ASSERT(after == 0);
    pks_seq_free(&s);

    ASSERT_EQ(pks_seq_init(&s, 0), -EINVAL);
    ASSERT_EQ(pks_seq_init(&s, 1), -EINVAL);
    ASSERT_OK(pks_seq_init(&s, 0.05));
    ASSERT_EQ(pks_seq_look(&s, 0, 0.5, false, &n1), -EINVAL);
    ASSERT_EQ(pks_seq_look(&s, 10, NAN, false, &n1), -EINVAL);
    pks_seq_free(&s);
    ASSERT(fabs(pks_norm_isf(0.025) - 1.959963984540054) < 1e-12);
    ASSERT(fabs(pks_norm_isf(1e-10) - 6.361340902404056) < 1e-9);
    ASSERT(fabs(pks_norm_sf(pks_norm_isf(1e-30)) / 1e-30 - 1) < 1e-9);
}

/* One simulated A/A run of m series, looked at every `block` rounds up to `rounds`: whether any
 * series was called changed (p below the look's level; naive: below alpha/m at every look). The
 * per-round log ratios are what two identical builds give: symmetric about 0, a tenth of them
 * from a five times wider spread (a neighbour's burst in one side's sample). */
static bool aa_run(pks_rng *rng,
                   const pks_seq *s,
                   size_t m,
                   size_t rounds,
                   size_t block,
                   bool naive,
                   double alpha,
                   double *d,
                   double *work)
{
    for (size_t j = 0; j < m; j++)
        for (size_t i = 0; i < rounds; i++)
            d[j * rounds + i] = 0.03 * pks_rng_normal(rng) * (pks_rng_uniform(rng) < 0.1 ? 5 : 1);
    for (size_t k = 0; k < rounds / block; k++) {
        double level = naive ? alpha / (double)m : s->nominal[k];
        for (size_t j = 0; j < m; j++) {
            pks_wilcoxon w;
            ASSERT_OK(pks_wilcoxon_test(&d[j * rounds], (k + 1) * block, work, &w));
            if (w.p < level)
                return true;
        }
    }
    return false;
}

TEST_IMPL(sequential_aa_false_alarms_stay_below_alpha)
{
    /* 2000 A/A runs of 6 series, looked at after every block of 10 rounds up to 100 (ten looks),
     * as pkbench ab looks: the rule (alpha/6 per series, spent by Lan-DeMets' O'Brien-Fleming
     * function, the boundaries at every look's fraction) against a test at alpha/6 at every
     * look. ab calls a series regressed or improved only when p is below its look's level (and
     * |delta| above the bar, which only removes alarms; a series decided unchanged takes no
     * more looks, which removes more): these runs bound its false alarms from above. */
    enum { M = 6, ROUNDS = 100, BLOCK = 10, RUNS = 2000 };
    const double alpha = 0.05;
    pks_seq s;
    ASSERT_OK(pks_seq_init(&s, alpha / M));
    for (int k = 1; k <= ROUNDS / BLOCK; k++) {
        double nominal;
        ASSERT_OK(
            pks_seq_look(&s, k * BLOCK, (double)k * BLOCK / ROUNDS, k == ROUNDS / BLOCK, &nominal));
    }
    double *d = malloc(M * ROUNDS * sizeof *d),
           *work = malloc(pks_wilcoxon_work_size(ROUNDS) * sizeof *work);
    ASSERT(d != NULL && work != NULL);
    int alarms[2] = {0, 0};
    for (int naive = 0; naive < 2; naive++) {
        pks_rng rng;
        pks_rng_seed(&rng, 20261207);
        for (int r = 0; r < RUNS; r++)
            alarms[naive] += aa_run(&rng, &s, M, ROUNDS, BLOCK, naive, alpha, d, work);
    }
    free(d);
    free(work);
    pks_seq_free(&s);
    double rate = (double)alarms[0] / RUNS, naive = (double)alarms[1] / RUNS;
    printf("# A/A, %d runs of %d series x %d looks: %.1f%% with the sequential rule, %.1f%% "
           "testing every look at alpha/%d\n",
           RUNS, M, ROUNDS / BLOCK, 100 * rate, 100 * naive, M);
    if (!(rate <= alpha))
        pk_test_fail(__FILE__, __LINE__, "false alarms %.3f > alpha %.2f", rate, alpha);
    /* The simulation can tell: looking without the rule raises them well beyond alpha. */
    if (!(naive > 2 * alpha))
        pk_test_fail(__FILE__, __LINE__, "naive looks gave %.3f, not above 2 alpha", naive);
}
