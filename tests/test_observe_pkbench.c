/*
 * `pkbench run --suite observe` end to end, with short cells (PKBENCH_OBSERVE_CELL_MS) and one
 * cell of the grid (--filter):
 *
 *   - a run where every observer can run writes a complete, schema-valid file whose summary
 *     agrees with its series, and `pkbench report` renders it with all three figures;
 *   - without kernel BTF (PKBENCH_OBSERVE_BTF pointing nowhere: the probe's own gate) the eBPF
 *     observers and iter_poller are refused with the reason, printed as SKIP, and the file is
 *     still valid with the others measured;
 *   - as an unprivileged user (nobody) the same, for lack of bpf() rights, the pollers running
 *     in a user namespace of their own;
 *   - Ctrl-C after the first repetition keeps it: exit 130, a valid file marked incomplete.
 */
#define _GNU_SOURCE
#include "test.h"

#include "suites/suite.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif
#ifndef PK_CHURN_PATH
#define PK_CHURN_PATH ""
#endif
#ifndef PK_TINY_PATH
#define PK_TINY_PATH ""
#endif

static void need_pkbench(void)
{
    if (PK_PKBENCH_PATH[0] == '\0' || PK_CHURN_PATH[0] == '\0')
        pk_test_skip("pkbench and pk_churn are built only with PK_BUILD_BENCH");
}

/* Runs pkbench with extra environment entries; returns its exit code, stderr in r->err. */
static int pkbench(const char *const *argv, const char *const *env, pk_result *r)
{
    ASSERT_OK(pk_run(&(pk_command){.argv = argv,
                                   .env.set = env,
                                   .out.kind = PK_STDIO_CAPTURE,
                                   .err.kind = PK_STDIO_CAPTURE,
                                   .timeout_ms = 120000},
                     r));
    ASSERT_EQ(r->outcome.kind, PK_OUTCOME_EXITED);
    return r->outcome.code;
}

static json_t *load(const char *path)
{
    json_error_t jerr;
    json_t *j = json_load_file(path, 0, &jerr);
    if (j == NULL)
        pk_test_fail(__FILE__, __LINE__, "%s: %s", path, jerr.text);
    if (!pk_test_validate_results(path))
        fprintf(stderr, "# python3-jsonschema missing: schema not checked\n");
    return j;
}

static const json_t *series_named(const json_t *doc, const char *name)
{
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(doc, "series"), i, s)
    {
        if (strcmp(json_string_value(json_object_get(s, "name")), name) == 0)
            return s;
    }
    pk_test_fail(__FILE__, __LINE__, "no series %s in the file", name);
}

static const char *status_of(const json_t *doc, const char *name)
{
    return json_string_value(json_object_get(series_named(doc, name), "status"));
}

/* Skips when this host cannot make network namespaces (the file says why). */
static void need_netns(const json_t *doc)
{
    const json_t *ns =
        json_object_get(json_object_get(json_object_get(doc, "observe"), "gates"), "netns");
    if (!json_is_true(json_object_get(ns, "works")))
        pk_test_skip("no network namespace here: %s",
                     json_string_value(json_object_get(ns, "reason")));
}

/* The eBPF observers (and iter_poller) were refused with a reason containing `because` (or
 * because this build has no BPF programs). */
static void ebpf_refused(const json_t *doc, const char *cell, const char *because)
{
    static const char *const names[] = {"ebpf_ringbuf", "ebpf_ringbuf_batched", "iter_poller"};
    for (size_t i = 0; i < 3; i++) {
        char name[128];
        snprintf(name, sizeof name, "%s/%s", cell, names[i]);
        const json_t *s = series_named(doc, name);
        ASSERT_STR_EQ(json_string_value(json_object_get(s, "status")), "refused");
        const char *reason = json_string_value(json_object_get(s, "reason"));
        ASSERT(reason != NULL);
        if (strstr(reason, because) == NULL && strstr(reason, "built without eBPF") == NULL)
            pk_test_fail(__FILE__, __LINE__, "%s refused for \"%s\", not \"%s\"", name, reason,
                         because);
    }
}

TEST_IMPL(observe_pkbench_run_and_report)
{
    need_pkbench();
    char out[512], dir[512];
    snprintf(out, sizeof out, "%s/observe-one.json", pk_test_tmpdir());
    snprintf(dir, sizeof dir, "%s/reports", pk_test_tmpdir());
    pk_result r;
    int code = pkbench((const char *const[]){PK_PKBENCH_PATH, "run", "--suite", "observe",
                                             "--profile", "quick", "--filter",
                                             "^rate200_hold250ms/", "--out", out, NULL},
                       (const char *const[]){"PKBENCH_OBSERVE_CELL_MS=400", NULL}, &r);
    if (code != 0)
        pk_test_fail(__FILE__, __LINE__, "pkbench run exited %d: %s", code,
                     r.err.data ? r.err.data : "");
    /* It ends with the terminal view: the seed's table of the cell, every observer a row. */
    const char *view = r.out.data != NULL ? r.out.data : "";
    ASSERT(strstr(view, "Hold 250 ms") != NULL);
    ASSERT(strstr(view, "  200     proc_poller ") != NULL);
    ASSERT(strstr(view, "  200     none ") != NULL);
    json_t *doc = load(out);
    need_netns(doc);
    /* eBPF attributes every churned connection (80 in each repetition): so says its row. */
    if (strcmp(status_of(doc, "rate200_hold250ms/ebpf_ringbuf_batched"), "measured") == 0) {
        const char *row = strstr(view, "  200     ebpf_ringbuf_batched ");
        ASSERT(row != NULL);
        ASSERT(strstr(row, " 80 of 80 ") != NULL && strstr(row, " 80 of 80 ") < strchr(row, '\n'));
    }
    pk_result_release(&r);
    ASSERT(json_is_true(json_object_get(doc, "complete")));
    ASSERT_STR_EQ(json_string_value(json_object_get(doc, "suite")), "observe");
    /* The suite interleaves its own repetitions, and the settings say so. */
    ASSERT(json_is_true(json_object_get(json_object_get(doc, "settings"), "interleave")));
    const json_t *series = json_object_get(doc, "series");
    ASSERT_EQ(json_array_size(series), 6);
    size_t i;
    const json_t *s;
    json_array_foreach(series, i, s)
    {
        const char *st = json_string_value(json_object_get(s, "status"));
        const json_t *o = json_object_get(s, "observe");
        if (strcmp(st, "refused") == 0) { /* only an observer this host cannot run */
            fprintf(stderr, "# %s refused: %s\n", json_string_value(json_object_get(s, "name")),
                    json_string_value(json_object_get(s, "reason")));
            continue;
        }
        ASSERT_STR_EQ(st, "measured");
        ASSERT_EQ(json_array_size(json_object_get(s, "samples_ns")), 2);
        ASSERT_EQ(json_array_size(json_object_get(o, "cpu_s")), 2);
        /* Each repetition with its measured disturbance (run/disturb.h): at least pkbench itself
         * was runnable at the end of the cell. */
        ASSERT_EQ(json_array_size(json_object_get(s, "disturbed")), 2);
        for (size_t k = 0; k < 2; k++)
            ASSERT_GE(json_integer_value(json_array_get(json_object_get(s, "procs_running"), k)),
                      1);
        /* 200/s for 0.4 s: 80 connections in each repetition. */
        ASSERT_EQ(json_integer_value(json_array_get(json_object_get(o, "churned"), 0)), 80);
        /* The sample is the observer's CPU, in ns (to the rounding of the two numbers). */
        double sample = json_number_value(json_array_get(json_object_get(s, "samples_ns"), 1));
        double cpu = json_number_value(json_array_get(json_object_get(o, "cpu_s"), 1));
        ASSERT(fabs(sample - cpu * 1e9) <= 2.0);
    }
    /* The stored summary has a cell per series. */
    const json_t *sum = json_object_get(json_object_get(doc, "observe"), "summary");
    ASSERT_EQ(json_array_size(json_object_get(sum, "cells")), 6);
    json_decref(doc);

    char err[512] = "";
    int rc = pkb_report_render(out, dir, NULL, err, sizeof err);
    if (rc != 0)
        pk_test_fail(__FILE__, __LINE__, "report: %s", err);
    static const char *const files[] = {
        "observe-one.md",
        "observe-one-cpu.gnuplot.png",
        "observe-one-cpu.gnuplot.svg",
        "observe-one-cpu.matplotlib.png",
        "observe-one-attribution.gnuplot.svg",
        "observe-one-attribution.matplotlib.png",
        "observe-one-workload.gnuplot.png",
        "observe-one-workload.dat",
    };
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        struct stat st;
        if (stat(path, &st) != 0 || st.st_size == 0)
            pk_test_fail(__FILE__, __LINE__, "%s is missing or empty", path);
    }
    char md[1024];
    snprintf(md, sizeof md, "%s/observe-one.md", dir);
    FILE *f = fopen(md, "re");
    ASSERT(f != NULL);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    ASSERT(strstr(text, "### Hold 250 ms: the seed's table") != NULL);
    ASSERT(strstr(text, "## Conclusions") != NULL);
    ASSERT(strstr(text, "| 200 | `proc_poller` |") != NULL);
}

TEST_IMPL(observe_pkbench_without_btf_skips_ebpf)
{
    need_pkbench();
    char out[512];
    snprintf(out, sizeof out, "%s/observe-nobtf.json", pk_test_tmpdir());
    pk_result r;
    int code =
        pkbench((const char *const[]){PK_PKBENCH_PATH, "run", "--suite", "observe", "--profile",
                                      "quick", "--filter", "^rate0_hold0ms/", "--out", out, NULL},
                (const char *const[]){"PKBENCH_OBSERVE_CELL_MS=200",
                                      "PKBENCH_OBSERVE_BTF=/nonexistent/vmlinux", NULL},
                &r);
    if (code != 0)
        pk_test_fail(__FILE__, __LINE__, "pkbench run exited %d: %s", code,
                     r.err.data ? r.err.data : "");
    ASSERT(r.err.data != NULL && strstr(r.err.data, "SKIP ebpf_ringbuf: ") != NULL);
    /* The terminal view at the end names them too, with the reason. */
    ASSERT(r.out.data != NULL && strstr(r.out.data, "SKIP ebpf_ringbuf: ") != NULL);
    pk_result_release(&r);
    json_t *doc = load(out);
    ebpf_refused(doc, "rate0_hold0ms", "no kernel BTF at /nonexistent/vmlinux");
    need_netns(doc);
    ASSERT_STR_EQ(status_of(doc, "rate0_hold0ms/none"), "measured");
    ASSERT_STR_EQ(status_of(doc, "rate0_hold0ms/proc_poller"), "measured");
    ASSERT_STR_EQ(status_of(doc, "rate0_hold0ms/diag_poller"), "measured");
    ASSERT(json_is_true(json_object_get(doc, "complete")));
    json_decref(doc);
}

/* A copy of the program at `from`, executable by everyone, at `to`: the build tree may sit under
 * a directory only root can enter (a fresh clone in a mktemp -d directory), where nobody could not
 * run pkbench or its workload in place. */
static void copy_program(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    ASSERT(in >= 0);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    ASSERT(out >= 0);
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        ASSERT_EQ(write(out, buf, (size_t)n), n);
    ASSERT_EQ(n, 0);
    ASSERT_EQ(fchmod(out, 0755), 0);
    close(in);
    ASSERT_EQ(close(out), 0);
}

TEST_IMPL(observe_pkbench_unprivileged_skips_ebpf)
{
    need_pkbench();
    if (geteuid() != 0)
        pk_test_skip("needs root to run pkbench as the unprivileged user nobody");
    /* A directory nobody can write, reachable by nobody. */
    char dir[512], out[600], log[600];
    snprintf(dir, sizeof dir, "%s/nobody", pk_test_tmpdir());
    ASSERT_EQ(chmod(pk_test_tmpdir(), 0711), 0);
    ASSERT_EQ(mkdir(dir, 0777), 0);
    ASSERT_EQ(chmod(dir, 0777), 0);
    snprintf(out, sizeof out, "%s/observe-nobody.json", dir);
    snprintf(log, sizeof log, "%s/stderr", dir);
    char pkbench[600], churn[600];
    snprintf(pkbench, sizeof pkbench, "%s/pkbench", pk_test_tmpdir());
    snprintf(churn, sizeof churn, "%s/pk_churn", pk_test_tmpdir());
    if (PK_CHURN_PATH[0] == '\0' || PK_TINY_PATH[0] == '\0')
        pk_test_skip_gate("build", "this build has no pk_churn workload or no pk_tiny helper");
    copy_program(PK_PKBENCH_PATH, pkbench);
    copy_program(PK_CHURN_PATH, churn);
    char tiny[600];
    snprintf(tiny, sizeof tiny, "%s/pk_tiny", pk_test_tmpdir());
    copy_program(PK_TINY_PATH, tiny);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0 || dup2(fd, 2) < 0 || setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
            setuid(65534) != 0)
            _exit(111);
        setenv("PKBENCH_OBSERVE_CELL_MS", "200", 1);
        setenv("PKBENCH_CHURN", churn, 1);
        setenv("PKBENCH_TINY", tiny, 1);
        execl(pkbench, pkbench, "run", "--suite", "observe", "--profile", "quick", "--filter",
              "^rate0_hold0ms/", "--out", out, (char *)NULL);
        _exit(112);
    }
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT(WIFEXITED(status));
    if (WEXITSTATUS(status) == 111)
        pk_test_skip("cannot become nobody (65534) here");
    static char text[65536];
    FILE *f = fopen(log, "re");
    size_t n = f != NULL ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    text[n] = '\0';
    if (WEXITSTATUS(status) != 0)
        pk_test_fail(__FILE__, __LINE__, "pkbench as nobody exited %d: %s", WEXITSTATUS(status),
                     text);
    ASSERT(strstr(text, "SKIP ebpf_ringbuf: ") != NULL);
    json_t *doc = load(out);
    ebpf_refused(doc, "rate0_hold0ms", "bpf() refused for uid 65534");
    /* The pollers ran in a user namespace of pkbench's own, or were refused saying why not. */
    const json_t *p = series_named(doc, "rate0_hold0ms/proc_poller");
    const char *st = json_string_value(json_object_get(p, "status"));
    if (strcmp(st, "measured") != 0) {
        ASSERT_STR_EQ(st, "refused");
        ASSERT(strlen(json_string_value(json_object_get(p, "reason"))) > 0);
    } else {
        const json_t *ns =
            json_object_get(json_object_get(json_object_get(doc, "observe"), "gates"), "netns");
        ASSERT_STR_EQ(json_string_value(json_object_get(ns, "how")), "user namespace");
    }
    json_decref(doc);
}

/* The file's repetitions_done, or -1 while it does not exist or cannot be read; *complete its
 * `complete`. */
static int repetitions_done(const char *path, bool *complete)
{
    json_t *j = json_load_file(path, 0, NULL);
    const json_t *done = json_object_get(json_object_get(j, "observe"), "repetitions_done");
    int v = j != NULL ? (int)json_integer_value(done) : -1;
    *complete = json_is_true(json_object_get(j, "complete"));
    json_decref(j);
    return v;
}

TEST_IMPL(observe_pkbench_interrupt_keeps_finished_repetitions)
{
    need_pkbench();
    char out[512];
    snprintf(out, sizeof out, "%s/observe-int.json", pk_test_tmpdir());
    pk_process *p;
    ASSERT_OK(pk_spawn(
        &(pk_command){.argv = (const char *const[]){PK_PKBENCH_PATH, "run", "--suite", "observe",
                                                    "--profile", "quick", "--filter",
                                                    "^rate0_hold0ms/(none|proc_poller)$", "--out",
                                                    out, NULL},
                      .env.set = (const char *const[]){"PKBENCH_OBSERVE_CELL_MS=1500", NULL},
                      .err.kind = PK_STDIO_CAPTURE,
                      .timeout_ms = 60000},
        &p, NULL));
    /* The file appears once the first repetition is done (2 cells of 1.5 s). */
    int64_t deadline = pk_test_now_ms() + 30000;
    bool complete = false;
    while (repetitions_done(out, &complete) < 1 && pk_test_now_ms() < deadline) {
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    /* Written after the first repetition, and saying it is not the whole run. */
    ASSERT_EQ(repetitions_done(out, &complete), 1);
    ASSERT(!complete);
    ASSERT_OK(pk_process_signal(p, SIGINT));
    pk_result r;
    ASSERT_OK(pk_process_wait(p, &r));
    pk_process_free(p);
    if (r.outcome.kind != PK_OUTCOME_EXITED || r.outcome.code != 130)
        pk_test_fail(__FILE__, __LINE__, "pkbench ended %s %d: %s",
                     pk_outcome_kind_name(r.outcome.kind), r.outcome.code,
                     r.err.data ? r.err.data : "");
    pk_result_release(&r);
    json_t *doc = load(out);
    need_netns(doc);
    ASSERT(json_is_false(json_object_get(doc, "complete")));
    ASSERT(json_is_true(json_object_get(doc, "interrupted")));
    const json_t *series = json_object_get(doc, "series");
    ASSERT_EQ(json_array_size(series), 2);
    size_t i;
    const json_t *s;
    json_array_foreach(series, i, s)
    {
        ASSERT_STR_EQ(json_string_value(json_object_get(s, "status")), "measured");
        ASSERT_GE(json_array_size(json_object_get(s, "samples_ns")), 1);
    }
    json_decref(doc);
}
