/*
 * measure — a series of the fan-out at scale in a measuring process of its own: `pkbench worker`
 * (contenders/host.c), started for the series and driven over the worker protocol
 * (contenders/README.md): its greeting, `setup` (which counts the worker's descriptors before a
 * fan-out and with all of one iteration's children started), `run 1` per iteration (the
 * worker's own clock, CPU and peak resident memory: plugin/sample.h's self-timed fields),
 * `teardown` and `quit`. Every request has a deadline; a worker that dies, misses one or answers
 * anything but the answer fails the series with a reason naming the contender.
 *
 * measure.posix.c; measure.windows.c refuses (the fan-out at scale does not run on Windows).
 */
#ifndef PKB_SUITES_SCENARIOS_MEASURE_H
#define PKB_SUITES_SCENARIOS_MEASURE_H

#include "contenders/contender.h"

#include <stddef.h>
#include <stdint.h>

typedef struct pkb__measure pkb__measure;

/* Starts the worker `exe worker` (this pkbench) for contender c and workload w, reads its
 * greeting and sets the series up. 0 with *out, or a negative errno with a one-line reason that
 * names the contender in `why`. */
int pkb__measure_start(const char *exe,
                       const pkb_contender *c,
                       const pkb_workload *w,
                       pkb__measure **out,
                       char *why,
                       size_t why_len);

/* One iteration, performed and timed by the worker: out gets its counts and its self-timed
 * fields (wall time, the children's and the worker's CPU, the peaks). 0, or a negative errno
 * with out->error naming the contender. */
int pkb__measure_run(pkb__measure *m, pkb_sample *out);

/* Tells the worker to tear down and quit, waits for it (killed past the deadline), frees m. */
void pkb__measure_stop(pkb__measure *m);

#endif /* PKB_SUITES_SCENARIOS_MEASURE_H */
