/*
 * results — the one data model of a pkbench results file (results/schema.json, schema version 1):
 * how a run writes it and how every reader (the report, `pkbench compare` and `check`) loads it.
 *
 * Data flows one way: a suite's runner fills pkb_series_record values and writes the document
 * with this room's writer; the report and the regression checks load the file back into a
 * validated pkb_results. Nothing else builds or parses a results file.
 */
#ifndef PKB_RESULTS_H
#define PKB_RESULTS_H

#include "common/buf.h"
#include "common/stats.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define PKB_RESULTS_SCHEMA         "pkbench-results"
#define PKB_RESULTS_SCHEMA_VERSION 1

/* Physical bounds a reader enforces before any statistic sees a value. A sample (the mean wall
 * time of one iteration) lies in (0, one day]: no iteration of any suite takes a day, and below
 * it every sum and square the statistics take stays finite and exact enough. */
#define PKB_RESULTS_MAX_SAMPLE_NS 8.64e13
#define PKB_RESULTS_SAMPLE_WORDS  "a positive time of at most one day (8.64e13 ns)"
/* Work per iteration (runs, MiB, children): at most 1e12. */
#define PKB_RESULTS_MAX_WORK 1e12
/* A noise floor (minimum detectable effect, a fraction): at most 1e6. An A/A run on a very busy
 * machine does measure floors above 1000% (12.5 once in CI), and such a file must read back:
 * the bound only keeps garbage out, and the writer (run/rounds.c) leaves out a series beyond it
 * rather than write what no reader accepts. */
#define PKB_RESULTS_MAX_MDE 1e6
/* A round number (`round`): at most this; no run has a million rounds. */
#define PKB_RESULTS_MAX_ROUND 1000000

/* A results file is read whole, but never more than this: a larger file (or a device that never
 * ends, like /dev/zero) is refused after reading at most this much. */
#define PKB_RESULTS_MAX_FILE_BYTES (64L * 1024 * 1024)

/* Whether x is a sample a reader accepts: finite and in (0, PKB_RESULTS_MAX_SAMPLE_NS]. */
bool pkb_results_sample_ok(double x);

/* A series' status in the file. PENDING is never written: it is a series still to be timed. */
typedef enum pkb_series_status {
    PKB_SERIES_PENDING = 0,
    PKB_SERIES_MEASURED,
    PKB_SERIES_REFUSED, /* the correctness check failed: never timed */
    PKB_SERIES_FAILED,  /* an iteration failed while timing */
    PKB_SERIES_PARTIAL, /* fewer rounds than the run asked for (interrupted, or still running):
                           its samples are kept, never read as a measurement; `reason` says how
                           many */
} pkb_series_status;

/* "measured", "refused", "failed", "partial" ("pending" for PENDING). */
const char *pkb_series_status_name(pkb_series_status status);

/* ==== Writing ================================================================================ */

/* What the file's head records about a run (every pointer borrowed for the call). */
typedef struct pkb_results_head {
    const char *suite;
    const char *profile;
    const char *created; /* ISO 8601 UTC */
    int argc;
    char **argv;         /* the command line */
    const char *filter;  /* NULL: none */
    json_t *environment; /* the environment object (borrowed; the document takes a reference) */
    json_t *settings;    /* the settings object (borrowed; the document takes a reference) */
} pkb_results_head;

/* A new results document: schema, suite, profile, created, finished (null), complete (false),
 * interrupted (false), command, filter, environment, settings and an empty context, in the
 * schema's order. NULL when out of memory. */
json_t *pkb_results_doc_new(const pkb_results_head *head);

/* Marks the document finished at `finished` (ISO 8601 UTC). */
void pkb_results_doc_finish(json_t *doc, const char *finished, bool complete, bool interrupted);

/* What disturbed one repetition (measured by run/disturb.h around it). */
typedef struct pkb_disturbance {
    int procs_running;    /* runnable tasks at its end; -1 unknown */
    double others_cpu;    /* share of the CPU capacity other processes used; NaN unknown */
    double steal;         /* share of the capacity the hypervisor stole; NaN unknown */
    long nivcsw;          /* involuntary context switches of pkbench and its reaped children */
    long long migrations; /* moves of pkbench's main thread between CPUs; -1 unknown */
    double started;       /* when it started, Unix time in seconds (to line it up with events) */
    bool disturbed;       /* the rule's verdict (run/disturb.h) */
} pkb_disturbance;

/* How a series' iteration count was sized in rounds mode (run/calibrate.h): Google Benchmark's
 * rule, 1.4 x the time per sample over one iteration's time, with that time taken from the
 * fastest undisturbed call of the calibration round rather than from its last call. */
typedef struct pkb_calibration {
    long long iterations;    /* what every measured round used; 0: not sized this way */
    double per_iteration_ns; /* the iteration time it was sized from */
    int calls;               /* calls of the calibration round(s) long enough to size from */
    int disturbed_calls;     /* of those, marked disturbed (run/disturb.h) */
    int passes;              /* calibration rounds: 2 when the first saw a disturbed call */
    bool disturbed;          /* no undisturbed call in either pass: sized from a disturbed one */
    double fastest_quiet_ns, fastest_ns; /* so far: undisturbed calls, all calls (0: none) */
} pkb_calibration;

/* One series as the file holds it (every pointer borrowed for the call). */
typedef struct pkb_series_record {
    const char *name, *scenario, *contender;
    const char *description; /* NULL: "" */
    const char *unit;        /* throughput unit; NULL: "" */
    const char *reason;      /* why it was refused or failed; NULL or "": none */
    bool environmental;      /* refused or failed for a reason of the host (no cgroup, ...) */
    bool baseline;
    bool control; /* its code cannot change with the library under test: compare measures the
                     machine's drift from such series (regress/drift.h) */
    pkb_series_status status;
    double work_per_iteration;
    size_t n;                       /* repetitions */
    const double *samples_ns;       /* n values: mean wall time of one iteration */
    const double *child_cpu_ns;     /* n values, or NULL */
    const double *parent_cpu_ns;    /* n values (all of pkbench's threads), or NULL */
    const long long *iterations;    /* n values, or NULL */
    const pkb_disturbance *disturb; /* n values, or NULL (procs_running and noise unknown) */
    const int *round; /* n values: the round each repetition was taken in, counted from 1 over
                         the whole run; NULL or zeros: not taken in rounds */
    int logical_cpus; /* for the `noisy` flags: procs_running > logical_cpus */
    /* A re-measured series: every attempt in the order measured (their own attempts NULL), and
     * which one the fields above hold. NULL / 0: measured once. */
    const struct pkb_series_record *attempts;
    size_t nattempts, attempt_used;
    const pkb_calibration *calibration; /* rounds mode's sizing, or NULL */
    const char *side;    /* `pkbench ab`: "base" or "head", the build it measured; NULL: none */
    const json_t *extra; /* suite fields merged into the object, or NULL */
} pkb_series_record;

/* The series object of the file: the record's fields (`control` only when true), the
 * per-repetition arrays (samples_ns, iterations, child and parent CPU, procs_running, `noisy` and
 * `disturbed` flags, the measured `disturbance`, `round` when taken in rounds), `attempts` and
 * `attempt_used` when it was re-measured, a `summary` (n, mean, sd, median, min, max, cv) when it
 * has samples, then `extra`'s fields. New reference, NULL when out of memory. */
json_t *pkb_results_series_json(const pkb_series_record *rec);

/* Appends the Google Benchmark-compatible records of one series to `benchmarks`: one
 * "iteration" record per repetition, named `name` (the series' name, which carries no setting),
 * with repetitions and repetition_index true to the records written, family_index as given and
 * per_family_instance_index 0, real_time = the sample, cpu_time = pkbench's CPU per iteration
 * (every thread, children excluded), the counters child_cpu_ns and throughput; then, with two
 * or more repetitions, Google Benchmark's aggregates mean, median, stddev and cv (cv a fraction,
 * aggregate_unit "percentage"), of the times and of each counter. Nothing for a series without
 * samples; a failed series gets one record with error_occurred. Returns 0 or -ENOMEM. */
int pkb_results_gb_records(const pkb_series_record *rec, int family_index, json_t *benchmarks);

/* Google Benchmark's date for a context block: local time as "2026-12-01T04:21:45+01:00". */
void pkb_results_gb_date(char *buf, size_t cap);

/* Replaces the document's `series` and `benchmarks` arrays (references stolen) and writes it to
 * `path` with common/files.h's pkb_write_json_atomic. Returns 0 or a negative errno. */
int pkb_results_write(json_t *doc, json_t *series, json_t *benchmarks, const char *path);

/* ==== Reading ================================================================================ */

typedef struct pkb_results_series {
    /* borrowed from the JSON tree */
    const char *name, *scenario, *contender, *status, *unit;
    const char *reason;      /* NULL when the file gives none */
    const char *description; /* the contender's one line; NULL when the file gives none */
    const json_t *json;      /* the series object itself, for suite-specific fields */
    bool baseline;
    bool control;     /* a drift control (`control` true in the file) */
    const char *side; /* `pkbench ab`: "base" or "head", the build it measured; NULL: a run */
    double work;      /* work_per_iteration, in the unit's numerator */
    /* samples_ns (owned); measured = status "measured" with at least one sample (a "partial"
     * series' samples are here, but it is not measured) */
    double *samples;
    size_t n;
    int *round; /* n values (owned): the round each sample was taken in; NULL when the file has
                   no `round` (a sequential run, or a file written before rounds were recorded) */
    bool measured;
    pks_summary sum; /* of samples (valid when measured); sd and cv NaN when n < 2 */
    /* Repetitions marked disturbed: the `disturbed` array (measured disturbance, see run.h), else
     * in older files the `noisy` array, else procs_running > CPUs. */
    size_t noisy;
    bool disturbance_measured; /* the file has `disturbed` flags (not the older `noisy`) */
    size_t attempts;           /* measurements of this series: 2 when it was re-measured */
    long attempt_used;         /* which attempt samples_ns holds (0-based) */
    bool environmental;        /* refused or failed for a reason of the host, not of the code */
    /* `calibration` (rounds mode): 2 passes when a call of the first was disturbed, 0 when
     * the file has none; calibration_disturbed: the count came from a disturbed call anyway. */
    int calibration_passes;
    bool calibration_disturbed;
} pkb_results_series;

typedef struct pkb_results_scenario {
    const char *name;
    size_t *members; /* indexes into series[], in file order */
    size_t count;
    long baseline; /* index of the measured baseline series, -1 when none */
    long measured; /* members that were measured */
} pkb_results_scenario;

typedef struct pkb_results {
    json_t *root;
    char file[256]; /* basename of the results file */
    char name[256]; /* ... without ".json": the report is <name>.md */
    const char *suite;
    pkb_results_series *series;
    size_t nseries;
    pkb_results_scenario *scenarios; /* in order of first appearance in the file */
    size_t nscenarios;
    long long logical_cpus;
} pkb_results;

/* Reads and validates `path`: valid JSON (duplicate keys rejected) of schema "pkbench-results"
 * version 1 with every field the readers rely on, of the right type.
 *
 * Returns 0, or a negative errno with a one-line message in err naming the file and the problem:
 *   -EINVAL           a path with no file name
 *   -ENOENT, -EACCES, the file cannot be opened or read (the errno of open/read); -EFBIG when it
 *   -EISDIR, ...      is larger than PKB_RESULTS_MAX_FILE_BYTES (refused before reading it whole)
 *   -ETIMEDOUT        a FIFO, pipe or terminal that gave nothing for pkb_fifo_wait_ms
 *   -EBADMSG          not valid JSON; not a results file; a required field missing or of the
 *                     wrong type (its path is named, e.g. series[3].samples_ns[2]); a value
 *                     outside its physical bounds (a sample not in (0, one day], work per
 *                     iteration above PKB_RESULTS_MAX_WORK, a count below zero); a scenario with
 *                     two measured baseline series; two series of one name (both named); a
 *                     per-repetition array (iterations, child_cpu_ns, ...) whose length is not
 *                     samples_ns' (the series named)
 *   -ENOTSUP          schema_version is not 1
 *   -ENOMEM
 * On error *r needs no freeing; on success pkb_results_free. */
int pkb_results_load(const char *path, pkb_results *r, char *err, size_t err_len);

/* The same from a buffer: `path` only names the file in messages and gives r->file and r->name. */
int pkb_results_load_buffer(
    const char *path, const char *data, size_t len, pkb_results *r, char *err, size_t err_len);

void pkb_results_free(pkb_results *r);

/* The series named `name`, or NULL. */
const pkb_results_series *pkb_results_find(const pkb_results *r, const char *name);

/* The first series of `contender` in `scenario`, or NULL. */
const pkb_results_series *
pkb_results_find_in(const pkb_results *r, const char *scenario, const char *contender);

/* A top-level field (object NULL) or a field of a top-level object; NULL when absent. */
const json_t *pkb_results_field(const pkb_results *r, const char *object, const char *key);

#endif /* PKB_RESULTS_H */
