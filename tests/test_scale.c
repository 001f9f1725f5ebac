/*
 * The fan-out at scale (issue 36): what keeps pk_loop's cost per child flat as thousands of runs
 * are in flight, and the harness side that measures it.
 *
 *   - the library: a loop's child copies only the low part of our descriptor table, however many
 *     descriptors we hold (lowfd.linux.c), and still sees nothing but 0..2; a leaf holder copies
 *     none of them either; a run in flight keeps at most four descriptors, an idle pooled leaf two;
 *   - the contract and the contenders: every fan-out contender runs any N (the raw baseline's
 *     threads past its old 64) and counts its descriptors with all its children in flight;
 *   - the C measuring worker (`pkbench worker`, contenders/host.c) and its client
 *     (suites/scenarios/measure.posix.c): the protocol served, and a worker that dies, hangs or
 *     answers garbage named in the reason;
 *   - the report: the log-log slope computed right (common/fit.h), the section, tables, targets
 *     and figure rendered from a synthetic results file, and a real run at tiny N end to end.
 */
#define _GNU_SOURCE
#include "test.h"

#include "common/fit.h"
#include "contenders/registry.h"
#include "run/disturb.h"
#include "suites/scenarios/measure.h"
#include "suites/suite.h"
#include "synth.h"
#include "verdict_test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------------------------- */

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    ASSERT(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] >= '0' && e->d_name[0] <= '9';
    closedir(d);
    return n - 1; /* the listing's own */
}

/* Opens `n` descriptors on /dev/null, close-on-exec or not; their numbers into fds. */
static void open_many(int *fds, int n, bool cloexec)
{
    for (int i = 0; i < n; i++) {
        fds[i] = open("/dev/null", O_RDONLY | (cloexec ? O_CLOEXEC : 0));
        ASSERT_GE(fds[i], 0);
    }
}

static void close_many(const int *fds, int n)
{
    for (int i = 0; i < n; i++)
        close(fds[i]);
}

struct captured {
    char out[1024];
    int done, failed;
};

static void on_done(void *user, int rc, pk_result *res)
{
    struct captured *c = user;
    c->done++;
    if (rc != 0 || res->outcome.kind != PK_OUTCOME_EXITED || res->outcome.code != 0)
        c->failed++;
    if (res->out.data != NULL)
        snprintf(c->out, sizeof c->out, "%s", res->out.data);
    pk_result_release(res);
}

/* One run of argv in the loop, its stdout into c->out. */
static void loop_run(pk_loop *loop, const char *const *argv, struct captured *c)
{
    pk_result failure;
    ASSERT_OK(pk_loop_start(loop,
                            &(pk_command){.argv = argv,
                                          .in = {.kind = PK_STDIO_BYTES, .data = "x\n", .len = 2},
                                          .err.kind = PK_STDIO_INHERIT},
                            on_done, c, &failure));
    pk_result_release(&failure);
    ASSERT_OK(pk_loop_run(loop));
}

/* ---- the library --------------------------------------------------------------------------- */

TEST_IMPL(loop_child_copies_only_the_low_table)
{
    /* A descriptor the host leaked (not close-on-exec) below where the loop's slots will be, the
     * loop's first run (its slots taken now, low), then 600 more leaked descriptors: the next
     * child must get its pipes without a copy of the 600 — its table the kernel's smallest — and
     * must see none of ours, low or high. */
    int low_leak = open("/dev/null", O_RDONLY);
    ASSERT_GE(low_leak, 3);
    pk_loop *loop;
    ASSERT_OK(pk_loop_new(&loop));
    struct captured c = {0};
    loop_run(loop, HELPER("exit", "0"), &c);
    ASSERT_EQ(c.failed, 0);
    int *many = malloc(600 * sizeof *many);
    ASSERT(many != NULL);
    open_many(many, 600, false);
    ASSERT_GT(many[599], 600);
    c = (struct captured){0};
    loop_run(loop, HELPER("fd-table"), &c);
    ASSERT_EQ(c.done, 1);
    ASSERT_EQ(c.failed, 0);
    long fdsize = strtol(c.out + strlen("FDSize "), NULL, 10);
    printf("# the loop's child: %s", c.out);
    ASSERT_EQ(strncmp(c.out, "FDSize ", 7), 0);
    ASSERT_LE(fdsize, 128); /* a copy of ours would be sized for descriptor 600 and more */
    ASSERT_STR_EQ(strchr(c.out, '\n') + 1, "0\n1\n2\n");
    /* Our table is as it was: the leaked descriptors still ours, and the loop runs again. */
    struct stat st;
    ASSERT_EQ(fstat(low_leak, &st), 0);
    ASSERT(S_ISCHR(st.st_mode));
    ASSERT_EQ(fstat(many[599], &st), 0);
    c = (struct captured){0};
    loop_run(loop, HELPER("echo-stdin"), &c);
    ASSERT_STR_EQ(c.out, "x\n");
    pk_loop_free(loop);
    close_many(many, 600);
    free(many);
    close(low_leak);
}

/* The first pid in a leaf's cgroup.procs, 0 when none. */
static int first_member(const char *leaf)
{
    char path[4400], line[64] = "";
    snprintf(path, sizeof path, "%s/cgroup.procs", leaf);
    FILE *f = fopen(path, "re");
    if (f != NULL && fgets(line, sizeof line, f) == NULL)
        line[0] = '\0';
    if (f != NULL)
        fclose(f);
    return atoi(line);
}

/* Our one leaf "pk-<pid>-*" into leaf; false when not exactly one. */
static bool our_leaf(char *leaf, size_t cap)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "pk-%d-", (int)getpid());
    const char *base = pk_test_cgroup_dir();
    DIR *d = base != NULL ? opendir(base) : NULL;
    if (d == NULL)
        return false;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && n++ == 0)
            snprintf(leaf, cap, "%s/%s", base, e->d_name);
    closedir(d);
    return n == 1;
}

static void run_true(void)
{
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("exit", "0")}, &r));
    ASSERT_EQ(r.containment, PK_CONTAIN_CGROUP);
    ASSERT_EXITED(r, 0);
    pk_result_release(&r);
}

TEST_IMPL(holder_copies_only_the_low_table)
{
    /* A leaf's holder starts at its second lend, maybe with thousands of our descriptors open: it
     * must neither copy them (time) nor keep a table sized for them (kernel memory per leaf). */
    pk_test_need_cgroup();
    pk_cleanup();
    run_true(); /* the first leaf: the holders' pipe is made now, low */
    int *many = malloc(600 * sizeof *many);
    ASSERT(many != NULL);
    open_many(many, 600, true);
    run_true(); /* lent again: held */
    char leaf[4200];
    ASSERT(our_leaf(leaf, sizeof leaf));
    int holder = first_member(leaf);
    ASSERT_GT(holder, 0);
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", holder);
    long fdsize = -1;
    FILE *f = fopen(path, "re");
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "FDSize:", 7) == 0)
            fdsize = strtol(line + 7, NULL, 10);
    if (f != NULL)
        fclose(f);
    printf("# the holder's FDSize: %ld\n", fdsize);
    ASSERT_GT(fdsize, 0);
    ASSERT_LE(fdsize, 128);
    /* It keeps exactly one descriptor, its pipe's read end. */
    snprintf(path, sizeof path, "/proc/%d/fd", holder);
    DIR *d = opendir(path);
    ASSERT(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] >= '0' && e->d_name[0] <= '9';
    closedir(d);
    ASSERT_EQ(n, 1);
    close_many(many, 600);
    free(many);
    pk_cleanup();
}

/* Starts n runs of `cat` in the loop (none reaped yet) and returns the descriptors we then hold
 * beyond `before`; runs them to their end. */
static int fds_with_all_started(pk_loop *loop, int n, int before, struct captured *c)
{
    for (int i = 0; i < n; i++) {
        pk_result failure;
        ASSERT_OK(
            pk_loop_start(loop,
                          &(pk_command){.argv = HELPER("echo-stdin"),
                                        .in = {.kind = PK_STDIO_BYTES, .data = "x\n", .len = 2},
                                        .err.kind = PK_STDIO_INHERIT},
                          on_done, c, &failure));
        pk_result_release(&failure);
    }
    int held = count_fds() - before;
    ASSERT_OK(pk_loop_run(loop));
    return held;
}

TEST_IMPL(loop_run_in_flight_keeps_four_descriptors)
{
    /* Per run in flight: its stdout pipe, its pidfd, and its leaf's directory and one control
     * file (cgroup.events until the leaf is held, cgroup.procs after): four, so 4096 runs fit in
     * 20,000 descriptors. An idle pooled leaf keeps two. */
    pk_test_need_cgroup();
    pk_cleanup();
    enum { N = 48 };
    pk_loop *loop;
    ASSERT_OK(pk_loop_new(&loop));
    struct captured c = {0};
    loop_run(loop, HELPER("exit", "0"), &c); /* the loop's slots and the pool's first leaf */
    int base = count_fds();
    int first = fds_with_all_started(loop, N, base, &c); /* fresh leaves: not held */
    int idle = count_fds() - base;
    int second = fds_with_all_started(loop, N, count_fds(), &c); /* lent again: held */
    printf("# with %d runs in flight: %d then %d more descriptors; %d kept idle\n", N, first,
           second + idle, idle);
    ASSERT_EQ(c.failed, 0);
    ASSERT_LE(first, 4 * N);
    ASSERT_GE(first, 3 * N);
    ASSERT_LE(second + idle, 4 * N + 2); /* + the leaf of the loop's first run, idle then */
    ASSERT_LE(idle, 2 * N + 2);
    pk_loop_free(loop);
    pk_cleanup();
}

/* ---- the contenders ------------------------------------------------------------------------ */

static const pkb_contender *contender(const char *name)
{
    for (size_t k = 0; k < pkb_contender_count; k++)
        if (strcmp(pkb_contenders[k]->name, name) == 0)
            return pkb_contenders[k];
    pk_test_fail(__FILE__, __LINE__, "no contender %s", name);
    return NULL;
}

/* One contender's fan-out of 100, plain and counting (in a forked child: libuv and GLib keep
 * process-wide descriptors of their own after their first loop). */
static void fan_out_of_100(const pkb_contender *c, const char *cat)
{
    static const char payload[] = "processkit small \n0123456789\nab\n";
    {
        ASSERT(c->scenarios & PKB_SCENARIO_BIT(PKB_FAN_OUT_SCALE));
        pkb_workload w = {.scenario = PKB_FAN_OUT_SCALE,
                          .program = "cat",
                          .program_path = cat,
                          .input = (const unsigned char *)payload,
                          .input_len = 32,
                          .expect_bytes = 32,
                          .expect_lines = 3,
                          .children = 100};
        void *state = NULL;
        ASSERT_OK(c->setup != NULL ? c->setup(&state, &w) : 0);
        for (int counted = 0; counted < 2; counted++) {
            w.count_fds = counted;
            uint32_t before = pkb_count_fds();
            pkb_sample out;
            memset(&out, 0, sizeof out);
            int rc = c->run(state, &w, &out);
            printf("# %s, 100 children%s: rc %d, %d reaped, %llu bytes, peak fds %u (%u before)\n",
                   c->name, counted ? ", counting" : "", rc, out.children,
                   (unsigned long long)out.bytes, out.peak_fds, before);
            ASSERT_EQ(rc, 0);
            ASSERT_EQ(out.children, 100);
            ASSERT_EQ(out.failures, 0);
            ASSERT_EQ(out.bytes, 3200u);
            ASSERT_EQ(out.lines, 300u);
            if (counted)
                ASSERT_GE(out.peak_fds, before + 100);
            else
                ASSERT_EQ(out.peak_fds, 0u);
        }
        if (c->teardown != NULL)
            c->teardown(state);
    }
}

TEST_IMPL(fan_out_contenders_run_any_size_and_count_fds)
{
    /* 100 children (the raw baseline's threads stopped at 64 before), every count exact, and,
     * when asked, the descriptors open with all of them in flight: at least one per child more
     * than before. */
    char *cat = NULL;
    ASSERT_OK(pk_resolve_program("cat", NULL, &cat, NULL));
    static const char *const names[] = {"processkit", "posix_spawn", "libuv", "glib"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const pkb_contender *c = contender(names[i]);
        fflush(stdout);
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            fan_out_of_100(c, cat);
            pk_cleanup();
            fflush(stdout);
            _exit(0);
        }
        int status;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            pk_test_fail(__FILE__, __LINE__, "%s failed (wait status %#x), see above", c->name,
                         (unsigned)status);
    }
    free(cat);
}

TEST_IMPL(fan_out_scenario_names)
{
    int n = 0;
    ASSERT_EQ(pkb_scenario_parse("fan_out_4096", &n), PKB_FAN_OUT_SCALE);
    ASSERT_EQ(n, 4096);
    ASSERT_EQ(pkb_scenario_parse("concurrent_fan_out", &n), PKB_CONCURRENT_FAN_OUT);
    ASSERT_EQ(n, 16);
    ASSERT_EQ(pkb_scenario_parse("spawn_only", &n), PKB_SPAWN_ONLY);
    ASSERT_EQ(n, 1);
    static const char *const bad[] = {"fan_out",    "fan_out_",      "fan_out_0",  "fan_out_016",
                                      "fan_out_-4", "fan_out_65537", "fan_out_4x", "fan_outs_4"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ASSERT_EQ(pkb_scenario_parse(bad[i], &n), -1);
    char name[32];
    pkb_scenario_fan_out_name(256, name, sizeof name);
    ASSERT_STR_EQ(name, "fan_out_256");
    ASSERT(pkb_scenario_fans_out(PKB_FAN_OUT_SCALE));
    ASSERT(pkb_scenario_fans_out(PKB_CONCURRENT_FAN_OUT));
    ASSERT(!pkb_scenario_fans_out(PKB_SPAWN_CAPTURE_SMALL));
}

/* ---- the measuring worker and its client --------------------------------------------------- */

#ifdef PK_PKBENCH_PATH
/* Sends `requests` to `pkbench worker` and returns its stdout (malloc'd) and exit code. */
static char *worker_session(const char *requests, int *code)
{
    pk_result r;
    const char *const argv[] = {PK_PKBENCH_PATH, "worker", NULL};
    ASSERT_OK(pk_run(
        &(pk_command){.argv = argv,
                      .in = {.kind = PK_STDIO_BYTES, .data = requests, .len = strlen(requests)},
                      .timeout_ms = 60000},
        &r));
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_EXITED);
    *code = r.outcome.code;
    char *out = strdup(r.out.data != NULL ? r.out.data : "");
    pk_result_release(&r);
    return out;
}
#endif

TEST_IMPL(worker_serves_the_c_contenders)
{
#ifndef PK_PKBENCH_PATH
    pk_test_skip_gate("build", "pkbench is not built (PK_BUILD_BENCH off)");
#else
    char input[512];
    snprintf(input, sizeof input, "%s/input", pk_test_tmpdir());
    FILE *f = fopen(input, "we");
    ASSERT(f != NULL);
    fputs("processkit small \n0123456789\nab\n", f);
    fclose(f);
    char req[4096];
    snprintf(req, sizeof req,
             "run 1\n"
             "setup contender=no_such scenario=fan_out_8 kind=fan_out program=cat "
             "program_path=/bin/cat children=8 input_file=- input_bytes=0 expect_bytes=0 "
             "expect_lines=0\n"
             "setup contender=libuv scenario=fan_out_8 kind=stream program=cat "
             "program_path=/bin/cat children=8 input_file=- input_bytes=0 expect_bytes=0 "
             "expect_lines=0\n"
             "bogus%%zz\n"
             "setup contender=processkit scenario=fan_out_8 kind=fan_out program=cat "
             "program_path=/bin/cat children=8 input_file=%s input_bytes=32 expect_bytes=32 "
             "expect_lines=3\n"
             "run 3\n"
             "frobnicate\n"
             "teardown\n"
             "quit\n",
             input);
    int code;
    char *out = worker_session(req, &code);
    printf("# the worker said:\n%s", out);
    ASSERT_EQ(code, 0);
    char *line = strtok(out, "\n");
    ASSERT(line != NULL && strncmp(line, "pkw 1 name=pkbench runtime=c17-processkit-", 42) == 0);
    ASSERT(strstr(line, " kinds=capture,stream,fan_out,spawn_only ") != NULL);
    ASSERT(strstr(line, "contenders=processkit,") != NULL);
    ASSERT_STR_EQ(strtok(NULL, "\n"), "error run before setup");
    ASSERT_STR_EQ(strtok(NULL, "\n"), "error no contender 'no_such' here");
    ASSERT_STR_EQ(strtok(NULL, "\n"), "error kind 'stream' is not scenario fan_out_8's");
    line = strtok(NULL, "\n");
    ASSERT(line != NULL && strncmp(line, "error a request that is not one", 31) == 0);
    ASSERT_STR_EQ(strtok(NULL, "\n"), "ok");
    line = strtok(NULL, "\n");
    ASSERT(line != NULL && strncmp(line, "done 3 ns=", 10) == 0);
    ASSERT(strstr(line, " bytes=768 lines=72 children=24 failures=0 cpu_children_ns=") != NULL);
    const char *fds = strstr(line, " idle_fds=");
    ASSERT(fds != NULL && strstr(line, " peak_rss_kib=") != NULL);
    unsigned idle = 0, peak = 0;
    ASSERT_EQ(sscanf(fds, " idle_fds=%u peak_fds=%u", &idle, &peak), 2);
    ASSERT_GE(peak, idle + 8);
    ASSERT_STR_EQ(strtok(NULL, "\n"), "error unknown request 'frobnicate'");
    ASSERT_STR_EQ(strtok(NULL, "\n"), "ok");
    ASSERT(strtok(NULL, "\n") == NULL);
    free(out);
    unlink(input);
#endif
}

/* A fake worker: a shell script that does `body` whatever its arguments. */
static void fake_worker(char *path, size_t cap, const char *name, const char *body)
{
    snprintf(path, cap, "%s/%s", pk_test_tmpdir(), name);
    FILE *f = fopen(path, "we");
    ASSERT(f != NULL);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    ASSERT_EQ(chmod(path, 0755), 0);
}

TEST_IMPL(measure_client_names_a_failing_worker)
{
    /* Each failure is the series' reason, starting with the contender's name: a greeting of
     * another protocol, a worker that exits, one that never answers (killed at the deadline),
     * one that answers a run with garbage, or with an error. */
    setenv("PKBENCH_WORKER_DEADLINE_MS", "1500", 1);
    static const char payload[] = "0123456789abcdef0123456789abcde\n";
    pkb_workload w = {.scenario = PKB_FAN_OUT_SCALE,
                      .program = "cat",
                      .program_path = "/bin/cat",
                      .input = (const unsigned char *)payload,
                      .input_len = 32,
                      .expect_bytes = 32,
                      .expect_lines = 1,
                      .children = 2};
    const pkb_contender *c = contender("libuv");
    static const char hello[] = "echo 'pkw 1 name=pkbench runtime=x kinds=fan_out "
                                "contenders=processkit,libuv'; read l; echo ok; read l; ";
    static const struct {
        const char *name, *body, *want;
        bool at_start;
    } cases[] = {
        {"old", "echo 'pkw 0 name=libuv'", "libuv: the worker's greeting is not protocol 1", 1},
        {"other", "echo 'pkw 1 name=x contenders=processkit'; sleep 5",
         "libuv: the worker does not host this contender", 1},
        {"dies", "exit 3", "libuv: the worker exited 3 before it answered the greeting", 1},
        {"hangs", "sleep 30", "libuv: no answer to the greeting within 1500 ms: killed", 1},
        {"garbage", "echo 'done 1 nonsense'", "libuv: its done line lacks ns", 0},
        {"error", "echo 'error the cat ran away'", "libuv: the cat ran away", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[512], body[512], why[256] = "";
        snprintf(body, sizeof body, "%s%s", cases[i].at_start ? "" : hello, cases[i].body);
        fake_worker(path, sizeof path, cases[i].name, body);
        pkb__measure *m = NULL;
        int64_t t0 = pk_test_now_ms();
        int rc = pkb__measure_start(path, c, &w, &m, why, sizeof why);
        if (!cases[i].at_start && rc == 0) {
            pkb_sample out;
            memset(&out, 0, sizeof out);
            rc = pkb__measure_run(m, &out);
            snprintf(why, sizeof why, "%s", out.error);
            pkb__measure_stop(m);
        }
        printf("# %s: %s (%lld ms)\n", cases[i].name, why, (long long)(pk_test_now_ms() - t0));
        ASSERT_NE(rc, 0);
        ASSERT_EQ(strncmp(why, cases[i].want, strlen(cases[i].want)), 0);
        ASSERT_LT(pk_test_now_ms() - t0, 10000);
    }
    unsetenv("PKBENCH_WORKER_DEADLINE_MS");
}

TEST_IMPL(disturbance_counts_a_workers_cpu_as_own)
{
    /* A measuring worker's CPU, spent in a process pkbench does not reap during the stretch, is
     * the stretch's own work: once the caller adds it (worker_ns), it is no longer counted as
     * other processes' share of the machine. */
    pkb_disturb_mark m;
    pkb_disturb_begin(&m);
    pk_process *p;
    ASSERT_OK(
        pk_spawn(&(pk_command){.argv = HELPER("spin-cpu", "300"), .containment = PK_CONTAIN_NONE},
                 &p, NULL));
    siginfo_t si;
    memset(&si, 0, sizeof si);
    ASSERT_EQ(waitid(P_PID, (id_t)pk_process_pid(p), &si, WEXITED | WNOWAIT), 0);
    char path[64], stat[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pk_process_pid(p));
    FILE *f = fopen(path, "re");
    ASSERT(f != NULL && fgets(stat, sizeof stat, f) != NULL);
    fclose(f);
    unsigned long utime = 0, stime = 0;
    const char *after_comm = strrchr(stat, ')');
    ASSERT(after_comm != NULL);
    ASSERT_EQ(sscanf(after_comm + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
                     &stime),
              2);
    double spin_ns = (double)(utime + stime) * 1e9 / (double)sysconf(_SC_CLK_TCK);
    ASSERT_GE(spin_ns, 290e6);
    pkb_disturbance without, with;
    pkb_disturb_end(&m, &without);
    m.worker_ns = spin_ns;
    pkb_disturb_end(&m, &with);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double capacity = ((double)now.tv_sec * 1e9 + (double)now.tv_nsec - m.t_ns) *
                      (double)sysconf(_SC_NPROCESSORS_ONLN);
    printf("# others: %.3f counting the worker as other, %.3f as own; its share %.3f\n",
           without.others_cpu, with.others_cpu, spin_ns / capacity);
    ASSERT(without.others_cpu - with.others_cpu > 0.5 * spin_ns / capacity);
    pk_result r;
    ASSERT_OK(pk_process_wait(p, &r));
    pk_result_release(&r);
    pk_process_free(p);
}

/* ---- the report ---------------------------------------------------------------------------- */

TEST_IMPL(fit_loglog_known_power_laws)
{
    /* y = 3 · x^k exactly: the slope is k, the intercept ln 3, R² 1. */
    const double x[] = {16, 64, 256, 1024, 4096};
    const double ks[] = {0.0, 0.25, 1.0, -0.5};
    for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
        double y[5];
        for (int i = 0; i < 5; i++)
            y[i] = 3 * pow(x[i], ks[j]);
        pkb_fit f;
        ASSERT_OK(pkb_fit_loglog(x, y, 5, &f));
        ASSERT(fabs(f.slope - ks[j]) < 1e-12);
        ASSERT(fabs(f.intercept - log(3)) < 1e-12);
        ASSERT(fabs(f.r2 - 1) < 1e-12);
    }
    /* Noise around a slope of 0.5: the slope is the least-squares one of the logarithms. */
    const double noisy[] = {4.0, 8.5, 15.5, 33.0, 63.0};
    pkb_fit f;
    ASSERT_OK(pkb_fit_loglog(x, noisy, 5, &f));
    double lx[5], ly[5];
    for (int i = 0; i < 5; i++) {
        lx[i] = log(x[i]);
        ly[i] = log(noisy[i]);
    }
    pkb_fit g;
    ASSERT_OK(pkb_fit_linear(lx, ly, 5, &g));
    ASSERT(fabs(f.slope - g.slope) < 1e-12);
    ASSERT(f.r2 < 1.0);
    /* No logarithm of what is not positive; fewer than two points: nothing. */
    const double zero[] = {1, 0, 2, 3, 4};
    ASSERT_EQ(pkb_fit_loglog(x, zero, 5, &f), -EDOM);
    ASSERT_EQ(pkb_fit_loglog(zero, x, 5, &f), -EDOM);
    ASSERT_EQ(pkb_fit_loglog(x, x, 1, &f), -EINVAL);
}

/* The synthetic study: processkit flat at 100 µs per child, libuv growing as N^0.5 from 200 µs,
 * peak RSS 6000 KiB + 10 KiB per child (processkit) and + 4 (libuv), 4 and 2 descriptors per
 * child; 20 repetitions each, in rounds, ±1% around the median. */
static void synthetic_scale(const char *path)
{
    static const int sizes[] = {16, 64, 256, 1024, 4096};
    static const char *const who[] = {"processkit", "libuv"};
    pk_test_series series[10];
    double samples[10][20];
    char names[10][64];
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 5; k++) {
            int i = c * 5 + k;
            double per_child = c == 0 ? 100e3 : 200e3 * sqrt(sizes[k] / 16.0);
            for (int s = 0; s < 20; s++)
                samples[i][s] = per_child * sizes[k] * (1 + 0.01 * ((s * 7) % 5 - 2) / 2.0);
            snprintf(names[i], sizeof names[i], "fan_out_%d/%s", sizes[k], who[c]);
            series[i] = (pk_test_series){names[i], samples[i], 20, NULL};
        }
    json_t *doc = pk_test_results_doc(series, 10);
    json_object_set_new(doc, "suite", json_string("scenarios"));
    json_t *arr = json_object_get(doc, "series");
    for (int i = 0; i < 10; i++) {
        int c = i / 5, n = sizes[i % 5];
        json_t *s = json_array_get(arr, (size_t)i);
        json_t *rounds = json_array();
        for (int r = 1; r <= 20; r++)
            json_array_append_new(rounds, json_integer(r));
        json_object_set_new(s, "round", rounds);
        json_object_set_new(s, "unit", json_string("children/s"));
        json_object_set_new(s, "work_per_iteration", json_real(n));
        json_object_set_new(s, "fan_out",
                            json_pack("{s:i, s:i, s:i, s:i}", "children", n, "idle_fds", 10,
                                      "peak_fds", 10 + (c == 0 ? 4 : 2) * n, "peak_rss_kib",
                                      6000 + (c == 0 ? 10 : 4) * n));
    }
    pk_test_write_doc(doc, path);
}

TEST_IMPL(scale_report_from_a_synthetic_file)
{
    char path[512], dir[512];
    snprintf(path, sizeof path, "%s/scale.json", pk_test_tmpdir());
    snprintf(dir, sizeof dir, "%s/report", pk_test_tmpdir());
    synthetic_scale(path);
    char err[512] = "";
    pkb_report_options opts = {.no_plots = true};
    int rc = pkb_report_render(path, dir, &opts, err, sizeof err);
    if (rc != 0)
        printf("# %s\n", err);
    ASSERT_OK(rc);
    char md[700];
    snprintf(md, sizeof md, "%s/scale.md", dir);
    char *text = pk_test_slurp(md);
    const char *sec = strstr(text, "## Fan-out at scale");
    ASSERT(sec != NULL);
    ASSERT(strstr(sec, "at N = 16, 64, 256, 1024 and 4096") != NULL);
    /* Time per child, the slopes (0 and 0.5 exactly), R² and the growth. */
    ASSERT(strstr(sec, "| `processkit` | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 | +0.000 | ") !=
           NULL);
    ASSERT(strstr(sec, "| `libuv` | 200.0 | 400.0 | 800.0 | 1,600 | 3,200 | +0.500 | 1.000 | "
                       "16.00× |") != NULL);
    /* processkit / libuv per N, memory and descriptors per child. */
    ASSERT(strstr(sec, "| `libuv` | 0.50× [") != NULL);
    ASSERT(strstr(sec, "| `processkit` | 10.0 (R² 1.000) | 4.00 | N = 4096: 45.9 MiB, 16394 "
                       "descriptors (10 before) |") != NULL);
    ASSERT(strstr(sec, "| `libuv` | 4.0 (R² 1.000) | 2.00 |") != NULL);
    /* The targets: flat (1.00× within 1.25×), ahead of libuv at 256, 1024 and 4096, 10 KiB. */
    ASSERT(strstr(sec, "within 1.25× of the smallest (N = 4096 against N = 16) | 1.000× [") !=
           NULL);
    ASSERT(strstr(sec, "| ahead in 3 of 3 pairs (ratios below) | met |") != NULL);
    ASSERT(strstr(sec, "| 10.0 KiB per child (slope of the peak RSS over 5 sizes, R² 1.000) | "
                       "met |") != NULL);
    /* The terminal view says the same. */
    pkb_buf term = {0};
    ASSERT_OK(pkb_report_print(path, false, &term, err, sizeof err));
    const char *scale_term = strstr(term.data, "fan-out at scale  (time per child");
    ASSERT(scale_term != NULL);
    EXPECT_ROW(scale_term, "processkit", "100.0", "100.0", "100.0", "100.0", "100.0", "+0.000",
               "1.00×", "10.0", "4.00");
    EXPECT_ROW(scale_term, "libuv", "200.0", "400.0", "800.0", "1,600", "3,200", "+0.500", "16.00×",
               "4.0", "2.00");
    pkb_buf_free(&term);
    free(text);
}

TEST_IMPL(scale_figure_from_a_synthetic_file)
{
    /* The figure's data is the table's: a block per contender, N and time per child. */
    if (access("/usr/bin/gnuplot", X_OK) != 0)
        pk_test_skip_gate("package:gnuplot-nox", "gnuplot is not installed");
    if (access("/usr/bin/python3", X_OK) != 0)
        pk_test_skip_gate("package:python3-matplotlib", "/usr/bin/python3 is not installed");
    char path[512], dir[512];
    snprintf(path, sizeof path, "%s/scale.json", pk_test_tmpdir());
    snprintf(dir, sizeof dir, "%s/report", pk_test_tmpdir());
    synthetic_scale(path);
    char err[512] = "";
    int rc = pkb_report_render(path, dir, &(pkb_report_options){0}, err, sizeof err);
    if (rc != 0)
        printf("# %s\n", err);
    ASSERT_OK(rc);
    char file[700];
    snprintf(file, sizeof file, "%s/scale-fan_out_scale.dat", dir);
    char *dat = pk_test_slurp(file);
    ASSERT(strstr(dat, "# block 0: processkit\n# N\tmedian\tfastest\tslowest\n16\t100\t") != NULL);
    ASSERT(strstr(dat, "# block 1: libuv\n# N\tmedian\tfastest\tslowest\n16\t200\t") != NULL);
    ASSERT(strstr(dat, "\n4096\t3200\t") != NULL);
    free(dat);
    static const char *const ext[] = {"gp", "py", "gnuplot.png", "gnuplot.svg", "matplotlib.png"};
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        struct stat st;
        snprintf(file, sizeof file, "%s/scale-fan_out_scale.%s", dir, ext[i]);
        ASSERT_EQ(stat(file, &st), 0);
        ASSERT_GT(st.st_size, 0);
    }
    snprintf(file, sizeof file, "%s/scale-fan_out_scale.gp", dir);
    char *gp = pk_test_slurp(file);
    ASSERT(strstr(gp, "title 'processkit (slope +0.000)'") != NULL);
    ASSERT(strstr(gp, "title 'libuv (slope +0.500)'") != NULL);
    ASSERT(strstr(gp, "set logscale xy") != NULL);
    free(gp);
}

TEST_IMPL(scale_run_at_tiny_n)
{
    pk_test_need_pkbench();
    pk_test_need_jsonschema();
    /* The whole path at N = 2 and 4: two contenders in measuring workers, timed in rounds,
     * written, valid against the schema, and the report's section rendered from it. */
    char out[512];
    snprintf(out, sizeof out, "%s/tiny.json", pk_test_tmpdir());
    pk_result r;
    int code = PK_TEST_PKBENCH(&r, "run", "--profile", "quick", "--no-prime", "--filter",
                               "^fan_out_[0-9]+/(processkit|posix_spawn)$", "--fan-out", "2,4",
                               "--repetitions", "6", "--settle", "0", "--out", out);
    if (code != 0)
        printf("%s%s", r.out.data ? r.out.data : "", r.err.data ? r.err.data : "");
    ASSERT_EQ(code, 0);
    ASSERT(r.out.data != NULL && strstr(r.out.data, "fan-out at scale") != NULL);
    pk_result_release(&r);
    ASSERT(pk_test_validate_results(out));
    json_error_t jerr;
    json_t *doc = json_load_file(out, 0, &jerr);
    ASSERT(doc != NULL);
    size_t i, seen = 0;
    json_t *s;
    json_array_foreach(json_object_get(doc, "series"), i, s)
    {
        const json_t *fo = json_object_get(s, "fan_out");
        ASSERT(fo != NULL);
        int n = (int)json_integer_value(json_object_get(fo, "children"));
        ASSERT(n == 2 || n == 4);
        ASSERT_STR_EQ(json_string_value(json_object_get(s, "status")), "measured");
        ASSERT_GT(json_integer_value(json_object_get(fo, "peak_rss_kib")), 1000);
        ASSERT_GE(json_integer_value(json_object_get(fo, "peak_fds")),
                  json_integer_value(json_object_get(fo, "idle_fds")) + n);
        /* Timed by the worker: its children's CPU is there, not pkbench's zero. */
        ASSERT_GT(json_number_value(json_array_get(json_object_get(s, "child_cpu_ns"), 0)), 0);
        seen++;
    }
    ASSERT_EQ(seen, 4u);
    json_decref(doc);
}
