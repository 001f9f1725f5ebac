/*
 * pkbench ab, check --against and bisect for real (their statistics are checked on prepared data
 * in test_ab.c): a scratch git repository holds this tree's CMakeLists.txt and lib/ in a few
 * commits, one of which makes spawn_only/processkit 30% slower (lib/CMakeLists.txt's
 * PK_INJECT_EXTRA_RUN_PCT: lib/src/inject_run.c, 30 extra runs of the command per 100, as the ab
 * study's slowed builds do; a spin of 30% measured up to 3x that). Their builds go to one cache
 * shared by every test, both test lanes and every run of the tests (build/ab-tests of the source
 * tree: keyed by the git trees of CMakeLists.txt and lib/, a lock per key), so each library is
 * built once per machine and a later run starts measuring within seconds. The measuring tests are
 * in tests/alone.h and skip on a busy machine (gate "quiet"): their verdicts are measurements.
 * The worker (contenders/host/host.c) is checked through the protocol's client
 * (contenders/worker.h) with this tree's own build of it.
 */
#include "test.h"

#include "contenders/worker.h"
#include "synth.h"
#include "verdict_test.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PK_CONTENDER_HOST_PATH
#define PK_CONTENDER_HOST_PATH ""
#endif

#define AB_CACHE PK_SOURCE_DIR "/build/ab-tests"

/* Runs argv in dir (NULL: here) with the tests' ab cache; its exit status, its output in r. */
static int run_in(const char *dir, const char *const *argv, pk_result *r)
{
    static const char *const env[] = {"PKBENCH_AB_CACHE=" AB_CACHE,
                                      "GIT_AUTHOR_NAME=pk",
                                      "GIT_AUTHOR_EMAIL=pk@pk.invalid",
                                      "GIT_COMMITTER_NAME=pk",
                                      "GIT_COMMITTER_EMAIL=pk@pk.invalid",
                                      "NO_COLOR=1",
                                      NULL};
    ASSERT_OK(pk_run(
        &(pk_command){
            .argv = argv, .cwd = dir, .env = {.set = env}, .err = {.kind = PK_STDIO_CAPTURE}},
        r));
    if (r->outcome.kind != PK_OUTCOME_EXITED)
        pk_test_fail(__FILE__, __LINE__, "%s did not exit: %s", argv[0],
                     pk_outcome_kind_name(r->outcome.kind));
    return r->outcome.code;
}

#define RUN_IN(dir, r, ...) run_in((dir), (const char *const[]){__VA_ARGS__, NULL}, (r))

static void git_ok(const char *dir, const char *const *args)
{
    const char *argv[16] = {"git"};
    size_t n = 1;
    for (; args[n - 1] != NULL; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    pk_result r;
    if (run_in(dir, argv, &r) != 0)
        pk_test_fail(__FILE__, __LINE__, "git %s in %s: %s", args[0], dir,
                     r.err.data ? r.err.data : "");
    pk_result_release(&r);
}

#define GIT(dir, ...) git_ok((dir), (const char *const[]){__VA_ARGS__, NULL})

/* The commit `rev` of the repository at dir, in full. */
static void rev_of(const char *dir, const char *rev, char *out, size_t cap)
{
    pk_result r;
    ASSERT_EQ(RUN_IN(dir, &r, "git", "rev-parse", rev), 0);
    snprintf(out, cap, "%.*s", (int)strcspn(r.out.data, "\n"), r.out.data);
    pk_result_release(&r);
}

/* Makes this tree's library do pct% more of the same work (lib/CMakeLists.txt's injected
 * slowdown: pct extra runs per 100 of a command with no pipe, such as spawn_only's). */
static void slow_down(const char *repo, int pct)
{
    char path[600];
    snprintf(path, sizeof path, "%s/lib/CMakeLists.txt", repo);
    char *text = pk_test_slurp(path);
    const char *key = "set(PK_INJECT_EXTRA_RUN_PCT 0 CACHE";
    char *at = strstr(text, key);
    ASSERT(at != NULL);
    FILE *f = fopen(path, "we");
    ASSERT(f != NULL);
    fprintf(f, "%.*sset(PK_INJECT_EXTRA_RUN_PCT %d CACHE%s", (int)(at - text), text, pct,
            at + strlen(key));
    fclose(f);
    free(text);
}

/* A scratch repository in the test's directory: commit "good" (this tree's CMakeLists.txt and
 * lib/), then one commit per step: "notes" (a line added to NOTES, outside the library), "slow"
 * (the library 30% slower). */
static void make_repo(char *repo, size_t cap, const char *const *steps)
{
    snprintf(repo, cap, "%s/repo", pk_test_tmpdir());
    ASSERT_EQ(mkdir(repo, 0755), 0);
    pk_result r;
    ASSERT_EQ(
        RUN_IN(NULL, &r, "cp", "-r", PK_SOURCE_DIR "/CMakeLists.txt", PK_SOURCE_DIR "/lib", repo),
        0);
    pk_result_release(&r);
    GIT(repo, "init", "-q");
    GIT(repo, "add", "-A");
    GIT(repo, "commit", "-q", "-m", "good");
    for (size_t i = 0; steps[i] != NULL; i++) {
        if (strcmp(steps[i], "slow") == 0) {
            slow_down(repo, 30);
        } else {
            char notes[600];
            snprintf(notes, sizeof notes, "%s/NOTES", repo);
            FILE *f = fopen(notes, "ae");
            ASSERT(f != NULL);
            fprintf(f, "step %zu\n", i);
            fclose(f);
        }
        GIT(repo, "add", "-A");
        GIT(repo, "commit", "-q", "-m", steps[i]);
    }
}

/* Measures nothing on a busy machine: the verdicts of these tests are measurements. Under ASan
 * only pkbench's orchestration would run slower, for minutes of rounds, and its code is covered by
 * the tests that measure nothing (test_ab.c, the protocol and usage tests here). */
static void need_quiet(void)
{
    if (PK_TEST_UNDER_ASAN)
        pk_test_skip_gate("build", "measures with pkbench ab: the Debug suite runs it");
    double others = 0;
    if (!pk_test_machine_quiet(&others))
        pk_test_skip_gate("quiet",
                          "%.1f other processes running on %ld CPUs: ab's verdicts are "
                          "measurements",
                          others, sysconf(_SC_NPROCESSORS_ONLN));
}

static json_t *load_json(const char *path)
{
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (j == NULL)
        pk_test_fail(__FILE__, __LINE__, "%s: %s", path, e.text);
    return j;
}

/* The row of series `name` in a comparison's JSON. */
static json_t *row_of(json_t *cmp, const char *name)
{
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(cmp, "series"), i, row)
    {
        if (strcmp(json_string_value(json_object_get(row, "name")), name) == 0)
            return row;
    }
    pk_test_fail(__FILE__, __LINE__, "no row %s", name);
}

static const char *verdict_of(json_t *cmp, const char *name)
{
    return json_string_value(json_object_get(row_of(cmp, name), "verdict"));
}

TEST_IMPL(ab_host_speaks_the_worker_protocol)
{
    if (PK_CONTENDER_HOST_PATH[0] == '\0')
        pk_test_skip_gate("build", "pk_contender_host is built only with PK_BUILD_BENCH");
    char why[320] = "";
    pkb_worker *w;
    const char *argv[] = {PK_CONTENDER_HOST_PATH, NULL};
    /* It hosts every C contender: the greeting lists them, so any of them may start it. */
    ASSERT_OK(pkb_worker_start(&(pkb_worker_options){.name = "posix_spawn", .argv = argv}, &w, why,
                               sizeof why));
    const pkb_worker_hello *h = pkb_worker_greeting(w);
    ASSERT(strstr(h->contenders, "processkit,") != NULL && strstr(h->contenders, "glib") != NULL);
    ASSERT(strncmp(h->runtime, "processkit-", 11) == 0);
    char input[600];
    snprintf(input, sizeof input, "%s/stdin", pk_test_tmpdir());
    FILE *f = fopen(input, "we");
    fputs("processkit small \n0123456789\nab\n", f);
    fclose(f);
    pkb_worker_series s = {.contender = "processkit",
                           .scenario = "spawn_capture_small",
                           .kind = "capture",
                           .program = "cat",
                           .program_path = "/bin/cat",
                           .children = 1,
                           .input_file = input,
                           .input_bytes = 32,
                           .expect_bytes = 32,
                           .expect_lines = 3};
    ASSERT_OK(pkb_worker_setup(w, &s, why, sizeof why));
    pkb_sample out = {0};
    ASSERT_OK(pkb_worker_run(w, 5, &out));
    ASSERT(out.self_timed && out.iterations == 5 && out.wall_ns > 0);
    ASSERT(out.bytes == 5 * 32 && out.lines == 15 && out.children == 5 && out.failures == 0);
    ASSERT(out.child_cpu_ns > 0);
    /* A contender that discards its output reads nothing of it. */
    s.contender = "processkit_discard_stdout";
    s.expect_bytes = s.expect_lines = 0;
    ASSERT_OK(pkb_worker_setup(w, &s, why, sizeof why));
    memset(&out, 0, sizeof out);
    ASSERT_OK(pkb_worker_run(w, 2, &out));
    ASSERT(out.bytes == 0 && out.children == 2 && out.failures == 0);
    /* The fan-out at scale: one scenario per size, "fan_out_<N>", whose N is the setup's
     * children (what pkbench ab and run --build send for each size). */
    s.contender = "processkit";
    s.scenario = "fan_out_40";
    s.kind = "fan_out";
    s.children = 40;
    s.expect_bytes = 32;
    s.expect_lines = 3;
    ASSERT_OK(pkb_worker_setup(w, &s, why, sizeof why));
    memset(&out, 0, sizeof out);
    ASSERT_OK(pkb_worker_run(w, 2, &out));
    ASSERT(out.bytes == 2 * 40 * 32 && out.lines == 2 * 40 * 3 && out.children == 80 &&
           out.failures == 0);
    s.contender = "processkit_discard_stdout";
    s.children = 1;
    s.expect_bytes = s.expect_lines = 0;
    /* A scenario the contender does not run is refused by the host, naming both. */
    s.scenario = "stream_large_stdout";
    s.kind = "stream";
    ASSERT_EQ(pkb_worker_setup(w, &s, why, sizeof why), -EPROTO);
    ASSERT(strstr(why, "processkit_discard_stdout does not run scenario stream_large_stdout") !=
           NULL);
    ASSERT_OK(pkb_worker_stop(w, why, sizeof why));

    /* A contender it does not host: the client refuses it at the greeting. */
    ASSERT(pkb_worker_start(&(pkb_worker_options){.name = "rust_std", .argv = argv}, &w, why,
                            sizeof why) != 0);
    ASSERT(strstr(why, "hosting") != NULL);
    pk_result r;
    ASSERT_EQ(RUN_IN(NULL, &r, PK_CONTENDER_HOST_PATH, "--list"), 0);
    ASSERT(strstr(r.out.data, "processkit\nprocesskit_resolved_program\n") == r.out.data);
    pk_result_release(&r);
    ASSERT_EQ(RUN_IN(NULL, &r, PK_CONTENDER_HOST_PATH, "processkit"), 2);
    ASSERT(strstr(r.err.data, "usage: pk_contender_host") != NULL);
    pk_result_release(&r);
}

TEST_IMPL(ab_usage_errors_name_the_argument)
{
    pk_test_need_pkbench();
    char repo[512];
    make_repo(repo, sizeof repo, (const char *const[]){NULL});
    struct {
        const char *const *argv;
        const char *says;
    } cases[] = {
        {(const char *const[]){PK_PKBENCH_PATH, "ab", "HEAD", NULL}, "ab: needs BASE and HEAD"},
        {(const char *const[]){PK_PKBENCH_PATH, "ab", "HEAD", "HEAD", "--sequential", NULL},
         "never one after another"},
        {(const char *const[]){PK_PKBENCH_PATH, "ab", "HEAD", "HEAD", "--repetitions", "9", NULL},
         "adds rounds until every series is decided"},
        {(const char *const[]){PK_PKBENCH_PATH, "ab", "HEAD", "HEAD", "--max-time", "5x", NULL},
         "--max-time needs a duration"},
        {(const char *const[]){PK_PKBENCH_PATH, "ab", "HEAD", "HEAD", "--suite", "phases", NULL},
         "ab measures the scenarios suite"},
        {(const char *const[]){PK_PKBENCH_PATH, "ab", "HEAD", "HEAD", "--strict-env", NULL},
         "share one run"},
        {(const char *const[]){PK_PKBENCH_PATH, "ab", "nosuch", "HEAD", NULL},
         "base: 'nosuch' is no revision of the repository at ."},
        {(const char *const[]){PK_PKBENCH_PATH, "bisect", "HEAD", "HEAD", NULL},
         "--series REGEX names the series"},
        {(const char *const[]){PK_PKBENCH_PATH, "bisect", "HEAD", "HEAD", "--series", "x", NULL},
         "is not an ancestor of BAD"},
        {(const char *const[]){PK_PKBENCH_PATH, "bisect", "nosuch", "HEAD", "--series", "x", NULL},
         "GOOD: 'nosuch' is no commit"},
        {(const char *const[]){PK_PKBENCH_PATH, "check", "--baseline", "x.json", "--against",
                               "HEAD", NULL},
         "give one"},
        {(const char *const[]){PK_PKBENCH_PATH, "check", "--max-time", "5m", "--baseline", "x.json",
                               NULL},
         "--max-time bounds --against's rounds"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pk_result r;
        int code = run_in(repo, cases[i].argv, &r);
        if (code != 1 || r.err.data == NULL || strstr(r.err.data, cases[i].says) == NULL)
            pk_test_fail(__FILE__, __LINE__, "case %zu: exit %d, stderr: %s", i, code,
                         r.err.data ? r.err.data : "");
        pk_result_release(&r);
    }
}

/* A directory ab takes as a built tree, whose pk_contender_host logs every start to `log` and
 * then runs this tree's worker. */
static void logging_host(char *dir, size_t cap, char *log, size_t log_cap)
{
    snprintf(dir, cap, "%s/logging-host", pk_test_tmpdir());
    snprintf(log, log_cap, "%s/starts", dir);
    ASSERT(mkdir(dir, 0755) == 0 || errno == EEXIST);
    char path[700];
    snprintf(path, sizeof path, "%s/pk_contender_host", dir);
    FILE *f = fopen(path, "we");
    ASSERT(f != NULL);
    fprintf(f, "#!/bin/sh\necho $$ >> '%s'\nexec '%s' \"$@\"\n", log, PK_CONTENDER_HOST_PATH);
    ASSERT(fclose(f) == 0);
    ASSERT(chmod(path, 0755) == 0);
}

static size_t lines_of(const char *path)
{
    FILE *f = fopen(path, "re");
    size_t n = 0;
    for (int ch; f != NULL && (ch = fgetc(f)) != EOF;)
        n += ch == '\n';
    if (f != NULL)
        fclose(f);
    return n;
}

/* The measured samples the results file holds, over every series. */
static size_t samples_in(json_t *doc)
{
    size_t n = 0, i;
    json_t *b;
    json_array_foreach(json_object_get(doc, "benchmarks"), i, b)
    {
        const char *type = json_string_value(json_object_get(b, "run_type"));
        n += type != NULL && strcmp(type, "iteration") == 0;
    }
    return n;
}

TEST_IMPL(ab_measures_each_sample_in_a_new_worker)
{
    /* What one worker process happens to get (its layout, its leaf) can move its times by a few
     * percent for its whole life; with one process per side for the whole run that would be a
     * lasting difference between the sides, which pairing by round cannot see. So every measured
     * sample is taken by a process started for it: starts = one per series for the check, plus
     * one per sample. And a contender that calls nothing of the library (posix_spawn, GLib) runs
     * the same code on both sides: ab leaves it out unless --controls. */
    if (PK_CONTENDER_HOST_PATH[0] == '\0')
        pk_test_skip_gate("build", "pk_contender_host is built only with PK_BUILD_BENCH");
    if (PK_TEST_UNDER_ASAN) /* ./x test's critical path is the ASan lane */
        pk_test_skip_gate("build",
                          "%s: the Debug suite runs it (ab's code runs under ASan in the other "
                          "ab tests)",
                          "two short ab runs");
    pk_test_need_pkbench();
    char dir[600], log[700], out[600];
    logging_host(dir, sizeof dir, log, sizeof log);
    snprintf(out, sizeof out, "%s/fresh.json", pk_test_tmpdir());
    pk_result r;
    int code = RUN_IN(NULL, &r, PK_PKBENCH_PATH, "ab", dir, dir, "--filter",
                      "^spawn_only/(processkit|posix_spawn|glib)$", "--max-time", "2s",
                      "--no-prime", "--settle", "0.005", "--out", out, "--format", "json");
    /* Any verdict: this counts worker starts. Both sides are one build, so a verdict of 2 is a
     * false alarm, which the rule allows at rate alpha (sequential_aa_false_alarms_stay_below_alpha
     * and the ab study measure that rate); 1 or a signal is an error. */
    if (code != 0 && code != 2 && code != 3)
        pk_test_fail(__FILE__, __LINE__, "ab exited %d: %s", code, r.err.data ? r.err.data : "");
    pk_result_release(&r);
    json_t *doc = load_json(out);
    json_t *series = json_object_get(doc, "series");
    ASSERT_EQ(json_array_size(series), 2); /* processkit's two sides only */
    for (size_t i = 0; i < 2; i++)
        ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(series, i), "contender")),
                      "processkit");
    size_t samples = samples_in(doc), starts = lines_of(log);
    json_decref(doc);
    ASSERT(samples >= 2 * 10); /* the first look's ten rounds at least */
    if (starts != 2 + samples)
        pk_test_fail(__FILE__, __LINE__, "%zu worker starts for 2 series and %zu samples", starts,
                     samples);

    /* --controls: the contenders that cannot change are measured too, as a check of the method. */
    code = RUN_IN(NULL, &r, PK_PKBENCH_PATH, "ab", dir, dir, "--filter",
                  "^spawn_only/(processkit|posix_spawn|glib)$", "--controls", "--max-time", "1s",
                  "--no-prime", "--settle", "0.005", "--out", out, "--format", "json");
    if (code != 0 && code != 2 && code != 3)
        pk_test_fail(__FILE__, __LINE__, "ab --controls exited %d: %s", code,
                     r.err.data ? r.err.data : "");
    pk_result_release(&r);
    doc = load_json(out);
    ASSERT_EQ(json_array_size(json_object_get(doc, "series")), 6);
    json_decref(doc);
}

/* The share of a results file's repetitions that its disturbance check marked: other processes
 * took more than a quarter of the machine (or the hypervisor stole CPU) while they ran. */
static double disturbed_share(json_t *doc)
{
    size_t n = 0, marked = 0, i, j;
    json_t *s, *d;
    json_array_foreach(json_object_get(doc, "series"), i, s)
    {
        json_array_foreach(json_object_get(s, "disturbed"), j, d)
        {
            n++;
            marked += json_is_true(d);
        }
    }
    return n > 0 ? (double)marked / (double)n : 0;
}

TEST_IMPL(check_against_head_decides_unchanged)
{
    /* The working tree against the revision it is at, through ab: both sides the same library
     * (the same key: built once), one short series. A/A in one interleaved run: unchanged.
     * What is tested is the path (check --against, through ab, to a decision and exit 0), not
     * how fine a change ab can see (the ab study measures that): so a bar wide enough that a
     * machine busy with the other test lanes still decides within the budget. With the default
     * 2% bar and 10% limit, CI once ran out of budget at ±10.4% after 46 rounds (exit 3). */
    pk_test_need_pkbench();
    pk_test_need_jsonschema();
    need_quiet();
    char repo[512], out[600], cmp[600];
    make_repo(repo, sizeof repo, (const char *const[]){NULL});
    snprintf(out, sizeof out, "%s/aa.json", pk_test_tmpdir());
    snprintf(cmp, sizeof cmp, "%s/aa-compare.json", pk_test_tmpdir());
    pk_result r;
    int code =
        RUN_IN(repo, &r, PK_PKBENCH_PATH, "check", "--against", "HEAD", "--filter",
               "^spawn_only/processkit$", "--max-time", "30s", "--no-prime", "--alpha", "0.01",
               "--threshold", "20", "--cv-limit", "30", "--out", out, "--format", "json");
    if (code == 3) {
        /* "Cannot tell" is ab's right answer when other load swamped the run; the gate above
         * saw a quiet machine at the start only (CI's other lanes start and stop). The harness's
         * own disturbance check says whether that happened: above the share at which it would
         * re-measure a series, skip; a quiet run that cannot decide an A/A fails. */
        json_t *doc = load_json(out);
        double share = disturbed_share(doc);
        json_decref(doc);
        if (share > 0.25)
            pk_test_skip_gate("quiet",
                              "other load ran during %.0f%% of the run's repetitions (its "
                              "disturbance check) and ab could not decide: %s",
                              100 * share, r.err.data ? r.err.data : "");
    }
    if (code != 0)
        pk_test_fail(__FILE__, __LINE__, "check --against HEAD exited %d: %s", code,
                     r.err.data ? r.err.data : "");
    json_error_t e;
    json_t *c = json_loads(r.out.data, 0, &e);
    ASSERT(c != NULL);
    char v[32]; /* kept past the document's free, for the replay below */
    snprintf(v, sizeof v, "%s", verdict_of(c, "spawn_only/processkit"));
    ASSERT_STR_EQ(v, "~");
    json_t *ab = json_object_get(row_of(c, "spawn_only/processkit"), "ab");
    ASSERT(json_is_true(json_object_get(ab, "unchanged")) ||
           json_is_true(json_object_get(ab, "last_look")));
    json_decref(c);
    pk_result_release(&r);

    json_t *doc = load_json(out);
    json_t *section = json_object_get(doc, "ab");
    ASSERT(json_array_size(json_object_get(section, "looks")) >= 1);
    const char *kb = json_string_value(json_object_get(json_object_get(section, "base"), "key"));
    const char *kh = json_string_value(json_object_get(json_object_get(section, "head"), "key"));
    ASSERT(kb != NULL && kh != NULL && strcmp(kb, kh) == 0); /* one library, built once */
    ASSERT(json_is_false(json_object_get(json_object_get(section, "head"), "dirty")));
    /* The second side found the first's build ready: it was measuring within seconds. */
    ASSERT(json_real_value(json_object_get(json_object_get(section, "head"), "build_s")) < 20);
    json_t *series = json_object_get(doc, "series");
    ASSERT_EQ(json_array_size(series), 2);
    ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(series, 0), "side")), "base");
    ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(series, 1), "side")), "head");
    ASSERT(json_is_true(json_object_get(json_array_get(series, 1), "self_timed")));
    json_decref(doc);
    pk_test_validate_results(out);
    /* compare of the file replays the run's looks: the same verdict. */
    ASSERT_EQ(RUN_IN(NULL, &r, PK_PKBENCH_PATH, "compare", out, "--format", "json"), 0);
    c = json_loads(r.out.data, 0, &e);
    ASSERT(c != NULL);
    if (strcmp(verdict_of(c, "spawn_only/processkit"), v) != 0)
        pk_test_fail(__FILE__, __LINE__, "compare of the ab file says %s where ab said %s: %s",
                     verdict_of(c, "spawn_only/processkit"), v, r.out.data);
    json_decref(c);
    pk_result_release(&r);
}

TEST_IMPL(ab_finds_an_injected_slowdown)
{
    /* 30% slower processkit in the head build: regressed, and only processkit (vfork_exec, the
     * same code on both sides, measured with --controls, is not). */
    pk_test_need_pkbench();
    need_quiet();
    char repo[512], out[600], good[64], slow[64];
    make_repo(repo, sizeof repo, (const char *const[]){"slow", NULL});
    rev_of(repo, "HEAD~1", good, sizeof good);
    rev_of(repo, "HEAD", slow, sizeof slow);
    snprintf(out, sizeof out, "%s/slow.json", pk_test_tmpdir());
    pk_result r;
    int code = RUN_IN(repo, &r, PK_PKBENCH_PATH, "ab", good, slow, "--filter",
                      "^spawn_only/(processkit|vfork_exec)$", "--controls", "--max-time", "20s",
                      "--no-prime", "--out", out, "--format", "json");
    if (code != 2)
        pk_test_fail(__FILE__, __LINE__, "ab good slow exited %d: %s", code,
                     r.err.data ? r.err.data : "");
    json_error_t e;
    json_t *c = json_loads(r.out.data, 0, &e);
    ASSERT(c != NULL);
    ASSERT_STR_EQ(verdict_of(c, "spawn_only/processkit"), "regressed");
    double delta = json_real_value(json_object_get(row_of(c, "spawn_only/processkit"), "delta"));
    /* 30 extra runs per 100 cost what 30 runs cost, on any host: about +30% (the spin this test
     * used before also waited for the CPU, up to +216% on a busy machine); well past +60% would
     * be something else than the extra runs. */
    if (!(delta > 0.15 && delta < 0.6))
        pk_test_fail(__FILE__, __LINE__, "processkit's delta %.3f, the slowdown is 30%%", delta);
    ASSERT(strcmp(verdict_of(c, "spawn_only/vfork_exec"), "regressed") != 0);
    ASSERT(strstr(r.err.data, "regressed: spawn_only/processkit (+") != NULL);
    json_decref(c);
    pk_result_release(&r);
}

TEST_IMPL(bisect_finds_the_first_bad_commit)
{
    /* good, notes, slow, notes: the third commit made processkit 30% slower. */
    pk_test_need_pkbench();
    need_quiet();
    char repo[512], dir[600], c0[64], c2[64], c3[64];
    make_repo(repo, sizeof repo, (const char *const[]){"notes", "slow", "notes", NULL});
    rev_of(repo, "HEAD~3", c0, sizeof c0);
    rev_of(repo, "HEAD~1", c2, sizeof c2);
    rev_of(repo, "HEAD", c3, sizeof c3);
    snprintf(dir, sizeof dir, "%s/bisect", pk_test_tmpdir());
    pk_result r;
    int code = RUN_IN(repo, &r, PK_PKBENCH_PATH, "bisect", c0, c3, "--series",
                      "^spawn_only/processkit$", "--max-time", "15s", "--no-prime", "--out", dir);
    if (code != 0)
        pk_test_fail(__FILE__, __LINE__, "bisect exited %d: %s\n%s", code,
                     r.out.data ? r.out.data : "", r.err.data ? r.err.data : "");
    char want[128];
    snprintf(want, sizeof want, "first bad commit: %.12s slow", c2);
    if (strstr(r.out.data, want) == NULL)
        pk_test_fail(__FILE__, __LINE__, "no \"%s\" in: %s", want, r.out.data);
    ASSERT(strstr(r.out.data, "  spawn_only/processkit: +") != NULL);
    int steps = -1, skipped = -1;
    const char *line = strstr(r.out.data, " skipped) after ab ");
    ASSERT(line != NULL);
    while (line > r.out.data && line[-1] != '\n')
        line--;
    ASSERT(sscanf(line, "%d steps (%d skipped)", &steps, &skipped) == 2 ||
           sscanf(line, "%d step (%d skipped)", &steps, &skipped) == 2);
    ASSERT(steps >= 1 && steps <= 2); /* 3 commits between: at most 2 steps */
    char file[700];
    snprintf(file, sizeof file, "%s/%s.json", dir, c2);
    ASSERT(access(file, R_OK) == 0);
    pk_result_release(&r);
    /* The scratch worktree is gone, and the repository is where it was. */
    ASSERT_EQ(RUN_IN(repo, &r, "git", "worktree", "list", "--porcelain"), 0);
    ASSERT(strstr(r.out.data, "pkbench-bisect") == NULL);
    pk_result_release(&r);
    char head[64];
    rev_of(repo, "HEAD", head, sizeof head);
    ASSERT_STR_EQ(head, c3);
}

TEST_IMPL(run_build_measures_in_the_builds_worker)
{
    /* pkbench run --build REV: the scenarios suite's contenders in that build's worker, the
     * series under their usual names (so two such runs compare), the build in the file. */
    pk_test_need_pkbench();
    pk_test_need_jsonschema();
    char repo[512], out[600];
    make_repo(repo, sizeof repo, (const char *const[]){NULL});
    snprintf(out, sizeof out, "%s/build.json", pk_test_tmpdir());
    pk_result r;
    int code = RUN_IN(repo, &r, PK_PKBENCH_PATH, "run", "--build", "HEAD", "--filter",
                      "^spawn_only/vfork_exec$", "--repetitions", "6", "--settle", "0",
                      "--no-prime", "--out", out);
    if (code != 0)
        pk_test_fail(__FILE__, __LINE__, "run --build HEAD exited %d: %s", code,
                     r.err.data ? r.err.data : "");
    pk_result_release(&r);
    json_t *doc = load_json(out);
    json_t *build = json_object_get(doc, "build");
    ASSERT(strstr(json_string_value(json_object_get(build, "worker")), "pk_contender_host") !=
           NULL);
    ASSERT(strncmp(json_string_value(json_object_get(build, "key")), "lib-", 4) == 0);
    json_t *s = json_array_get(json_object_get(doc, "series"), 0);
    ASSERT_EQ(json_array_size(json_object_get(doc, "series")), 1);
    ASSERT_STR_EQ(json_string_value(json_object_get(s, "name")), "spawn_only/vfork_exec");
    ASSERT(json_object_get(s, "side") == NULL);
    ASSERT(json_is_true(json_object_get(s, "self_timed")));
    ASSERT_STR_EQ(json_string_value(json_object_get(s, "status")), "measured");
    ASSERT_EQ(json_array_size(json_object_get(s, "samples_ns")), 6);
    json_decref(doc);
    pk_test_validate_results(out);
    /* Only the scenarios suite runs in a worker. */
    ASSERT_EQ(RUN_IN(repo, &r, PK_PKBENCH_PATH, "run", "--build", "HEAD", "--suite", "phases"), 1);
    ASSERT(strstr(r.err.data, "--build runs the scenarios suite's contenders") != NULL);
    pk_result_release(&r);
}
