/*
 * Workloads for the scenarios suite (see contender.h for the contract).
 */
#ifndef PKB_SCENARIO_H
#define PKB_SCENARIO_H

#include "suites/scenarios/contender.h"

/* Builds the workload of scenario `s`. `cat_path` is cat resolved to an absolute path,
 * `tiny_path` the tiny static helper. Returns 0, -ENOMEM or -EINVAL. */
int pkb_workload_build(pkb_scenario s,
                       const char *cat_path,
                       const char *tiny_path,
                       pkb_workload *w);
void pkb_workload_free(pkb_workload *w);

/* calibration.c: one iteration of the control series PKB_CALIBRATION_SCENARIO/
 * PKB_CALIBRATION_CONTENDER (contender.h), a fixed pure-CPU loop; always returns 0. */
int pkb__calibration_iterate(void *ctx, pkb_sample *out);

#endif /* PKB_SCENARIO_H */
