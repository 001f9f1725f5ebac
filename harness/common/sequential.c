/*
 * sequential — group-sequential boundaries from Lan & DeMets' O'Brien-Fleming-type spending
 * function (sequential.h has the rule and why). The boundary of look k is found by bisection on
 * the probability of crossing it without having crossed before, integrated over the sub-density
 * of the score S = Z·√info that survived look k−1 (Simpson's rule on a uniform grid); the surviving
 * sub-density is then carried to look k by convolution with the increment's normal density
 * (Armitage, McPherson & Rowe's recursion). The grid spans ±9 standard deviations at most (the
 * mass beyond is below 1e-18) and is refined whenever a look's increment is narrower than the
 * grid can resolve.
 */
#include "common/sequential.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SQRT2        1.4142135623730951
#define INV_SQRT_2PI 0.3989422804014327
#define TAIL_SD      9.0  /* the grid's half-width, in standard deviations of S */
#define MIN_POINTS   201  /* odd: Simpson's rule */
#define MAX_POINTS   8001 /* odd */
#define PER_SD       8.0  /* grid points per standard deviation of a look's increment */
#define Z_MAX        40.0 /* no boundary beyond: its tail is below 1e-300 */

double pks_norm_sf(double x)
{
    return 0.5 * erfc(x / SQRT2);
}

double pks_norm_cdf(double x)
{
    return 0.5 * erfc(-x / SQRT2);
}

static double norm_pdf(double x)
{
    return INV_SQRT_2PI * exp(-0.5 * x * x);
}

double pks_norm_isf(double p)
{
    if (!(p >= 0 && p <= 1))
        return NAN;
    if (p == 0)
        return INFINITY;
    if (p == 1)
        return -INFINITY;
    if (p > 0.5)
        return -pks_norm_isf(1 - p);
    /* Abramowitz & Stegun 26.2.23 (error < 4.5e-4) to start, then Newton's steps on
     * sf(z) − p, whose derivative is −pdf(z): quadratic convergence to full precision. */
    double t = sqrt(-2 * log(p));
    double z = t - (2.515517 + t * (0.802853 + t * 0.010328)) /
                       (1 + t * (1.432788 + t * (0.189269 + t * 0.001308)));
    for (int i = 0; i < 60; i++) {
        double d = norm_pdf(z);
        if (!(d > 0))
            break;
        double step = (pks_norm_sf(z) - p) / d;
        z = fmin(Z_MAX, fmax(0, z + step));
        if (fabs(step) <= 1e-14 * fmax(1, z))
            break;
    }
    return z;
}

double pks_spend_obf(double alpha, double t)
{
    if (!(t > 0))
        return 0;
    if (t >= 1)
        return alpha;
    return 2 * pks_norm_sf(pks_norm_isf(alpha / 2) / sqrt(t));
}

int pks_seq_init(pks_seq *s, double alpha)
{
    if (s == NULL || !(alpha > 0 && alpha < 1))
        return -EINVAL;
    memset(s, 0, sizeof *s);
    s->alpha = alpha;
    return 0;
}

void pks_seq_free(pks_seq *s)
{
    if (s == NULL)
        return;
    free(s->f);
    s->f = NULL;
    s->n = 0;
}

/* Simpson's weight of point i of n (odd), step h. */
static double simpson(size_t i, size_t n, double h)
{
    if (i == 0 || i == n - 1)
        return h / 3;
    return (i % 2 ? 4 : 2) * h / 3;
}

/* An odd point count covering [-b, b] at step at most `step`, within the bounds. */
static size_t points_for(double b, double step)
{
    double want = ceil(2 * b / step) + 1;
    size_t n = want > MAX_POINTS ? MAX_POINTS : want < MIN_POINTS ? MIN_POINTS : (size_t)want;
    return n % 2 ? n : n + 1;
}

/* The density becomes f, n points over [-b, b] (the step the callers computed it at). Returns 0. */
static int replace_density(pks_seq *s, double *f, size_t n, double b)
{
    free(s->f);
    s->f = f;
    s->n = n;
    s->h = 2 * b / (double)(n - 1);
    s->lo = -b;
    return 0;
}

/* The surviving sub-density resampled (linearly) at a step no wider than `step`: an increment
 * narrower than the grid would otherwise be integrated over too few points. */
static int refine(pks_seq *s, double step)
{
    if (s->h <= step || s->n >= MAX_POINTS)
        return 0;
    double b = -s->lo;
    size_t n = points_for(b, step);
    double h = 2 * b / (double)(n - 1);
    double *f = malloc(n * sizeof *f);
    if (f == NULL)
        return -ENOMEM;
    for (size_t j = 0; j < n; j++) {
        double x = ((double)j * h) / s->h; /* in old steps from lo */
        size_t i = (size_t)x;
        if (i >= s->n - 1) {
            f[j] = s->f[s->n - 1];
            continue;
        }
        double w = x - (double)i;
        f[j] = s->f[i] * (1 - w) + s->f[i + 1] * w;
    }
    return replace_density(s, f, n, b);
}

/* The probability of |S| ≥ b at a look whose increment has sd sigma, without a crossing before. */
static double crossing(const pks_seq *s, double b, double sigma)
{
    double p = 0;
    for (size_t i = 0; i < s->n; i++) {
        double u = s->lo + (double)i * s->h;
        p += simpson(i, s->n, s->h) * s->f[i] *
             (pks_norm_sf((b - u) / sigma) + pks_norm_sf((b + u) / sigma));
    }
    return p;
}

/* The sub-density on [-b, b] after an increment of sd sigma: the old one convolved with it. */
static int carry(pks_seq *s, double b, double sigma)
{
    size_t n = points_for(b, sigma / PER_SD);
    double h = 2 * b / (double)(n - 1);
    double *f = calloc(n, sizeof *f);
    if (f == NULL)
        return -ENOMEM;
    double reach = TAIL_SD * sigma; /* the kernel beyond is below 1e-18 */
    for (size_t j = 0; j < n; j++) {
        double x = -b + (double)j * h, sum = 0;
        double from = (x - reach - s->lo) / s->h, to = (x + reach - s->lo) / s->h;
        size_t i0 = from <= 0 ? 0 : (size_t)from;
        size_t i1 = to >= (double)(s->n - 1) ? s->n - 1 : (size_t)to;
        for (size_t i = i0; i <= i1 && to >= 0; i++) {
            double u = s->lo + (double)i * s->h;
            sum += simpson(i, s->n, s->h) * s->f[i] * norm_pdf((x - u) / sigma) / sigma;
        }
        f[j] = sum;
    }
    return replace_density(s, f, n, b);
}

/* The first look: S ~ N(0, info), kept over |S| < b. */
static int first_density(pks_seq *s, double info, double b)
{
    double sd = sqrt(info);
    size_t n = points_for(b, sd / PER_SD);
    double *f = malloc(n * sizeof *f);
    if (f == NULL)
        return -ENOMEM;
    double h = 2 * b / (double)(n - 1);
    for (size_t j = 0; j < n; j++)
        f[j] = norm_pdf((-b + (double)j * h) / sd) / sd;
    return replace_density(s, f, n, b);
}

/* The |Z| boundary at information `info` that spends `inc` after the looks so far (sigma: the
 * sd of the increment since the last one). */
static double boundary(const pks_seq *s, bool first, double info, double sigma, double inc)
{
    if (first)
        return pks_norm_isf(inc / 2);
    double lo = 0, hi = Z_MAX, rt = sqrt(info);
    for (int i = 0; i < 200 && hi - lo > 1e-10; i++) {
        double mid = (lo + hi) / 2;
        if (crossing(s, mid * rt, sigma) > inc)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

int pks_seq_look(pks_seq *s, double info, double t, bool final, double *nominal)
{
    if (s == NULL || nominal == NULL || !isfinite(t) || !isfinite(info) || !(info > 0))
        return -EINVAL;
    *nominal = 0;
    if (s->final || s->k >= PKS_SEQ_MAX_LOOKS || (!final && s->k >= PKS_SEQ_MAX_LOOKS - 1))
        return 0; /* the last slot is the final look's */
    size_t k = s->k;
    double prev_t = k > 0 ? s->t[k - 1] : 0, prev_info = k > 0 ? s->info[k - 1] : 0;
    double prev_spent = k > 0 ? s->spent[k - 1] : 0;
    double tt = fmin(1, fmax(t, prev_t)), ii = fmax(info, prev_info);
    double target = final ? s->alpha : fmax(prev_spent, pks_spend_obf(s->alpha, tt));
    double inc = target - prev_spent;
    s->info[k] = ii;
    s->t[k] = tt;
    s->spent[k] = prev_spent;
    s->z[k] = INFINITY;
    s->nominal[k] = 0;
    s->k++;
    s->final = final;
    if (ii <= prev_info * (1 + 1e-12))
        return 0; /* no new information: nothing to spend, nothing to carry */
    /* The recursion runs on the information scale: S after look k has variance info_k. */
    double sigma = sqrt(ii - prev_info);
    int rc = k > 0 ? refine(s, sigma / PER_SD) : 0;
    if (rc != 0)
        return rc;
    double z = inc > 1e-300 ? boundary(s, k == 0, ii, sigma, inc) : INFINITY;
    double b = fmin(z, TAIL_SD) * sqrt(ii);
    s->z[k] = z;
    s->nominal[k] = isfinite(z) ? 2 * pks_norm_sf(z) : 0;
    s->spent[k] = prev_spent + (k == 0 || !isfinite(z) ? (isfinite(z) ? inc : 0)
                                                       : crossing(s, z * sqrt(ii), sigma));
    rc = k == 0 ? first_density(s, ii, b) : carry(s, b, sigma);
    *nominal = s->nominal[k];
    return rc;
}
