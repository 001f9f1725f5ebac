/*
 * What run.c, remeasure.c and rounds.c share (collect.c), below all three: the benchmark function
 * and its registration, the collection of runs into the series and the results document, and the
 * progress lines. Private to the run room; it calls none of them.
 */
#ifndef PKB_RUN_COLLECT_H
#define PKB_RUN_COLLECT_H

#include "run/series.h"
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
    size_t timed; /* the series the runner times: the progress lines' total */
    int write_error;
};

/* Registers one series with Google Benchmark as a sequential run does (run.c, and remeasure.c
 * measuring it again): the profile's repetitions, warm-up and time per repetition, manual time.
 * Returns 0 or the shim's negative errno (message printed). */
int pkb__register(pkb_series *s, const pkb_profile *prof);

/* The Google Benchmark function of every series (user data: the pkb_series). */
void pkb__bench(pkb_state *st, void *user);
/* Adds an iteration run's sample to the series; returns its index, or -1. */
long pkb__append_sample(pkb_series *s, const pkb_run *run);
void pkb__finish_series(struct pkb__collect *c, pkb_series *s);
/* Rebuilds series[] and benchmarks[] from the finished series and writes the file. */
int pkb__write_doc(struct pkb__collect *c);
int pkb__on_context(const pkb_context *ctx, void *user);
int pkb__on_run(const pkb_run *run, void *user);
/* Prints on stderr the line of every finished timed series not shown yet, in file order: "[k/n]
 * name  <the suite's summary, read back from the file>", with the time left when `eta` (in a log;
 * a terminal's live line shows it). A series a re-measure may still replace waits, unless `final`
 * (no re-measure is coming). Call after the file holds the finished series. */
void pkb__show_finished(struct pkb__collect *c, bool final, bool eta);
/* The estimated seconds left in the whole run. */
double pkb__eta_s(void);
/* CLOCK_MONOTONIC in seconds. */
double pkb__now_s(void);

/* Whether s is due to be measured again (remeasure.c): a timed series more than
 * PKB_REMEASURE_SHARE of whose repetitions were disturbed, measured once so far, in a run that is
 * not --aa and was not interrupted. Its progress line waits for the re-measure. */
bool pkb__remeasure_due(const struct pkb__collect *c, const pkb_series *s);

#endif /* PKB_RUN_COLLECT_H */
