/*
 * changepoint — E-divisive means with Student's t-test (changepoint.h), and the Student t
 * distribution it needs. Kept apart from stats.c (the statistics of one run's samples): this is
 * the statistics of a history, one value per run.
 *
 * Student's t tail is the regularised incomplete beta function, evaluated by its continued
 * fraction (the even and odd terms d_2m and d_2m+1 of the standard expansion) with Lentz's
 * method; where the fraction converges slowly the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) is
 * used instead.
 */
#include "common/changepoint.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ==== Student's t =========================================================================== */

/* The continued fraction of I_x(a, b) (without its prefactor), by Lentz's method. */
static double beta_fraction(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    d = 1 / (fabs(d) < tiny ? tiny : d);
    double f = d;
    for (int m = 1; m <= 500; m++) {
        /* the even term d_2m, then the odd term d_2m+1 */
        double even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
        double odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
        for (int k = 0; k < 2; k++) {
            double term = k == 0 ? even : odd;
            d = 1 + term * d;
            c = 1 + term / c;
            d = 1 / (fabs(d) < tiny ? tiny : d);
            c = fabs(c) < tiny ? tiny : c;
            f *= c * d;
            if (k == 1 && fabs(c * d - 1) < 1e-15)
                return f;
        }
    }
    return f; /* 500 steps: far more than a t tail ever needs */
}

/* The regularised incomplete beta function I_x(a, b), 0 ≤ x ≤ 1, a, b > 0. */
static double incomplete_beta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double log_front = a * log(x) + b * log1p(-x) - (lgamma(a) + lgamma(b) - lgamma(a + b));
    if (x < (a + 1) / (a + b + 2))
        return exp(log_front) * beta_fraction(a, b, x) / a;
    return 1 - exp(log_front) * beta_fraction(b, a, 1 - x) / b;
}

double pks_t_two_sided(double t, double df)
{
    if (isnan(t) || isnan(df) || !(df > 0))
        return NAN;
    if (isinf(t))
        return 0;
    double p = incomplete_beta(df / 2, 0.5, df / (df + t * t));
    return p < 0 ? 0 : p > 1 ? 1 : p;
}

double pks_t_critical(double p, double df)
{
    if (!(p > 0 && p <= 1) || !(df > 0))
        return NAN;
    /* The tail falls as t grows: bisect on it (60 halvings of [0, hi] are exact to the double). */
    double lo = 0, hi = 1;
    while (pks_t_two_sided(hi, df) > p && hi < 1e12)
        hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = (lo + hi) / 2;
        if (pks_t_two_sided(mid, df) > p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

/* Mean and sample variance of x[0..n), n ≥ 2 (two-pass). */
static void mean_var(const double *x, size_t n, double *mean, double *var)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    double m = s / (double)n, ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - m) * (x[i] - m);
    *mean = m;
    *var = ss / (double)(n - 1);
}

static bool all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

int pks_student_t_test(const double *a, size_t na, const double *b, size_t nb, pks_t_test *out)
{
    if (a == NULL || b == NULL || out == NULL || na < 2 || nb < 2 || !all_finite(a, na) ||
        !all_finite(b, nb))
        return -EINVAL;
    double ma, va, mb, vb;
    mean_var(a, na, &ma, &va);
    mean_var(b, nb, &mb, &vb);
    double df = (double)(na + nb - 2);
    double pooled = ((double)(na - 1) * va + (double)(nb - 1) * vb) / df;
    *out = (pks_t_test){
        .diff = ma - mb, .se = sqrt(pooled * (1 / (double)na + 1 / (double)nb)), .df = df};
    if (out->se == 0) {
        /* Both sides constant: equal means are no evidence at all, different ones certain. */
        out->t = out->diff == 0 ? 0 : copysign(INFINITY, out->diff);
        out->p = out->diff == 0 ? 1 : 0;
        return 0;
    }
    out->t = out->diff / out->se;
    out->p = pks_t_two_sided(out->t, out->df);
    return 0;
}

/* ==== E-divisive means ========================================================================
 */

/* A Fenwick tree over the ranks of a segment's values: how many values of a growing set lie
 * below a rank, and their sum, each in O(log n). Σ |v − y| over the set then needs two queries. */
struct fenwick {
    size_t n;
    double *count, *sum; /* 1-based */
};

static void fenwick_clear(struct fenwick *f)
{
    memset(f->count, 0, (f->n + 1) * sizeof *f->count);
    memset(f->sum, 0, (f->n + 1) * sizeof *f->sum);
}

static void fenwick_add(struct fenwick *f, size_t rank, double v)
{
    for (size_t i = rank + 1; i <= f->n; i += i & (~i + 1)) {
        f->count[i] += 1;
        f->sum[i] += v;
    }
}

/* The count and sum of the values of rank below `rank`. */
static void fenwick_below(const struct fenwick *f, size_t rank, double *count, double *sum)
{
    *count = *sum = 0;
    for (size_t i = rank; i > 0; i -= i & (~i + 1)) {
        *count += f->count[i];
        *sum += f->sum[i];
    }
}

/* Σ |v − y| over the set, v of rank `rank`; the set holds `total` values summing to `total_sum`.
 * Values tied with v add 0 whichever side they are counted on. */
static double
fenwick_distance(const struct fenwick *f, size_t rank, double v, double total, double total_sum)
{
    double below, below_sum;
    fenwick_below(f, rank, &below, &below_sum);
    return (v * below - below_sum) + ((total_sum - below_sum) - v * (total - below));
}

/* Scratch for one segment: the values' order and each one's rank, and the two trees. */
struct split_work {
    size_t *order, *rank;
    struct fenwick left, right;
};

/* The divergence of m points before a split and k after it: between, left and right are the sums
 * of distances across the split and over the pairs within each side. */
static double divergence(double m, double k, double between, double left, double right)
{
    double within_left = m > 1 ? left / (m * (m - 1) / 2) : 0;
    double within_right = k > 1 ? right / (k * (k - 1) / 2) : 0;
    return m * k / (m + k) * (2 * between / (m * k) - within_left - within_right);
}

/* Ranks y[s..e) into w->rank, ties in index order: an insertion sort of the indexes (a segment
 * of a history is short, and splitting it costs more), then inverted. */
static void rank_segment(const double *y, size_t s, size_t e, struct split_work *w)
{
    size_t len = e - s;
    size_t *order = w->order;
    for (size_t i = 0; i < len; i++) {
        size_t j = i;
        while (j > 0 && y[s + order[j - 1]] > y[s + i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    for (size_t r = 0; r < len; r++)
        w->rank[order[r]] = r;
}

/* The best split of y[s..e) (logarithms): τ with at least `min` points before it, and the end κ
 * of the stretch after it (at least `min` points, at most e), maximising the divergence Q of
 * y[s..τ) and y[τ..κ). Searching κ as well as τ (Matteson and James's form) finds a level that
 * goes up and comes back down: against the whole rest of the segment the raised stretch would be
 * diluted by the points after it. The left set grows with τ and the right set with κ, each
 * distance sum by one Fenwick query per step: O((e − s)² log(e − s)). False when the segment is
 * too short to split. */
static bool best_split(const double *y,
                       size_t s,
                       size_t e,
                       size_t min,
                       struct split_work *w,
                       size_t *tau,
                       size_t *kappa,
                       double *q)
{
    if (e - s < 2 * min)
        return false;
    size_t len = e - s;
    rank_segment(y, s, e, w);
    w->left.n = w->right.n = len;
    fenwick_clear(&w->left);
    double left = 0, left_sum = 0; /* distances within y[s..t), and its values' sum */
    bool found = false;
    for (size_t t = s; t + min <= e; t++) {
        if (t > s) { /* y[t − 1] joins the left side */
            double v = y[t - 1];
            size_t r = w->rank[t - 1 - s];
            left += fenwick_distance(&w->left, r, v, (double)(t - 1 - s), left_sum);
            fenwick_add(&w->left, r, v);
            left_sum += v;
        }
        if (t - s < min)
            continue;
        fenwick_clear(&w->right);
        double between = 0, right = 0, right_sum = 0;
        for (size_t k = t; k < e; k++) { /* y[k] joins the right side: y[t..k] */
            double v = y[k];
            size_t r = w->rank[k - s];
            between += fenwick_distance(&w->left, r, v, (double)(t - s), left_sum);
            right += fenwick_distance(&w->right, r, v, (double)(k - t), right_sum);
            fenwick_add(&w->right, r, v);
            right_sum += v;
            if (k + 1 - t < min)
                continue;
            double qk = divergence((double)(t - s), (double)(k + 1 - t), between, left, right);
            if (!found || qk > *q) {
                *q = qk;
                *tau = t;
                *kappa = k + 1;
                found = true;
            }
        }
    }
    return found;
}

/* The change points found so far, sorted, with what each one's last test said. */
struct cps {
    pks_changepoint *v;
    size_t n;
};

static int insert_cp(struct cps *c, size_t index, double q)
{
    pks_changepoint *bigger = realloc(c->v, (c->n + 1) * sizeof *bigger);
    if (bigger == NULL)
        return -ENOMEM;
    c->v = bigger;
    size_t at = 0;
    while (at < c->n && c->v[at].index < index)
        at++;
    memmove(&c->v[at + 1], &c->v[at], (c->n - at) * sizeof *c->v);
    c->v[at] = (pks_changepoint){.index = index, .q = q};
    c->n++;
    return 0;
}

/* Steps 1 and 2: split the segment whose best split is significant and diverges most, until none
 * is. */
static int divide(const double *y, size_t n, size_t min, double alpha, struct cps *c)
{
    struct split_work w = {
        .order = malloc((n + 1) * sizeof *w.order),
        .rank = malloc((n + 1) * sizeof *w.rank),
        .left = {.count = malloc((n + 1) * sizeof(double)),
                 .sum = malloc((n + 1) * sizeof(double))},
        .right = {.count = malloc((n + 1) * sizeof(double)),
                  .sum = malloc((n + 1) * sizeof(double))},
    };
    int rc = 0;
    if (w.order == NULL || w.rank == NULL || w.left.count == NULL || w.left.sum == NULL ||
        w.right.count == NULL || w.right.sum == NULL)
        rc = -ENOMEM;
    while (rc == 0) {
        size_t best_tau = 0;
        double best_q = -INFINITY;
        for (size_t k = 0; k <= c->n; k++) {
            size_t s = k == 0 ? 0 : c->v[k - 1].index, e = k == c->n ? n : c->v[k].index;
            size_t tau, kappa;
            double q;
            pks_t_test t;
            if (!best_split(y, s, e, min, &w, &tau, &kappa, &q) ||
                pks_student_t_test(y + s, tau - s, y + tau, kappa - tau, &t) != 0 || !(t.p < alpha))
                continue;
            if (q > best_q) {
                best_q = q;
                best_tau = tau;
            }
        }
        if (best_q == -INFINITY)
            break;
        rc = insert_cp(c, best_tau, best_q);
    }
    free(w.order);
    free(w.rank);
    free(w.left.count);
    free(w.left.sum);
    free(w.right.count);
    free(w.right.sum);
    return rc;
}

/* Tests change point k between its neighbours and fills its statistics. */
static void assess(const double *y, size_t n, struct cps *c, size_t k, double level)
{
    pks_changepoint *cp = &c->v[k];
    cp->from = k == 0 ? 0 : c->v[k - 1].index;
    cp->to = k + 1 == c->n ? n : c->v[k + 1].index;
    size_t na = cp->index - cp->from, nb = cp->to - cp->index;
    pks_t_test t;
    /* Segments are at least min_size ≥ 2 long, so the test cannot fail. */
    if (pks_student_t_test(y + cp->index, nb, y + cp->from, na, &t) != 0) {
        cp->p = 1;
        return;
    }
    cp->p = t.p;
    double mb = 0, ma = 0;
    for (size_t i = cp->from; i < cp->index; i++)
        mb += y[i];
    for (size_t i = cp->index; i < cp->to; i++)
        ma += y[i];
    cp->before = exp(mb / (double)na);
    cp->after = exp(ma / (double)nb);
    double half = t.se * pks_t_critical(1 - level, t.df);
    cp->ratio =
        (pks_interval){.lo = exp(t.diff - half), .estimate = exp(t.diff), .hi = exp(t.diff + half)};
    if (t.se == 0)
        cp->ratio.lo = cp->ratio.hi = cp->ratio.estimate;
}

/* Step 3: drop the weakest change point that no longer passes between its neighbours, until all
 * do. */
static void prune(const double *y, size_t n, struct cps *c, double alpha, double min_mag, double lv)
{
    for (;;) {
        long weakest = -1;
        double worst = -INFINITY;
        for (size_t k = 0; k < c->n; k++) {
            assess(y, n, c, k, lv);
            double mag = fabs(c->v[k].ratio.estimate - 1);
            /* The weakest: the largest p; among magnitudes too small, the smallest first. */
            double score = c->v[k].p >= alpha ? c->v[k].p : mag < min_mag ? -1 - mag : -INFINITY;
            if (score > worst) {
                worst = score;
                weakest = (long)k;
            }
        }
        if (weakest < 0 || worst == -INFINITY)
            return;
        memmove(&c->v[weakest], &c->v[weakest + 1], (c->n - (size_t)weakest - 1) * sizeof *c->v);
        c->n--;
    }
}

int pks_changepoints(const double *x,
                     size_t n,
                     const pks_changepoint_options *opts,
                     pks_changepoint **out,
                     size_t *count)
{
    static const pks_changepoint_options defaults = {0};
    if (opts == NULL)
        opts = &defaults;
    double alpha = opts->alpha > 0 ? opts->alpha : PKS_CHANGEPOINT_ALPHA;
    size_t min = opts->min_size > 0 ? opts->min_size : PKS_CHANGEPOINT_MIN_SIZE;
    double level = opts->level > 0 ? opts->level : 0.95;
    if ((x == NULL && n > 0) || out == NULL || count == NULL || !(alpha < 1) || min < 2 ||
        !(level < 1) || !(opts->min_magnitude >= 0) || !all_finite(x, n))
        return -EINVAL;
    *out = NULL;
    *count = 0;
    for (size_t i = 0; i < n; i++)
        if (!(x[i] > 0))
            return -EDOM;
    double *y = malloc((n > 0 ? n : 1) * sizeof *y);
    if (y == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        y[i] = log(x[i]);
    struct cps c = {0};
    int rc = divide(y, n, min, alpha, &c);
    if (rc == 0)
        prune(y, n, &c, alpha, opts->min_magnitude, level);
    free(y);
    if (rc != 0) {
        free(c.v);
        return rc;
    }
    *out = c.v;
    *count = c.n;
    return 0;
}
