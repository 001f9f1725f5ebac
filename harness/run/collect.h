/*
 * What run.c and rounds.c share (collect.c): the collection of runs into the results document,
 * the progress line, and the benchmark function. Private to the run room.
 */
#ifndef PKB_RUN_COLLECT_H
#define PKB_RUN_COLLECT_H

#include "run/run.h"
#include "run/shim/pkb_shim.h"

struct pkb__progress {
    bool tty;
    bool rounds;    /* rounds mode: one line per round when not a terminal */
    char phase[32]; /* rounds mode: shown instead of warm-up/measuring */
    double later_s; /* rounds mode: the estimated time of the rounds after this one */
    size_t index, total;
    double run_start, series_start, per_series_s;
    double first_start; /* when the first series started (0: none yet): the observed pace */
    int width;          /* the longest series name, so the per-series lines align */
    const char *name;
    const pkb_profile *prof;
};

extern struct pkb__progress pkb__progress;

struct pkb__collect {
    pkb_series *series;
    size_t n;
    json_t *doc;
    const pkb_suite_options *opts;
    int write_error;
};

/* The Google Benchmark function of every series (user data: the pkb_series). */
void pkb__bench(pkb_state *st, void *user);
/* A Google Benchmark-compatible record of one run (new reference). */
json_t *pkb__gb_record(const pkb_run *run);
/* Adds an iteration run's sample to the series; returns its index, or -1. */
long pkb__append_sample(pkb_series *s, const pkb_run *run);
void pkb__finish_series(struct pkb__collect *c, pkb_series *s);
/* Rebuilds series[] and benchmarks[] from the finished series and writes the file. */
int pkb__write_doc(struct pkb__collect *c);
int pkb__on_context(const pkb_context *ctx, void *user);
int pkb__on_run(const pkb_run *run, void *user);
/* Prints the line of a finished series (stderr): "[index/total] name  <the suite's summary>",
 * with the time left when `eta` (in a log; a terminal's live line shows it). Call after the file
 * holds the series. */
void pkb__series_line(
    struct pkb__collect *c, const pkb_series *s, size_t index, size_t total, bool eta);
/* The estimated seconds left in the whole run. */
double pkb__eta_s(void);
/* CLOCK_MONOTONIC in seconds. */
double pkb__now_s(void);

#endif /* PKB_RUN_COLLECT_H */
