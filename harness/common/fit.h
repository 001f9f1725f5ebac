/*
 * fit — the ordinary least-squares line y = intercept + slope · x through n points, with its
 * coefficient of determination R². Used by the forkathon suite and its report for the spawn cost
 * against the parent's resident memory (µs per MiB), and on logarithms by the scenarios suite's
 * fan-out at scale. stats.h has no regression; this is the one.
 */
#ifndef PKB_FIT_H
#define PKB_FIT_H

#include <stddef.h>

typedef struct pkb_fit {
    size_t n;
    double slope;     /* Σ(x − x̄)(y − ȳ) / Σ(x − x̄)² */
    double intercept; /* ȳ − slope · x̄ */
    /* 1 − SS_res / SS_tot: the share of y's variance the line explains, in [0, 1]. When every y
     * is equal (SS_tot = 0) the horizontal line through them is exact and r2 is 1. */
    double r2;
} pkb_fit;

/* Fits x[0..n), y[0..n). Computed in two passes around the means (no cancellation of large
 * sums). Errors: -EINVAL (n < 2, a NULL array or a non-finite value), -EDOM (every x is equal:
 * no slope). */
int pkb_fit_linear(const double *x, const double *y, size_t n, pkb_fit *out);

/* Fits log y = intercept + slope · log x: the power law y = e^intercept · x^slope, whose slope is
 * the exponent (0: y does not change with x; 1: y grows in proportion), r2 that of the logarithms.
 * Used for a cost per child against the number of children (the scenarios suite's fan-out at
 * scale), read on log-log axes. Errors as pkb_fit_linear, and -EDOM for a value that is not
 * positive (no logarithm). */
int pkb_fit_loglog(const double *x, const double *y, size_t n, pkb_fit *out);

#endif /* PKB_FIT_H */
