/*
 * sides — the scenarios suite in other builds' workers (sides.h), on Windows: not there. The
 * measuring worker (contenders/host/host.c) and the worker protocol's client are POSIX programs,
 * and `pkbench ab` builds revisions with git and the POSIX toolchain, so `ab` and `run --build`
 * say so and measure nothing (sides.posix.c is the POSIX file).
 */
#include "suites/scenarios/sides.h"

#include <stdio.h>

int pkb__scenarios_sides(const pkb_cli *cli,
                         pkb_suite_options *opts,
                         const pkb__workloads *ws,
                         const regex_t *re)
{
    (void)cli, (void)opts, (void)ws, (void)re;
    fprintf(stderr, "pkbench: other builds' workers (ab, run --build) run on Linux only\n");
    return 1;
}
