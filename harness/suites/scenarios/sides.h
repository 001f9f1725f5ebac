/*
 * sides — the scenarios suite's series for `pkbench ab` (sides.c), private to its folder: every
 * contender of the registry in every scenario it runs, once per side of the comparison, each
 * series in a process of its side's worker.
 */
#ifndef PKB_SUITES_SCENARIOS_SIDES_H
#define PKB_SUITES_SCENARIOS_SIDES_H

#include "contenders/contender.h"
#include "suites/suite.h"

#include <regex.h>

/* Builds the two-sided series of the contenders `re` selects (NULL: all) over the suite's
 * workloads (one per scenario), sets each up in its side's worker and checks it, and runs them
 * (run.h's pkb_run_series: base and head of a series next to each other). Returns the suite's
 * status: 0, 1 (nothing selected, a set-up that could not even start) or 130. */
int pkb__scenarios_sides(const pkb_cli *cli,
                         pkb_suite_options *opts,
                         const pkb_workload *workloads,
                         const regex_t *re);

#endif /* PKB_SUITES_SCENARIOS_SIDES_H */
