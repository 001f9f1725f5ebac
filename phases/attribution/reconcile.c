/*
 * reconcile — the rule the phases report applies to every composite series: os_spawn_plain plus
 * the primitives it contains against the composite's measured mean, flagged when the residual
 * is larger than both 5% of the measurement and twice the combined standard deviation (see
 * phases.h). A pure function, so the tests check it against hand-computed cases.
 */
#include "phases/attribution/phases.h"

#include <errno.h>
#include <math.h>

static bool valid_term(pkb_recon_term t)
{
    return isfinite(t.mean_ns) && t.mean_ns > 0 && !(t.sd_ns < 0) && !isinf(t.sd_ns);
}

static double variance(double sd)
{
    return isnan(sd) ? 0 : sd * sd;
}

int pkb_reconcile(pkb_recon_term composite,
                  pkb_recon_term plain,
                  const pkb_recon_term *parts,
                  size_t nparts,
                  pkb_reconciliation *out)
{
    if (out == NULL || (parts == NULL && nparts > 0) || !valid_term(composite) ||
        !valid_term(plain))
        return -EINVAL;
    double sum = plain.mean_ns, var = variance(composite.sd_ns) + variance(plain.sd_ns);
    for (size_t i = 0; i < nparts; i++) {
        if (!valid_term(parts[i]))
            return -EINVAL;
        sum += parts[i].mean_ns;
        var += variance(parts[i].sd_ns);
    }
    out->predicted_ns = sum;
    out->measured_ns = composite.mean_ns;
    out->residual_ns = composite.mean_ns - sum;
    out->residual_fraction = out->residual_ns / composite.mean_ns;
    out->combined_sd_ns = sqrt(var);
    out->threshold_ns =
        fmax(PKB_RECON_MIN_FRACTION * composite.mean_ns, PKB_RECON_SD_FACTOR * out->combined_sd_ns);
    out->flagged = fabs(out->residual_ns) > out->threshold_ns;
    return 0;
}
