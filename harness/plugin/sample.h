/*
 * sample — the plugin contract: what one timed iteration reports to the runner, whoever performed
 * it (a contender, contenders/contender.h; a phases series, phases/attribution/phases.h; or a
 * suite's own loop). A leaf: it includes nothing of the harness, so a plugin that includes it
 * depends on this contract and on nothing the harness does with it.
 */
#ifndef PKB_PLUGIN_SAMPLE_H
#define PKB_PLUGIN_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What one iteration saw, summed over its children. The runner zeroes it before each call. */
typedef struct pkb_sample {
    uint64_t bytes;  /* stdout bytes read */
    uint64_t lines;  /* stdout lines consumed */
    int children;    /* children reaped */
    int failures;    /* children that did not exit 0 */
    char error[160]; /* set (non-empty) when the iteration itself failed */

    /* In: how many iterations this call may perform back to back (the runner sets it; 0 means
     * one). An in-process contender ignores it and performs one. A contender that performs
     * several (a worker in another process, contenders/worker.h, for which each call is a round
     * trip) sets `iterations` to how many it performed, 1..batch, and the counts above are then
     * their sums. */
    uint32_t batch;
    uint32_t iterations; /* out: 0 means one */

    /* Self-timed: the iterations timed themselves (in another process: a worker, or pkbench's
     * measuring worker, with its own monotonic clock around exactly the work: start, feed,
     * consume, reap) and the runner records these instead of its clock around the call and its
     * RUSAGE deltas, which cannot see another process's work. Zero (`self_timed` false) for every
     * in-process contender: the runner times the call. */
    bool self_timed;
    uint64_t wall_ns;      /* the iterations' wall time, summed */
    uint64_t child_cpu_ns; /* their children's user+sys CPU, summed */
    uint64_t self_cpu_ns;  /* the performing process's own user+sys CPU over them */

    /* Optional (0: not measured), for the fan-out kinds: the performing process's peak resident
     * memory over these iterations (VmHWM, KiB), its open descriptors with every child in flight,
     * and before any was started. */
    uint64_t peak_rss_kib;
    uint32_t peak_fds, idle_fds;
} pkb_sample;

/* One iteration of a series: returns 0, or a negative errno with out->error set. */
typedef int (*pkb_iterate_fn)(void *ctx, pkb_sample *out);

#ifdef __cplusplus
}
#endif

#endif /* PKB_PLUGIN_SAMPLE_H */
