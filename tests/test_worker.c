/*
 * The worker protocol (contenders/README.md; the client contenders/worker.h, the adapter
 * contenders/remote.h) and the runner's self-timed samples (harness/plugin/sample.h):
 *
 *   - the runner records what a self-timed call reports (its wall time, its children's and its
 *     own CPU, the peaks), not its own clock, and lets a call perform a batch of iterations;
 *   - every way a worker can fail — dies, hangs, garbage, a wrong greeting, wrong counts, an
 *     error answer — fails the call with a reason naming the contender and what it did, within
 *     the deadline, leaving no process behind;
 *   - through pkbench, such workers are refused or failed with that reason and the run goes on
 *     with the other contenders.
 *
 * The misbehaving workers are this binary's helper `fake-worker MODE [NAME]` (below).
 */
#define _GNU_SOURCE
#include "test.h"

#include "contenders/remote.h"
#include "contenders/worker.h"
#include "run/run.h"
#include "suites/scenarios/scenario.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif

/* ---- the fake worker (pk_tests --helper fake-worker MODE [NAME]) ----------------------------- */

static unsigned long long field_of(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *p = strstr(line, pat);
    return p != NULL ? strtoull(p + strlen(pat), NULL, 10) : 0;
}

/* Says `text` (a line) on stdout, flushed. */
static void say(const char *text)
{
    printf("%s\n", text);
    fflush(stdout);
}

static void sleep_forever(void)
{
    for (;;)
        pause();
}

static void sleep_ms(unsigned long long ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* The time an iteration of `mode` takes (and reports): "slow" 250 ms, "slow-fan" 2.5 s; the good
 * worker's 2 ms, without sleeping. */
static unsigned long long iteration_ms(const char *mode)
{
    return strcmp(mode, "slow") == 0 ? 250 : strcmp(mode, "slow-fan") == 0 ? 2500 : 0;
}

/* One `run K` answer of the good worker for the series set up (its counts are those the setup
 * asked for: the protocol, not the work, is under test here), or the mode's misbehaviour. */
static void answer_run(const char *mode, unsigned long long k, int runs, const char *setup)
{
    unsigned long long n = field_of(setup, "children"), b = field_of(setup, "expect_bytes"),
                       l = field_of(setup, "expect_lines");
    bool later = strstr(mode, "-later") != NULL, now = !later || runs > 1;
    if (now && strncmp(mode, "die-run", 7) == 0) {
        fprintf(stderr, "fake worker: panic: boom\n");
        exit(101);
    }
    if (now && strcmp(mode, "hang-with-child") == 0) { /* a child of its own left running */
        pid_t pid = fork();
        if (pid == 0)
            sleep_forever();
        fprintf(stderr, "child %d\n", (int)pid);
        sleep_forever();
    }
    if (now && strcmp(mode, "close-stderr-hang") == 0) { /* its stderr ends, it goes on */
        for (int fd = 2; fd < 1024; fd++)                /* every copy of it */
            close(fd);
        sleep_forever();
    }
    if (now && strncmp(mode, "hang-run", 8) == 0)
        sleep_forever();
    if (now && strcmp(mode, "garbage-run") == 0) {
        say("all went well");
        return;
    }
    if (now && strcmp(mode, "fields-run") == 0) {
        printf("done %llu ns=-5 bytes=banana\n", k);
        fflush(stdout);
        return;
    }
    if (now && strcmp(mode, "long-line") == 0) {
        for (int i = 0; i < 5000; i++)
            putchar('x');
        fflush(stdout);
        sleep_forever();
    }
    unsigned long long bytes = k * n * b - (now && strcmp(mode, "count-run") == 0);
    unsigned long long iters = k + (now && strcmp(mode, "iterations-run") == 0);
    unsigned long long ms = iteration_ms(mode), ns = ms > 0 ? k * ms * 1000000 : k * 2000000;
    sleep_ms(k * ms);
    printf("done %llu ns=%llu bytes=%llu lines=%llu children=%llu failures=0 "
           "cpu_children_ns=%llu cpu_self_ns=%llu peak_rss_kib=4321 idle_fds=5 peak_fds=%llu\n",
           iters, ns, bytes, k * n * l, k * n, k * 500000, k * 100000, 5 + 2 * n);
    fflush(stdout);
}

/* Whether the input file the setup names holds input_bytes bytes. */
static bool input_ok(const char *line)
{
    const char *p = strstr(line, " input_file=");
    if (p == NULL)
        return false;
    char path[1024];
    if (sscanf(p + 12, "%1023s", path) != 1)
        return false;
    if (strcmp(path, "-") == 0)
        return field_of(line, "input_bytes") == 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return false;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    return (unsigned long long)size == field_of(line, "input_bytes");
}

static int fake_worker(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "good", *name = argc > 2 ? argv[2] : "fake";
    char greeting[256];
    snprintf(greeting, sizeof greeting, "pkw 1 name=%s runtime=fake-1 kinds=%s", name,
             strcmp(mode, "only-capture") == 0 ? "capture" : "capture,stream,fan_out,spawn_only");
    if (strcmp(mode, "die-greeting") == 0) {
        fprintf(stderr, "fake worker: cannot start\n");
        return 3;
    }
    if (strcmp(mode, "silent") == 0)
        sleep_forever();
    say(strcmp(mode, "garbage-greeting") == 0 ? "hello world"
        : strcmp(mode, "version-2") == 0      ? "pkw 2 name=fake runtime=x kinds=capture"
        : strcmp(mode, "wrong-name") == 0     ? "pkw 1 name=other runtime=x kinds=capture"
                                              : greeting);
    char line[8192], setup[8192] = "";
    int runs = 0;
    while (fgets(line, sizeof line, stdin) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "setup ", 6) == 0) {
            snprintf(setup, sizeof setup, "%s", line);
            if (strcmp(mode, "slow-fan") == 0 && strstr(line, " kind=fan_out ") != NULL)
                sleep_ms(400); /* a fan-out's setup runs one fan-out */
            say(strcmp(mode, "setup-error") == 0 ? "error no such program: cat"
                : input_ok(line)                 ? "ok"
                                                 : "error the input file is not as announced");
        } else if (strncmp(line, "run ", 4) == 0) {
            answer_run(mode, strtoull(line + 4, NULL, 10), ++runs, setup);
        } else if (strcmp(line, "teardown") == 0) {
            say("ok");
        } else if (strcmp(line, "quit") == 0) {
            if (strcmp(mode, "ignore-quit") == 0)
                sleep_forever();
            return 0;
        } else {
            say("error unknown request");
        }
    }
    return 0;
}

int pk_test_worker_helper(int argc, char **argv);
int pk_test_worker_helper(int argc, char **argv)
{
    return strcmp(argv[0], "fake-worker") == 0 ? fake_worker(argc, argv) : -1;
}

/* ---- the client, against each misbehaviour ----------------------------------------------- */

/* `ms` times PK_TEST_TIMEOUT_MULTIPLIER (a sanitized fake worker starts slower), as text for
 * PKBENCH_WORKER_DEADLINE_MS when `text` is not NULL. */
static int scaled_ms(int ms, char *text, size_t cap)
{
    const char *m = getenv("PK_TEST_TIMEOUT_MULTIPLIER");
    int k = m != NULL && atoi(m) > 1 ? atoi(m) : 1;
    if (text != NULL)
        snprintf(text, cap, "%d", ms * k);
    return ms * k;
}

static void expect_in(const char *text, const char *want, int line)
{
    if (strstr(text, want) == NULL)
        pk_test_fail(__FILE__, line, "\"%s\" lacks \"%s\"", text, want);
}
#define EXPECT_IN(text, want) expect_in((text), (want), __LINE__)

/* The small capture's workload (cat, 32 bytes in 3 lines). */
static pkb_workload small(void)
{
    static char *cat;
    if (cat == NULL)
        ASSERT_OK(pk_resolve_program("cat", NULL, &cat, NULL));
    pkb_workload w;
    ASSERT_OK(pkb_workload_build(PKB_SPAWN_CAPTURE_SMALL, cat, NULL, &w));
    return w;
}

/* Sets up a fake worker in `mode` as the contender "fake" and runs `runs` calls of batch 3:
 * returns the first failure (0: none), its reason in why. */
static int drive(const char *mode, int runs, char *why, size_t cap, int64_t *elapsed_ms)
{
    const char *argv[] = {pk_test_self(), "--helper", "fake-worker", mode, NULL};
    pkb_remote_spec spec = {.name = "fake", .description = "a fake worker", .argv = argv};
    pkb_workload w = small();
    void *state = NULL;
    int64_t t0 = pk_test_now_ms();
    why[0] = '\0';
    int rc = pkb_remote_prepare(&spec, &state, &w, why, cap);
    for (int i = 0; rc == 0 && i < runs; i++) {
        pkb_sample out;
        memset(&out, 0, sizeof out);
        out.batch = 3;
        rc = pkb_remote_run(state, &w, &out);
        if (rc != 0)
            snprintf(why, cap, "%s", out.error);
        else
            ASSERT_EQ(out.iterations, 3);
    }
    if (elapsed_ms != NULL)
        *elapsed_ms = pk_test_now_ms() - t0;
    pkb_remote_teardown(state);
    pkb_workload_free(&w);
    return rc;
}

TEST_IMPL(worker_good_run_is_self_timed)
{
    char why[400];
    const char *argv[] = {pk_test_self(), "--helper", "fake-worker", "good", NULL};
    pkb_remote_spec spec = {.name = "fake", .description = "a fake worker", .argv = argv};
    pkb_workload w = small();
    void *state = NULL;
    ASSERT_OK(pkb_remote_prepare(&spec, &state, &w, why, sizeof why));
    ASSERT_STR_EQ(pkb_remote_runtime(state), "fake-1");
    pkb_sample out;
    memset(&out, 0, sizeof out);
    out.batch = 4;
    ASSERT_OK(pkb_remote_run(state, &w, &out));
    ASSERT(out.self_timed);
    ASSERT_EQ(out.iterations, 4);
    ASSERT_EQ(out.wall_ns, 4 * 2000000);
    ASSERT_EQ(out.child_cpu_ns, 4 * 500000);
    ASSERT_EQ(out.self_cpu_ns, 4 * 100000);
    ASSERT_EQ(out.bytes, 4 * 32);
    ASSERT_EQ(out.lines, 4 * 3);
    ASSERT_EQ(out.children, 4);
    ASSERT_EQ(out.peak_rss_kib, 4321);
    ASSERT_EQ(out.peak_fds, 7);
    ASSERT_EQ(out.idle_fds, 5);
    /* The check every contender passes before it is timed: one iteration, exact counts. */
    const pkb_contender c = {.name = "fake", .run = pkb_remote_run};
    ASSERT_OK(pkb_check_contender(&c, state, &w, why, sizeof why));
    pkb_remote_teardown(state);
    pkb_workload_free(&w);
}

TEST_IMPL(worker_failures_name_the_contender)
{
    /* PKBENCH_WORKER_DEADLINE_MS is each request's base deadline: a hang costs that long. */
    char deadline[32];
    scaled_ms(1000, deadline, sizeof deadline);
    setenv("PKBENCH_WORKER_DEADLINE_MS", deadline, 1);
    char why[400];
    static const struct {
        const char *mode;
        int runs;
        const char *want; /* in the reason, after "fake: " */
    } cases[] = {
        {"die-greeting", 1, "the worker exited with status 3 before sending the greeting"},
        {"silent", 1, "the greeting did not come within"},
        {"garbage-greeting", 1, "the worker's greeting is not \"pkw 1 ...\": \"hello world\""},
        {"version-2", 1, "the worker speaks protocol 2, this pkbench 1"},
        {"wrong-name", 1, "the worker says it is \"other\""},
        {"setup-error", 1, "the worker failed `setup`: no such program: cat"},
        {"die-run", 1, "the worker exited with status 101 before sending the answer to `run 3`"},
        {"die-run-later", 2, "the worker exited with status 101 before sending the answer"},
        {"hang-run", 1, "the answer to `run 3` did not come within"},
        {"garbage-run", 1, "unexpected answer to `run 3`: \"all went well\""},
        {"fields-run", 1, "the answer to `run 3` lacks a field or has one that is not a count"},
        {"iterations-run", 1, "asked for 3 iterations, the worker reports 4"},
        {"count-run", 1, "the worker reports 3 iterations reading 95 bytes / 9 lines"},
        {"long-line", 1, "the answer to `run 3` is a line longer than 4096 bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t ms;
        int rc = drive(cases[i].mode, cases[i].runs, why, sizeof why, &ms);
        printf("# %-16s %5lld ms  %s\n", cases[i].mode, (long long)ms, why);
        if (rc == 0)
            pk_test_fail(__FILE__, __LINE__, "mode %s: no failure", cases[i].mode);
        if (strncmp(why, "fake: ", 6) != 0)
            pk_test_fail(__FILE__, __LINE__, "mode %s: \"%s\" does not name the contender",
                         cases[i].mode, why);
        EXPECT_IN(why, cases[i].want);
        /* A hang costs the deadline (plus the allowance per iteration of a run), no more. */
        ASSERT_LT(ms, scaled_ms(1000, NULL, 0) + 3000 + 5000);
    }
    /* A worker whose stderr ended is still waited for by sleeping, not by spinning on it. */
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    int64_t waited;
    ASSERT_NE(drive("close-stderr-hang", 1, why, sizeof why, &waited), 0);
    getrusage(RUSAGE_SELF, &r1);
    EXPECT_IN(why, "the answer to `run 3` did not come within");
    double cpu_ms = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec + r1.ru_stime.tv_sec -
                             r0.ru_stime.tv_sec) *
                        1e3 +
                    (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec + r1.ru_stime.tv_usec -
                             r0.ru_stime.tv_usec) /
                        1e3;
    if (cpu_ms > 0.5 * (double)waited)
        pk_test_fail(__FILE__, __LINE__, "waiting %lld ms took %.0f ms of CPU", (long long)waited,
                     cpu_ms);
    /* A hung worker is killed with its children. */
    char hung[400];
    ASSERT_NE(drive("hang-with-child", 1, hung, sizeof hung, NULL), 0);
    const char *at = strstr(hung, "(its stderr: \"child ");
    ASSERT(at != NULL);
    int pid = atoi(at + strlen("(its stderr: \"child "));
    ASSERT_GT(pid, 0);
    if (!pk_test_wait_dead(pid, 5000))
        pk_test_fail(__FILE__, __LINE__, "the hung worker's child %d outlived it", pid);
    /* What the worker said on stderr is quoted. */
    ASSERT_NE(drive("die-run", 1, why, sizeof why, NULL), 0);
    EXPECT_IN(why, "(its stderr: \"fake worker: panic: boom\")");
}

TEST_IMPL(worker_missing_program_is_not_run)
{
    char why[400];
    const char *built[] = {"/nonexistent-pk/workers/rust_std", NULL};
    pkb_remote_spec spec = {.name = "rust_std", .argv = built, .package = "cargo"};
    pkb_workload w = small();
    void *state = NULL;
    ASSERT_EQ(pkb_remote_prepare(&spec, &state, &w, why, sizeof why), -ENOENT);
    EXPECT_IN(why, "rust_std: not run: /nonexistent-pk/workers/rust_std was not built");
    EXPECT_IN(why, "Debian package cargo");
    const char *interp[] = {"/nonexistent-pk/python3", "/x/worker.py", NULL};
    spec = (pkb_remote_spec){
        .name = "python_x", .argv = interp, .script = "/x/worker.py", .package = "python3"};
    ASSERT_EQ(pkb_remote_prepare(&spec, &state, &w, why, sizeof why), -ENOENT);
    EXPECT_IN(why, "python_x: not run: /nonexistent-pk/python3 is not installed (Debian package "
                   "python3)");
    const char *bare[] = {"pk-no-such-node", "/x/worker.js", NULL};
    spec = (pkb_remote_spec){
        .name = "node_x", .argv = bare, .script = "/x/worker.js", .package = "nodejs"};
    ASSERT_NE(pkb_remote_prepare(&spec, &state, &w, why, sizeof why), 0);
    EXPECT_IN(why, "node_x: not run: pk-no-such-node is not installed (Debian package nodejs)");
    /* A worker that lacks a kind refuses that scenario by name. */
    const char *only[] = {pk_test_self(), "--helper", "fake-worker", "only-capture", NULL};
    spec = (pkb_remote_spec){.name = "fake", .argv = only};
    char *cat;
    ASSERT_OK(pk_resolve_program("cat", NULL, &cat, NULL));
    pkb_workload fan;
    ASSERT_OK(pkb_workload_build(PKB_CONCURRENT_FAN_OUT, cat, NULL, &fan));
    ASSERT_EQ(pkb_remote_prepare(&spec, &state, &fan, why, sizeof why), -ENOTSUP);
    EXPECT_IN(why, "fake: the worker does not do fan_out (its kinds: capture)");
    pkb_workload_free(&fan);
    free(cat);
    pkb_workload_free(&w);
}

/* A fan-out's setup runs one fan-out, so its time is the first iteration the client sees: the
 * first `run` may take ten times it. Before, it got the base deadline plus 1 s, and the check's
 * `run 1` of 4096 children missed 30 s on a loaded machine (reports/notes/
 * 2026-12-05-fan-out-at-scale.md). Here the setup takes 0.4 s and an iteration 2.5 s, past the
 * 1 s base deadline plus 1 s. */
TEST_IMPL(worker_fan_out_setup_paces_the_first_run)
{
    setenv("PKBENCH_WORKER_DEADLINE_MS", "1000", 1);
    const char *argv[] = {pk_test_self(), "--helper", "fake-worker", "slow-fan", NULL};
    pkb_worker *w;
    char why[400];
    ASSERT_OK(
        pkb_worker_start(&(pkb_worker_options){.name = "fake", .argv = argv}, &w, why, sizeof why));
    pkb_workload fan = small();
    fan.children = 16;
    int rc = pkb_worker_setup(w,
                              &(pkb_worker_series){.contender = "fake",
                                                   .scenario = "concurrent_fan_out",
                                                   .kind = "fan_out",
                                                   .program = "cat",
                                                   .program_path = "/bin/cat",
                                                   .children = fan.children,
                                                   .expect_bytes = fan.expect_bytes,
                                                   .expect_lines = fan.expect_lines},
                              why, sizeof why);
    if (rc != 0)
        pk_test_fail(__FILE__, __LINE__, "setup: %s", why);
    pkb_sample out;
    memset(&out, 0, sizeof out);
    rc = pkb_worker_run(w, 1, &out);
    if (rc != 0)
        pk_test_fail(__FILE__, __LINE__, "the first run 1 of 2.5 s: %s", out.error);
    ASSERT_EQ(out.wall_ns, 2500000000ull);
    pkb_worker_stop(w, NULL, 0);
    pkb_workload_free(&fan);
}

TEST_IMPL(worker_stop_kills_one_that_ignores_quit)
{
    char deadline[32];
    int ms = scaled_ms(500, deadline, sizeof deadline);
    setenv("PKBENCH_WORKER_DEADLINE_MS", deadline, 1);
    const char *argv[] = {pk_test_self(), "--helper", "fake-worker", "ignore-quit", NULL};
    pkb_worker *w;
    char why[400];
    ASSERT_OK(
        pkb_worker_start(&(pkb_worker_options){.name = "fake", .argv = argv}, &w, why, sizeof why));
    ASSERT_STR_EQ(pkb_worker_greeting(w)->runtime, "fake-1");
    int64_t t0 = pk_test_now_ms();
    ASSERT_EQ(pkb_worker_stop(w, why, sizeof why), -ETIMEDOUT);
    char want[96];
    snprintf(want, sizeof want, "fake: did not exit within %.1f s of `quit`; killed", ms / 1e3);
    EXPECT_IN(why, want);
    ASSERT_LT(pk_test_now_ms() - t0, ms + 5000);
}

/* ---- the runner's self-timed samples -----------------------------------------------------------
 */

struct timed_fake {
    uint32_t largest_batch;
    bool overreach; /* report one iteration more than allowed */
};

/* Reports 2 ms per iteration of its own clock and returns at once: a runner that timed the call
 * itself would record microseconds. */
static int self_timed_iterate(void *ctx, pkb_sample *out)
{
    struct timed_fake *f = ctx;
    uint32_t k = out->batch > 0 ? out->batch : 1;
    if (k > f->largest_batch)
        f->largest_batch = k;
    out->iterations = k + (f->overreach ? 1 : 0);
    out->self_timed = true;
    out->wall_ns = 2000000ull * k;
    out->child_cpu_ns = 500000ull * k;
    out->self_cpu_ns = 100000ull * k;
    out->peak_rss_kib = 777;
    out->peak_fds = 40;
    out->idle_fds = 8;
    out->bytes = 32ull * out->iterations;
    out->lines = 3ull * out->iterations;
    out->children = (int)out->iterations;
    return 0;
}

/* An in-process iteration of about 0.2 ms, timed by the runner. */
static int in_process_iterate(void *ctx, pkb_sample *out)
{
    (void)ctx;
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 200000};
    while (nanosleep(&ts, &ts) != 0)
        ;
    out->bytes = 32;
    out->lines = 3;
    out->children = 1;
    return 0;
}

static json_t *series_named(json_t *doc, const char *name)
{
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(doc, "series"), i, s)
    {
        if (strcmp(json_string_value(json_object_get(s, "name")), name) == 0)
            return s;
    }
    pk_test_fail(__FILE__, __LINE__, "no series %s", name);
}

static void run_self_timed(bool interleave)
{
    char path[512];
    snprintf(path, sizeof path, "%s/self-timed-%d.json", pk_test_tmpdir(), interleave);
    static const pkb_profile prof = {"quick", 6, 0.0, 0.02, 0.0, 0.0};
    struct timed_fake fake = {0}, over = {.overreach = true};
    pkb_series s[3] = {
        {.name = "x/self",
         .scenario = "x",
         .contender = "self",
         .iterate = self_timed_iterate,
         .ctx = &fake},
        {.name = "x/in_process",
         .scenario = "x",
         .contender = "in_process",
         .iterate = in_process_iterate},
        {.name = "x/overreach",
         .scenario = "x",
         .contender = "overreach",
         .iterate = self_timed_iterate,
         .ctx = &over},
    };
    for (int i = 0; i < 3; i++) {
        s[i].unit = "runs/s";
        s[i].work_per_iteration = 1;
        s[i].check_counts = true;
        s[i].expect_bytes = 32;
        s[i].expect_lines = 3;
        s[i].expect_children = 1;
    }
    char *argv[] = {"pk_tests", NULL};
    pkb_suite_options opts = {.suite = "scenarios",
                              .profile = &prof,
                              .out_path = path,
                              .argc = 1,
                              .argv = argv,
                              .interleave = interleave,
                              .settle_s = interleave ? 0.005 : 0};
    ASSERT_EQ(pkb_run_series(s, 3, &opts), 0);
    /* The runner let the call perform a batch (Google Benchmark sizes them to 20 ms: about 10
     * of these 2 ms iterations). */
    ASSERT_GT(fake.largest_batch, 1);
    json_error_t err;
    json_t *doc = json_load_file(path, 0, &err);
    ASSERT(doc != NULL);
    json_t *self = series_named(doc, "x/self");
    ASSERT_STR_EQ(json_string_value(json_object_get(self, "status")), "measured");
    ASSERT(json_is_true(json_object_get(self, "self_timed")));
    ASSERT_EQ(json_integer_value(json_object_get(self, "peak_rss_kib")), 777);
    ASSERT_EQ(json_integer_value(json_object_get(self, "peak_fds")), 40);
    ASSERT_EQ(json_integer_value(json_object_get(self, "idle_fds")), 8);
    json_t *samples = json_object_get(self, "samples_ns");
    ASSERT_GE(json_array_size(samples), 6);
    for (size_t i = 0; i < json_array_size(samples); i++) {
        /* Per iteration: the worker's 2 ms, its children's 0.5 ms and its own 0.1 ms of CPU. */
        double ns = json_number_value(json_array_get(samples, i));
        double child = json_number_value(json_array_get(json_object_get(self, "child_cpu_ns"), i));
        double parent =
            json_number_value(json_array_get(json_object_get(self, "parent_cpu_ns"), i));
        if (ns < 1999999 || ns > 2000001 || child < 499999 || child > 500001 || parent < 99999 ||
            parent > 100001)
            pk_test_fail(__FILE__, __LINE__, "sample %zu: %.0f ns, child %.0f, parent %.0f", i, ns,
                         child, parent);
        ASSERT_GT(json_integer_value(json_array_get(json_object_get(self, "iterations"), i)), 1);
    }
    /* An in-process series is timed by the runner as before (its clock saw the sleep), and not
     * marked. */
    json_t *own = series_named(doc, "x/in_process");
    ASSERT(json_object_get(own, "self_timed") == NULL);
    ASSERT_GE(json_number_value(json_array_get(json_object_get(own, "samples_ns"), 0)), 200000);
    /* A call claiming more iterations than it was allowed fails its series. */
    json_t *bad = series_named(doc, "x/overreach");
    ASSERT_STR_EQ(json_string_value(json_object_get(bad, "status")), "failed");
    EXPECT_IN(json_string_value(json_object_get(bad, "reason")), "performed, at most");
    json_decref(doc);
    for (int i = 0; i < 3; i++)
        pkb_series_free(&s[i]);
}

TEST_IMPL(runner_records_self_timed_samples)
{
    run_self_timed(true);
    run_self_timed(false);
}

/* ---- through pkbench: the run goes on ------------------------------------------------------ */

static int pkbench(const char *const *args, pk_result *r)
{
    const char *argv[40] = {PK_PKBENCH_PATH};
    int n = 1;
    for (; args[n - 1] != NULL && n < 39; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    char deadline[64] = "PKBENCH_WORKER_DEADLINE_MS=";
    scaled_ms(1000, deadline + strlen(deadline), sizeof deadline - strlen(deadline));
    const char *const env[] = {deadline, NULL};
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .env = {.set = env}, .timeout_ms = 120000}, r));
    if (r->outcome.kind != PK_OUTCOME_EXITED)
        pk_test_fail(__FILE__, __LINE__, "pkbench %s ended %s (signal %d): %.2000s", args[0],
                     pk_outcome_kind_name(r->outcome.kind), r->outcome.signo,
                     r->err.data != NULL ? r->err.data : "");
    return r->outcome.code;
}
#define PKBENCH(r, ...) pkbench((const char *const[]){__VA_ARGS__, NULL}, r)

TEST_IMPL(pkbench_worker_failures_and_the_run_goes_on)
{
    if (PK_PKBENCH_PATH[0] == '\0')
        pk_test_skip_gate("build", "pkbench is built only with PK_BUILD_BENCH");
    pk_test_need_jsonschema();
    char out[512], w[6][640];
    snprintf(out, sizeof out, "%s/workers.json", pk_test_tmpdir());
    static const char *const modes[6][2] = {
        {"fake_dies", "die-greeting"},   {"fake_hangs", "hang-run"},
        {"fake_garbage", "garbage-run"}, {"fake_count", "count-run"},
        {"fake_later", "die-run-later"}, {"fake_good", "good"}};
    for (int i = 0; i < 6; i++)
        snprintf(w[i], sizeof w[i], "%s=%s --helper fake-worker %s %s", modes[i][0], pk_test_self(),
                 modes[i][1], modes[i][0]);
    pk_result r;
    int code = PKBENCH(&r, "run", "--filter", "^spawn_capture_small/(posix_spawn|fake_.*)$",
                       "--repetitions", "6", "--no-prime", "--settle", "0", "--out", out,
                       "--worker", w[0], "--worker", w[1], "--worker", w[2], "--worker", w[3],
                       "--worker", w[4], "--worker", w[5]);
    const char *err = r.err.data != NULL ? r.err.data : "";
    /* The run goes on, then exits 4 (a series not measured), its last line naming them. */
    if (code != 4)
        pk_test_fail(__FILE__, __LINE__, "pkbench exited %d (want 4): %s", code, err);
    EXPECT_IN(err, "series not measured: spawn_capture_small/fake_hangs (refused: fake_hangs: ");
    EXPECT_IN(err, "spawn_capture_small/fake_later (failed: iteration failed: fake_later: ");
    /* Each refusal names the series and the contender, and says what the worker did. */
    EXPECT_IN(err, "refusing to time spawn_capture_small/fake_dies: fake_dies: the worker exited "
                   "with status 3 before sending the greeting (its stderr: \"fake worker: "
                   "cannot start\")");
    EXPECT_IN(err, "refusing to time spawn_capture_small/fake_hangs: fake_hangs: the answer to "
                   "`run 1` did not come within");
    EXPECT_IN(err, "refusing to time spawn_capture_small/fake_garbage: fake_garbage: unexpected "
                   "answer to `run 1`: \"all went well\"");
    EXPECT_IN(err, "refusing to time spawn_capture_small/fake_count: fake_count: the worker "
                   "reports 1 iteration reading 31 bytes");
    pk_test_validate_results(out);
    json_error_t jerr;
    json_t *doc = json_load_file(out, 0, &jerr);
    ASSERT(doc != NULL);
    /* The run went on: the baseline and the good worker were measured. */
    ASSERT_STR_EQ(json_string_value(json_object_get(
                      series_named(doc, "spawn_capture_small/posix_spawn"), "status")),
                  "measured");
    json_t *good = series_named(doc, "spawn_capture_small/fake_good");
    ASSERT_STR_EQ(json_string_value(json_object_get(good, "status")), "measured");
    ASSERT_STR_EQ(json_string_value(json_object_get(good, "runtime")), "fake-1");
    ASSERT(json_is_true(json_object_get(good, "self_timed")));
    /* One that passed the check and died while timed failed, with its reason. */
    json_t *later = series_named(doc, "spawn_capture_small/fake_later");
    ASSERT_STR_EQ(json_string_value(json_object_get(later, "status")), "failed");
    EXPECT_IN(json_string_value(json_object_get(later, "reason")),
              "fake_later: the worker exited with status 101 before sending the answer to `run");
    json_t *dies = series_named(doc, "spawn_capture_small/fake_dies");
    ASSERT_STR_EQ(json_string_value(json_object_get(dies, "status")), "refused");
    json_decref(doc);
    pk_result_release(&r);
}

/* The seconds of the time left that the line starting with `prefix` gives ("... ETA 1m05s"). */
static double eta_after(const char *err, const char *prefix)
{
    const char *at = strstr(err, prefix), *eta = at != NULL ? strstr(at, "  ETA ") : NULL;
    unsigned a = 0, b = 0;
    char u1 = 0, u2 = 0;
    int n = eta != NULL ? sscanf(eta + 6, "%u%c%u%c", &a, &u1, &b, &u2) : 0;
    if (n >= 2 && u1 == 's')
        return a;
    if (n == 4 && u1 == 'm' && u2 == 's')
        return a * 60.0 + b;
    pk_test_fail(__FILE__, __LINE__, "no time left after \"%s\" in: %s", prefix, err);
}

/* The time left at round 1 comes from the calibration's time per iteration, so a series whose
 * iterations outlast min_time many times over (the fan-out at scale's, 13-29 s against 0.25 s) is
 * not announced as minutes when it takes an hour (the run of reports/notes/
 * 2026-12-05-fan-out-at-scale.md was taken for a stall). A worker of 250 ms an iteration, in
 * rounds of about 0.5 s with its settling: round 1's estimate, from the calibration, is near
 * round 2's, from round 1's pace (from min_time it was 0.06 s a round: "0s"). */
TEST_IMPL(pkbench_rounds_eta_from_the_calibration)
{
    if (PK_PKBENCH_PATH[0] == '\0')
        pk_test_skip_gate("build", "pkbench is built only with PK_BUILD_BENCH");
    char out[512], w[640];
    snprintf(out, sizeof out, "%s/eta.json", pk_test_tmpdir());
    snprintf(w, sizeof w, "slow=%s --helper fake-worker slow slow", pk_test_self());
    pk_result r;
    int code = PKBENCH(&r, "run", "--profile", "quick", "--filter", "^spawn_capture_small/slow$",
                       "--repetitions", "6", "--no-prime", "--settle", "0.01", "--out", out,
                       "--worker", w);
    const char *err = r.err.data != NULL ? r.err.data : "";
    printf("# stderr:\n%s", err);
    if (code != 0)
        pk_test_fail(__FILE__, __LINE__, "pkbench exited %d: %s", code, err);
    double first = eta_after(err, "pkbench: round 1/6 "),
           second = eta_after(err, "pkbench: round 2/6 ");
    /* 6 rounds left against 5, each about 0.5 s: about 3 s against 2.5 s */
    ASSERT_GE(first, 2);
    ASSERT_GE(first, 0.6 * second);
    pk_result_release(&r);
}

TEST_IMPL(pkbench_worker_option_errors)
{
    if (PK_PKBENCH_PATH[0] == '\0')
        pk_test_skip_gate("build", "pkbench is built only with PK_BUILD_BENCH");
    static const struct {
        const char *args[4];
        const char *want;
    } cases[] = {
        {{"--worker", "Bad-Name=x"}, "--worker 'Bad-Name=x': expected NAME=COMMAND"},
        {{"--worker", "nameonly"}, "--worker 'nameonly': expected NAME=COMMAND"},
        {{"--worker", "empty= "}, "--worker 'empty= ': COMMAND is empty"},
        {{"--worker", "posix_spawn=x"}, "posix_spawn is a contender already"},
        {{"--worker", "a=x", "--worker", "a=y"}, "a is given twice"},
        {{"--suite", "phases", "--worker", "a=x"}, "it applies to the scenarios suite"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pk_result r;
        const char *const *a = cases[i].args;
        int code = a[2] != NULL ? PKBENCH(&r, "run", a[0], a[1], a[2], a[3])
                                : PKBENCH(&r, "run", a[0], a[1]);
        ASSERT_EQ(code, 1);
        EXPECT_IN(r.err.data != NULL ? r.err.data : "", cases[i].want);
        pk_result_release(&r);
    }
}
