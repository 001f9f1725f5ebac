/*
 * series — what every layer of the runner does with a series (run/series.h): its record and JSON
 * as the results file holds them (both attempts of a re-measured one), the share of its
 * repetitions that were disturbed, and freeing it; and the interrupt flag every layer polls.
 * Nothing here calls up into the runner.
 */
#define _GNU_SOURCE
#include "run/series.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile sig_atomic_t pkb_interrupted;

/* The record of one attempt's arrays (the series' own fields filled by the caller). */
static pkb_series_record attempt_record(const pkb_attempt *a)
{
    return (pkb_series_record){.n = a->nreps,
                               .samples_ns = a->samples_ns,
                               .child_cpu_ns = a->child_cpu_ns,
                               .parent_cpu_ns = a->parent_cpu_ns,
                               .iterations = a->iterations,
                               .disturb = a->disturb,
                               .round = a->round,
                               .logical_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN)};
}

pkb_series_record pkb__series_record(const pkb_series *s)
{
    pkb_series_record rec = attempt_record(&(pkb_attempt){.nreps = s->nreps,
                                                          .samples_ns = s->samples_ns,
                                                          .child_cpu_ns = s->child_cpu_ns,
                                                          .parent_cpu_ns = s->parent_cpu_ns,
                                                          .iterations = s->iterations,
                                                          .disturb = s->disturb,
                                                          .round = s->round});
    rec.name = s->name;
    rec.scenario = s->scenario;
    rec.contender = s->contender;
    rec.description = s->description;
    rec.unit = s->unit;
    rec.reason = s->reason;
    rec.environmental = s->environmental;
    rec.baseline = s->baseline;
    rec.control = s->control;
    rec.side = s->side == PKB_SIDE_BASE ? "base" : s->side == PKB_SIDE_HEAD ? "head" : NULL;
    rec.status = s->status;
    rec.work_per_iteration = s->work_per_iteration;
    rec.calibration = &s->calib;
    rec.extra = s->extra;
    return rec;
}

json_t *pkb_series_json(const pkb_series *s)
{
    pkb_series_record rec = pkb__series_record(s), attempts[2];
    if (s->remeasured) {
        /* In the order measured; attempt_used names the one the fields above hold. */
        attempts[s->other_first ? 1 : 0] = rec;
        attempts[s->other_first ? 0 : 1] = attempt_record(&s->other);
        rec.attempts = attempts;
        rec.nattempts = 2;
        rec.attempt_used = s->other_first ? 1 : 0;
    }
    json_t *o = pkb_results_series_json(&rec);
    if (o != NULL && s->self_timed) {
        json_object_set_new(o, "self_timed", json_true());
        if (s->peak_rss_kib > 0)
            json_object_set_new(o, "peak_rss_kib", json_integer((json_int_t)s->peak_rss_kib));
        if (s->peak_fds > 0)
            json_object_set_new(o, "peak_fds", json_integer((json_int_t)s->peak_fds));
        if (s->idle_fds > 0)
            json_object_set_new(o, "idle_fds", json_integer((json_int_t)s->idle_fds));
    }
    return o;
}

double pkb__disturbed_share(const pkb_series *s)
{
    if (s->nreps == 0 || s->disturb == NULL)
        return 0;
    size_t marked = 0;
    for (size_t i = 0; i < s->nreps; i++)
        marked += s->disturb[i].disturbed;
    return (double)marked / (double)s->nreps;
}

void pkb_series_free(pkb_series *s)
{
    free(s->samples_ns);
    free(s->child_cpu_ns);
    free(s->parent_cpu_ns);
    free(s->iterations);
    free(s->disturb);
    free(s->round);
    free(s->calls);
    free(s->other.samples_ns);
    free(s->other.child_cpu_ns);
    free(s->other.parent_cpu_ns);
    free(s->other.iterations);
    free(s->other.disturb);
    free(s->other.round);
    json_decref(s->extra);
    memset(s, 0, sizeof *s);
}
