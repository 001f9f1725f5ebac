/*
 * calibrate — sizes a series' iteration count from the fastest undisturbed call of its
 * calibration round (see calibrate.h for why Google Benchmark's own count is not kept).
 */
#include "run/calibrate.h"

#include <math.h>

#define PKB_CALIBRATION_MAX_ITERATIONS 1000000000LL /* Google Benchmark's kMaxIterations */

void pkb_calibration_add(
    pkb_calibration *c, long long iterations, double seconds, bool disturbed, double min_time_s)
{
    /* The first trials (1, 10, ... iterations) are dominated by the call's own overhead and the
     * clock's resolution; the long ones say what an iteration costs. */
    if (iterations <= 0 || !(seconds > 0) || seconds < min_time_s / 2)
        return;
    double per_ns = seconds * 1e9 / (double)iterations;
    c->calls++;
    if (disturbed)
        c->disturbed_calls++;
    else if (c->fastest_quiet_ns == 0 || per_ns < c->fastest_quiet_ns)
        c->fastest_quiet_ns = per_ns;
    if (c->fastest_ns == 0 || per_ns < c->fastest_ns)
        c->fastest_ns = per_ns;
}

bool pkb_calibration_clean(const pkb_calibration *c)
{
    return c->calls > 0 && c->disturbed_calls == 0;
}

long long pkb_calibration_size(pkb_calibration *c, double min_time_s, long long fallback)
{
    double per_ns = c->fastest_quiet_ns > 0 ? c->fastest_quiet_ns : c->fastest_ns;
    if (!(per_ns > 0)) {
        c->iterations = fallback > 0 ? fallback : 1;
        c->per_iteration_ns = 0;
        c->disturbed = false;
        return c->iterations;
    }
    double n = ceil(PKB_CALIBRATION_MARGIN * min_time_s * 1e9 / per_ns);
    c->iterations = n < 1                                ? 1
                    : n > PKB_CALIBRATION_MAX_ITERATIONS ? PKB_CALIBRATION_MAX_ITERATIONS
                                                         : (long long)n;
    c->per_iteration_ns = per_ns;
    c->disturbed = c->fastest_quiet_ns == 0;
    return c->iterations;
}
