/*
 * Synthetic results files (see synth.h): written with jansson, samples drawn from stats.h's seeded
 * generator, so every file a test builds is the same on every run and every machine — the
 * statistics and the confirmation logic are checked on data, not on the machine's mood.
 */
#include "synth.h"

#include "test.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pk_test_lognormal(pks_rng *rng, double *x, size_t n, double median, double sigma)
{
    for (size_t i = 0; i < n; i++)
        x[i] = median * exp(sigma * pks_rng_normal(rng));
}

json_t *pk_test_results_doc(const pk_test_series *series, size_t n)
{
    json_t *env = json_pack(
        "{s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:i, s:i, s:[f,f,f], s:s, s:s, s:n, "
        "s:n, s:s, s:s}",
        "cpu_model", "Synthetic CPU", "logical_cpus", 2, "kernel", "6.1.0", "distribution",
        "Debian 12", "libc", "glibc 2.36", "compiler", "GNU 12", "compiler_flags", "-O3",
        "build_type", "Release", "git_commit", "0000000", "git_dirty", 0, "processes_start", 100,
        "threads_start", 200, "loadavg_start", 0.1, 0.1, 0.1, "aslr", "full", "thp", "madvise",
        "cpufreq_governor", "cgroup_cpu_max", "spawn_mechanism", "clone3", "containment", "cgroup");
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        const char *slash = strchr(series[i].name, '/');
        ASSERT(slash != NULL);
        json_t *samples = json_array();
        for (size_t k = 0; k < series[i].n; k++)
            json_array_append_new(samples, json_real(series[i].samples[k]));
        json_array_append_new(
            arr, json_pack("{s:s, s:s#, s:s, s:b, s:s, s:s, s:f, s:o}", "name", series[i].name,
                           "scenario", series[i].name, (int)(slash - series[i].name), "contender",
                           slash + 1, "baseline", strcmp(slash + 1, "posix_spawn") == 0, "status",
                           series[i].status ? series[i].status : "measured", "unit", "runs/s",
                           "work_per_iteration", 1.0, "samples_ns", samples));
    }
    json_t *doc =
        json_pack("{s:s, s:i, s:s, s:s, s:s, s:b, s:[s], s:o, s:{s:i, s:f, s:f}, "
                  "s:{s:b, s:i, s:f, s:[], s:b}, s:o, s:[], s:{}}",
                  "schema", "pkbench-results", "schema_version", 1, "suite", "compare", "profile",
                  "quick", "created", "2026-01-01T00:00:00Z", "complete", 1, "command", "pkbench",
                  "environment", env, "settings", "repetitions", 20, "min_time_s", 0.03, "warmup_s",
                  0.05, "priming", "performed", 0, "batches", 0, "seconds", 0.0, "batch_ms",
                  "stable", 0, "series", arr, "benchmarks", "context");
    ASSERT(doc != NULL);
    return doc;
}

void pk_test_write_doc(json_t *doc, const char *path)
{
    if (json_dump_file(doc, path, JSON_REAL_PRECISION(17)) != 0)
        pk_test_fail(__FILE__, __LINE__, "cannot write %s", path);
    json_decref(doc);
}

void pk_test_write_results(const char *path, const pk_test_series *series, size_t n)
{
    pk_test_write_doc(pk_test_results_doc(series, n), path);
}

char *pk_test_slurp(const char *path)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        pk_test_fail(__FILE__, __LINE__, "cannot read %s: %s", path, strerror(errno));
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    for (size_t n; buf != NULL && (n = fread(buf + len, 1, cap - len - 1, f)) > 0;) {
        len += n;
        if (cap - len < 2048)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    ASSERT(buf != NULL);
    buf[len] = '\0';
    return buf;
}
