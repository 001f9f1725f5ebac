/*
 * Writing a results file: the document's head, one series object, and the atomic write. Every
 * suite's runner goes through these three, so the file has one shape whichever suite made it
 * (results/schema.json), and the readers in load.c need no per-suite cases.
 */
#include "common/files.h"
#include "results/results.h"

#include <errno.h>
#include <math.h>
#include <string.h>

const char *pkb_series_status_name(pkb_series_status status)
{
    switch (status) {
    case PKB_SERIES_MEASURED:
        return "measured";
    case PKB_SERIES_REFUSED:
        return "refused";
    case PKB_SERIES_FAILED:
        return "failed";
    case PKB_SERIES_PARTIAL:
        return "partial";
    case PKB_SERIES_PENDING:
        break;
    }
    return "pending";
}

json_t *pkb_results_doc_new(const pkb_results_head *h)
{
    json_t *command = json_array();
    for (int i = 0; command != NULL && i < h->argc; i++)
        json_array_append_new(command, json_string(h->argv[i]));
    json_t *doc = json_pack(
        "{s:s, s:i, s:s, s:s, s:s, s:n, s:b, s:b, s:o, s:o, s:O, s:O, s:{}}", "schema",
        PKB_RESULTS_SCHEMA, "schema_version", PKB_RESULTS_SCHEMA_VERSION, "suite", h->suite,
        "profile", h->profile, "created", h->created, "finished", "complete", 0, "interrupted", 0,
        "command", command, "filter", h->filter ? json_string(h->filter) : json_null(),
        "environment", h->environment, "settings", h->settings, "context");
    return doc;
}

void pkb_results_doc_finish(json_t *doc, const char *finished, bool complete, bool interrupted)
{
    json_object_set_new(doc, "finished", json_string(finished));
    json_object_set_new(doc, "complete", json_boolean(complete));
    json_object_set_new(doc, "interrupted", json_boolean(interrupted));
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* The per-repetition arrays; an absent one is written as zeros so every array has n entries. */
static void add_arrays(json_t *o, const pkb_series_record *r)
{
    json_t *samples = json_array(), *child = json_array(), *parent = json_array(),
           *iters = json_array(), *procs = json_array(), *noisy = json_array();
    for (size_t i = 0; i < r->n; i++) {
        int running = r->disturb ? r->disturb[i].procs_running : 0;
        json_array_append_new(samples, json_real(r->samples_ns[i]));
        json_array_append_new(child, json_real(r->child_cpu_ns ? r->child_cpu_ns[i] : 0));
        json_array_append_new(parent, json_real(r->parent_cpu_ns ? r->parent_cpu_ns[i] : 0));
        json_array_append_new(iters, json_integer(r->iterations ? r->iterations[i] : 0));
        json_array_append_new(procs, json_integer(running));
        json_array_append_new(noisy,
                              json_boolean(r->logical_cpus > 0 && running > r->logical_cpus));
    }
    json_object_set_new(o, "samples_ns", samples);
    json_object_set_new(o, "iterations", iters);
    json_object_set_new(o, "child_cpu_ns", child);
    json_object_set_new(o, "parent_cpu_ns", parent);
    json_object_set_new(o, "procs_running", procs);
    json_object_set_new(o, "noisy", noisy);
    if (r->round != NULL && r->n > 0 && r->round[0] > 0) {
        json_t *round = json_array();
        for (size_t i = 0; i < r->n; i++)
            json_array_append_new(round, json_integer(r->round[i]));
        json_object_set_new(o, "round", round);
    }
    if (r->disturb == NULL)
        return;
    /* The measured disturbance (run/disturb.h) and the flags its rule gives. */
    json_t *flags = json_array(), *others = json_array(), *steal = json_array(),
           *nivcsw = json_array(), *moved = json_array(), *started = json_array();
    size_t marked = 0;
    for (size_t i = 0; i < r->n; i++) {
        const pkb_disturbance *d = &r->disturb[i];
        json_array_append_new(flags, json_boolean(d->disturbed));
        json_array_append_new(others, num_or_null(d->others_cpu));
        json_array_append_new(steal, num_or_null(d->steal));
        json_array_append_new(nivcsw, json_integer(d->nivcsw));
        json_array_append_new(moved,
                              d->migrations >= 0 ? json_integer(d->migrations) : json_null());
        json_array_append_new(started, d->started > 0 ? json_real(d->started) : json_null());
        marked += d->disturbed;
    }
    json_object_set_new(o, "disturbed", flags);
    json_object_set_new(o, "disturbance",
                        json_pack("{s:o, s:o, s:o, s:o, s:o, s:f}", "started", started,
                                  "others_cpu", others, "steal", steal, "nivcsw", nivcsw,
                                  "migrations", moved, "disturbed_share",
                                  r->n > 0 ? (double)marked / (double)r->n : 0.0));
}

/* A re-measured series keeps every attempt: each its own arrays, the used one marked. */
static void add_attempts(json_t *o, const pkb_series_record *r)
{
    if (r->attempts == NULL || r->nattempts < 2)
        return;
    json_t *a = json_array();
    for (size_t k = 0; k < r->nattempts; k++) {
        json_t *one = json_object();
        add_arrays(one, &r->attempts[k]);
        json_array_append_new(a, one);
    }
    json_object_set_new(o, "attempts", a);
    json_object_set_new(o, "attempt_used", json_integer((json_int_t)r->attempt_used));
}

json_t *pkb_results_series_json(const pkb_series_record *r)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:b, s:s, s:s, s:f}", "name", r->name, "scenario",
                          r->scenario, "contender", r->contender, "description",
                          r->description ? r->description : "", "baseline", r->baseline, "status",
                          pkb_series_status_name(r->status), "unit", r->unit ? r->unit : "",
                          "work_per_iteration", r->work_per_iteration);
    if (o == NULL)
        return NULL;
    if (r->reason != NULL && r->reason[0] != '\0')
        json_object_set_new(o, "reason", json_string(r->reason));
    if (r->environmental)
        json_object_set_new(o, "environmental", json_true());
    if (r->control)
        json_object_set_new(o, "control", json_true());
    if (r->side != NULL)
        json_object_set_new(o, "side", json_string(r->side));
    add_arrays(o, r);
    add_attempts(o, r);
    const pkb_calibration *cal = r->calibration;
    if (cal != NULL && cal->iterations > 0 && cal->per_iteration_ns > 0)
        json_object_set_new(o, "calibration",
                            json_pack("{s:I, s:f, s:i, s:i, s:i, s:b}", "iterations",
                                      (json_int_t)cal->iterations, "per_iteration_ns",
                                      cal->per_iteration_ns, "calls", cal->calls, "disturbed_calls",
                                      cal->disturbed_calls, "passes", cal->passes, "disturbed",
                                      cal->disturbed));
    pks_summary sum;
    if (r->n > 0 && pks_summarize(r->samples_ns, r->n, NULL, &sum) == 0)
        json_object_set_new(o, "summary",
                            json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f}", "n", (int)sum.n,
                                      "mean_ns", sum.mean, "sd_ns", isfinite(sum.sd) ? sum.sd : 0.0,
                                      "median_ns", sum.median, "min_ns", sum.min, "max_ns", sum.max,
                                      "cv", isfinite(sum.cv) ? sum.cv : 0.0));
    if (r->extra != NULL)
        json_object_update(o, (json_t *)r->extra);
    return o;
}

int pkb_results_write(json_t *doc, json_t *series, json_t *benchmarks, const char *path)
{
    if (series == NULL || benchmarks == NULL) {
        json_decref(series);
        json_decref(benchmarks);
        return -ENOMEM;
    }
    json_object_set_new(doc, "series", series);
    json_object_set_new(doc, "benchmarks", benchmarks);
    return pkb_write_json_atomic(doc, path);
}
