/*
 * Re-measuring (run.c, "Re-measuring"): a timed series more than PKB_REMEASURE_SHARE of whose
 * repetitions were disturbed (run/disturb.h: other processes or the hypervisor took a real share
 * of the CPUs while they ran) is measured once more, the way it was measured the first time —
 * in rounds among the re-measured series (with the iteration counts the first rounds sized,
 * after one discarded warm round), or one after another with Google Benchmark's repetitions.
 *
 * Both attempts stay in the file (the series' `attempts`, in the order measured); the series'
 * own samples are the attempt with the smaller disturbed share, the first one on a tie: a second
 * attempt that is no quieter earns nothing, and the first one ran interleaved with every other
 * series. A second attempt cut short by an interrupt is dropped and the first kept; one whose
 * iterations failed fails the series (the same code failed, whatever the load). Not done with
 * --aa: an A/A run measures the noise as it is.
 */
#define _GNU_SOURCE
#include "run/remeasure.h"

#include "run/rounds.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t mark(struct pkb__collect *c);
static int sequential_again(struct pkb__collect *c);
static void choose(pkb_series *s, size_t want);
static pkb_attempt take_attempt(pkb_series *s);
static void put_attempt(pkb_series *s, pkb_attempt a);
static void free_attempt(pkb_attempt *a);

int pkb__remeasure(struct pkb__collect *c)
{
    size_t n = mark(c);
    if (n == 0)
        return 0;
    pkb__progress.name = NULL;
    pkb__progress.index = 0;
    pkb__progress.total = n;
    int rc = c->opts->interleave ? pkb__run_rounds_again(c) : sequential_again(c);
    for (size_t i = 0; i < c->n; i++)
        if (c->series[i].remeasuring)
            choose(&c->series[i], (size_t)c->opts->profile->repetitions);
    pkb__write_doc(c);
    return rc;
}

/* Marks the too-disturbed series and sets their first attempt aside; returns how many. */
static size_t mark(struct pkb__collect *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        pkb_series *s = &c->series[i];
        if (!pkb__remeasure_due(c, s))
            continue;
        fprintf(stderr, "%s%s (%.0f%% disturbed)", n == 0 ? "pkbench: measuring again: " : ", ",
                s->name, 100 * pkb__disturbed_share(s));
        s->other = take_attempt(s);
        s->ncalls = 0;
        s->remeasuring = true;
        s->status = PKB_SERIES_PENDING;
        s->done = false;
        n++;
    }
    if (n > 0)
        fprintf(stderr, "\n");
    return n;
}

/* One after another, as the first time: Google Benchmark's repetitions of each marked series. */
static int sequential_again(struct pkb__collect *c)
{
    pkb_clear();
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->n; i++)
        if (c->series[i].remeasuring)
            rc = pkb__register(&c->series[i], c->opts->profile);
    if (rc == 0)
        rc = pkb_run_benchmarks(
            &(pkb_run_options){
                .filter = "all", .on_context = pkb__on_context, .on_run = pkb__on_run, .user = c},
            NULL);
    pkb_clear();
    return rc;
}

/* Which attempt the series keeps (see the top of this file). */
static void choose(pkb_series *s, size_t want)
{
    s->remeasuring = false;
    s->done = true;
    pkb_attempt second = take_attempt(s);
    if (s->status == PKB_SERIES_FAILED) {
        free_attempt(&second);
        free_attempt(&s->other);
        char why[sizeof s->reason];
        snprintf(why, sizeof why, "measured again (it was disturbed), it failed: %.200s",
                 s->reason);
        memcpy(s->reason, why, sizeof why);
        return;
    }
    s->status = PKB_SERIES_MEASURED;
    if (second.nreps < want) { /* cut short by an interrupt: keep the first */
        free_attempt(&second);
        put_attempt(s, s->other);
        memset(&s->other, 0, sizeof s->other);
        return;
    }
    pkb_attempt first = s->other;
    put_attempt(s, second);
    double second_share = pkb__disturbed_share(s);
    put_attempt(s, first);
    double first_share = pkb__disturbed_share(s);
    s->remeasured = true;
    if (second_share < first_share) {
        put_attempt(s, second);
        s->other = first;
        s->other_first = true;
    } else {
        s->other = second;
        s->other_first = false;
    }
}

/* The series' arrays as an attempt (ownership moves), the series emptied. */
static pkb_attempt take_attempt(pkb_series *s)
{
    pkb_attempt a = {.nreps = s->nreps,
                     .samples_ns = s->samples_ns,
                     .child_cpu_ns = s->child_cpu_ns,
                     .parent_cpu_ns = s->parent_cpu_ns,
                     .iterations = s->iterations,
                     .disturb = s->disturb,
                     .round = s->round};
    put_attempt(s, (pkb_attempt){0});
    return a;
}

static void put_attempt(pkb_series *s, pkb_attempt a)
{
    s->nreps = a.nreps;
    s->samples_ns = a.samples_ns;
    s->child_cpu_ns = a.child_cpu_ns;
    s->parent_cpu_ns = a.parent_cpu_ns;
    s->iterations = a.iterations;
    s->disturb = a.disturb;
    s->round = a.round;
}

static void free_attempt(pkb_attempt *a)
{
    free(a->samples_ns);
    free(a->child_cpu_ns);
    free(a->parent_cpu_ns);
    free(a->iterations);
    free(a->disturb);
    free(a->round);
    memset(a, 0, sizeof *a);
}
