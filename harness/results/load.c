/*
 * Reading a results file for the report: read it whole, parse it with jansson (duplicate keys
 * rejected), check that it is a pkbench results file of schema version 1, check every field the
 * report relies on against results/schema.json's required lists and types, and build the view
 * the renderers share — series with their statistics (stats.h's pks_summarize of samples_ns),
 * grouped by scenario in order of first appearance (a run writes them in its suite's order),
 * each scenario's baseline found.
 *
 * This is not a JSON Schema validator: it checks what the report reads, in schema order, so a
 * bad file fails with the path of the first offending field rather than a wrong table. The test
 * suite validates its fixture against the schema itself with Python's jsonschema.
 */
#define _GNU_SOURCE
#include "results/results.h"

#include "common/files.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool pkb_results_sample_ok(double x)
{
    return x > 0 && x <= PKB_RESULTS_MAX_SAMPLE_NS; /* false for NaN */
}

/* ---- field checks ------------------------------------------------------------------------- */

enum {
    T_STR = 1,
    T_INT = 2,
    T_NUM = 4, /* integer or real */
    T_BOOL = 8,
    T_NULL = 16,
    T_ARR = 32,
    T_OBJ = 64,
};

struct field {
    const char *key;
    unsigned types;
    bool required;
};

static bool has_type(const json_t *v, unsigned types)
{
    return ((types & T_STR) && json_is_string(v)) || ((types & T_INT) && json_is_integer(v)) ||
           ((types & T_NUM) && json_is_number(v)) || ((types & T_BOOL) && json_is_boolean(v)) ||
           ((types & T_NULL) && json_is_null(v)) || ((types & T_ARR) && json_is_array(v)) ||
           ((types & T_OBJ) && json_is_object(v));
}

static const char *type_words(unsigned types)
{
    switch (types) {
    case T_STR:
        return "a string";
    case T_INT:
        return "an integer";
    case T_NUM:
        return "a number";
    case T_BOOL:
        return "a boolean";
    case T_ARR:
        return "an array";
    case T_OBJ:
        return "an object";
    case T_STR | T_NULL:
        return "a string or null";
    case T_INT | T_NULL:
        return "an integer or null";
    case T_BOOL | T_NULL:
        return "a boolean or null";
    case T_ARR | T_NULL:
        return "an array or null";
    }
    return "of the expected type";
}

/* Checks obj's fields against the table; `where` prefixes field paths ("environment."). */
static int check_fields(const char *file,
                        const json_t *obj,
                        const char *where,
                        const struct field *f,
                        size_t n,
                        char *err,
                        size_t err_len)
{
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_object_get(obj, f[i].key);
        if (v == NULL && f[i].required)
            return pkb_fail(err, err_len, -EBADMSG, "%s: missing required field %s%s", file, where,
                            f[i].key);
        if (v != NULL && !has_type(v, f[i].types))
            return pkb_fail(err, err_len, -EBADMSG, "%s: field %s%s is not %s", file, where,
                            f[i].key, type_words(f[i].types));
    }
    return 0;
}

/* What a value must be beyond its type: NULL when x is one, else the words for what it is not. */
typedef const char *value_check(double x);

static const char *a_sample(double x)
{
    return pkb_results_sample_ok(x) ? NULL : PKB_RESULTS_SAMPLE_WORDS;
}

#define WORDS_OF_(x) #x
#define WORDS_OF(x)  WORDS_OF_(x)

static const char *a_round(double x)
{
    return x >= 1 && x <= PKB_RESULTS_MAX_ROUND
               ? NULL
               : "a round number from 1 to " WORDS_OF(PKB_RESULTS_MAX_ROUND);
}

static const char *a_batch_ms(double x)
{
    return x >= 0 && x <= 8.64e7 ? NULL : "a time from 0 to one day";
}

/* Every element of array `a` (at path `where`) has one of `types` and, when `check` is given,
 * a number it accepts. */
static int check_items(const char *file,
                       const json_t *a,
                       const char *where,
                       unsigned types,
                       value_check *check,
                       char *err,
                       size_t err_len)
{
    size_t i;
    const json_t *v;
    json_array_foreach(a, i, v)
    {
        const char *what = !has_type(v, types) ? type_words(types)
                           : check != NULL     ? check(json_number_value(v))
                                               : NULL;
        if (what != NULL)
            return pkb_fail(err, err_len, -EBADMSG, "%s: %s[%zu] is not %s", file, where, i, what);
    }
    return 0;
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const struct field top_fields[] = {
    {"suite", T_STR, true},       {"profile", T_STR, true},
    {"created", T_STR, true},     {"finished", T_STR | T_NULL, false},
    {"complete", T_BOOL, true},   {"interrupted", T_BOOL, false},
    {"command", T_ARR, true},     {"filter", T_STR | T_NULL, false},
    {"environment", T_OBJ, true}, {"settings", T_OBJ, true},
    {"priming", T_OBJ, true},     {"series", T_ARR, true},
    {"benchmarks", T_ARR, true},  {"context", T_OBJ, true},
};

static const struct field environment_fields[] = {
    {"host", T_STR, false},
    {"host_id", T_STR, false},
    {"host_id_from", T_STR, false},
    {"cpu_model", T_STR, true},
    {"logical_cpus", T_INT, true},
    {"kernel", T_STR, true},
    {"distribution", T_STR, true},
    {"libc", T_STR, true},
    {"compiler", T_STR, true},
    {"compiler_flags", T_STR, true},
    {"build_type", T_STR, true},
    {"git_commit", T_STR, true},
    {"git_dirty", T_BOOL | T_NULL, true},
    {"git_commit_time", T_STR | T_NULL, false},
    {"revision_from", T_STR, false},
    {"processes_start", T_INT, true},
    {"threads_start", T_INT, true},
    {"processes_end", T_INT | T_NULL, false},
    {"threads_end", T_INT | T_NULL, false},
    {"loadavg_start", T_ARR, true},
    {"loadavg_end", T_ARR | T_NULL, false},
    {"aslr", T_STR, true},
    {"thp", T_STR, true},
    {"cpufreq_governor", T_STR | T_NULL, true},
    {"cgroup_cpu_max", T_STR | T_NULL, true},
    {"spawn_mechanism", T_STR, true},
    {"clear_sighand", T_BOOL, false},
    {"containment", T_STR, true},
};

static const struct field settings_fields[] = {
    {"repetitions", T_INT, true},       {"min_time_s", T_NUM, true},   {"warmup_s", T_NUM, true},
    {"priming_budget_s", T_NUM, false}, {"interleave", T_BOOL, false}, {"settle_s", T_NUM, false},
};

static const struct field priming_fields[] = {
    {"performed", T_BOOL, true}, {"batches", T_INT, true},  {"runs_per_batch", T_INT, false},
    {"seconds", T_NUM, true},    {"batch_ms", T_ARR, true}, {"stable", T_BOOL, true},
};

static const struct field series_fields[] = {
    {"name", T_STR, true},
    {"scenario", T_STR, true},
    {"contender", T_STR, true},
    {"description", T_STR, false},
    {"baseline", T_BOOL, true},
    {"status", T_STR, true},
    {"reason", T_STR, false},
    {"unit", T_STR, true},
    {"work_per_iteration", T_NUM, true},
    {"samples_ns", T_ARR, true},
    {"procs_running", T_ARR, false},
    {"noisy", T_ARR, false},
    {"disturbed", T_ARR, false},
    {"attempts", T_ARR, false},
    {"attempt_used", T_INT, false},
    {"environmental", T_BOOL, false},
    {"control", T_BOOL, false},
    {"round", T_ARR, false},
    {"iterations", T_ARR, false},
    {"child_cpu_ns", T_ARR, false},
    {"parent_cpu_ns", T_ARR, false},
    {"side", T_STR, false},
};

/* The per-repetition arrays (results/schema.json): samples_ns, whose length the others must have,
 * and each other one, when present, one entry per sample, of these types and values. */
static const struct per_repetition {
    const char *key;
    unsigned types;
    value_check *check; /* NULL: any value of the type */
} per_repetition[] = {
    {"samples_ns", T_NUM, a_sample}, {"round", T_INT, a_round},      {"iterations", T_INT, NULL},
    {"child_cpu_ns", T_NUM, NULL},   {"parent_cpu_ns", T_NUM, NULL}, {"procs_running", T_INT, NULL},
    {"noisy", T_BOOL, NULL},         {"disturbed", T_BOOL, NULL},
};

/* Every per-repetition array of `obj` (a series, at path `where`, or one of its attempts) has
 * exactly one entry per sample: an array of another length cannot be lined up with the samples
 * (which repetition is which?), so the file is refused, the series named. */
static int check_lengths(const char *file,
                         const json_t *obj,
                         const char *where,
                         const char *name,
                         size_t n,
                         char *err,
                         size_t err_len)
{
    for (size_t i = 0; i < N_OF(per_repetition); i++) {
        const json_t *a = json_object_get(obj, per_repetition[i].key);
        if (a == NULL)
            continue;
        char path[128];
        snprintf(path, sizeof path, "%s%s", where, per_repetition[i].key);
        if (!json_is_array(a))
            return pkb_fail(err, err_len, -EBADMSG, "%s: %s is not an array", file, path);
        size_t got = json_array_size(a);
        if (got != n)
            return pkb_fail(err, err_len, -EBADMSG,
                            "%s: %s (series %.80s) has %zu entries for %zu samples_ns", file, path,
                            name, got, n);
        int rc = check_items(file, a, path, per_repetition[i].types, per_repetition[i].check, err,
                             err_len);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The checks that make a file a version-1 results file at all. */
static int check_identity(const char *file, const json_t *root, char *err, size_t err_len)
{
    if (!json_is_object(root))
        return pkb_fail(err, err_len, -EBADMSG,
                        "%s: not a pkbench results file (the top level is not a JSON object)",
                        file);
    const json_t *schema = json_object_get(root, "schema");
    if (schema == NULL)
        return pkb_fail(err, err_len, -EBADMSG,
                        "%s: not a pkbench results file (no \"schema\" field)", file);
    if (!json_is_string(schema) || strcmp(json_string_value(schema), "pkbench-results") != 0)
        return pkb_fail(err, err_len, -EBADMSG,
                        "%s: not a pkbench results file (\"schema\" is %s%.60s%s, expected "
                        "\"pkbench-results\")",
                        file, json_is_string(schema) ? "\"" : "",
                        json_is_string(schema) ? json_string_value(schema) : "not a string",
                        json_is_string(schema) ? "\"" : "");
    const json_t *version = json_object_get(root, "schema_version");
    if (version == NULL)
        return pkb_fail(err, err_len, -EBADMSG, "%s: missing required field schema_version", file);
    if (!json_is_integer(version))
        return pkb_fail(err, err_len, -EBADMSG, "%s: field schema_version is not an integer", file);
    if (json_integer_value(version) != 1)
        return pkb_fail(err, err_len, -ENOTSUP,
                        "%s: schema_version %lld is not supported (this pkbench reads version 1)",
                        file, (long long)json_integer_value(version));
    return 0;
}

/* A number field already type-checked, within its physical bounds [lo, hi]. */
static int check_range(const char *file,
                       const json_t *obj,
                       const char *where,
                       const char *key,
                       double lo,
                       double hi,
                       char *err,
                       size_t err_len)
{
    const json_t *v = json_object_get(obj, key);
    double x = json_number_value(v);
    if (v == NULL || (x >= lo && x <= hi))
        return 0;
    return pkb_fail(err, err_len, -EBADMSG, "%s: %s%s is %g, outside [%g, %g]", file, where, key, x,
                    lo, hi);
}

static int check_structure(const char *file, const json_t *root, char *err, size_t err_len)
{
    int rc = check_fields(file, root, "", top_fields, N_OF(top_fields), err, err_len);
    if (rc == 0)
        rc = check_items(file, json_object_get(root, "command"), "command", T_STR, NULL, err,
                         err_len);
    const json_t *env = json_object_get(root, "environment");
    if (rc == 0)
        rc = check_fields(file, env, "environment.", environment_fields, N_OF(environment_fields),
                          err, err_len);
    if (rc == 0)
        rc = check_items(file, json_object_get(env, "loadavg_start"), "environment.loadavg_start",
                         T_NUM, NULL, err, err_len);
    if (rc == 0)
        rc = check_range(file, env, "environment.", "logical_cpus", 1, 65536, err, err_len);
    const json_t *settings = json_object_get(root, "settings");
    if (rc == 0)
        rc = check_fields(file, settings, "settings.", settings_fields, N_OF(settings_fields), err,
                          err_len);
    if (rc == 0)
        rc = check_range(file, settings, "settings.", "repetitions", 1, 1e6, err, err_len);
    if (rc == 0)
        rc = check_range(file, settings, "settings.", "min_time_s", 0, 86400, err, err_len);
    if (rc == 0)
        rc = check_range(file, settings, "settings.", "warmup_s", 0, 86400, err, err_len);
    if (rc == 0)
        rc = check_range(file, settings, "settings.", "settle_s", 0, 60, err, err_len);
    const json_t *priming = json_object_get(root, "priming");
    if (rc == 0)
        rc = check_fields(file, priming, "priming.", priming_fields, N_OF(priming_fields), err,
                          err_len);
    if (rc == 0)
        rc = check_items(file, json_object_get(priming, "batch_ms"), "priming.batch_ms", T_NUM,
                         a_batch_ms, err, err_len);
    return rc;
}

/* ---- series and scenarios ------------------------------------------------------------------ */

/* Series s's samples (with their statistics) and rounds, from j (check_lengths has passed). */
static int
load_timed(const char *file, const json_t *j, pkb_results_series *s, char *err, size_t err_len)
{
    const json_t *samples = json_object_get(j, "samples_ns"), *round = json_object_get(j, "round");
    s->n = json_array_size(samples);
    s->samples = calloc(s->n > 0 ? s->n : 1, sizeof *s->samples);
    s->round = round != NULL ? calloc(s->n > 0 ? s->n : 1, sizeof *s->round) : NULL;
    if (s->samples == NULL || (round != NULL && s->round == NULL))
        return pkb_fail(err, err_len, -ENOMEM, "%s: out of memory", file);
    for (size_t i = 0; i < s->n; i++) {
        s->samples[i] = json_number_value(json_array_get(samples, i));
        if (s->round != NULL)
            s->round[i] = (int)json_integer_value(json_array_get(round, i));
    }
    s->measured = strcmp(s->status, "measured") == 0 && s->n > 0;
    if (s->measured && pks_summarize(s->samples, s->n, NULL, &s->sum) != 0)
        return pkb_fail(err, err_len, -ENOMEM, "%s: out of memory", file);
    return 0;
}

/* A re-measured series keeps every attempt (run.h): each an object with its own samples_ns;
 * attempt_used says which one samples_ns holds. */
static int check_attempts(const char *file,
                          const json_t *j,
                          size_t index,
                          pkb_results_series *s,
                          char *err,
                          size_t err_len)
{
    const json_t *attempts = json_object_get(j, "attempts");
    const json_t *used = json_object_get(j, "attempt_used");
    s->attempts = attempts != NULL ? json_array_size(attempts) : 1;
    s->attempt_used = used != NULL ? (long)json_integer_value(used) : 0;
    if (s->attempt_used < 0 || (size_t)s->attempt_used >= (s->attempts > 0 ? s->attempts : 1))
        return pkb_fail(err, err_len, -EBADMSG,
                        "%s: series[%zu].attempt_used %ld names no attempt (%zu recorded)", file,
                        index, s->attempt_used, s->attempts);
    size_t i;
    const json_t *a;
    json_array_foreach(attempts, i, a)
    {
        char where[96];
        snprintf(where, sizeof where, "series[%zu].attempts[%zu].", index, i);
        const json_t *samples = json_object_get(a, "samples_ns");
        if (!json_is_object(a) || !json_is_array(samples))
            return pkb_fail(err, err_len, -EBADMSG, "%s: %ssamples_ns is not an array", file,
                            where);
        int rc = check_lengths(file, a, where, s->name, json_array_size(samples), err, err_len);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Marked repetitions: the measured `disturbed` flags, else the older `noisy` flags, else
 * procs_running against the CPUs (check_lengths saw one entry of its type per sample). */
static void count_marks(const json_t *j, long long cpus, pkb_results_series *s)
{
    const json_t *disturbed = json_object_get(j, "disturbed"), *noisy = json_object_get(j, "noisy");
    const json_t *running = json_object_get(j, "procs_running");
    const json_t *flags = disturbed != NULL ? disturbed : noisy;
    s->disturbance_measured = disturbed != NULL;
    for (size_t i = 0; i < s->n; i++) {
        if (flags != NULL)
            s->noisy += json_is_true(json_array_get(flags, i));
        else if (running != NULL && i < json_array_size(running))
            s->noisy += json_integer_value(json_array_get(running, i)) > cpus;
    }
}

static int load_series(const char *file,
                       const json_t *j,
                       size_t index,
                       long long cpus,
                       pkb_results_series *s,
                       char *err,
                       size_t err_len)
{
    char where[64];
    snprintf(where, sizeof where, "series[%zu].", index);
    if (!json_is_object(j))
        return pkb_fail(err, err_len, -EBADMSG, "%s: series[%zu] is not an object", file, index);
    int rc = check_fields(file, j, where, series_fields, N_OF(series_fields), err, err_len);
    if (rc != 0)
        return rc;
    s->name = json_string_value(json_object_get(j, "name"));
    s->scenario = json_string_value(json_object_get(j, "scenario"));
    s->contender = json_string_value(json_object_get(j, "contender"));
    s->status = json_string_value(json_object_get(j, "status"));
    s->unit = json_string_value(json_object_get(j, "unit"));
    s->reason = json_string_value(json_object_get(j, "reason"));
    s->description = json_string_value(json_object_get(j, "description"));
    s->json = j;
    s->baseline = json_is_true(json_object_get(j, "baseline"));
    s->work = json_number_value(json_object_get(j, "work_per_iteration"));
    if (strcmp(s->status, "measured") != 0 && strcmp(s->status, "partial") != 0 &&
        strcmp(s->status, "refused") != 0 && strcmp(s->status, "failed") != 0)
        return pkb_fail(err, err_len, -EBADMSG,
                        "%s: series[%zu].status \"%.40s\" is not measured, partial, refused or "
                        "failed",
                        file, index, s->status);
    if (!(s->work >= 0 && s->work <= PKB_RESULTS_MAX_WORK))
        return pkb_fail(err, err_len, -EBADMSG,
                        "%s: series[%zu].work_per_iteration is not a number from 0 to %g", file,
                        index, PKB_RESULTS_MAX_WORK);
    s->environmental = json_is_true(json_object_get(j, "environmental"));
    s->control = json_is_true(json_object_get(j, "control"));
    /* `pkbench ab`: which build the series measured (its name carries the side too). */
    s->side = json_string_value(json_object_get(j, "side"));
    if (s->side != NULL && strcmp(s->side, "base") != 0 && strcmp(s->side, "head") != 0)
        return pkb_fail(err, err_len, -EBADMSG,
                        "%s: series[%zu].side \"%.40s\" is not base or head", file, index, s->side);
    rc = check_lengths(file, j, where, s->name, json_array_size(json_object_get(j, "samples_ns")),
                       err, err_len);
    if (rc == 0)
        rc = load_timed(file, j, s, err, err_len);
    if (rc == 0)
        rc = check_attempts(file, j, index, s, err, err_len);
    if (rc == 0)
        count_marks(j, cpus, s);
    /* How the rounds sized it (informational: read for the report's notes, never computed on). */
    const json_t *cal = json_object_get(j, "calibration");
    json_int_t passes = json_integer_value(json_object_get(cal, "passes"));
    s->calibration_passes = passes >= 1 && passes <= 2 ? (int)passes : 0;
    s->calibration_disturbed = json_is_true(json_object_get(cal, "disturbed"));
    return rc;
}

static pkb_results_scenario *find_scenario(pkb_results *r, const char *name)
{
    for (size_t i = 0; i < r->nscenarios; i++)
        if (strcmp(r->scenarios[i].name, name) == 0)
            return &r->scenarios[i];
    return NULL;
}

static int add_scenario(pkb_results *r, const char *name)
{
    pkb_results_scenario *sc = &r->scenarios[r->nscenarios++];
    sc->name = name;
    sc->baseline = -1;
    sc->members = calloc(r->nseries, sizeof *sc->members);
    return sc->members == NULL ? -ENOMEM : 0;
}

/* Orders series by name (then by place in the file), for check_unique_names. */
static int by_name(const void *a, const void *b)
{
    const pkb_results_series *x = *(const pkb_results_series *const *)a,
                             *y = *(const pkb_results_series *const *)b;
    int c = strcmp(x->name, y->name);
    return c != 0 ? c : (x > y) - (x < y);
}

/* Every series has a name of its own: the readers find a series by name (compare matches two
 * files by it), so a second series of the same name would be silently ignored. Sorted, so a
 * file of many series costs n log n. */
static int check_unique_names(const char *file, const pkb_results *r, char *err, size_t err_len)
{
    if (r->nseries < 2)
        return 0;
    const pkb_results_series **sorted = malloc(r->nseries * sizeof *sorted);
    if (sorted == NULL)
        return pkb_fail(err, err_len, -ENOMEM, "%s: out of memory", file);
    for (size_t i = 0; i < r->nseries; i++)
        sorted[i] = &r->series[i];
    qsort(sorted, r->nseries, sizeof *sorted, by_name);
    int rc = 0;
    for (size_t i = 1; i < r->nseries && rc == 0; i++)
        if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0)
            rc = pkb_fail(err, err_len, -EBADMSG,
                          "%s: series[%zu] and series[%zu] are both named \"%.80s\"", file,
                          (size_t)(sorted[i - 1] - r->series), (size_t)(sorted[i] - r->series),
                          sorted[i]->name);
    free(sorted);
    return rc;
}

/* Scenarios in order of first appearance. */
static int group_scenarios(const char *file, pkb_results *r, char *err, size_t err_len)
{
    r->scenarios = calloc(r->nseries > 0 ? r->nseries : 1, sizeof *r->scenarios);
    if (r->scenarios == NULL)
        return pkb_fail(err, err_len, -ENOMEM, "%s: out of memory", file);
    for (size_t i = 0; i < r->nseries; i++) {
        if (find_scenario(r, r->series[i].scenario) == NULL &&
            add_scenario(r, r->series[i].scenario) != 0)
            return pkb_fail(err, err_len, -ENOMEM, "%s: out of memory", file);
    }
    for (size_t i = 0; i < r->nseries; i++) {
        pkb_results_series *s = &r->series[i];
        pkb_results_scenario *sc = find_scenario(r, s->scenario);
        sc->members[sc->count++] = i;
        sc->measured += s->measured;
        if (!s->measured || !s->baseline)
            continue;
        if (sc->baseline >= 0)
            return pkb_fail(err, err_len, -EBADMSG,
                            "%s: scenario %.60s has two measured baseline series (%.60s and %.60s)",
                            file, sc->name, r->series[sc->baseline].contender, s->contender);
        sc->baseline = (long)i;
    }
    return 0;
}

void pkb_results_free(pkb_results *r)
{
    for (size_t i = 0; i < r->nseries; i++) {
        free(r->series[i].samples);
        free(r->series[i].round);
    }
    for (size_t i = 0; i < r->nscenarios; i++)
        free(r->scenarios[i].members);
    free(r->series);
    free(r->scenarios);
    json_decref(r->root);
    memset(r, 0, sizeof *r);
}

/* r->file and r->name from the path. */
static int name_from(const char *path, pkb_results *r, char *err, size_t err_len)
{
    const char *slash = NULL;
    for (const char *p = path; *p != '\0'; p++)
        if (strchr(PKB_DIR_SEPARATORS, *p) != NULL)
            slash = p;
    snprintf(r->file, sizeof r->file, "%s", slash ? slash + 1 : path);
    snprintf(r->name, sizeof r->name, "%s", r->file);
    size_t nl = strlen(r->name);
    if (nl > 5 && strcmp(r->name + nl - 5, ".json") == 0)
        r->name[nl - 5] = '\0';
    if (r->name[0] == '\0' || strcmp(r->name, ".") == 0 || strcmp(r->name, "..") == 0)
        return pkb_fail(err, err_len, -EINVAL, "%s: not a results file name", path);
    return 0;
}

int pkb_results_load_buffer(
    const char *path, const char *data, size_t len, pkb_results *r, char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    int rc = name_from(path, r, err, err_len);
    if (rc != 0)
        return rc;
    json_error_t jerr;
    r->root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
    if (r->root == NULL)
        return pkb_fail(err, err_len, -EBADMSG, "%s: not valid JSON (line %d, column %d: %s)", path,
                        jerr.line, jerr.column, jerr.text);

    rc = check_identity(path, r->root, err, err_len);
    if (rc == 0)
        rc = check_structure(path, r->root, err, err_len);
    if (rc != 0) {
        pkb_results_free(r);
        return rc;
    }
    r->suite = json_string_value(json_object_get(r->root, "suite"));
    r->logical_cpus = json_integer_value(
        json_object_get(json_object_get(r->root, "environment"), "logical_cpus"));
    const json_t *series = json_object_get(r->root, "series");
    r->nseries = json_array_size(series);
    r->series = calloc(r->nseries > 0 ? r->nseries : 1, sizeof *r->series);
    if (r->series == NULL)
        rc = pkb_fail(err, err_len, -ENOMEM, "%s: out of memory", path);
    for (size_t i = 0; rc == 0 && i < r->nseries; i++)
        rc = load_series(path, json_array_get(series, i), i, r->logical_cpus, &r->series[i], err,
                         err_len);
    if (rc == 0)
        rc = check_unique_names(path, r, err, err_len);
    if (rc == 0)
        rc = group_scenarios(path, r, err, err_len);
    if (rc != 0)
        pkb_results_free(r);
    return rc;
}

int pkb_results_load(const char *path, pkb_results *r, char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    int rc = name_from(path, r, err, err_len);
    if (rc != 0)
        return rc;
    char *data = NULL;
    size_t len = 0;
    rc = pkb_read_file(path, (size_t)PKB_RESULTS_MAX_FILE_BYTES, &data, &len);
    if (rc == -ETIMEDOUT)
        return pkb_fail(err, err_len, rc,
                        "%s: cannot read: %s, and nothing was written to it for %g s (is a "
                        "writer running? PKBENCH_FIFO_WAIT sets the wait)",
                        path, pkb_path_kind(path) ? pkb_path_kind(path) : "not a regular file",
                        pkb_fifo_wait_ms() / 1e3);
    if (rc != 0)
        return pkb_fail(err, err_len, rc, "%s: cannot read: %s", path,
                        rc == -EFBIG ? "larger than 64 MiB, the limit for a results file"
                                     : strerror(-rc));
    rc = pkb_results_load_buffer(path, data, len, r, err, err_len);
    free(data);
    return rc;
}

const pkb_results_series *pkb_results_find(const pkb_results *r, const char *name)
{
    for (size_t i = 0; i < r->nseries; i++)
        if (strcmp(r->series[i].name, name) == 0)
            return &r->series[i];
    return NULL;
}

const pkb_results_series *
pkb_results_find_in(const pkb_results *r, const char *scenario, const char *contender)
{
    for (size_t i = 0; i < r->nseries; i++)
        if (strcmp(r->series[i].scenario, scenario) == 0 &&
            strcmp(r->series[i].contender, contender) == 0)
            return &r->series[i];
    return NULL;
}

const json_t *pkb_results_field(const pkb_results *r, const char *object, const char *key)
{
    const json_t *o = object ? json_object_get(r->root, object) : r->root;
    return json_object_get(o, key);
}
