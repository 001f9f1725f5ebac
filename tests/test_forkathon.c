/*
 * The fork/vfork study (pkbench run --suite forkathon): Wemm's loop, built static and dynamic,
 * reaps exactly the children it started and leaves none (this process is made a child subreaper,
 * so an orphan it left would become our zombie — a control run proves that check sees one); the
 * RSS ladder's ballast is resident while it lives and gone from VmRSS when freed; the least-squares
 * fit is exact on a line and below R² = 1 on noise; the summary computes Wemm's ratios and the
 * slopes from series; and a tiny end-to-end run writes a schema-valid file that renders. No
 * timing is asserted anywhere.
 */
#define _GNU_SOURCE
#include "test.h"

#include "suites/forkathon/ballast.h"
#include "common/fit.h"
#include "suites/forkathon/forkathon.h"
#include "suites/suite.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PK_FORKATHON_STATIC_PATH
#define PK_FORKATHON_STATIC_PATH ""
#endif
#ifndef PK_FORKATHON_DYNAMIC_PATH
#define PK_FORKATHON_DYNAMIC_PATH ""
#endif
#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif

#define ASSERT_NEAR(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (tol)))                                                             \
            pk_test_fail(__FILE__, __LINE__, "%s ≈ %s: %.12g vs %.12g", #a, #b, a_, b_);           \
    } while (0)

/* No child of ours, running or zombie, is left. */
static bool no_child_left(void)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 && errno == ECHILD;
}

/* Runs argv uncontained, stdout captured; returns the exit code. */
static int run_captured(const char *const *argv, pk_result *r)
{
    ASSERT_OK(pk_run(
        &(pk_command){.argv = argv, .containment = PK_CONTAIN_NONE, .timeout_ms = 60000}, r));
    ASSERT_EQ(r->outcome.kind, PK_OUTCOME_EXITED);
    return r->outcome.code;
}

TEST_IMPL(forkathon_reaps_exactly_n_static_and_dynamic)
{
    if (PK_FORKATHON_STATIC_PATH[0] == '\0')
        pk_test_skip_gate("build", "pk_forkathon is built only with PK_BUILD_BENCH");
    ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);

    /* Control: an orphan left behind by a child becomes our zombie, and the check sees it. */
    pk_result r;
    ASSERT_EQ(run_captured((const char *const[]){"/bin/sh", "-c", "/bin/true & exit 0", NULL}, &r),
              0);
    pk_result_release(&r);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    ASSERT_EQ(waitid(P_ALL, 0, &si, WEXITED | WNOWAIT), 0);
    ASSERT(!no_child_left());
    ASSERT_EQ(waitid(P_ALL, 0, &si, WEXITED), 0);
    ASSERT(no_child_left());

    const char *const binaries[] = {PK_FORKATHON_STATIC_PATH, PK_FORKATHON_DYNAMIC_PATH};
    const char *const linkages[] = {"static", "dynamic"};
    const char *const loops[] = {"fork", "vfork"};
    for (int l = 0; l < 2; l++) {
        for (int m = 0; m < 2; m++) {
            for (long n = 0; n <= 300; n += 300) {
                char count[16];
                snprintf(count, sizeof count, "%ld", n);
                ASSERT_EQ(
                    run_captured((const char *const[]){binaries[l], loops[m], count, NULL}, &r), 0);
                long iterations = -1, started = -1, reaped = -1;
                int left = -1;
                char mech[16] = "", link[16] = "";
                ASSERT(r.out.data != NULL);
                ASSERT_EQ(sscanf(r.out.data,
                                 "forkathon mechanism=%15s linkage=%15s iterations=%ld "
                                 "started=%ld reaped=%ld left=%d",
                                 mech, link, &iterations, &started, &reaped, &left),
                          6);
                ASSERT_STR_EQ(mech, loops[m]);
                ASSERT_STR_EQ(link, linkages[l]);
                ASSERT_EQ(iterations, n);
                ASSERT_EQ(started, n);
                ASSERT_EQ(reaped, n);
                ASSERT_EQ(left, 0);
                pk_result_release(&r);
                /* Nothing it started outlived it: no orphan was handed to us. */
                ASSERT(no_child_left());
            }
        }
        /* Bad usage is exit 2 with the usage on stderr. */
        ASSERT_EQ(run_captured((const char *const[]){binaries[l], "spoon", "3", NULL}, &r), 2);
        pk_result_release(&r);
        ASSERT_EQ(run_captured((const char *const[]){binaries[l], "fork", "-1", NULL}, &r), 2);
        pk_result_release(&r);
    }
}

TEST_IMPL(forkathon_ladder_releases_memory_between_steps)
{
    static const size_t steps_mib[] = {0, 16, 64, 128};
    long start = pkb_self_rss_kib(), shadows_kib = 0;
    ASSERT_GT(start, 0);
    for (int huge = 0; huge < 2; huge++) {
        for (size_t i = 0; i < sizeof steps_mib / sizeof steps_mib[0]; i++) {
            long step_kib = (long)steps_mib[i] * 1024;
            long before = pkb_self_rss_kib(), huge_before = pkb_self_anon_huge_kib();
            pkb_ballast b;
            ASSERT_OK(pkb_ballast_alloc(&b, steps_mib[i] << 20, huge == 1));
            long during = pkb_self_rss_kib();
            /* All of it resident (the page tables and our own bookkeeping aside; under ASan also
             * the shadow its mmap interceptor clears, an eighth of a range never mapped before). */
            long shadow_kib = PK_TEST_UNDER_ASAN ? step_kib / 8 : 0;
            shadows_kib += shadow_kib;
            ASSERT_GE(during, before + step_kib - step_kib / 64);
            ASSERT_LE(during, before + step_kib + 4096 + shadow_kib);
            if (huge == 0 && huge_before >= 0)
                ASSERT_LE(pkb_self_anon_huge_kib(), huge_before); /* MADV_NOHUGEPAGE held */
            if (steps_mib[i] > 0) {
                ASSERT(b.base != NULL);
                ASSERT_EQ((uintptr_t)b.base % (2u << 20), 0);
                ASSERT_EQ(b.len, steps_mib[i] << 20);
            }
            pkb_ballast_free(&b);
            ASSERT(b.map == NULL);
            long after = pkb_self_rss_kib();
            /* Released: back where the step started, within 2 MiB (and the step's shadow under
             * ASan, which stays resident after the unmap). */
            if (after > before + 2048 + shadow_kib)
                pk_test_fail(__FILE__, __LINE__,
                             "%zu MiB (THP %s): VmRSS %ld KiB before, %ld during, %ld after",
                             steps_mib[i], huge ? "on" : "off", before, during, after);
        }
    }
    ASSERT_LE(pkb_self_rss_kib(), start + 4096 + shadows_kib);
    pkb_ballast none;
    ASSERT_OK(pkb_ballast_alloc(&none, 0, false));
    ASSERT(none.map == NULL);
    pkb_ballast_free(&none);
    char mode[32];
    pkb_thp_mode("enabled", mode, sizeof mode);
    ASSERT(mode[0] != '\0');
}

TEST_IMPL(forkathon_least_squares_fit)
{
    /* A perfect line: the ladder's steps, fork's 28 µs per MiB over a 150 µs floor. */
    double x[] = {5, 69, 261, 1029, 4101}, y[5];
    for (int i = 0; i < 5; i++)
        y[i] = 150 + 28 * x[i];
    pkb_fit f;
    ASSERT_OK(pkb_fit_linear(x, y, 5, &f));
    ASSERT_EQ(f.n, 5);
    ASSERT_NEAR(f.slope, 28, 1e-9);
    ASSERT_NEAR(f.intercept, 150, 1e-6);
    ASSERT_NEAR(f.r2, 1, 1e-12);

    /* Noise around it: nearly the same slope, R² below 1. */
    static const double noise[] = {40, -35, 60, -80, 25};
    for (int i = 0; i < 5; i++)
        y[i] = 150 + 28 * x[i] + noise[i];
    ASSERT_OK(pkb_fit_linear(x, y, 5, &f));
    ASSERT_NEAR(f.slope, 28, 0.1);
    ASSERT(f.r2 < 1);
    ASSERT(f.r2 > 0.99);

    /* Pure noise around a flat line: R² near 0 (the vfork family's case). */
    double fx[] = {1, 2, 3, 4, 5, 6}, fy[] = {100, 90, 110, 110, 90, 100};
    ASSERT_OK(pkb_fit_linear(fx, fy, 6, &f));
    ASSERT_NEAR(f.slope, 0, 1e-12);
    ASSERT_NEAR(f.r2, 0, 1e-12);

    /* Every y equal: the horizontal line is exact. */
    double cy[] = {7, 7, 7};
    ASSERT_OK(pkb_fit_linear(fx, cy, 3, &f));
    ASSERT_NEAR(f.slope, 0, 0);
    ASSERT_NEAR(f.intercept, 7, 0);
    ASSERT_NEAR(f.r2, 1, 0);

    /* What has no line. */
    double same[] = {3, 3, 3}, bad[] = {1, NAN, 3};
    ASSERT_EQ(pkb_fit_linear(same, fy, 3, &f), -EDOM);
    ASSERT_EQ(pkb_fit_linear(fx, fy, 1, &f), -EINVAL);
    ASSERT_EQ(pkb_fit_linear(bad, fy, 3, &f), -EINVAL);
    ASSERT_EQ(pkb_fit_linear(NULL, fy, 3, &f), -EINVAL);
}

/* A settled series as the results file holds it. */
static json_t *wemm_series(const char *mech, const char *link, double wall, double cpu)
{
    return json_pack("{s:s, s:s, s:[f, f, f], s:{s:s, s:s, s:s, s:i, s:[f, f, f], s:[f, f, f], "
                     "s:[f, f, f], s:[f, f, f], s:[i, i, i]}}",
                     "name", "wemm/x", "status", "measured", "samples_ns", wall * 1e4, wall * 1e4,
                     wall * 1e4, "forkathon", "study", "wemm", "mechanism", mech, "linkage", link,
                     "iterations", 100000, "user_s", 0.0, 0.0, 0.0, "sys_s", cpu, cpu * 1.1,
                     cpu * 0.9, "wall_s", wall * 0.9, wall, wall * 1.2, "loop_s", wall, wall, wall,
                     "reaped", 100000, 100000, 100000);
}

static json_t *rss_series(const char *mech, const char *thp, int step, double us)
{
    return json_pack("{s:s, s:s, s:[f, f], s:{s:s, s:s, s:s, s:i, s:I, s:i, s:i}}", "name", "rss/x",
                     "status", "measured", "samples_ns", us * 1e3, us * 1e3, "forkathon", "study",
                     "rss", "mechanism", mech, "thp", thp, "step_mib", step, "rss_kib",
                     (json_int_t)(step + 4) * 1024, "anon_huge_kib", 0, "cycles", 1);
}

static double at(const json_t *o, const char *a, const char *b, const char *c)
{
    return json_number_value(json_object_get(json_object_get(json_object_get(o, a), b), c));
}

TEST_IMPL(forkathon_summary_ratios_and_slopes)
{
    json_t *series = json_array();
    json_array_append_new(series, wemm_series("fork", "static", 6.0, 5.0));
    json_array_append_new(series, wemm_series("vfork", "static", 2.0, 2.0));
    json_array_append_new(series, wemm_series("fork", "dynamic", 18.0, 16.0));
    json_array_append_new(series, wemm_series("vfork", "dynamic", 2.25, 2.0));
    static const int steps[] = {0, 64, 256, 1024};
    for (int i = 0; i < 4; i++) {
        json_array_append_new(
            series, rss_series("fork_execve", "off", steps[i], 100 + 28.0 * (steps[i] + 4)));
        json_array_append_new(series, rss_series("vfork_execve", "off", steps[i], 90));
    }
    /* Not measured: ignored. */
    json_t *refused = rss_series("posix_spawn", "off", 0, 1);
    json_object_set_new(refused, "status", json_string("refused"));
    json_array_append_new(series, refused);

    json_t *sum = pkb_forkathon_summarize(series);
    ASSERT(sum != NULL);
    ASSERT_EQ(json_array_size(json_object_get(sum, "wemm")), 4);
    ASSERT_NEAR(at(sum, "ratios", "vfork_vs_fork", "static"), 3.0, 1e-9);
    ASSERT_NEAR(at(sum, "ratios", "vfork_vs_fork", "dynamic"), 8.0, 1e-9);
    ASSERT_NEAR(at(sum, "ratios", "dynamic_vs_static", "fork"), 3.0, 1e-9);
    ASSERT_NEAR(at(sum, "ratios", "dynamic_vs_static", "vfork"), 1.125, 1e-9);
    ASSERT_NEAR(at(sum, "ratios", "vfork_vs_fork_cpu", "static"), 2.5, 1e-9);
    /* Wemm's own: 6.38 / 2.34 and 17.81 / 2.30 by wall. */
    ASSERT_NEAR(at(sum, "ratios_2003", "vfork_vs_fork", "static"), 6.38 / 2.34, 1e-9);
    ASSERT_NEAR(at(sum, "ratios_2003", "vfork_vs_fork", "dynamic"), 17.81 / 2.30, 1e-9);
    const json_t *row = json_array_get(json_object_get(sum, "wemm"), 0);
    ASSERT_STR_EQ(json_string_value(json_object_get(row, "binary")), "forkathon.static");
    ASSERT_NEAR(json_number_value(json_object_get(row, "us_per_fork")), 60.0, 1e-9);
    /* %CPU per run, then the median: runs at 5/5.4, 5.5/6 and 4.5/7.2. */
    ASSERT_NEAR(json_number_value(json_object_get(row, "cpu_pct")), 5.5 / 6.0 * 100, 1e-9);

    const json_t *curves = json_object_get(sum, "curves");
    ASSERT_EQ(json_array_size(curves), 2);
    const json_t *fork = json_array_get(curves, 0), *vfork = json_array_get(curves, 1);
    ASSERT_STR_EQ(json_string_value(json_object_get(fork, "mechanism")), "fork_execve");
    ASSERT_EQ(json_array_size(json_object_get(fork, "points")), 4);
    const json_t *ff = json_object_get(fork, "fit");
    ASSERT_NEAR(json_number_value(json_object_get(ff, "slope_us_per_mib")), 28.0, 1e-9);
    ASSERT_NEAR(json_number_value(json_object_get(ff, "intercept_us")), 100.0, 1e-6);
    ASSERT_NEAR(json_number_value(json_object_get(ff, "r2")), 1.0, 1e-12);
    ASSERT_NEAR(
        json_number_value(json_object_get(json_object_get(vfork, "fit"), "slope_us_per_mib")), 0.0,
        1e-12);
    json_decref(sum);
    json_decref(series);
}

/* Validates a results file against harness/results/schema.json with python3-jsonschema (checked
 * for before the run). */
static void validate(const char *path)
{
    (void)pk_test_validate_results(path);
}

static int pkbench(const char *const *argv, pk_result *r)
{
    ASSERT_OK(
        pk_run(&(pk_command){.argv = argv, .err.kind = PK_STDIO_CAPTURE, .timeout_ms = 120000}, r));
    ASSERT_EQ(r->outcome.kind, PK_OUTCOME_EXITED);
    return r->outcome.code;
}

TEST_IMPL(forkathon_pkbench_tiny_run_and_report)
{
    if (PK_PKBENCH_PATH[0] == '\0')
        pk_test_skip_gate("build", "pkbench is built only with PK_BUILD_BENCH");
    pk_test_need_jsonschema();
    char out[512], dir[512];
    snprintf(out, sizeof out, "%s/forkathon-tiny.json", pk_test_tmpdir());
    snprintf(dir, sizeof dir, "%s/reports", pk_test_tmpdir());
    pk_result r;
    int code =
        pkbench((const char *const[]){PK_PKBENCH_PATH, "run", "--suite", "forkathon", "--profile",
                                      "quick", "--iterations", "200", "--filter",
                                      "^(wemm/|rss_(0|64)MiB_)", "--out", out, NULL},
                &r);
    if (code != 0)
        pk_test_fail(__FILE__, __LINE__, "pkbench run exited %d: %s", code,
                     r.err.data ? r.err.data : "");
    char *printed = strdup(r.out.data != NULL ? r.out.data : "");
    pk_result_release(&r);
    validate(out);

    json_error_t jerr;
    json_t *j = json_load_file(out, 0, &jerr);
    ASSERT(j != NULL);
    ASSERT(json_is_true(json_object_get(j, "complete")));
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "suite")), "forkathon");
    const json_t *series = json_object_get(j, "series");
    ASSERT_EQ(json_array_size(series), 4 + 2 * 2 * pkb_fk_mechanism_count);
    size_t i, wemm = 0;
    const json_t *s;
    json_array_foreach(series, i, s)
    {
        ASSERT_STR_EQ(json_string_value(json_object_get(s, "status")), "measured");
        const json_t *fk = json_object_get(s, "forkathon");
        const json_t *samples = json_object_get(s, "samples_ns");
        if (strcmp(json_string_value(json_object_get(fk, "study")), "wemm") == 0) {
            /* Every run reaped exactly the 200 children it started. */
            const json_t *reaped = json_object_get(fk, "reaped");
            ASSERT_EQ(json_array_size(reaped), json_array_size(samples));
            ASSERT_EQ(json_array_size(reaped), 3);
            for (size_t k = 0; k < json_array_size(reaped); k++)
                ASSERT_EQ(json_integer_value(json_array_get(reaped, k)), 200);
            wemm++;
        } else {
            ASSERT_EQ(json_array_size(samples), 7);
        }
    }
    ASSERT_EQ(wemm, 4);
    /* Every step of the ladder gave its memory back. */
    const json_t *ladder = json_object_get(json_object_get(j, "forkathon"), "ladder");
    ASSERT_EQ(json_array_size(ladder), 4);
    json_array_foreach(ladder, i, s)
    {
        ASSERT(json_is_true(json_object_get(s, "released")));
        long step = (long)json_integer_value(json_object_get(s, "step_mib"));
        ASSERT_GE(json_integer_value(json_object_get(s, "rss_kib")),
                  json_integer_value(json_object_get(s, "rss_before_kib")) + step * 1000);
    }
    const json_t *curves =
        json_object_get(json_object_get(json_object_get(j, "forkathon"), "summary"), "curves");
    ASSERT_EQ(json_array_size(curves), 2 * pkb_fk_mechanism_count);
    json_array_foreach(curves, i, s) ASSERT(json_is_object(json_object_get(s, "fit")));
    /* The run ended with the study's tables on stdout: the ratios are the file's summary's. */
    printf("%s", printed);
    const json_t *sum = json_object_get(json_object_get(j, "forkathon"), "summary");
    const json_t *ratios = json_object_get(sum, "ratios");
    char cell[4][32];
    static const char *const groups[] = {"vfork_vs_fork", "vfork_vs_fork_cpu"};
    static const char *const labels[] = {"wall time", "CPU (user + sys)"};
    for (int g = 0; g < 2; g++) {
        const json_t *rg = json_object_get(ratios, groups[g]);
        snprintf(cell[0], sizeof cell[0], "%.2f×",
                 json_number_value(json_object_get(rg, "static")));
        snprintf(cell[1], sizeof cell[1], "%.2f×",
                 json_number_value(json_object_get(rg, "dynamic")));
        snprintf(cell[2], sizeof cell[2], "%s", g == 0 ? "2.73×" : "2.93×"); /* Wemm's */
        snprintf(cell[3], sizeof cell[3], "%s", g == 0 ? "7.74×" : "8.57×");
        /* The vfork-vs-fork table comes first, so its rows are the first with these labels. */
        EXPECT_ROW(strstr(printed, "vfork vs fork"), labels[g], cell[0], cell[1], cell[2], cell[3]);
    }
    const json_t *fork_off = json_array_get(curves, 0);
    ASSERT_STR_EQ(json_string_value(json_object_get(fork_off, "mechanism")), "fork_execve");
    char slope[32], r2[32];
    const json_t *fit = json_object_get(fork_off, "fit");
    snprintf(slope, sizeof slope, "%.3f",
             json_number_value(json_object_get(fit, "slope_us_per_mib")));
    snprintf(r2, sizeof r2, "%.4f", json_number_value(json_object_get(fit, "r2")));
    const char *fits = strstr(printed, "spawn cost against the parent's RSS");
    ASSERT(fits != NULL);
    ASSERT(strstr(fits, slope) != NULL && strstr(fits, r2) != NULL);
    ASSERT(strstr(printed, "results  ") != NULL);
    free(printed);
    json_decref(j);

    /* The report: Markdown, both figures from both tools. */
    char err[512] = "";
    int rc = pkb_report_render(out, dir, NULL, err, sizeof err);
    if (rc != 0)
        pk_test_fail(__FILE__, __LINE__, "report: %s", err);
    static const char *const files[] = {
        "forkathon-tiny.md",
        "forkathon-tiny-wemm.gnuplot.png",
        "forkathon-tiny-wemm.gnuplot.svg",
        "forkathon-tiny-wemm.matplotlib.png",
        "forkathon-tiny-rss_ladder.gnuplot.png",
        "forkathon-tiny-rss_ladder.gnuplot.svg",
        "forkathon-tiny-rss_ladder.matplotlib.png",
        "forkathon-tiny-rss_ladder.dat",
    };
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        struct stat st;
        if (stat(path, &st) != 0 || st.st_size == 0)
            pk_test_fail(__FILE__, __LINE__, "the report did not write %s", files[k]);
    }
    char md[1024];
    snprintf(md, sizeof md, "%s/forkathon-tiny.md", dir);
    FILE *f = fopen(md, "re");
    ASSERT(f != NULL);
    static char text[1 << 17];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    ASSERT(strstr(text, "## Wemm's forkathon") != NULL);
    ASSERT(strstr(text, "| vfork vs fork (fork ÷ vfork) |") != NULL);
    ASSERT(strstr(text, "**fork+execve, THP off: ") != NULL);
    ASSERT(strstr(text, "### Least-squares fits") != NULL);
    ASSERT(strstr(text, "| off | 64 MiB |") != NULL);

    /* --iterations belongs to the forkathon suite. */
    ASSERT_EQ(pkbench((const char *const[]){PK_PKBENCH_PATH, "run", "--iterations", "5", NULL}, &r),
              1);
    ASSERT(strstr(r.err.data, "--iterations does not apply to the scenarios suite") != NULL);
    pk_result_release(&r);
}
