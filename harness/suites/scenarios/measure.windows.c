/*
 * measure.h on Windows: the fan-out at scale runs each series in a measuring worker, which
 * pkbench.exe does not build (its contenders are served in-process only), so such a series is
 * refused with that reason.
 */
#include "suites/scenarios/measure.h"

#include <errno.h>
#include <stdio.h>

int pkb__measure_start(const char *exe,
                       const pkb_contender *c,
                       const pkb_workload *w,
                       pkb__measure **out,
                       char *why,
                       size_t why_len)
{
    (void)exe;
    (void)w;
    *out = NULL;
    snprintf(why, why_len,
             "%s: the fan-out at scale runs in a measuring worker, which the Windows build lacks",
             c->name);
    return -ENOTSUP;
}

int pkb__measure_run(pkb__measure *m, pkb_sample *out)
{
    (void)m;
    snprintf(out->error, sizeof out->error, "no measuring worker on Windows");
    return -ENOTSUP;
}

void pkb__measure_stop(pkb__measure *m)
{
    (void)m;
}
