/*
 * Workloads for the scenarios suite and the check a contender passes before it is timed (the
 * contract is contenders/contender.h).
 */
#ifndef PKB_SCENARIO_H
#define PKB_SCENARIO_H

#include "contenders/contender.h"
#include "suites/suite.h"

/* Builds the workload of scenario `s`. `cat_path` is cat resolved to an absolute path,
 * `tiny_path` the tiny static helper. Returns 0, -ENOMEM or -EINVAL. */
int pkb_workload_build(pkb_scenario s,
                       const char *cat_path,
                       const char *tiny_path,
                       pkb_workload *w);
void pkb_workload_free(pkb_workload *w);

/* The workloads of one run of the suite: one per scenario, and the fan-out at scale's, one per
 * size (FAN_OUT_SCALE's own entry in `each` is the model they are copied from). */
typedef struct pkb__workloads {
    pkb_workload each[PKB_SCENARIO_COUNT];
    pkb_workload scale[PKB_FAN_OUT_SIZES];
    size_t nscale;
} pkb__workloads;

/* Builds every scenario's workload (as pkb_workload_build) and the fan-out at scale's at each of
 * the nsizes sizes (at most PKB_FAN_OUT_SIZES). */
void pkb__workloads_build(pkb__workloads *ws,
                          const char *cat_path,
                          const char *tiny_path,
                          const int *sizes,
                          size_t nsizes);
void pkb__workloads_free(pkb__workloads *ws);

/* How many workloads scenario s runs (the fan-out at scale: one per size), and the i-th. */
size_t pkb__workloads_count(const pkb__workloads *ws, pkb_scenario s);
const pkb_workload *pkb__workload_at(const pkb__workloads *ws, pkb_scenario s, size_t i);

/* A series' scenario in its name: the contract's name, or "fan_out_<N>" for the fan-out at
 * scale. */
void pkb__workload_scenario(const pkb_workload *w, char *buf, size_t cap);

/* A series' work per iteration in its unit (pkb_scenario_unit): MiB for the stream, children for
 * a fan-out, else one run. */
double pkb__workload_work(const pkb_workload *w);

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
