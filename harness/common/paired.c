/*
 * paired — per-round ratios of two series taken side by side, and Wilcoxon's signed-rank test
 * on their logarithms (paired.h). Kept apart from stats.c, which is the unpaired statistics of
 * independent samples; this file only adds what pairing needs and borrows the rest (the
 * bootstrap, the summaries) from there.
 */
#include "common/paired.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ==== Wilcoxon's signed-rank test ============================================================ */

static bool exact_eligible(size_t n)
{
    return n <= PKS_WILCOXON_EXACT_MAX;
}

size_t pks_wilcoxon_work_size(size_t n)
{
    /* |d| sorted, then the exact table of m(m+1)/2 + 1 counts for the m ≤ n nonzero ones: sized
     * for the most the exact path takes, as dropped zeros can bring m under the limit. */
    size_t m = exact_eligible(n) ? n : PKS_WILCOXON_EXACT_MAX;
    size_t table = m * (m + 1) / 2 + 1;
    return n > SIZE_MAX - table ? SIZE_MAX : n + table;
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* 2 · P(W+ ≤ k) under H0 for n differences without ties, capped at 1. count: n(n+1)/2 + 1
 * doubles. The signs are independent fair coins, so W+ is the sum of a uniformly random subset of
 * the ranks 1..n: count[s] is how many subsets sum to s, built one rank at a time (a knapsack
 * count, descending so each rank is used once). Up to 50 ranks the counts stay below 2^50, exact
 * in a double. */
static double exact_p(size_t n, size_t k, double *count)
{
    size_t top = n * (n + 1) / 2;
    memset(count, 0, (top + 1) * sizeof *count);
    count[0] = 1;
    for (size_t r = 1; r <= n; r++)
        for (size_t s = r * (r + 1) / 2; s >= r; s--)
            count[s] += count[s - r];
    double tail = 0;
    for (size_t s = 0; s <= k && s <= top; s++)
        tail += count[s];
    double p = 2 * tail / ldexp(1.0, (int)n);
    return p < 1 ? p : 1;
}

int pks_wilcoxon_test(const double *d, size_t n, double *work, pks_wilcoxon *out)
{
    if (d == NULL || n == 0 || out == NULL)
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(d[i]))
            return -EINVAL;
    double *owned = NULL, *a = work;
    if (a == NULL) {
        size_t size = pks_wilcoxon_work_size(n);
        if (size == SIZE_MAX || (owned = malloc(size * sizeof *owned)) == NULL)
            return -ENOMEM;
        a = owned;
    }
    /* The nonzero |d|, sorted; the ranks of the positive ones summed below by a second pass. */
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (d[i] != 0)
            a[m++] = fabs(d[i]);
    qsort(a, m, sizeof *a, cmp_double);

    double w_plus = 0, tie_sum = 0;
    for (size_t i = 0; i < m;) {
        size_t j = i;
        while (j < m && a[j] == a[i])
            j++;
        double rank = (double)(i + 1 + j) / 2; /* the average of ranks i+1 .. j */
        double t = (double)(j - i);
        tie_sum += t * t * t - t;
        /* Every positive d whose |d| is this value takes this rank. */
        for (size_t k = 0; k < n; k++)
            if (d[k] > 0 && d[k] == a[i])
                w_plus += rank;
        i = j;
    }

    pks_wilcoxon r = {.w_plus = w_plus, .n = m, .ties = tie_sum > 0, .p = 1};
    double nn = (double)m, mean = nn * (nn + 1) / 4;
    if (m == 0) {
        r.method = PKS_MWU_EXACT; /* nothing ranked: no evidence either way */
    } else if (!r.ties && exact_eligible(m)) {
        r.method = PKS_MWU_EXACT;
        double k = fmin(w_plus, nn * (nn + 1) / 2 - w_plus); /* whole: no ties */
        r.p = exact_p(m, (size_t)k, a + m);
    } else {
        r.method = PKS_MWU_NORMAL;
        double var = nn * (nn + 1) * (2 * nn + 1) / 24 - tie_sum / 48;
        if (var > 0) {
            r.z = (fabs(w_plus - mean) - 0.5) / sqrt(var);
            r.p = fmin(1, erfc(r.z / sqrt(2.0)));
        }
    }
    free(owned);
    *out = r;
    return 0;
}

/* ==== The paired comparison ================================================================== */

size_t pks_paired_work_size(size_t n, size_t iterations)
{
    /* the ratios, then the larger of the bootstrap's and the test's scratch */
    size_t boot = pks_bootstrap_work_size(1, n, iterations), test = pks_wilcoxon_work_size(n);
    size_t rest = boot > test ? boot : test;
    return n > SIZE_MAX - rest ? SIZE_MAX : n + rest;
}

int pks_paired_compare(const double *base,
                       const double *cand,
                       size_t n,
                       const pks_bootstrap *opts,
                       double *work,
                       pks_paired *out)
{
    if (base == NULL || cand == NULL || n == 0 || out == NULL)
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(base[i]) || !isfinite(cand[i]))
            return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!(base[i] > 0) || !(cand[i] > 0))
            return -EDOM;
    size_t iterations = opts != NULL ? opts->iterations : 0;
    double *owned = NULL, *w = work;
    if (w == NULL) {
        size_t size = pks_paired_work_size(n, iterations);
        if (size == SIZE_MAX || (owned = malloc(size * sizeof *owned)) == NULL)
            return -ENOMEM;
        w = owned;
    }
    double *ratio = w, *rest = w + n;
    for (size_t i = 0; i < n; i++)
        ratio[i] = cand[i] / base[i];

    /* The bootstrap of the ratios' median is pks_bootstrap_ratio's against a base of the single
     * value 1: that base's every resample has median 1, so each bootstrap ratio is the median of
     * a resample of the per-round ratios, drawn (and, for many rounds, shortcut) as there. */
    static const double one = 1;
    pks_paired r = {.n = n};
    int rc = pks_bootstrap_ratio(&one, 1, ratio, n, opts, rest, &r.ratio);
    pks_summary s;
    if (rc == 0)
        rc = pks_summarize(ratio, n, rest, &s);
    if (rc == 0) {
        r.cv = n >= 2 && s.median > 0 ? PKS_MAD_NORMAL_SCALE * s.mad / s.median : NAN;
        for (size_t i = 0; i < n; i++)
            ratio[i] = log(ratio[i]); /* the test is on log ratios: symmetric about 0 under H0 */
        rc = pks_wilcoxon_test(ratio, n, rest, &r.test);
    }
    free(owned);
    if (rc == 0)
        *out = r;
    return rc;
}

double pks_paired_half_width(const pks_paired *p)
{
    return p->ratio.estimate > 0 ? (p->ratio.hi - p->ratio.lo) / (2 * p->ratio.estimate) : NAN;
}
