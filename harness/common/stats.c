/*
 * The statistics behind `pkbench compare` (see stats.h for every contract).
 *
 * Benchmark times are skewed, heavy-tailed and few (6 to 50 per series), so the module follows
 * benchstat rather than pyperf: medians instead of means, a rank test (Mann-Whitney U) instead of
 * a t-test, and a percentile bootstrap for the ratio of medians instead of a normal interval.
 * Holm's step-down correction then bounds the chance of any false verdict across all series, and
 * the verdict also needs the change to exceed both a user threshold and the noise floor an A/A
 * run measured — statistical significance alone flags 0.3% shifts on quiet machines.
 *
 * The exact U distribution is counted, not approximated: N(i, j, u), the number of orderings of
 * i values of one sample and j of the other with U = u, obeys N(i, j, u) = N(i − 1, j, u − j) +
 * N(i, j − 1, u) (the largest value belongs to one sample or the other). Only the lower tail up
 * to the observed U is needed, so the table is (min(n1, n2) + 1) × (U + 1) doubles.
 *
 * Nothing here keeps state between calls: randomness lives in a caller-owned pks_rng, scratch
 * memory is the caller's or is freed before returning.
 */
#include "common/stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ==== Helpers ================================================================================ */

static size_t sat_add(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t sat_mul(size_t a, size_t b)
{
    return b != 0 && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

/* The caller's scratch when given, else a fresh allocation recorded in *owned for the caller of
 * this helper to free. */
static void *take_work(void *work, size_t count, size_t elem, void **owned)
{
    *owned = NULL;
    if (work != NULL)
        return work;
    if (count == 0)
        count = 1;
    if (count > SIZE_MAX / elem)
        return NULL;
    *owned = malloc(count * elem);
    return *owned;
}

static int check_sample(const double *x, size_t n)
{
    if (x == NULL || n == 0)
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return -EINVAL;
    return 0;
}

static int check_positive(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(x[i] > 0))
            return -EDOM;
    return 0;
}

/* What every function over one sample of n doubles starts with: the sample checked (and the
 * caller's other arguments, `args_ok`), then n doubles of scratch in *w, the caller's work or an
 * allocation in *owned. Returns 0, or the negative errno to return (nothing to free). */
static int
sample_work(const double *x, size_t n, bool args_ok, double *work, double **w, void **owned)
{
    int rc = check_sample(x, n);
    if (rc != 0 || !args_ok)
        return rc != 0 ? rc : -EINVAL;
    *w = take_work(work, n, sizeof **w, owned);
    return *w != NULL ? 0 : -ENOMEM;
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static void sort_doubles(double *x, size_t n)
{
    qsort(x, n, sizeof *x, cmp_double);
}

/* ==== Random numbers ========================================================================= */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void pks_rng_seed(pks_rng *rng, uint64_t seed)
{
    /* splitmix64 is a bijection of its counter, so four consecutive outputs are never all zero. */
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&seed);
}

uint64_t pks_rng_next(pks_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t pks_rng_below(pks_rng *rng, uint64_t bound)
{
    if (bound == 0)
        return 0;
    /* Reject the lowest 2^64 mod bound values so that every residue is equally likely. */
    uint64_t reject = (0 - bound) % bound;
    for (;;) {
        uint64_t r = pks_rng_next(rng);
        if (r >= reject)
            return r % bound;
    }
}

double pks_rng_uniform(pks_rng *rng)
{
    return (double)(pks_rng_next(rng) >> 11) * 0x1.0p-53;
}

double pks_rng_normal(pks_rng *rng)
{
    double u1 = 1.0 - pks_rng_uniform(rng); /* (0, 1]: log(u1) is finite */
    double u2 = pks_rng_uniform(rng);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* ==== Descriptive statistics ================================================================= */

int pks_mean(const double *x, size_t n, double *out)
{
    int rc = check_sample(x, n);
    if (rc != 0 || out == NULL)
        return rc != 0 ? rc : -EINVAL;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += x[i];
    *out = sum / (double)n;
    return 0;
}

int pks_sd(const double *x, size_t n, double *out)
{
    double mean;
    int rc = pks_mean(x, n, &mean);
    if (rc != 0 || out == NULL)
        return rc != 0 ? rc : -EINVAL;
    if (n < 2)
        return -EDOM;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - mean) * (x[i] - mean);
    *out = sqrt(ss / (double)(n - 1));
    return 0;
}

int pks_cv(const double *x, size_t n, double *out)
{
    double mean, sd;
    int rc = pks_mean(x, n, &mean);
    if (rc == 0)
        rc = pks_sd(x, n, &sd);
    if (rc != 0 || out == NULL)
        return rc != 0 ? rc : -EINVAL;
    if (!(mean > 0))
        return -EDOM;
    *out = sd / mean;
    return 0;
}

double pks_quantile_sorted(const double *sorted, size_t n, double q)
{
    if (sorted == NULL || n == 0 || !(q >= 0 && q <= 1))
        return NAN;
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)h; /* h ≥ 0: truncation is floor */
    if (lo >= n - 1)
        return sorted[n - 1];
    return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

int pks_quantile(const double *x, size_t n, double q, double *work, double *out)
{
    double *w;
    void *owned;
    int rc = sample_work(x, n, out != NULL && q >= 0 && q <= 1, work, &w, &owned);
    if (rc != 0)
        return rc;
    memcpy(w, x, n * sizeof *w);
    sort_doubles(w, n);
    *out = pks_quantile_sorted(w, n, q);
    free(owned);
    return 0;
}

int pks_median(const double *x, size_t n, double *work, double *out)
{
    return pks_quantile(x, n, 0.5, work, out);
}

/* Median and MAD of x through w (n doubles): w ends up holding the sorted deviations. */
static void median_mad(const double *x, size_t n, double *w, double *median, double *mad)
{
    memcpy(w, x, n * sizeof *w);
    sort_doubles(w, n);
    double med = pks_quantile_sorted(w, n, 0.5);
    for (size_t i = 0; i < n; i++)
        w[i] = fabs(x[i] - med);
    sort_doubles(w, n);
    *median = med;
    *mad = pks_quantile_sorted(w, n, 0.5);
}

int pks_geomean(const double *x, size_t n, double *out)
{
    int rc = check_sample(x, n);
    if (rc == 0)
        rc = check_positive(x, n);
    if (rc != 0 || out == NULL)
        return rc != 0 ? rc : -EINVAL;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += log(x[i]);
    *out = exp(sum / (double)n);
    return 0;
}

int pks_summarize(const double *x, size_t n, double *work, pks_summary *out)
{
    double *w;
    void *owned;
    int rc = sample_work(x, n, out != NULL, work, &w, &owned);
    if (rc != 0)
        return rc;
    pks_summary s = {.n = n, .min = x[0], .max = x[0], .sd = NAN, .cv = NAN};
    for (size_t i = 1; i < n; i++) {
        s.min = fmin(s.min, x[i]);
        s.max = fmax(s.max, x[i]);
    }
    pks_mean(x, n, &s.mean);
    if (n >= 2) {
        pks_sd(x, n, &s.sd);
        if (s.mean > 0)
            s.cv = s.sd / s.mean;
    }
    median_mad(x, n, w, &s.median, &s.mad);
    free(owned);
    *out = s;
    return 0;
}

/* The MAD is the summary's: the same median_mad, through the same scratch. */
int pks_mad(const double *x, size_t n, double *work, double *out)
{
    pks_summary s;
    int rc = pks_summarize(x, n, work, out != NULL ? &s : NULL);
    if (rc == 0)
        *out = s.mad;
    return rc;
}

/* ==== Mann-Whitney U ========================================================================= */

static bool exact_eligible(size_t na, size_t nb)
{
    return na <= PKS_MWU_EXACT_MAX && nb <= PKS_MWU_EXACT_MAX;
}

size_t pks_mwu_work_size(size_t na, size_t nb)
{
    size_t size = sat_add(na, nb);
    if (exact_eligible(na, nb)) {
        size_t m = na < nb ? na : nb;
        size = sat_add(size, sat_mul(m + 1, na * nb / 2 + 1));
    }
    return size;
}

/* 2 · P(U ≤ k) under H0 for samples of sizes n1, n2 without ties, capped at 1, where k =
 * min(U, n1·n2 − U). table: (min(n1, n2) + 1) · (k + 1) doubles. */
static double mwu_exact_p(size_t n1, size_t n2, size_t k, double *table)
{
    size_t m = n1 < n2 ? n1 : n2, n = n1 < n2 ? n2 : n1, w = k + 1;
    /* Row i holds N(i, j, 0..k) for the current j; j = 0: only U = 0 is possible. */
    for (size_t i = 0; i <= m; i++) {
        memset(table + i * w, 0, w * sizeof *table);
        table[i * w] = 1;
    }
    for (size_t j = 1; j <= n; j++) {
        /* Ascending i: row i − 1 already holds N(i − 1, j, ·), row i still N(i, j − 1, ·). */
        for (size_t i = 1; i <= m; i++) {
            double *row = table + i * w;
            const double *prev = row - w;
            for (size_t u = j; u < w; u++)
                row[u] += prev[u - j];
        }
    }
    double tail = 0;
    for (size_t u = 0; u < w; u++)
        tail += table[m * w + u];
    double total = 1; /* C(m + n, m), every ordering equally likely under H0 */
    for (size_t i = 1; i <= m; i++)
        total = total * (double)(n + i) / (double)i;
    double p = 2 * tail / total;
    return p < 1 ? p : 1;
}

int pks_mwu_test(const double *a, size_t na, const double *b, size_t nb, double *work, pks_mwu *out)
{
    int rc = check_sample(a, na);
    if (rc == 0)
        rc = check_sample(b, nb);
    if (rc != 0 || out == NULL)
        return rc != 0 ? rc : -EINVAL;
    void *owned;
    double *w = take_work(work, pks_mwu_work_size(na, nb), sizeof *w, &owned);
    if (w == NULL)
        return -ENOMEM;
    double *sa = w, *sb = w + na;
    memcpy(sa, a, na * sizeof *sa);
    memcpy(sb, b, nb * sizeof *sb);
    sort_doubles(sa, na);
    sort_doubles(sb, nb);

    /* Merge the sorted samples one group of equal values at a time: each a in a group beats
     * every b below it and half of the b's tied with it. */
    double u = 0, tie_sum = 0;
    size_t i = 0, j = 0;
    while (i < na || j < nb) {
        double v = j >= nb || (i < na && sa[i] <= sb[j]) ? sa[i] : sb[j];
        size_t below = j, ca = 0, cb = 0;
        for (; i < na && sa[i] == v; i++)
            ca++;
        for (; j < nb && sb[j] == v; j++)
            cb++;
        u += (double)ca * ((double)below + 0.5 * (double)cb);
        double t = (double)(ca + cb);
        tie_sum += t * t * t - t;
    }

    double n1 = (double)na, n2 = (double)nb, nn = n1 + n2, mu = n1 * n2 / 2;
    pks_mwu r = {.u = u, .ties = tie_sum > 0};
    if (!r.ties && exact_eligible(na, nb)) {
        double k = fmin(u, n1 * n2 - u); /* an integer: without ties U counts whole pairs */
        r.method = PKS_MWU_EXACT;
        r.p = mwu_exact_p(na, nb, (size_t)k, sb + nb);
    } else {
        r.method = PKS_MWU_NORMAL;
        double var = n1 * n2 / 12 * ((nn + 1) - tie_sum / (nn * (nn - 1)));
        if (var > 0) {
            r.z = (fabs(u - mu) - 0.5) / sqrt(var);
            r.p = fmin(1, erfc(r.z / sqrt(2.0)));
        } else {
            r.p = 1; /* every value tied: the data cannot tell the samples apart */
        }
    }
    free(owned);
    *out = r;
    return 0;
}

const char *pks_mwu_method_name(pks_mwu_method method)
{
    switch (method) {
    case PKS_MWU_EXACT:
        return "exact";
    case PKS_MWU_NORMAL:
        return "normal";
    }
    return "?";
}

/* ==== Holm-Bonferroni ======================================================================== */

/* Heapsort of the indices idx[0..n) by p[idx[]] ascending (in place, no recursion). */
static void sift_down(size_t *idx, const double *p, size_t root, size_t n)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && p[idx[child + 1]] > p[idx[child]])
            child++;
        if (!(p[idx[child]] > p[idx[root]]))
            return;
        size_t t = idx[root];
        idx[root] = idx[child];
        idx[child] = t;
        root = child;
    }
}

static void sort_indices(size_t *idx, const double *p, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_down(idx, p, i, n);
    for (size_t end = n; end-- > 1;) {
        size_t t = idx[0];
        idx[0] = idx[end];
        idx[end] = t;
        sift_down(idx, p, 0, end);
    }
}

int pks_holm(const double *p, size_t n, double *adjusted, size_t *work)
{
    if (p == NULL || adjusted == NULL || n == 0)
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!(p[i] >= 0 && p[i] <= 1))
            return -EINVAL;
    void *owned;
    size_t *order = take_work(work, n, sizeof *order, &owned);
    if (order == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    sort_indices(order, p, n);
    /* Each p is read before its slot of adjusted[] is written, so adjusted may alias p. Tied p's
     * end up with equal adjusted values whatever order the sort left them in. */
    double running = 0;
    for (size_t k = 0; k < n; k++) {
        double v = (double)(n - k) * p[order[k]];
        running = fmax(running, fmin(1, v));
        adjusted[order[k]] = running;
    }
    free(owned);
    return 0;
}

/* ==== Bootstrap ============================================================================== */

size_t pks_bootstrap_work_size(size_t nbase, size_t ncand, size_t iterations)
{
    if (iterations == 0)
        iterations = PKS_BOOTSTRAP_DEFAULT_ITERATIONS;
    return sat_add(sat_add(nbase, ncand), iterations);
}

/* The median of n draws with replacement from x, using w (n doubles). */
static double resample_median(pks_rng *rng, const double *x, size_t n, double *w)
{
    for (size_t i = 0; i < n; i++)
        w[i] = x[pks_rng_below(rng, n)];
    sort_doubles(w, n);
    return pks_quantile_sorted(w, n, 0.5);
}

/* A Gamma(shape, 1) deviate, shape ≥ 1: Marsaglia and Tsang's squeeze-and-reject method (2000). */
static double gamma_draw(pks_rng *rng, double shape)
{
    double d = shape - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x, v;
        do {
            x = pks_rng_normal(rng);
            v = 1 + c * x;
        } while (v <= 0);
        v = v * v * v;
        double u = pks_rng_uniform(rng);
        if (u < 1 - 0.0331 * x * x * x * x || log(u) < 0.5 * x * x + d * (1 - v + log(v)))
            return d * v;
    }
}

/* The index floor(n·u) of a uniform order statistic u in [0, 1], kept inside the sample. */
static size_t order_index(double u, size_t n)
{
    double i = u * (double)n;
    return i < (double)n ? (size_t)i : n - 1;
}

/* The median of n draws with replacement from the ascending `sorted`, drawn from its exact
 * distribution instead of by drawing the n values. A draw is sorted[floor(n·U)] with U uniform
 * on [0, 1), and floor is monotone, so the k-th smallest draw is sorted[floor(n·U(k))], where
 * U(k), the k-th smallest of n uniforms, is Beta(k, n − k + 1) = G1 / (G1 + G2) with G1, G2
 * Gamma(k) and Gamma(n − k + 1). Given U(k) = u, the other n − k uniforms are uniform on (u, 1),
 * so U(k+1) = u + (1 − u)(1 − V^(1/(n − k))), V uniform (their minimum). The type-7 median is
 * the ((n+1)/2)-th value for odd n, the mean of the (n/2)-th and (n/2+1)-th for even n. O(1)
 * per resample instead of O(n log n); the same distribution, another use of the random stream. */
static double resample_median_direct(pks_rng *rng, const double *sorted, size_t n)
{
    size_t k = (n + 1) / 2;
    double g1 = gamma_draw(rng, (double)k), g2 = gamma_draw(rng, (double)(n - k + 1));
    double u = g1 / (g1 + g2);
    if (n % 2 == 1)
        return sorted[order_index(u, n)];
    double v = 1.0 - pks_rng_uniform(rng); /* (0, 1] */
    double next = u + (1 - u) * (1 - pow(v, 1.0 / (double)(n - k)));
    return (sorted[order_index(u, n)] + sorted[order_index(next, n)]) / 2;
}

int pks_bootstrap_ratio(const double *base,
                        size_t nbase,
                        const double *cand,
                        size_t ncand,
                        const pks_bootstrap *opts,
                        double *work,
                        pks_interval *out)
{
    pks_bootstrap o = opts != NULL ? *opts : (pks_bootstrap){0};
    if (o.iterations == 0)
        o.iterations = PKS_BOOTSTRAP_DEFAULT_ITERATIONS;
    if (o.level == 0)
        o.level = PKS_BOOTSTRAP_DEFAULT_LEVEL;
    int rc = check_sample(base, nbase);
    if (rc == 0)
        rc = check_sample(cand, ncand);
    if (rc == 0 && (out == NULL || !(o.level > 0 && o.level < 1)))
        rc = -EINVAL;
    if (rc == 0)
        rc = check_positive(base, nbase);
    if (rc == 0)
        rc = check_positive(cand, ncand);
    if (rc != 0)
        return rc;
    void *owned;
    double *w =
        take_work(work, pks_bootstrap_work_size(nbase, ncand, o.iterations), sizeof *w, &owned);
    if (w == NULL)
        return -ENOMEM;
    double *wb = w, *wc = w + nbase, *ratios = wc + ncand;

    memcpy(wb, base, nbase * sizeof *wb);
    sort_doubles(wb, nbase);
    memcpy(wc, cand, ncand * sizeof *wc);
    sort_doubles(wc, ncand);
    double estimate = pks_quantile_sorted(wc, ncand, 0.5) / pks_quantile_sorted(wb, nbase, 0.5);

    pks_rng rng;
    pks_rng_seed(&rng, o.seed);
    /* Small samples are resampled value by value (the classic bootstrap, whose numbers every
     * existing seed reproduces); larger ones draw each resample's median directly. */
    bool direct_b = nbase > PKS_BOOTSTRAP_RESAMPLE_MAX,
         direct_c = ncand > PKS_BOOTSTRAP_RESAMPLE_MAX;
    for (size_t it = 0; it < o.iterations; it++) {
        double mb = direct_b ? resample_median_direct(&rng, wb, nbase)
                             : resample_median(&rng, base, nbase, wb);
        double mc = direct_c ? resample_median_direct(&rng, wc, ncand)
                             : resample_median(&rng, cand, ncand, wc);
        ratios[it] = mc / mb; /* all values > 0, so both medians are */
    }
    sort_doubles(ratios, o.iterations);
    double tail = (1 - o.level) / 2;
    *out = (pks_interval){
        .lo = pks_quantile_sorted(ratios, o.iterations, tail),
        .estimate = estimate,
        .hi = pks_quantile_sorted(ratios, o.iterations, 1 - tail),
    };
    free(owned);
    return 0;
}

/* ==== Minimum detectable effect ============================================================== */

int pks_mde(const double *first,
            size_t nfirst,
            const double *second,
            size_t nsecond,
            double alpha,
            const pks_bootstrap *opts,
            double *work,
            double *mde,
            pks_interval *ci)
{
    if (alpha == 0)
        alpha = PKS_DEFAULT_ALPHA;
    if (mde == NULL || !(alpha > 0 && alpha < 1))
        return -EINVAL;
    pks_bootstrap o = opts != NULL ? *opts : (pks_bootstrap){0};
    o.level = 1 - alpha;
    pks_interval iv;
    int rc = pks_bootstrap_ratio(first, nfirst, second, nsecond, &o, work, &iv);
    if (rc != 0)
        return rc;
    *mde = fmax(fabs(iv.lo - 1), fabs(iv.hi - 1));
    if (ci != NULL)
        *ci = iv;
    return 0;
}

/* ==== One series ============================================================================= */

size_t pks_series_work_size(size_t nbase, size_t ncand, size_t iterations)
{
    size_t a = pks_mwu_work_size(nbase, ncand);
    size_t b = pks_bootstrap_work_size(nbase, ncand, iterations);
    return a > b ? a : b; /* both cover max(nbase, ncand) for the summaries */
}

int pks_series_compare(const double *base,
                       size_t nbase,
                       const double *cand,
                       size_t ncand,
                       const pks_bootstrap *opts,
                       double *work,
                       pks_series *out)
{
    if (out == NULL)
        return -EINVAL;
    size_t iterations = opts != NULL ? opts->iterations : 0;
    void *owned;
    double *w = take_work(work, pks_series_work_size(nbase, ncand, iterations), sizeof *w, &owned);
    if (w == NULL)
        return -ENOMEM;
    pks_series s;
    int rc = pks_bootstrap_ratio(base, nbase, cand, ncand, opts, w, &s.ratio);
    if (rc == 0)
        rc = pks_summarize(base, nbase, w, &s.base);
    if (rc == 0)
        rc = pks_summarize(cand, ncand, w, &s.cand);
    if (rc == 0)
        rc = pks_mwu_test(base, nbase, cand, ncand, w, &s.mwu);
    free(owned);
    if (rc != 0)
        return rc;
    s.delta = s.ratio.estimate - 1;
    *out = s;
    return 0;
}

/* ==== Verdict ================================================================================ */

pks_undecidable
pks_check_samples(size_t nbase, size_t ncand, double cv_base, double cv_cand, double cv_limit)
{
    if (nbase < PKS_MIN_SAMPLES || ncand < PKS_MIN_SAMPLES)
        return PKS_TOO_FEW_SAMPLES;
    if (cv_limit == 0)
        cv_limit = PKS_DEFAULT_CV_LIMIT;
    if (cv_limit > 0 && !(cv_base <= cv_limit && cv_cand <= cv_limit))
        return PKS_TOO_NOISY;
    return PKS_DECIDABLE;
}

pks_decision pks_decide(const pks_decision_in *in)
{
    double alpha = in->alpha != 0 ? in->alpha : PKS_DEFAULT_ALPHA;
    pks_decision d = {.verdict = PKS_NO_CHANGE, .bar = fmax(in->threshold, in->noise_floor)};
    double wide = d.bar + (in->widen > 0 ? in->widen : 0);
    bool settled = in->samples == PKS_TOO_NOISY && in->ci_known && in->p < alpha &&
                   (in->ci_lo > wide || in->ci_hi < -wide);
    if (settled) { /* the whole interval is beyond the widened bar: the noise cannot undo it */
        d.verdict = in->ci_lo > wide ? PKS_REGRESSED : PKS_IMPROVED;
        d.bar = wide;
        d.noisy = true;
    } else if (in->samples != PKS_DECIDABLE) {
        d.verdict = PKS_UNDECIDABLE;
        d.reason = in->samples;
    } else if (in->p < alpha && in->delta > d.bar) {
        d.verdict = PKS_REGRESSED;
    } else if (in->p < alpha && in->delta < -d.bar) {
        d.verdict = PKS_IMPROVED;
    }
    return d;
}

const char *pks_verdict_name(pks_verdict verdict)
{
    switch (verdict) {
    case PKS_NO_CHANGE:
        return "~";
    case PKS_IMPROVED:
        return "improved";
    case PKS_REGRESSED:
        return "regressed";
    case PKS_UNDECIDABLE:
        return "undecidable";
    }
    return "?";
}

const char *pks_undecidable_name(pks_undecidable reason)
{
    switch (reason) {
    case PKS_DECIDABLE:
        return "decidable";
    case PKS_TOO_FEW_SAMPLES:
        return "too few samples";
    case PKS_TOO_NOISY:
        return "too noisy";
    }
    return "?";
}
