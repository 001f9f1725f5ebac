/*
 * observe — what the observe suite's run (suite.c), its report (report.c, figures.c) and its
 * tests share: the one function that turns a results file's series into the study's summary, so
 * the numbers the run stores and the numbers the report prints come from the same code.
 *
 * Every series of the study (scenario "rate<R>_hold<H>ms", contender = the observer) carries an
 * "observe" object (merged from the series' `extra`): the cell's configuration and, per
 * repetition, every metric (arrays, one entry per repetition; null where an observer has no such
 * counter):
 *
 *   {"observer", "rate", "hold_ms", "duration_s", "long_lived", "hooks", "netns",
 *    "cpu_s", "user_s", "sys_s", "setup_cpu_s", "wall_s",          the observer's thread
 *    "client_cpu_s", "server_cpu_s", "workload_cpu_s",             the workload, from T0
 *    "churned", "failures", "seen", "attributed", "misattributed",  churned client sockets
 *    "long_seen", "long_attributed", "accepted", "server_seen", "server_attributed",
 *    "open_truth", "open_observed",
 *    "polls", "rows_max", "timewait_max",                           pollers
 *    "events", "submitted", "drops", "wakeups",                     ring observers
 *    "bpf_run_ns", "bpf_run_cnt", "bpf_programs",                   observers with BPF programs
 *    "late_max_us", "late_1ms"}                                     the client's schedule
 *
 * samples_ns of a series is the observer's CPU (run + final) per repetition, in ns;
 * child_cpu_ns the workload's; parent_cpu_ns the observer's again.
 */
#ifndef PKB_OBSERVE_H
#define PKB_OBSERVE_H

#include <jansson.h>

/* The study's summary of a results file's `series` array (borrowed). Returns a new reference,
 * NULL when out of memory:
 *
 *   {"rates": [...], "holds": [...], "observers": [...]     the grid, in order
 *    "cells": [{"hold_ms", "rate", "observer", "status", "reason", "n", "noisy",
 *               "cpu_s", "setup_cpu_s", "workload_cpu_s", "bpf_ms",
 *               "attribution", "events_per_conn":  {"median", "min", "max"} or null
 *               "workload_delta_s": median workload CPU minus `none`'s in the same cell, or null
 *               "churned", "seen", "attributed", "misattributed", "long_lived",
 *               "long_attributed", "accepted", "server_attributed", "open_truth",
 *               "open_observed", "events", "polls", "wakeups", "timewait_max": medians (or null)
 *               "drops_total", "drops_max", "failures_total", "late_max_us",
 *               "open_equal": repetitions whose open-at-end equalled the truth,
 *               "hooks", "bpf_programs" (the last repetition's)} ...]  hold, rate, observer order
 *   }
 *
 * Ratios (attribution, events per connection) are taken per repetition, then summarized; a
 * repetition with nothing churned has none. */
json_t *pkb_observe_summarize(const json_t *series);

#endif /* PKB_OBSERVE_H */
