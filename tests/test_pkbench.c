/*
 * pkbench end to end: a quick run's file validates against the checked-in JSON Schema and names
 * its host (PKBENCH_HOST) and the revision its build measures, an interrupted run keeps its
 * finished series, and bad input exits 1 with one clear line.
 */
#define _GNU_SOURCE
#include "test.h"

#include "run/run.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif

static void need_pkbench(void)
{
    if (PK_PKBENCH_PATH[0] == '\0')
        pk_test_skip_gate("build", "pkbench is built only with PK_BUILD_BENCH");
}

static int pkbench(const char *const *args, pk_result *r)
{
    const char *argv[32] = {PK_PKBENCH_PATH};
    int n = 1;
    for (; args[n - 1] != NULL && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .timeout_ms = 120000}, r));
    ASSERT_EQ(r->outcome.kind, PK_OUTCOME_EXITED);
    return r->outcome.code;
}

#define PKBENCH(r, ...) pkbench((const char *const[]){__VA_ARGS__, NULL}, r)

/* Validates a results file against harness/results/schema.json with Debian's python3-jsonschema
 * (each test that validates checks for it before it measures). */
static void validate(const char *path)
{
    (void)pk_test_validate_results(path);
}

static json_t *load(const char *path)
{
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    if (j == NULL)
        pk_test_fail(__FILE__, __LINE__, "%s: %s", path, err.text);
    return j;
}

TEST_IMPL(pkbench_quick_run_matches_schema)
{
    need_pkbench();
    pk_test_need_jsonschema();
    char out[512];
    snprintf(out, sizeof out, "%s/quick.json", pk_test_tmpdir());
    pk_result r;
    /* A fleet names its hosts through the environment (the child inherits it). */
    ASSERT_EQ(setenv("PKBENCH_HOST", "pk-test-runner", 1), 0);
    ASSERT_EQ(PKBENCH(&r, "run", "--profile", "quick", "--filter",
                      "^spawn_only/(processkit|posix_spawn)$", "--settle", "0.01", "--out", out),
              0);
    pk_result_release(&r);
    validate(out);
    json_t *j = load(out);
    /* The host's identity and the revision the build measures. */
    json_t *env = json_object_get(j, "environment");
    ASSERT_STR_EQ(json_string_value(json_object_get(env, "host")), "pk-test-runner");
    const char *id = json_string_value(json_object_get(env, "host_id"));
    ASSERT(id != NULL && strlen(id) == 12 && strspn(id, "0123456789abcdef") == 12);
    ASSERT(json_string_value(json_object_get(env, "host_id_from")) != NULL);
    const char *commit = json_string_value(json_object_get(env, "git_commit"));
    ASSERT(commit != NULL && strlen(commit) == 40 && strspn(commit, "0123456789abcdef") == 40);
    ASSERT_STR_EQ(json_string_value(json_object_get(env, "revision_from")), "build");
    ASSERT(json_is_boolean(json_object_get(env, "git_dirty")));
    ASSERT(json_is_string(json_object_get(env, "git_commit_time")));
    ASSERT(json_is_true(json_object_get(j, "complete")));
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "profile")), "quick");
    json_t *series = json_object_get(j, "series");
    ASSERT_EQ(json_array_size(series), 2);
    size_t i;
    json_t *s;
    json_array_foreach(series, i, s)
    {
        ASSERT_STR_EQ(json_string_value(json_object_get(s, "status")), "measured");
        ASSERT_GE(json_array_size(json_object_get(s, "samples_ns")), 10);
        ASSERT_EQ(json_array_size(json_object_get(s, "procs_running")),
                  json_array_size(json_object_get(s, "samples_ns")));
    }
    /* Google Benchmark's own records are kept, repetitions and aggregates. */
    ASSERT_GE(json_array_size(json_object_get(j, "benchmarks")), 2 * (10 + 4));
    json_t *priming = json_object_get(j, "priming");
    ASSERT(json_is_true(json_object_get(priming, "performed")));
    ASSERT_GE(json_integer_value(json_object_get(priming, "batches")), 1);
    json_decref(j);
}

TEST_IMPL(pkbench_interrupt_keeps_finished_series)
{
    need_pkbench();
    pk_test_need_jsonschema();
    char out[512];
    snprintf(out, sizeof out, "%s/interrupted.json", pk_test_tmpdir());
    /* One series after another (rounds keep the rounds every series completed instead). */
    const char *const argv[] = {
        PK_PKBENCH_PATH, "run",          "--profile", "quick", "--no-prime", "--sequential",
        "--filter",      "^spawn_only/", "--out",     out,     NULL};
    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = argv}, &p, NULL));
    /* Ctrl-C as soon as the first series has been written. */
    size_t finished = 0;
    for (int waited = 0; waited < 60000 && finished == 0; waited += 10) {
        usleep(10000);
        json_t *j = json_load_file(out, 0, NULL);
        finished = j != NULL ? json_array_size(json_object_get(j, "series")) : 0;
        json_decref(j);
    }
    ASSERT_GE(finished, 1);
    ASSERT_OK(pk_process_signal(p, SIGINT));
    pk_result r;
    ASSERT_OK(pk_process_wait(p, &r));
    ASSERT_EXITED(r, 130);
    ASSERT(strstr(r.err.data, "interrupted") != NULL);
    pk_result_release(&r);
    pk_process_free(p);
    validate(out);
    json_t *j = load(out);
    ASSERT(json_is_false(json_object_get(j, "complete")));
    ASSERT(json_is_true(json_object_get(j, "interrupted")));
    json_t *series = json_object_get(j, "series");
    ASSERT_GE(json_array_size(series), finished);
    ASSERT_LT(json_array_size(series), 6); /* spawn_only has 6 contenders: not all ran */
    size_t i;
    json_t *s;
    json_array_foreach(series, i, s)
    {
        /* only finished series, each with every sample */
        ASSERT_STR_EQ(json_string_value(json_object_get(s, "status")), "measured");
        ASSERT_EQ(json_array_size(json_object_get(s, "samples_ns")),
                  (size_t)pkb_profile_quick.repetitions);
    }
    json_decref(j);
}

TEST_IMPL(pkbench_bad_inputs)
{
    need_pkbench();
    char garbage[512], wrong[512], outdir[512];
    snprintf(garbage, sizeof garbage, "%s/garbage.json", pk_test_tmpdir());
    snprintf(wrong, sizeof wrong, "%s/wrong.json", pk_test_tmpdir());
    snprintf(outdir, sizeof outdir, "%s/reports", pk_test_tmpdir());
    FILE *f = fopen(garbage, "we");
    fputs("{this is not json", f);
    fclose(f);
    f = fopen(wrong, "we");
    fputs("{\"schema\": \"pkbench-results\", \"schema_version\": 99}", f);
    fclose(f);
    struct {
        const char *const args[8];
        const char *says;
    } cases[] = {
        {{"report", "/nonexistent/results.json", "--out", outdir}, "/nonexistent/results.json"},
        {{"report", garbage, "--out", outdir}, "garbage.json"},
        {{"report", wrong, "--out", outdir}, "schema_version"},
        {{"report"}, "no results FILE"},
        {{"run", "--profile", "bogus"}, "--profile needs full or quick"},
        {{"run", "--filter", "(", "--out", wrong}, "not a valid extended regular expression"},
        {{"run", "--filter", "^no-such-series$", "--out", wrong}, "no series matches"},
        {{"run", "--suite", "nosuch"}, "unknown suite 'nosuch'"},
        {{"frobnicate"}, "unknown command 'frobnicate'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[10] = {PK_PKBENCH_PATH};
        for (int k = 0; k < 8 && cases[i].args[k] != NULL; k++)
            argv[k + 1] = cases[i].args[k];
        pk_result r;
        ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
        if (r.outcome.code != 1 || r.err.data == NULL || strstr(r.err.data, cases[i].says) == NULL)
            pk_test_fail(__FILE__, __LINE__, "case %zu: exit %d, stderr: %s", i, r.outcome.code,
                         r.err.data ? r.err.data : "");
        ASSERT(strncmp(r.err.data, "pkbench: ", 9) == 0);
        pk_result_release(&r);
    }
    /* Nothing was written for the failed reports, and the bad runs left the file alone. */
    ASSERT(access(outdir, F_OK) != 0 || rmdir(outdir) == 0);
    json_t *j = load(wrong);
    ASSERT_EQ(json_integer_value(json_object_get(j, "schema_version")), 99);
    json_decref(j);
    pk_result r;
    ASSERT_EQ(PKBENCH(&r, "--help"), 0);
    ASSERT(strstr(r.out.data, "Exit status") != NULL);
    pk_result_release(&r);
    ASSERT_EQ(PKBENCH(&r, "list"), 0);
    ASSERT(strstr(r.out.data, "posix_spawn (baseline, control)") != NULL);
    ASSERT(strstr(r.out.data, "vfork_exec (control)") != NULL);
    ASSERT(strstr(r.out.data, "calibration/cpu_loop (control)") != NULL);
    pk_result_release(&r);
}
