/*
 * Workloads for the scenarios suite and the check a contender passes before it is timed (the
 * contract is contenders/contender.h).
 */
#ifndef PKB_SCENARIO_H
#define PKB_SCENARIO_H

#include "contenders/contender.h"

/* Builds the workload of scenario `s`. `cat_path` is cat resolved to an absolute path,
 * `tiny_path` the tiny static helper. Returns 0, -ENOMEM or -EINVAL. */
int pkb_workload_build(pkb_scenario s,
                       const char *cat_path,
                       const char *tiny_path,
                       pkb_workload *w);
void pkb_workload_free(pkb_workload *w);

/* Runs one untimed iteration and compares it with the workload: every child reaped, none exited
 * non-zero, and exactly expect_bytes and expect_lines per child read (0 and 0 when the contender
 * discards_output). Returns 0 when all match; otherwise a negative errno and a one-line reason in
 * `why`. */
int pkb_check_contender(
    const pkb_contender *c, void *state, const pkb_workload *w, char *why, size_t why_len);
/* The same check on an iteration performed elsewhere (a measuring worker, measure.h): its
 * return code and sample. */
int pkb_check_sample(const pkb_contender *c,
                     const pkb_workload *w,
                     int rc,
                     const pkb_sample *out,
                     char *why,
                     size_t why_len);

/* calibration.c: one iteration of the control series PKB_CALIBRATION_SCENARIO/
 * PKB_CALIBRATION_CONTENDER (contender.h), a fixed pure-CPU loop; always returns 0. */
int pkb__calibration_iterate(void *ctx, pkb_sample *out);

#endif /* PKB_SCENARIO_H */
