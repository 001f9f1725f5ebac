/*
 * The contract between the scenarios suite (harness/suites/scenarios/) and a contender
 * (contenders/<name>.c). It includes nothing of the harness but the plugin contract
 * (harness/plugin/sample.h: what an iteration reports), so a contender depends on this header,
 * that one and processkit.h, never on the suite that drives it.
 *
 * A contender is one file that fills one `pkb_contender` and is listed by one line in
 * contenders/registry.c; nothing in the harness names a contender. For each scenario it supports,
 * the harness builds the workload once (outside any timed region), calls setup, runs the
 * correctness check (one untimed `run` whose counts must match the workload exactly, or the
 * contender is not timed and the reason is printed), then times `run` repeatedly, then calls
 * teardown.
 *
 * `run` performs one complete iteration: start the child(ren), feed stdin, consume the output as
 * the scenario says, reap. It must reap every child it started before returning (the harness
 * measures children's CPU as the RUSAGE_CHILDREN delta across the call) and report what it read.
 */
#ifndef PKB_CONTENDERS_CONTENDER_H
#define PKB_CONTENDERS_CONTENDER_H

#include "plugin/sample.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(id, name, throughput unit, description). FAN_OUT_SCALE is a family: the suite runs it once
 * per size N (pkbench run --fan-out; 16, 64, 256, 1024 and 4096 in the full profile) as the
 * scenario "fan_out_<N>", whose workload has children = N (pkb_scenario_fan_out_name). */
#define PKB_SCENARIO_MAP(X)                                                                        \
    X(SPAWN_CAPTURE_SMALL, "spawn_capture_small", "runs/s",                                        \
      "one cat, 32 bytes in 3 lines through stdin to stdout, captured")                            \
    X(STREAM_LARGE_STDOUT, "stream_large_stdout", "MiB/s",                                         \
      "one cat, 1,032,000 bytes = 8,000 lines of 128 bytes + newline, every line consumed "        \
      "before the wait")                                                                           \
    X(CONCURRENT_FAN_OUT, "concurrent_fan_out", "children/s",                                      \
      "16 cat children x 32 bytes, each contender's natural concurrency")                          \
    X(SPAWN_ONLY, "spawn_only", "runs/s", "the tiny static helper, no pipes: the floor")           \
    X(FAN_OUT_SCALE, "fan_out", "children/s",                                                      \
      "N cat children x 32 bytes, all started before any is reaped, each contender's natural "     \
      "concurrency, in a measuring process of the contender's own: fan-out at scale")

typedef enum pkb_scenario {
#define PKB__SCENARIO_ENUM(id, name, unit, desc) PKB_##id,
    PKB_SCENARIO_MAP(PKB__SCENARIO_ENUM)
#undef PKB__SCENARIO_ENUM
        PKB_SCENARIO_COUNT
} pkb_scenario;

#define PKB_SCENARIO_BIT(s) (1u << (s))

/* The map's columns (contender.c). */
const char *pkb_scenario_name(pkb_scenario s);
const char *pkb_scenario_unit(pkb_scenario s);
const char *pkb_scenario_description(pkb_scenario s);
/* -1 when unknown; "fan_out_<N>" is FAN_OUT_SCALE (with *children = N when children is not NULL,
 * else 0 and 1 for the others). */
int pkb_scenario_parse(const char *name, int *children);
int pkb_scenario_from_name(const char *name);
/* "fan_out_<N>" into buf: the scenario FAN_OUT_SCALE is at size N. */
void pkb_scenario_fan_out_name(int children, char *buf, size_t cap);
/* Whether a scenario starts w->children children at once, each captured: the seed's 16-way
 * fan-out and the fan-out at scale (the worker protocol's kind "fan_out"). */
static inline bool pkb_scenario_fans_out(pkb_scenario s)
{
    return s == PKB_CONCURRENT_FAN_OUT || s == PKB_FAN_OUT_SCALE;
}

/* The largest fan-out a series may ask for. */
#define PKB_FAN_OUT_MAX 65536

/* What one iteration must do, built by the harness before any timing. */
typedef struct pkb_workload {
    pkb_scenario scenario;
    /* The program to start. `program` is what a user would write: the bare name "cat" for the
     * cat scenarios (found in PATH), the absolute path of the tiny helper for spawn_only.
     * `program_path` is the same program resolved to an absolute path (for contenders that
     * resolve once, untimed, or that need a path for execve). */
    const char *program;
    const char *program_path;
    /* stdin for each child (NULL / 0 for spawn_only) */
    const unsigned char *input;
    size_t input_len;
    /* what each child writes back, and how many children one iteration starts */
    size_t expect_bytes;
    size_t expect_lines;
    int children;
    /* Set by a measuring process before an untimed iteration of a fan-out (never while timing):
     * the contender then reports in out->peak_fds the descriptors it has open once all
     * w->children children are started and before any is reaped (pkb_count_fds), which for the
     * raw baselines' threads means waiting until every thread has started its child. */
    bool count_fds;
} pkb_workload;

/* The descriptors open in this process (contenders/fds.*.c: /proc/self/fd; 0 where it cannot
 * tell). */
uint32_t pkb_count_fds(void);

typedef struct pkb_contender {
    const char *name;        /* series name part, [a-z0-9_]+ */
    const char *description; /* one line, for `pkbench list` and the report */
    unsigned scenarios;      /* PKB_SCENARIO_BIT(...) | ... */
    bool baseline;           /* the contender deltas are computed against (exactly one) */
    /* A control: its code cannot change with the library under test (it calls no processkit
     * function), so between two runs of one machine its times move only with the machine.
     * `pkbench compare` measures the machine's drift from the controls and corrects the other
     * series for it (harness/regress/drift.h); a control itself is never reported as a
     * regression. Written into the results file as the series' `control`. */
    bool control;
    /* Calls no processkit function, like a control, but is no drift control (libuv, GLib: their
     * own machinery, not a raw floor). `pkbench ab` leaves out both kinds unless --controls: its
     * two sides would run the same code, and differ in nothing but noise. */
    bool library_free;
    /* The child's stdout goes where the contender cannot read it (/dev/null), so `run` reports
     * 0 bytes and 0 lines and the check expects exactly that (never the workload's counts, which
     * such a contender could only claim, not observe); every child must still be reaped with
     * exit status 0. For cat that is still a proof that the workload ran: cat exits 0 only after
     * reading its whole stdin to end-of-file and writing all of it without an error. Such a
     * series is a discard path, not a replacement for capture: reports must say so. */
    bool discards_output;
    /* Prepares per-series state. Returns 0 or a negative errno. setup and teardown may both be
     * NULL for a contender that keeps no state (`run` then gets a NULL state). */
    int (*setup)(void **state, const pkb_workload *w);
    /* Instead of setup, for a contender whose set-up can fail for many reasons (a worker in
     * another process, worker.h): the same, plus a one-line reason in `why` on failure, naming
     * the contender. At most one of setup and prepare is set; call pkb_contender_setup. */
    int (*prepare)(void **state, const pkb_workload *w, char *why, size_t why_len);
    /* One iteration. Returns 0, or a negative errno with out->error saying what failed. */
    int (*run)(void *state, const pkb_workload *w, pkb_sample *out);
    void (*teardown)(void *state);
    /* Optional: what runs the contender when it is not this process's own code (a worker's
     * language runtime, "rustc 1.63.0", "python 3.11.2"), from its set-up state; recorded with
     * its series. NULL: an in-process C contender. */
    const char *(*runtime)(void *state);
} pkb_contender;

/* Sets up one series of `c` (its prepare, else its setup): 0, or a negative errno with a one-line
 * reason in `why` that names the contender. */
int pkb_contender_setup(
    const pkb_contender *c, void **state, const pkb_workload *w, char *why, size_t why_len);

/* What a scenario asks of its children, as a worker's protocol names it (README.md): "capture"
 * (one child, stdin fed, stdout captured), "stream" (one child, every stdout line consumed before
 * the wait), "fan_out" (w->children at once, each captured), "spawn_only" (no pipes). A new
 * scenario of an existing kind needs no worker change. */
const char *pkb_scenario_kind(pkb_scenario s);

/* Besides the contenders the suite times one series of its own, a control that is no contender:
 * a fixed pure-CPU loop (calibration.c), `calibration/cpu_loop` in the file. */
#define PKB_CALIBRATION_SCENARIO  "calibration"
#define PKB_CALIBRATION_CONTENDER "cpu_loop"
#define PKB_CALIBRATION_DESCRIPTION                                                                \
    "a fixed pure-CPU loop (65,536 dependent xorshift steps in registers: no memory traffic, no "  \
    "system call, no child); a drift control for pkbench compare, not a contender"

#ifdef __cplusplus
}
#endif

#endif /* PKB_CONTENDERS_CONTENDER_H */
