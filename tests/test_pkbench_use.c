/*
 * pkbench under real use (issue 34, items 7, 13, 17 and 19): what a user's inputs and outputs can
 * be and what a run that did not measure everything says.
 *
 *   - A FIFO (or pipe, or terminal) named as an input or as compare's --out is never waited on
 *     for longer than PKBENCH_FIFO_WAIT (it blocked forever in open()); fed by a writer it is
 *     read once and serves every read of the command (report --print reads its input twice).
 *     `run --out` and `check --out` refuse anything but a regular file or a new path, naming it:
 *     a results file is rewritten after every series and read back at the end.
 *   - An output through a symlink is written onto the link's target, atomically in the target's
 *     directory (even a dangling link's: the target is created); the link stays a link.
 *   - A run in which a series failed, or was refused by its check, ends with one line naming it
 *     and exits 4; the report says why a target could not be checked.
 *   - The loader refuses two series of one name and per-repetition arrays of another length than
 *     samples_ns, naming the series; compare refuses two files of different suites; a series
 *     interrupted mid-rounds is "partial" (with how many rounds), never "measured".
 */
#define _GNU_SOURCE
#include "test.h"

#include "common/files.h"
#include "results/results.h"
#include "synth.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif

static void need_pkbench(void)
{
    if (PK_PKBENCH_PATH[0] == '\0')
        pk_test_skip_gate("build", "pkbench is built only with PK_BUILD_BENCH");
}

static void tmp(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", pk_test_tmpdir(), name);
}

static const char *text_of(const pk_output *s)
{
    return s->data != NULL ? s->data : "";
}

/* Runs pkbench with args and the environment entries env (NULL-terminated, or NULL), bounded by
 * a 25 s limit (each call takes a few seconds, far less on a quiet machine) so that a hang fails
 * the test with its outcome rather than by the test's timeout; *ms: its wall time. Returns its
 * exit status (-1 when it did not exit). */
static int pkbench_env(const char *const *env, const char *const *args, pk_result *r, int64_t *ms)
{
    const char *argv[32] = {PK_PKBENCH_PATH};
    int n = 1;
    for (; args[n - 1] != NULL && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    int64_t t0 = pk_test_now_ms();
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .env = {.set = env}, .timeout_ms = 25000}, r));
    if (ms != NULL)
        *ms = pk_test_now_ms() - t0;
    printf("# pkbench %s ...: %s %d (signal %d)\n", args[0], pk_outcome_kind_name(r->outcome.kind),
           r->outcome.code, r->outcome.signo);
    return r->outcome.kind == PK_OUTCOME_EXITED ? r->outcome.code : -1;
}

#define ENV(...)  ((const char *const[]){__VA_ARGS__, NULL})
#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Fails unless r exited `code` with `says` on stderr. */
static void expect(const pk_result *r, int code, const char *says, const char *file, int line)
{
    if (r->outcome.kind != PK_OUTCOME_EXITED || r->outcome.code != code ||
        strstr(text_of(&r->err), says) == NULL)
        pk_test_fail(file, line, "%s %d, want exit %d saying '%s'; stderr: %s",
                     pk_outcome_kind_name(r->outcome.kind), r->outcome.code, code, says,
                     text_of(&r->err));
}
#define EXPECT(r, code, says) expect((r), (code), (says), __FILE__, __LINE__)

/* ==== Item 7: FIFOs ==== */

TEST_IMPL(pkbench_fifo_inputs_are_bounded)
{
    need_pkbench();
    const char *fixture = PK_TEST_DATA_DIR "/compare-fixture.json";
    char fifo[600], outdir[600];
    tmp(fifo, sizeof fifo, "in.fifo");
    tmp(outdir, sizeof outdir, "reports");
    ASSERT_EQ(mkfifo(fifo, 0600), 0);
    const char *const *wait = ENV("PKBENCH_FIFO_WAIT=0.3");

    /* Nobody writes: each command gives up after the wait, naming the FIFO and the wait. */
    const char *const *cases[] = {
        ARGS("report", fifo, "--no-plots", "--out", outdir),
        ARGS("compare", fifo, fixture),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pk_result r;
        int64_t ms;
        pkbench_env(wait, cases[i], &r, &ms);
        EXPECT(&r, 1, fifo);
        EXPECT(&r, 1, "nothing was written to it for 0.3 s");
        ASSERT_GE(ms, 300);
        ASSERT_LT(ms, 30000); /* a hang guard: it blocked forever */
        pk_result_release(&r);
    }
    ASSERT(access(outdir, F_OK) != 0); /* nothing rendered */

    /* Fed by a writer, a FIFO is read once, and that serves report --print's second read. */
    char feed[1400];
    snprintf(feed, sizeof feed, "cat '%s' > '%s'", fixture, fifo);
    pk_process *writer;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = ARGS("sh", "-c", feed), .timeout_ms = 30000}, &writer,
                       NULL));
    pk_result r;
    ASSERT_EQ(
        pkbench_env(NULL, ARGS("report", fifo, "--print", "--no-plots", "--out", outdir), &r, NULL),
        0);
    ASSERT(strstr(text_of(&r.out), "spawn_only") != NULL); /* the tables */
    ASSERT(strstr(text_of(&r.out), "in.fifo.md") != NULL); /* the report's path */
    pk_result_release(&r);
    ASSERT_OK(pk_process_wait(writer, &r));
    ASSERT_EXITED(r, 0);
    pk_result_release(&r);
    pk_process_free(writer);
    struct stat st;
    ASSERT_EQ(lstat(fifo, &st), 0);
    ASSERT(S_ISFIFO(st.st_mode));
    char md[700];
    snprintf(md, sizeof md, "%s/in.fifo.md", outdir);
    ASSERT_EQ(unlink(md), 0);
    ASSERT_EQ(rmdir(outdir), 0);
    ASSERT_EQ(unlink(fifo), 0);
}

TEST_IMPL(pkbench_fifo_and_device_outputs)
{
    need_pkbench();
    const char *fixture = PK_TEST_DATA_DIR "/compare-fixture.json";
    char fifo[600];
    tmp(fifo, sizeof fifo, "out.fifo");
    ASSERT_EQ(mkfifo(fifo, 0600), 0);

    /* compare writes its --out in place, but waits for a reader only so long. */
    pk_result r;
    int64_t ms;
    pkbench_env(ENV("PKBENCH_FIFO_WAIT=0.3"), ARGS("compare", fixture, fixture, "--out", fifo), &r,
                &ms);
    EXPECT(&r, 1, "cannot write");
    EXPECT(&r, 1, strerror(ETIMEDOUT));
    ASSERT_GE(ms, 300);
    ASSERT_LT(ms, 30000);
    pk_result_release(&r);
    struct stat st;
    ASSERT_EQ(lstat(fifo, &st), 0);
    ASSERT(S_ISFIFO(st.st_mode)); /* written in place, never replaced */

    /* A results file is rewritten after every series and read back: run and check refuse
     * anything but a regular file at once, before measuring, naming what it is. */
    struct {
        const char *const *args;
        const char *says;
    } cases[] = {
        {ARGS("run", "--out", fifo), "--out %s is a FIFO or pipe: a results file is rewritten"},
        {ARGS("run", "--out", "/dev/null"), "--out %s is a character device"},
        {ARGS("check", "--baseline", fixture, "--out", fifo), "check: --out %s is a FIFO"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char says[800];
        snprintf(says, sizeof says, cases[i].says, i == 1 ? "/dev/null" : fifo);
        pkbench_env(NULL, cases[i].args, &r, &ms);
        EXPECT(&r, 1, says);
        ASSERT_LT(ms, 10000); /* nothing measured */
        pk_result_release(&r);
    }
    ASSERT_EQ(unlink(fifo), 0);
}

/* ==== Item 13: through a symlink ==== */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "we");
    ASSERT(f != NULL);
    fputs(text, f);
    ASSERT_EQ(fclose(f), 0);
}

static void expect_link(const char *link, const char *target)
{
    char got[600];
    ssize_t n = readlink(link, got, sizeof got - 1);
    ASSERT(n > 0);
    got[n] = '\0';
    ASSERT_STR_EQ(got, target);
}

/* Entries of dir whose names start with prefix (the temporary files a write leaves behind). */
static int count_prefixed(const char *dir, const char *prefix)
{
    char cmd[800];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c '^%s' || true", dir, prefix);
    FILE *p = popen(cmd, "re");
    ASSERT(p != NULL);
    int n = 0;
    ASSERT_EQ(fscanf(p, "%d", &n), 1);
    pclose(p);
    return n;
}

TEST_IMPL(pkbench_output_through_a_symlink_writes_its_target)
{
    char links[600], data[600], target[700], link[700], dangling[700], chain[700], loop[700];
    tmp(links, sizeof links, "links");
    tmp(data, sizeof data, "data");
    ASSERT_EQ(mkdir(links, 0755), 0);
    ASSERT_EQ(mkdir(data, 0755), 0);
    snprintf(target, sizeof target, "%s/target.json", data);
    snprintf(link, sizeof link, "%s/out.json", links);
    write_text(target, "old\n");
    /* A relative link: relative to the link's own directory. */
    ASSERT_EQ(symlink("../data/target.json", link), 0);
    ASSERT_OK(pkb_write_text_atomic(link, "new\n", 4));
    expect_link(link, "../data/target.json");
    char *got = pk_test_slurp(target);
    ASSERT_STR_EQ(got, "new\n");
    free(got);
    ASSERT_EQ(count_prefixed(links, "out.json.tmp"), 0);
    ASSERT_EQ(count_prefixed(data, "target.json.tmp"), 0);
    ASSERT_OK(pkb_check_writable(link));

    /* A link to a link to the file. */
    snprintf(chain, sizeof chain, "%s/chain.json", links);
    ASSERT_EQ(symlink(link, chain), 0);
    ASSERT_OK(pkb_write_text_atomic(chain, "newer\n", 6));
    expect_link(chain, link);
    got = pk_test_slurp(target);
    ASSERT_STR_EQ(got, "newer\n");
    free(got);

    /* A dangling link: its target is created, the link stays. */
    snprintf(dangling, sizeof dangling, "%s/dangling.json", links);
    ASSERT_EQ(symlink("../data/created.json", dangling), 0);
    ASSERT_OK(pkb_check_writable(dangling));
    ASSERT_OK(pkb_write_text_atomic(dangling, "created\n", 8));
    expect_link(dangling, "../data/created.json");
    char created[700];
    snprintf(created, sizeof created, "%s/created.json", data);
    got = pk_test_slurp(created);
    ASSERT_STR_EQ(got, "created\n");
    free(got);

    /* A loop is an error, not a hang or a replaced link. */
    snprintf(loop, sizeof loop, "%s/loop.json", links);
    ASSERT_EQ(symlink("loop.json", loop), 0);
    ASSERT_EQ(pkb_write_text_atomic(loop, "x\n", 2), -ELOOP);
    expect_link(loop, "loop.json");

    /* End to end: `pkbench run --out LINK` writes the results into the link's target. */
    if (PK_PKBENCH_PATH[0] != '\0') {
        unlink(target);
        pk_result r;
        ASSERT_EQ(pkbench_env(NULL,
                              ARGS("run", "--filter", "^calibration/", "--no-prime",
                                   "--repetitions", "6", "--settle", "0", "--out", link),
                              &r, NULL),
                  0);
        pk_result_release(&r);
        expect_link(link, "../data/target.json");
        pkb_results res;
        char err[512];
        ASSERT_OK(pkb_results_load(target, &res, err, sizeof err));
        ASSERT_EQ(res.nseries, 1);
        ASSERT(res.series[0].measured);
        pkb_results_free(&res);
        ASSERT_EQ(count_prefixed(links, "out.json.tmp"), 0);
        ASSERT_EQ(count_prefixed(data, "target.json.tmp"), 0);
    } else {
        printf("# pkbench not built: its end-to-end half not run\n");
    }
    unlink(loop);
    unlink(dangling);
    unlink(chain);
    unlink(link);
    unlink(created);
    unlink(target);
    ASSERT_EQ(rmdir(links), 0);
    ASSERT_EQ(rmdir(data), 0);
}

/* ==== Item 17: a run that did not measure everything ==== */

/* The last line of s (without its newline). */
static const char *last_line(const char *s, char *buf, size_t cap)
{
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '\n')
        n--;
    size_t start = n;
    while (start > 0 && s[start - 1] != '\n')
        start--;
    snprintf(buf, cap, "%.*s", (int)(n - start), s + start);
    return buf;
}

TEST_IMPL(pkbench_run_with_unmeasured_series_exits_4)
{
    need_pkbench();
    char out[600], tiny[600], count[600], md_dir[600];
    tmp(out, sizeof out, "unmeasured.json");
    tmp(tiny, sizeof tiny, "tiny.sh");
    tmp(count, sizeof count, "calls");
    tmp(md_dir, sizeof md_dir, "reports");
    /* The spawn_only scenario's program: /bin/false fails its correctness check (refused); this
     * script passes it, then removes itself, so that a start fails once timing has begun
     * (failed). */
    char script[1400];
    snprintf(script, sizeof script,
             "#!/bin/sh\nn=$(cat '%s' 2>/dev/null || echo 0)\necho $((n + 1)) > '%s'\n"
             "[ \"$n\" -lt 8 ] || rm -f \"$0\"\n",
             count, count);
    static const char *const how[] = {"refused", "failed"};
    for (int k = 0; k < 2; k++) {
        char env_tiny[700];
        snprintf(env_tiny, sizeof env_tiny, "PKBENCH_TINY=%s", k == 0 ? "/bin/false" : tiny);
        unlink(count);
        write_text(tiny, script);
        ASSERT_EQ(chmod(tiny, 0755), 0);
        pk_result r;
        int code =
            pkbench_env(ENV(env_tiny),
                        ARGS("run", "--filter", "^(spawn_only/posix_spawn|calibration/.*)$",
                             "--no-prime", "--repetitions", "6", "--settle", "0", "--out", out),
                        &r, NULL);
        char line[1024];
        last_line(text_of(&r.err), line, sizeof line);
        printf("# %s: exit %d, last line: %s\n", how[k], code, line);
        ASSERT_EQ(code, 4);
        /* The last line names the series and how it ended; the tables and the path came. */
        ASSERT(strncmp(line, "pkbench: 1 series not measured: spawn_only/posix_spawn (", 56) == 0);
        ASSERT(strstr(line, how[k]) != NULL);
        ASSERT(strstr(text_of(&r.out), "calibration") != NULL);
        ASSERT(strstr(text_of(&r.out), out) != NULL);
        pk_result_release(&r);
        pkb_results res;
        char err[512];
        ASSERT_OK(pkb_results_load(out, &res, err, sizeof err));
        ASSERT_EQ(res.nseries, 2);
        const pkb_results_series *s = pkb_results_find(&res, "spawn_only/posix_spawn");
        ASSERT(s != NULL && !s->measured);
        ASSERT_STR_EQ(s->status, how[k]);
        ASSERT(pkb_results_find(&res, "calibration/cpu_loop")->measured);
        pkb_results_free(&res);
    }
    /* The report of that file says why a target could not be checked. */
    pk_result r;
    ASSERT_EQ(
        pkbench_env(NULL, ARGS("report", out, "--print", "--no-plots", "--out", md_dir), &r, NULL),
        0);
    printf("%s", text_of(&r.out));
    ASSERT(strstr(text_of(&r.out), "not checked (no processkit series in this run)") != NULL);
    pk_result_release(&r);
    char md[700];
    snprintf(md, sizeof md, "%s/unmeasured.md", md_dir);
    char *text = pk_test_slurp(md);
    ASSERT(strstr(text, "not checked (no `processkit` series in this run)") != NULL);
    free(text);
    unlink(md);
    rmdir(md_dir);
    unlink(out);
    unlink(tiny);
    unlink(count);
}

/* `pkbench check` runs `pkbench run` as a child: a run that exits 4 went through, and its file is
 * compared as usual (a series failed there is missing: 2), not taken for a run that failed. */
TEST_IMPL(pkbench_check_compares_a_run_that_exits_4)
{
    need_pkbench();
    char dir[600], runner[700], base[700], run1[700], out[700];
    tmp(dir, sizeof dir, "check4");
    ASSERT_EQ(mkdir(dir, 0755), 0);
    snprintf(runner, sizeof runner, "%s/fake-pkbench", dir);
    snprintf(base, sizeof base, "%s/base.json", dir);
    snprintf(run1, sizeof run1, "%s/run-1.json", dir);
    snprintf(out, sizeof out, "%s/check.json", dir);
    /* The run: the test binary's fake-run helper writes the prepared file, then exit 4. */
    char script[1400];
    snprintf(script, sizeof script, "#!/bin/sh\n'%s' --helper fake-run \"$@\" || exit $?\nexit 4\n",
             pk_test_self());
    write_text(runner, script);
    ASSERT_EQ(chmod(runner, 0755), 0);
    double x[12];
    for (int i = 0; i < 12; i++)
        x[i] = 1e5 * (1 + 0.001 * i);
    pk_test_write_results(base, (pk_test_series[]){{"x/a", x, 12, NULL}, {"x/b", x, 12, NULL}}, 2);
    pk_test_write_results(run1, (pk_test_series[]){{"x/a", x, 12, NULL}, {"x/b", x, 0, "failed"}},
                          2);
    char set_runner[800], set_dir[700];
    snprintf(set_runner, sizeof set_runner, "PKBENCH_CHECK_RUNNER=%s", runner);
    snprintf(set_dir, sizeof set_dir, "PK_FAKE_RUN_DIR=%s", dir);
    pk_result r;
    int code =
        pkbench_env(ENV(set_runner, set_dir),
                    ARGS("check", "--baseline", base, "--out", out, "--filter", "^x/"), &r, NULL);
    printf("%s%s", text_of(&r.out), text_of(&r.err));
    ASSERT_EQ(code, 2);
    ASSERT(strstr(text_of(&r.out), "x/b — failed in new") != NULL);
    pk_result_release(&r);
    char path[800];
    static const char *const files[] = {"base.json", "run-1.json", "check.json", "calls.log",
                                        "fake-pkbench"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    ASSERT_EQ(rmdir(dir), 0);
}

/* ==== Item 19: what the loader and compare refuse; a partial series ==== */

static int load_doc(json_t *doc, char *err, size_t cap)
{
    char path[600];
    tmp(path, sizeof path, "doc.json");
    pk_test_write_doc(doc, path);
    pkb_results r;
    int rc = pkb_results_load(path, &r, err, cap);
    if (rc == 0)
        pkb_results_free(&r);
    unlink(path);
    return rc;
}

TEST_IMPL(results_loader_refuses_inconsistent_series)
{
    double a[6] = {1e5, 1.1e5, 1.2e5, 1e5, 1.1e5, 1.2e5};
    char err[512];
    /* Two series of one name: the second would be silently ignored by every reader. */
    json_t *doc = pk_test_results_doc(
        (pk_test_series[]){{"s/a", a, 6, NULL}, {"s/b", a, 6, NULL}, {"s/a", a, 6, NULL}}, 3);
    ASSERT_EQ(load_doc(doc, err, sizeof err), -EBADMSG);
    printf("# %s\n", err);
    ASSERT(strstr(err, "series[0] and series[2] are both named \"s/a\"") != NULL);

    /* A per-repetition array of another length than samples_ns: the series named. */
    static const char *const arrays[] = {"iterations", "child_cpu_ns", "parent_cpu_ns",
                                         "procs_running", "disturbed"};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        doc = pk_test_results_doc((pk_test_series[]){{"s/a", a, 6, NULL}, {"s/b", a, 6, NULL}}, 2);
        json_t *s1 = json_array_get(json_object_get(doc, "series"), 1), *v = json_array();
        for (int k = 0; k < 5; k++)
            json_array_append_new(v, strcmp(arrays[i], "disturbed") == 0 ? json_false()
                                     : strcmp(arrays[i], "iterations") == 0 ||
                                             strcmp(arrays[i], "procs_running") == 0
                                         ? json_integer(100)
                                         : json_real(1e3));
        json_object_set_new(s1, arrays[i], v);
        ASSERT_EQ(load_doc(doc, err, sizeof err), -EBADMSG);
        printf("# %s\n", err);
        char want[200];
        snprintf(want, sizeof want, "series[1].%s (series s/b) has 5 entries for 6 samples_ns",
                 arrays[i]);
        ASSERT(strstr(err, want) != NULL);
    }
    /* The same inside a re-measured series' attempts. */
    doc = pk_test_results_doc((pk_test_series[]){{"s/a", a, 6, NULL}}, 1);
    json_t *s0 = json_array_get(json_object_get(doc, "series"), 0);
    json_object_set_new(s0, "attempts",
                        json_pack("[{s:[f,f], s:[i]}]", "samples_ns", 1e5, 1e5, "iterations", 7));
    ASSERT_EQ(load_doc(doc, err, sizeof err), -EBADMSG);
    ASSERT(strstr(err, "series[0].attempts[0].iterations (series s/a) has 1 entries for 2") !=
           NULL);

    /* A partial series loads, with its samples, but is not measured. */
    doc = pk_test_results_doc((pk_test_series[]){{"s/a", a, 6, NULL}, {"s/b", a, 2, "partial"}}, 2);
    char path[600];
    tmp(path, sizeof path, "partial.json");
    pk_test_write_doc(doc, path);
    pkb_results r;
    ASSERT_OK(pkb_results_load(path, &r, err, sizeof err));
    ASSERT_EQ(r.series[1].n, 2);
    ASSERT(!r.series[1].measured);
    ASSERT(r.series[0].measured);
    pkb_results_free(&r);
    unlink(path);
}

TEST_IMPL(compare_refuses_files_of_different_suites)
{
    need_pkbench();
    double a[6] = {1e5, 1.1e5, 1.2e5, 1e5, 1.1e5, 1.2e5};
    char base[600], cand[600];
    tmp(base, sizeof base, "scenarios.json");
    tmp(cand, sizeof cand, "phases.json");
    pk_test_write_results(base, (pk_test_series[]){{"s/a", a, 6, NULL}}, 1);
    json_t *doc = pk_test_results_doc((pk_test_series[]){{"s/a", a, 6, NULL}}, 1);
    json_object_set_new(doc, "suite", json_string("phases"));
    pk_test_write_doc(doc, cand);
    pk_result r;
    pkbench_env(NULL, ARGS("compare", base, cand), &r, NULL);
    EXPECT(&r, 1, "of the compare suite and");
    EXPECT(&r, 1, "of the phases suite: compare matches the series of two runs of one suite");
    pk_result_release(&r);
    /* The scenarios suite's old name is the same suite: compared (too few samples to decide, 3,
     * but not refused). */
    doc = pk_test_results_doc((pk_test_series[]){{"s/a", a, 6, NULL}}, 1);
    json_object_set_new(doc, "suite", json_string("scenarios"));
    pk_test_write_doc(doc, cand);
    ASSERT_EQ(pkbench_env(NULL, ARGS("compare", base, cand), &r, NULL), 3);
    ASSERT(strstr(text_of(&r.out), "s/a") != NULL);
    pk_result_release(&r);
    unlink(base);
    unlink(cand);
}

TEST_IMPL(pkbench_interrupt_mid_rounds_marks_partial)
{
    need_pkbench();
    pk_test_need_jsonschema();
    char out[600], md_dir[600];
    tmp(out, sizeof out, "partial.json");
    tmp(md_dir, sizeof md_dir, "reports");
    const char *const argv[] = {PK_PKBENCH_PATH, "run",      "--filter", "^calibration/",
                                "--no-prime",    "--settle", "0",        "--repetitions",
                                "1000",          "--out",    out,        NULL};
    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = argv, .timeout_ms = 120000}, &p, NULL));
    /* While the rounds go on, the file says partial (so a killed run's file does too). */
    size_t samples = 0;
    const char *status = NULL;
    json_t *j = NULL;
    for (int waited = 0; waited < 60000 && samples < 2; waited += 20) {
        usleep(20000);
        json_decref(j);
        j = json_load_file(out, 0, NULL);
        json_t *s = json_array_get(json_object_get(j, "series"), 0);
        samples = json_array_size(json_object_get(s, "samples_ns"));
        status = json_string_value(json_object_get(s, "status"));
    }
    ASSERT_GE(samples, 2);
    ASSERT_STR_EQ(status, "partial");
    json_decref(j);
    ASSERT_OK(pk_process_signal(p, SIGINT));
    pk_result r;
    ASSERT_OK(pk_process_wait(p, &r));
    ASSERT_EXITED(r, 130);
    pk_result_release(&r);
    pk_process_free(p);
    ASSERT(pk_test_validate_results(out));
    j = json_load_file(out, 0, NULL);
    ASSERT(j != NULL);
    ASSERT(json_is_true(json_object_get(j, "interrupted")));
    json_t *s = json_array_get(json_object_get(j, "series"), 0);
    ASSERT_STR_EQ(json_string_value(json_object_get(s, "status")), "partial");
    size_t n = json_array_size(json_object_get(s, "samples_ns"));
    ASSERT_GE(n, 2);
    ASSERT_LT(n, 1000);
    char reason[100];
    snprintf(reason, sizeof reason, "interrupted after %zu of 1000 rounds", n);
    ASSERT_STR_EQ(json_string_value(json_object_get(s, "reason")), reason);
    json_decref(j);
    /* The report says so, with the reason. */
    ASSERT_EQ(
        pkbench_env(NULL, ARGS("report", out, "--print", "--no-plots", "--out", md_dir), &r, NULL),
        0);
    printf("%s", text_of(&r.out));
    ASSERT(strstr(text_of(&r.out), reason) != NULL);
    pk_result_release(&r);
    char md[700];
    snprintf(md, sizeof md, "%s/partial.md", md_dir);
    char *text = pk_test_slurp(md);
    ASSERT(strstr(text, "partial") != NULL && strstr(text, reason) != NULL);
    free(text);
    unlink(md);
    rmdir(md_dir);
    unlink(out);
}
