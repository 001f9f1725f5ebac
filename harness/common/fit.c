/*
 * fit — ordinary least squares for one predictor (see fit.h). Two passes: the means first, then
 * the centred sums Sxx, Sxy and the residuals, which keeps the result exact for a perfect line
 * whatever the offset of x and y.
 */
#include "common/fit.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

int pkb_fit_linear(const double *x, const double *y, size_t n, pkb_fit *out)
{
    if (x == NULL || y == NULL || out == NULL || n < 2)
        return -EINVAL;
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i]))
            return -EINVAL;
        mx += x[i];
        my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxx = 0, sxy = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        double dx = x[i] - mx, dy = y[i] - my;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    if (sxx == 0)
        return -EDOM;
    double slope = sxy / sxx, intercept = my - slope * mx, ssr = 0;
    for (size_t i = 0; i < n; i++) {
        double e = y[i] - (intercept + slope * x[i]);
        ssr += e * e;
    }
    double r2 = syy > 0 ? 1.0 - ssr / syy : 1.0;
    *out = (pkb_fit){.n = n,
                     .slope = slope,
                     .intercept = intercept,
                     .r2 = r2 < 0   ? 0
                           : r2 > 1 ? 1
                                    : r2};
    return 0;
}

int pkb_fit_loglog(const double *x, const double *y, size_t n, pkb_fit *out)
{
    if (x == NULL || y == NULL || out == NULL || n < 2)
        return -EINVAL;
    double *lx = malloc(2 * n * sizeof *lx);
    if (lx == NULL)
        return -ENOMEM;
    double *ly = lx + n;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i]))
            rc = -EINVAL;
        else if (x[i] <= 0 || y[i] <= 0)
            rc = -EDOM;
        else {
            lx[i] = log(x[i]);
            ly[i] = log(y[i]);
        }
    }
    if (rc == 0)
        rc = pkb_fit_linear(lx, ly, n, out);
    free(lx);
    return rc;
}
