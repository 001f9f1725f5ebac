/*
 * The parts of compare and check that decide what gets reported, on prepared data so that the
 * machine's noise cannot touch the outcome:
 *
 *  - Holm's correction is really applied across series: one series whose raw p (scipy's exact
 *    value, recorded below) is under alpha but not after the correction over ten series is not
 *    reported, while the same series compared alone is.
 *  - check reports a regression only when it repeats: PKBENCH_CHECK_RUNNER makes check start the
 *    test binary's fake-run helper instead of `pkbench run`, and the helper hands it results files
 *    written here (first run, then the re-run), recording the arguments of each call. Which
 *    series are confirmed, the exit status, the re-run's filter and the files kept are then
 *    exact, not "usually".
 */
#define _GNU_SOURCE
#include "test.h"

#include "regress/compare.h"
#include "synth.h"

#include <errno.h>
#include <math.h>
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

static void tmp_path(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", pk_test_tmpdir(), name);
}

static const char *text_of(const pk_output *o)
{
    return o->data != NULL ? o->data : "";
}

/* Fails unless `hay` contains `needle`, printing both. */
#define ASSERT_HAS(hay, needle)                                                                    \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (strstr(h_, n_) == NULL)                                                                \
            pk_test_fail(__FILE__, __LINE__, "expected \"%s\" in:\n%s", n_, h_);                   \
    } while (0)

#define ASSERT_LACKS(hay, needle)                                                                  \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (strstr(h_, n_) != NULL)                                                                \
            pk_test_fail(__FILE__, __LINE__, "did not expect \"%s\" in:\n%s", n_, h_);             \
    } while (0)

/* ==== Holm's correction inside compare ======================================================= */

/* The "overlap_8x8" samples of test_stats.c (in µs): scipy 1.10.1,
 *   mannwhitneyu(a, b, method="exact", alternative="two-sided") -> U = 12, p = 0.037917637917637914
 * and the medians 101.1 and 103.25: the new side is 2.1% slower. */
static const double holm_a[8] = {101.3, 99.7, 102.5, 100.4, 98.9, 103.1, 100.9, 101.8};
static const double holm_b[8] = {102.2, 104.0, 100.1, 103.6, 105.2, 101.5, 104.7, 102.9};
#define HOLM_P 0.037917637917637914

/* Ten series: x/s0 is the shifted pair; x/s1..x/s9 compare a sample with itself (p = 1). Holm over
 * ten (the ten-line definition quoted in test_stats.c) gives x/s0 min(1, 10 · p) = 0.3792. */
static void holm_files(const char *base, const char *cand, size_t nseries)
{
    static const char *const names[10] = {"x/s0", "x/s1", "x/s2", "x/s3", "x/s4",
                                          "x/s5", "x/s6", "x/s7", "x/s8", "x/s9"};
    double a[10][8], b[10][8];
    pk_test_series sa[10], sb[10];
    for (size_t k = 0; k < nseries; k++) {
        for (size_t i = 0; i < 8; i++) {
            a[k][i] = holm_a[i] * 1000 * (double)(k + 1);
            b[k][i] = (k == 0 ? holm_b[i] : holm_a[i]) * 1000 * (double)(k + 1);
        }
        sa[k] = (pk_test_series){names[k], a[k], 8, NULL};
        sb[k] = (pk_test_series){names[k], b[k], 8, NULL};
    }
    pk_test_write_results(base, sa, nseries);
    pk_test_write_results(cand, sb, nseries);
}

TEST_IMPL(compare_holm_corrects_across_series)
{
    char base[512], cand[512], base1[512], cand1[512], err[256];
    tmp_path(base, sizeof base, "holm-base.json");
    tmp_path(cand, sizeof cand, "holm-new.json");
    tmp_path(base1, sizeof base1, "holm-base-1.json");
    tmp_path(cand1, sizeof cand1, "holm-new-1.json");
    holm_files(base, cand, 10);
    holm_files(base1, cand1, 1);

    /* No threshold: the p-value alone decides, so the correction is the only thing in the way. */
    pkb_compare_options o = {.threshold = -1, .iterations = 500};
    pkb_compare c;
    ASSERT_OK(pkb_compare_files(base, cand, &o, &c, err, sizeof err));
    ASSERT_EQ(c.nrows, 10);
    const pkb_compare_row *r = &c.rows[0];
    ASSERT_STR_EQ(r->name, "x/s0");
    ASSERT(fabs(r->s.mwu.p - HOLM_P) <= 1e-12 * HOLM_P);
    ASSERT(fabs(r->p_holm - 10 * HOLM_P) <= 1e-12);
    ASSERT(fabs(r->s.delta - (103.25 / 101.1 - 1)) < 1e-12);
    ASSERT_EQ(r->d.verdict, PKS_NO_CHANGE);
    for (size_t i = 1; i < 10; i++) {
        ASSERT(c.rows[i].p_holm == 1.0);
        ASSERT_EQ(c.rows[i].d.verdict, PKS_NO_CHANGE);
    }
    ASSERT_EQ(c.regressed, 0);
    ASSERT_EQ(c.status, 0);
    pkb_compare_free(&c);

    /* Alone, the same pair is a regression: the correction is what kept it out above. */
    ASSERT_OK(pkb_compare_files(base1, cand1, &o, &c, err, sizeof err));
    ASSERT(fabs(c.rows[0].p_holm - HOLM_P) <= 1e-12 * HOLM_P);
    ASSERT_EQ(c.rows[0].d.verdict, PKS_REGRESSED);
    ASSERT_EQ(c.status, 2);
    pkb_compare_free(&c);

    /* The command line agrees: exit 0 with ten series, 2 with one. */
    need_pkbench();
    pk_result res;
    const char *const ten[] = {PK_PKBENCH_PATH, "compare", base, cand, "--threshold", "none", NULL};
    ASSERT_OK(pk_run(&(pk_command){.argv = ten}, &res));
    ASSERT_EXITED(res, 0);
    ASSERT_HAS(text_of(&res.out), "0 regressed, 0 improved, 10 unchanged");
    pk_result_release(&res);
    const char *const one[] = {PK_PKBENCH_PATH, "compare", base1, cand1,
                               "--threshold",   "none",    NULL};
    ASSERT_OK(pk_run(&(pk_command){.argv = one}, &res));
    ASSERT_EXITED(res, 2);
    ASSERT_HAS(text_of(&res.err), "pkbench: regressed: x/s0 (+2.1%)");
    pk_result_release(&res);
}

/* ==== check on prepared runs ================================================================= */

enum { N = 12 };

/* Three series (x/a, x/b+1, x/c) at 100, 200 and 300 µs with 1% lognormal noise, each scaled by its
 * factor; a factor below 0 draws the series with 30% noise instead (too noisy to decide). */
static void write_run(const char *path, uint64_t seed, const double factor[3])
{
    /* x/b+1: a name with a regular-expression character, which the re-run's filter escapes. */
    static const char *const names[3] = {"x/a", "x/b+1", "x/c"};
    double x[3][N];
    pk_test_series s[3];
    pks_rng rng;
    pks_rng_seed(&rng, seed);
    for (int k = 0; k < 3; k++) {
        double f = factor[k] < 0 ? 1.0 : factor[k];
        pk_test_lognormal(&rng, x[k], N, 1e5 * (k + 1) * f, factor[k] < 0 ? 0.30 : 0.01);
        s[k] = (pk_test_series){names[k], x[k], N, NULL};
    }
    pk_test_write_results(path, s, 3);
}

struct check_env {
    char dir[512], runner[600], base[600], out[600], rerun[600];
};

/* A directory for the fake runs, the wrapper script check starts, and the baseline. */
static void check_setup(struct check_env *e, const char *name)
{
    need_pkbench();
    snprintf(e->dir, sizeof e->dir, "%s/%s", pk_test_tmpdir(), name);
    ASSERT_EQ(mkdir(e->dir, 0755), 0);
    snprintf(e->runner, sizeof e->runner, "%s/fake-pkbench", e->dir);
    snprintf(e->base, sizeof e->base, "%s/base.json", e->dir);
    snprintf(e->out, sizeof e->out, "%s/check.json", e->dir);
    snprintf(e->rerun, sizeof e->rerun, "%s/check-rerun.json", e->dir);
    FILE *f = fopen(e->runner, "we");
    ASSERT(f != NULL);
    fprintf(f, "#!/bin/sh\nexec '%s' --helper fake-run \"$@\"\n", pk_test_self());
    ASSERT_EQ(fclose(f), 0);
    ASSERT_EQ(chmod(e->runner, 0755), 0);
    write_run(e->base, 1, (const double[]){1, 1, 1});
}

/* The prepared result of the k-th run check will start (1: the run, 2: the re-run). */
static void prepare_run(const struct check_env *e, int k, uint64_t seed, const double factor[3])
{
    char path[700];
    snprintf(path, sizeof path, "%s/run-%d.json", e->dir, k);
    write_run(path, seed, factor);
}

/* pkbench check --baseline base --out out [extra...] with the fake runner; returns its status. */
static int run_check(const struct check_env *e, const char *extra, pk_result *r)
{
    char set_runner[700], set_dir[600];
    snprintf(set_runner, sizeof set_runner, "PKBENCH_CHECK_RUNNER=%s", e->runner);
    snprintf(set_dir, sizeof set_dir, "PK_FAKE_RUN_DIR=%s", e->dir);
    const char *const env[] = {set_runner, set_dir, NULL};
    const char *argv[12] = {PK_PKBENCH_PATH, "check", "--baseline", e->base,
                            "--out",         e->out,  "--filter",   "^x/"};
    int k = 8;
    if (extra != NULL) {
        argv[k++] = "--format";
        argv[k++] = extra;
    }
    argv[k] = NULL;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .env.set = env, .timeout_ms = 60000}, r));
    ASSERT_EQ(r->outcome.kind, PK_OUTCOME_EXITED);
    printf("check exit %d\n--- stdout\n%s--- stderr\n%s", r->outcome.code, text_of(&r->out),
           text_of(&r->err));
    return r->outcome.code;
}

/* The arguments each fake run was started with, one line per run. */
static char *calls_of(const struct check_env *e)
{
    char path[700];
    snprintf(path, sizeof path, "%s/calls.log", e->dir);
    return pk_test_slurp(path);
}

TEST_IMPL(pkbench_check_confirms_only_what_repeats)
{
    /* x/a and x/b+1 both regress by 50% in the first run; in the re-run only x/a does. */
    struct check_env e;
    check_setup(&e, "repeats");
    prepare_run(&e, 1, 2, (const double[]){1.5, 1.5, 1});
    prepare_run(&e, 2, 3, (const double[]){1.5, 1, 1});
    pk_result r;
    ASSERT_EQ(run_check(&e, NULL, &r), 2);
    const char *out = text_of(&r.out), *err = text_of(&r.err);
    ASSERT_HAS(out, "confirmed:    x/a (+");
    ASSERT_HAS(out, "not repeated: x/b+1 (+");
    ASSERT_LACKS(out, "confirmed:    x/b+1");
    ASSERT_HAS(out, "Conclusion: 1 of 2 regressions repeated.");
    ASSERT_HAS(err, "pkbench: re-running 2 series that regressed, to confirm: x/a (+");
    const char *line = strstr(err, "pkbench: regressed (repeated in the re-run): x/a (+");
    ASSERT(line != NULL);
    ASSERT(strchr(line, '\n') != NULL);
    /* x/b+1 is not on the line that says what repeated. */
    char said[512];
    snprintf(said, sizeof said, "%.*s", (int)(strchr(line, '\n') - line), line);
    ASSERT_LACKS(said, "x/b+1");
    ASSERT_HAS(err, e.out);
    ASSERT_HAS(err, e.rerun);
    pk_result_release(&r);

    /* The run, then the re-run of exactly the two regressed series, into the -rerun file. */
    char *calls = calls_of(&e), want[2048];
    snprintf(want, sizeof want,
             "run --suite scenarios --profile quick --out %s --filter ^x/\n"
             "run --suite scenarios --profile quick --out %s --filter ^(x/a|x/b\\+1)$\n",
             e.out, e.rerun);
    ASSERT_STR_EQ(calls, want);
    free(calls);
    ASSERT_EQ(access(e.out, R_OK), 0);
    ASSERT_EQ(access(e.rerun, R_OK), 0);
}

TEST_IMPL(pkbench_check_passes_run_options)
{
    /* --settle and --repetitions reach the run as given; no regression, so no re-run. */
    struct check_env e;
    check_setup(&e, "options");
    prepare_run(&e, 1, 2, (const double[]){1, 1, 1});
    char set_runner[700], set_dir[600];
    snprintf(set_runner, sizeof set_runner, "PKBENCH_CHECK_RUNNER=%s", e.runner);
    snprintf(set_dir, sizeof set_dir, "PK_FAKE_RUN_DIR=%s", e.dir);
    const char *const env[] = {set_runner, set_dir, NULL};
    const char *argv[] = {PK_PKBENCH_PATH, "check",         "--baseline", e.base,
                          "--out",         e.out,           "--filter",   "^x/",
                          "--settle=0.02", "--repetitions", "9",          NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .env.set = env, .timeout_ms = 60000}, &r));
    ASSERT_EXITED(r, 0);
    pk_result_release(&r);
    char *calls = calls_of(&e), want[2048];
    snprintf(want, sizeof want,
             "run --suite scenarios --profile quick --out %s --filter ^x/ --settle 0.02 "
             "--repetitions 9\n",
             e.out);
    ASSERT_STR_EQ(calls, want);
    free(calls);
}

TEST_IMPL(pkbench_check_unrepeated_regressions_exit_0)
{
    /* Both regress in the first run, neither in the re-run: nothing is confirmed. */
    struct check_env e;
    check_setup(&e, "unrepeated");
    prepare_run(&e, 1, 2, (const double[]){1.5, 1.5, 1});
    prepare_run(&e, 2, 4, (const double[]){1, 1, 1});
    pk_result r;
    ASSERT_EQ(run_check(&e, "json", &r), 0);
    json_error_t je;
    json_t *j = json_loads(text_of(&r.out), 0, &je);
    if (j == NULL)
        pk_test_fail(__FILE__, __LINE__, "check's JSON does not parse: %s", je.text);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "schema")), "pkbench-check");
    ASSERT_EQ(json_integer_value(json_object_get(j, "status")), 0);
    ASSERT_EQ(json_array_size(json_object_get(j, "confirmed")), 0);
    json_t *nr = json_object_get(j, "not_repeated");
    ASSERT_EQ(json_array_size(nr), 2);
    ASSERT_STR_EQ(json_string_value(json_array_get(nr, 0)), "x/a");
    ASSERT_STR_EQ(json_string_value(json_array_get(nr, 1)), "x/b+1");
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(j, "comparison"), "status")), 2);
    json_t *rerun = json_object_get(j, "rerun");
    ASSERT_STR_EQ(json_string_value(json_object_get(rerun, "results")), e.rerun);
    /* The re-run's comparison names its filter (found by ASan: it was read after being freed). */
    json_t *ro = json_object_get(json_object_get(rerun, "comparison"), "options");
    ASSERT_STR_EQ(json_string_value(json_object_get(ro, "filter")), "^(x/a|x/b\\+1)$");
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(rerun, "comparison"), "status")),
              0);
    json_decref(j);
    ASSERT_HAS(text_of(&r.err), "pkbench: no regression repeated in the re-run");
    pk_result_release(&r);
}

TEST_IMPL(pkbench_check_undecidable_rerun_exits_3)
{
    /* x/a regresses in the first run; the re-run of it is too noisy to decide: not confirmed,
     * and not "fine" either. */
    struct check_env e;
    check_setup(&e, "undecidable");
    prepare_run(&e, 1, 2, (const double[]){1.5, 1, 1});
    prepare_run(&e, 2, 5, (const double[]){-1, 1, 1});
    pk_result r;
    ASSERT_EQ(run_check(&e, NULL, &r), 3);
    ASSERT_HAS(text_of(&r.out), "not repeated: x/a (+");
    ASSERT_HAS(text_of(&r.out), "Conclusion: 0 of 1 regression repeated.");
    ASSERT_HAS(text_of(&r.err), "cannot decide: x/a (re-run: too noisy: cv ");
    pk_result_release(&r);
    char *calls = calls_of(&e);
    ASSERT_HAS(calls, "--filter ^(x/a)$");
    free(calls);
}

TEST_IMPL(pkbench_check_without_regression_runs_once)
{
    /* Nothing regresses: no re-run, exit 0; a failed run's status comes through and nothing is
     * compared. */
    struct check_env e;
    check_setup(&e, "clean");
    prepare_run(&e, 1, 6, (const double[]){1, 1, 1});
    pk_result r;
    ASSERT_EQ(run_check(&e, NULL, &r), 0);
    ASSERT_LACKS(text_of(&r.err), "re-running");
    ASSERT_LACKS(text_of(&r.out), "Conclusion");
    pk_result_release(&r);
    char *calls = calls_of(&e);
    ASSERT_EQ(strchr(calls, '\n') - calls + 1, (long)strlen(calls)); /* one call */
    free(calls);

    struct check_env f;
    check_setup(&f, "failing");
    char path[700];
    snprintf(path, sizeof path, "%s/exit-1", f.dir);
    FILE *x = fopen(path, "we");
    ASSERT(x != NULL);
    fputs("1\n", x);
    ASSERT_EQ(fclose(x), 0);
    ASSERT_EQ(run_check(&f, NULL, &r), 1);
    ASSERT_LACKS(text_of(&r.out), "series");
    pk_result_release(&r);
}

/* ==== Output onto a file that is not a regular file ========================================== */

TEST_IMPL(compare_out_onto_a_fifo_writes_through)
{
    /* --out is written atomically (a temporary file renamed into place) only onto a regular
     * file; a FIFO (like /dev/stdout or a device) is written through, and stays what it is. */
    need_pkbench();
    char base[512], cand[512], fifo[512];
    tmp_path(base, sizeof base, "fifo-base.json");
    tmp_path(cand, sizeof cand, "fifo-new.json");
    tmp_path(fifo, sizeof fifo, "out.fifo");
    holm_files(base, cand, 1);
    ASSERT_EQ(mkfifo(fifo, 0600), 0);
    /* The reader: cat, bounded in time in case the FIFO is replaced and nobody ever writes. */
    pk_process *reader;
    const char *const cat[] = {"cat", fifo, NULL};
    ASSERT_OK(pk_spawn(&(pk_command){.argv = cat, .timeout_ms = 30000}, &reader, NULL));
    const char *const argv[] = {PK_PKBENCH_PATH, "compare", base, cand, "--format",
                                "json",          "--out",   fifo, NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .timeout_ms = 30000}, &r));
    ASSERT_EXITED(r, 0);
    pk_result_release(&r);
    struct stat st;
    ASSERT_EQ(lstat(fifo, &st), 0);
    bool still_fifo = S_ISFIFO(st.st_mode);
    if (!still_fifo)
        ASSERT_OK(pk_process_signal(reader, SIGKILL));
    ASSERT(still_fifo);
    ASSERT_OK(pk_process_wait(reader, &r));
    ASSERT_EXITED(r, 0);
    json_t *j = json_loads(text_of(&r.out), 0, NULL);
    ASSERT(j != NULL);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "schema")), "pkbench-compare");
    json_decref(j);
    pk_result_release(&r);
    pk_process_free(reader);
}
