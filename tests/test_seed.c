/*
 * The scenarios report's table in the seed's own layout (harness/suites/scenarios/seed.c): on a
 * synthetic file, its three scenarios with processkit, rust_tokio and rust_std in that order, Δ
 * against rust_std with the verdict compare gives, units in the cells, a series not timed named
 * with its reason; the terminal shows the same rows; the targets hold processkit against the
 * language contenders the file has; and a file without a Rust contender has no such section.
 */
#define _GNU_SOURCE
#include "test.h"

#include "common/buf.h"
#include "suites/suite.h"
#include "synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 11 };

static double samples[12][N];

/* 11 samples whose median is exactly `median_ns`, spread by ±0.5%. */
static const double *around(int slot, double median_ns)
{
    for (int i = 0; i < N; i++)
        samples[slot][i] = median_ns * (1 + 0.001 * (i - 5));
    return samples[slot];
}

static void expect_in(const char *text, const char *want, int line)
{
    if (strstr(text, want) == NULL)
        pk_test_fail(__FILE__, line, "the output lacks \"%s\":\n%s", want, text);
}
#define EXPECT_IN(text, want) expect_in((text), (want), __LINE__)

static char *render(const char *path)
{
    char dir[512], md[600], err[512] = "";
    snprintf(dir, sizeof dir, "%s/report", pk_test_tmpdir());
    if (pkb_report_render(path, dir, &(pkb_report_options){.no_plots = true}, err, sizeof err))
        pk_test_fail(__FILE__, __LINE__, "render: %s", err);
    const char *base = strrchr(path, '/') + 1;
    snprintf(md, sizeof md, "%s/%.*s.md", dir, (int)(strlen(base) - 5), base);
    return pk_test_slurp(md);
}

TEST_IMPL(report_seed_table_beside_ours)
{
    static const char *const scen[] = {"spawn_capture_small", "stream_large_stdout",
                                       "concurrent_fan_out"};
    pk_test_series s[12];
    char names[12][64];
    size_t n = 0;
    for (int k = 0; k < 3; k++) {
        static const struct {
            const char *who;
            double ns;
        } rows[] = {{"posix_spawn", 90e3},
                    {"rust_std", 100e3},
                    {"processkit", 80e3},
                    {"rust_tokio", 130e3}};
        for (int j = 0; j < 4; j++) {
            snprintf(names[n], sizeof names[n], "%s/%s", scen[k], rows[j].who);
            s[n] =
                (pk_test_series){.name = names[n], .samples = around((int)n, rows[j].ns), .n = N};
            if (k == 2 && j == 3) /* the fan-out's Tokio series was refused */
                s[n] = (pk_test_series){.name = names[n], .status = "refused"};
            n++;
        }
    }
    char path[512];
    snprintf(path, sizeof path, "%s/seed.json", pk_test_tmpdir());
    pk_test_write_results(path, s, n);
    char *md = render(path);
    EXPECT_IN(md, "### The seed's table, side by side");
    EXPECT_IN(md, "| Small capture | `processkit` | 80.00 µs | 80.00 ± 0.265 µs | 12,500 runs/s | "
                  "-20.0% | [-20.3%, -19.7%] | **faster** |\n"
                  "| Small capture | `rust_tokio` | 130.0 µs | 130.0 ± 0.431 µs | 7,692 runs/s | "
                  "+30.0% | [+29.5%, +30.5%] | **slower** |\n"
                  "| Small capture | `rust_std` | 100.0 µs | 100.0 ± 0.332 µs | 10,000 runs/s | "
                  "baseline |  |  |\n| Large streaming | `processkit` |");
    EXPECT_IN(md, "| Concurrent fan-out | `rust_tokio` | not timed: refused |");
    EXPECT_IN(md, "Not timed: `concurrent_fan_out/rust_tokio`");
    /* processkit against the language contenders, in the targets. */
    EXPECT_IN(md, "| `processkit` ahead of `rust_std` in every scenario | 0.800×");
    EXPECT_IN(md, "| `processkit` ahead of `rust_tokio` in every scenario | 0.615×");
    ASSERT(strstr(md, "ahead of `go_exec`") == NULL); /* not in the file: not listed */
    free(md);

    char err[256] = "";
    pkb_buf term = {0};
    ASSERT_OK(pkb_report_print(path, false, &term, err, sizeof err));
    EXPECT_IN(term.data, "the seed's table");
    /* The first row of the seed's table (the scenario tables' rows start with a contender). */
    EXPECT_ROW(term.data, "Small capture", "processkit", "80.00 µs", "80.00 ± 0.265 µs",
               "12,500 runs/s", "-20.0%", "[-20.3%, -19.7%]", "faster");
    pkb_buf_free(&term);

    /* Without a Rust contender: no such section. */
    snprintf(path, sizeof path, "%s/no-seed.json", pk_test_tmpdir());
    pk_test_write_results(path, s, 1);
    md = render(path);
    ASSERT(strstr(md, "The seed's table") == NULL);
    free(md);
}
