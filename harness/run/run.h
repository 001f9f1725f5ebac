/*
 * The suite runner: times a list of series through Google Benchmark (via the shim) and writes
 * the results file through results/. Suites (suites/<name>/) build the series (run/series.h);
 * the runner owns priming, timing, progress, interruption and the file.
 *
 * Inside the room the calls go one way, down: run.c (pkb_run_series, the orchestrator) calls the
 * rounds (rounds.c) or Google Benchmark's repetitions, then the re-measure (remeasure.c), which
 * calls the rounds again; all of them collect through collect.c (the benchmark function, the
 * progress lines, the results document), which builds on series.c.
 */
#ifndef PKB_RUN_H
#define PKB_RUN_H

#include "run/series.h"

#include <stddef.h>

/* The profiles pkbench offers: `full` and `quick` (--profile). */
extern const pkb_profile pkb_profile_full, pkb_profile_quick;

/* Runs the series (those with status PENDING are timed; REFUSED ones are recorded, and so are
 * MEASURED or FAILED ones a suite settled itself: their samples, per-repetition arrays of nreps
 * entries and extra are written as they are) and writes the results file after every finished
 * series and at the end, atomically. A timed series more than PKB_REMEASURE_SHARE of whose
 * repetitions were disturbed is measured once more (not with --aa), both attempts kept.
 * Returns 0, 130 when interrupted (the file holds the finished series), or a negative errno
 * (message printed). */
int pkb_run_series(pkb_series *series, size_t n, const pkb_suite_options *opts);

/* The current time, UTC, as ISO 8601 ("2026-12-01T02:21:45Z"). */
void pkb_iso_time(char *buf, size_t cap);

#endif /* PKB_RUN_H */
