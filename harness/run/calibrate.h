/*
 * calibrate — the iteration count of a series in rounds mode (calibrate.c), sized so that a
 * disturbance of the calibration round cannot change it.
 *
 * Google Benchmark sizes a series from its last trial: iterations = 1.4 x min_time / the trial's
 * time per iteration. A busy loop during that trial makes every iteration look slower, so the
 * series gets fewer iterations per sample for the whole run: shorter, noisier samples, and a
 * verdict that turns undecidable although no measured round was disturbed (METHODOLOGY.md,
 * "Sizing the samples"; reports/notes/2026-12-02-calibration-hog.md). Here every call of the
 * benchmark function in the calibration round (warm-up and sizing trials alike) that lasted at
 * least half of min_time is a candidate, with its mean iteration time and its disturbance mark; the
 * count uses the same 1.4 x min_time rule on the fastest undisturbed one. A series with a disturbed
 * candidate is calibrated once more after the others (rounds.c), and the fastest undisturbed
 * candidate of both passes sizes it; if neither pass saw an undisturbed one, the fastest candidate
 * does and the file says so (`disturbed`).
 */
#ifndef PKB_RUN_CALIBRATE_H
#define PKB_RUN_CALIBRATE_H

#include "results/results.h" /* pkb_calibration */

#include <stdbool.h>

#define PKB_CALIBRATION_MARGIN 1.4 /* Google Benchmark's: a sample lasts about 1.4 x min_time */
/* The second pass's warm-up, in units of min_time: the series is warm already, but one long call
 * is a steadier candidate than the single sizing trial that would be left without it. */
#define PKB_RECALIBRATION_WARMUP 4

/* Adds one call of the benchmark function made while calibrating: `iterations` iterations that
 * took `seconds` of manual time in all, `disturbed` by run/disturb.h's rule. A call shorter than
 * min_time_s / 2 (the first sizing trials) is not a candidate. */
void pkb_calibration_add(
    pkb_calibration *c, long long iterations, double seconds, bool disturbed, double min_time_s);

/* Whether the pass can be trusted: candidates were seen and none was disturbed. One disturbed
 * candidate means other load ran during the calibration, and a long call that overlapped it only
 * in part can stay under the mark while its mean is inflated (the full-suite demonstration in
 * METHODOLOGY.md, "Sizing the samples"): such a series is calibrated once more. */
bool pkb_calibration_clean(const pkb_calibration *c);

/* Sets c->iterations (and per_iteration_ns, disturbed) from the fastest undisturbed candidate,
 * else the fastest candidate, and returns it: ceil(1.4 x min_time_s / time per iteration), at
 * least 1. With no candidate at all, `fallback` (Google Benchmark's own count). */
long long pkb_calibration_size(pkb_calibration *c, double min_time_s, long long fallback);

#endif /* PKB_RUN_CALIBRATE_H */
