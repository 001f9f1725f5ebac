/*
 * sides — the scenarios suite's series in other builds' workers (sides.posix.c), private to its
 * folder: every contender of the registry in every scenario it runs, once per side of `pkbench ab`
 * (or once, in the one build of `pkbench run --build`), each series in a process of its build's
 * worker.
 */
#ifndef PKB_SUITES_SCENARIOS_SIDES_H
#define PKB_SUITES_SCENARIOS_SIDES_H

#include "suites/scenarios/scenario.h"
#include "suites/suite.h"

#include <regex.h>

/* Builds the series of the contenders `re` selects (NULL: all) over the suite's workloads (one per
 * scenario; the fan-out at scale's, one per size), once per build of cli->sides, sets
 * each up in its build's worker and checks it, and runs them (run.h's pkb_run_series; two sides:
 * base and head of a series next to each other). Returns the suite's status: 0, 1 (nothing
 * selected) or 130. */
int pkb__scenarios_sides(const pkb_cli *cli,
                         pkb_suite_options *opts,
                         const pkb__workloads *ws,
                         const regex_t *re);

#endif /* PKB_SUITES_SCENARIOS_SIDES_H */
