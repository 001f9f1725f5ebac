/*
 * What pkbench shows on a terminal, checked against the results file it wrote: a tiny run through
 * `pkbench run` with its output on pipes must print, per finished series, a line whose median,
 * mean ± sd, throughput and delta are the file's numbers (the delta only once the baseline has
 * run), then the final table with the same cells, aligned, without colour, and the path of the
 * file; `pkbench report --print` must print the same tables. The pieces underneath are checked on
 * their own: the table's alignment (display widths, colour kept outside the padding), the colour
 * decision (NO_COLOR, TERM, a terminal or not), the phases and forkathon views on synthetic and
 * real files, and `./x help`.
 *
 * Expected values are computed here from the file's own fields (the writer's `summary`, checked
 * against the samples) with this file's arithmetic and formatting, not with the harness's
 * functions, so a renderer that computes or formats a number differently fails.
 */
#define _GNU_SOURCE
#include "test.h"

#include "common/term.h"
#include "run/run.h"
#include "suites/suite.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif
#ifndef PK_SOURCE_DIR
#error "PK_SOURCE_DIR must name the source tree"
#endif

static void need_pkbench(void)
{
    if (PK_PKBENCH_PATH[0] == '\0')
        pk_test_skip("pkbench is built only with PK_BUILD_BENCH");
}

/* Runs pkbench with stdout and stderr on pipes (captured); returns its exit status. */
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

static const char *text_of(const pk_output *o)
{
    return o->data != NULL ? o->data : "";
}

/* ==== Expected cells, from the file ============================================================
 */

struct expect {
    const json_t *json; /* the series in the results file */
    const char *name, *contender;
    double mean, sd, median, work;
    const char *unit, *table_unit;
    bool baseline;
    long attempts, attempt_used;
    size_t disturbed, n;
    /* The table's cells, in the table's unit; the run line's numbers with their units. */
    char median_cell[64], mean_sd_cell[96], rate_cell[64], line[256], marks[96];
    /* Against the baseline: Δ from the file (paired by round: the median per-round ratio); its
     * CI and the verdict word from
     * `pkbench compare FILE --baseline-contender posix_spawn`. */
    char delta[32], ci[96], verdict[96];
};

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v))
        pk_test_fail(__FILE__, __LINE__, "the results file has no number %s", key);
    return json_number_value(v);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of samples_ns, recomputed (type 7: the mean of the middle two of an even count). */
static double median_of(const json_t *samples)
{
    size_t n = json_array_size(samples);
    ASSERT(n > 0);
    double *v = calloc(n, sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = json_number_value(json_array_get(samples, i));
    qsort(v, n, sizeof *v, cmp_double);
    double m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    free(v);
    return m;
}

/* The median of c's per-round ratios to b (samples of the same `round`), recomputed; *n the
 * rounds paired. */
static double paired_ratio(const json_t *b, const json_t *c, size_t *n)
{
    const json_t *xb = json_object_get(b, "samples_ns"), *xc = json_object_get(c, "samples_ns");
    const json_t *rb = json_object_get(b, "round"), *rc = json_object_get(c, "round");
    json_t *ratios = json_array();
    for (size_t i = 0; i < json_array_size(rb); i++)
        for (size_t j = 0; j < json_array_size(rc); j++)
            if (json_integer_value(json_array_get(rc, j)) ==
                json_integer_value(json_array_get(rb, i))) {
                json_array_append_new(ratios, json_real(json_number_value(json_array_get(xc, j)) /
                                                        json_number_value(json_array_get(xb, i))));
                break;
            }
    *n = json_array_size(ratios);
    double m = *n > 0 ? median_of(ratios) : NAN;
    json_decref(ratios);
    return m;
}

/* ns, µs, ms or s: a table's unit is the one its smallest median reads best in. */
static const char *unit_of(double ns, double *scale)
{
    *scale = ns < 1e3 ? 1 : ns < 1e6 ? 1e3 : ns < 1e9 ? 1e6 : 1e9;
    return ns < 1e3 ? "ns" : ns < 1e6 ? "µs" : ns < 1e9 ? "ms" : "s";
}

/* Four significant digits below 1000, else whole with thousands separators. */
static void rate_text(char *out, size_t cap, double v)
{
    if (v < 1000) {
        snprintf(out, cap, "%.*f", v >= 100 ? 1 : v >= 10 ? 2 : 3, v);
        return;
    }
    char digits[64];
    int n = snprintf(digits, sizeof digits, "%.0f", v);
    size_t at = 0;
    for (int i = 0; i < n && at + 2 < cap; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            out[at++] = ',';
        out[at++] = digits[i];
    }
    out[at] = '\0';
}

static void delta_text(char *out, size_t cap, double d)
{
    double pct = d * 100;
    snprintf(out, cap, "%+.1f%%", fabs(pct) < 0.05 ? 0.0 : pct);
}

static void expect_of(const json_t *s, struct expect *e)
{
    memset(e, 0, sizeof *e);
    e->json = s;
    const json_t *sum = json_object_get(s, "summary");
    e->name = json_string_value(json_object_get(s, "name"));
    e->contender = json_string_value(json_object_get(s, "contender"));
    e->unit = json_string_value(json_object_get(s, "unit"));
    e->baseline = json_is_true(json_object_get(s, "baseline"));
    e->mean = num(sum, "mean_ns");
    e->sd = num(sum, "sd_ns");
    e->median = num(sum, "median_ns");
    e->work = num(s, "work_per_iteration");
    /* The file's summary is its samples' summary. */
    ASSERT(fabs(e->median - median_of(json_object_get(s, "samples_ns"))) <= 1e-9 * e->median);
    e->attempts = (long)json_array_size(json_object_get(s, "attempts"));
    e->attempt_used = (long)json_integer_value(json_object_get(s, "attempt_used"));
    const json_t *flags = json_object_get(s, "disturbed");
    e->n = json_array_size(json_object_get(s, "samples_ns"));
    for (size_t i = 0; i < json_array_size(flags); i++)
        e->disturbed += json_is_true(json_array_get(flags, i));
    if (e->disturbed > 0)
        snprintf(e->marks, sizeof e->marks, "%zu/%zu disturbed", e->disturbed, e->n);
    if (e->attempts > 1)
        snprintf(e->marks + strlen(e->marks), sizeof e->marks - strlen(e->marks),
                 "%sre-measured, attempt %ld kept", e->disturbed > 0 ? "; " : "",
                 e->attempt_used + 1);
}

/* The cells of a scenario's series (one scenario: one table, one unit), and their Δ, CI and
 * verdict against `base` as `compare` (its JSON, parsed here) gives them. */
static void expect_cells(struct expect *e, size_t n, const struct expect *base, const json_t *cmp)
{
    double smallest = INFINITY, scale;
    for (size_t i = 0; i < n; i++)
        smallest = fmin(smallest, e[i].median);
    const char *u = unit_of(smallest, &scale);
    for (size_t i = 0; i < n; i++) {
        char median[32], mean[32], sd[32], rate[32];
        rate_text(median, sizeof median, e[i].median / scale);
        rate_text(mean, sizeof mean, e[i].mean / scale);
        rate_text(sd, sizeof sd, e[i].sd / scale);
        rate_text(rate, sizeof rate, e[i].work / (e[i].median * 1e-9));
        e[i].table_unit = u;
        snprintf(e[i].median_cell, sizeof e[i].median_cell, "%s", median);
        snprintf(e[i].mean_sd_cell, sizeof e[i].mean_sd_cell, "%s ± %s", mean, sd);
        snprintf(e[i].rate_cell, sizeof e[i].rate_cell, "%s", rate);
        snprintf(e[i].line, sizeof e[i].line, "  median %s %s  mean %s ± %s %s  %s %s", median, u,
                 mean, sd, u, rate, e[i].unit);
        if (&e[i] == base)
            continue;
        const json_t *row = NULL, *rows = json_object_get(cmp, "series");
        for (size_t k = 0; k < json_array_size(rows); k++)
            if (strcmp(json_string_value(json_object_get(json_array_get(rows, k), "name")),
                       e[i].name) == 0)
                row = json_array_get(rows, k);
        if (row == NULL)
            pk_test_fail(__FILE__, __LINE__, "compare has no row %s", e[i].name);
        double delta = num(row, "delta"), bar = num(row, "bar");
        /* An interleaved run's series are paired by round (at least 6 rounds in common): the
         * median of the per-round ratios; apart, the ratio of the medians. */
        size_t pairs = 0;
        double ratio = paired_ratio(base->json, e[i].json, &pairs);
        const json_t *paired = json_object_get(row, "paired_rounds");
        if (pairs >= 6) {
            ASSERT(json_is_integer(paired) && (size_t)json_integer_value(paired) == pairs);
        } else {
            ASSERT(json_is_null(paired));
            ratio = e[i].median / base->median;
        }
        delta_text(e[i].delta, sizeof e[i].delta, ratio - 1);
        /* Equal to the ratio's rounding: the file keeps medians to a thousandth of a ns and
         * compare's JSON ten significant digits, so the error grows with the ratio (a +240%
         * series under two CPU hogs missed an absolute 1e-9). */
        ASSERT(fabs(delta - (ratio - 1)) <= 1e-8 * ratio);
        const json_t *ci = json_object_get(row, "ratio_ci");
        char lo[32], hi[32];
        delta_text(lo, sizeof lo, json_number_value(json_array_get(ci, 0)) - 1);
        delta_text(hi, sizeof hi, json_number_value(json_array_get(ci, 1)) - 1);
        snprintf(e[i].ci, sizeof e[i].ci, "[%s, %s]", lo, hi);
        const char *v = json_string_value(json_object_get(row, "verdict"));
        const char *why = json_string_value(json_object_get(row, "reason"));
        if (strcmp(v, "undecidable") == 0) /* "too noisy: cv ..." */
            snprintf(e[i].verdict, sizeof e[i].verdict, "undecidable (%.*s)",
                     why != NULL ? (int)strcspn(why, ":") : 1, why != NULL ? why : "?");
        else
            snprintf(e[i].verdict, sizeof e[i].verdict, "%s",
                     strcmp(v, "regressed") == 0  ? "slower"
                     : strcmp(v, "improved") == 0 ? "faster"
                     : fabs(delta) <= bar         ? "negligible"
                                                  : "not distinguishable");
    }
}

/* ==== Reading what was printed ================================================================ */

/* The line of `text` that starts with `prefix` (copied into out), or fails the test. */
static void line_starting(const char *text, const char *prefix, char *out, size_t cap)
{
    for (const char *p = text; p != NULL && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, prefix, strlen(prefix)) == 0) {
            size_t n = strcspn(p, "\n");
            snprintf(out, cap, "%.*s", (int)n, p);
            return;
        }
    }
    pk_test_fail(__FILE__, __LINE__, "no line starts with \"%s\" in:\n%s", prefix, text);
}

static void expect_in(const char *line, const char *want, int at)
{
    if (strstr(line, want) == NULL)
        pk_test_fail(__FILE__, at, "\"%s\" is not in: %s", want, line);
}

#define EXPECT_IN(line, want) expect_in((line), (want), __LINE__)

/* The display column (code points) where byte offset `off` of `line` is. */
static size_t column(const char *line, size_t off)
{
    size_t c = 0;
    for (size_t i = 0; i < off; i++)
        c += ((unsigned char)line[i] & 0xC0) != 0x80;
    return c;
}

/* The display column just after `cell` in `line` (the cell must be there). */
static size_t end_col(const char *line, const char *cell, int at)
{
    const char *p = strstr(line, cell);
    if (p == NULL)
        pk_test_fail(__FILE__, at, "\"%s\" is not in: %s", cell, line);
    return column(line, (size_t)(p - line) + strlen(cell));
}

static size_t start_col(const char *line, const char *cell, int at)
{
    const char *p = strstr(line, cell);
    if (p == NULL)
        pk_test_fail(__FILE__, at, "\"%s\" is not in: %s", cell, line);
    return column(line, (size_t)(p - line));
}

/* ==== The end-to-end tests ======================================================================
 */

/* `pkbench compare FILE --baseline-contender posix_spawn --format json`, parsed. */
static json_t *compare_json(const char *file)
{
    pk_result r;
    int code =
        PKBENCH(&r, "compare", file, "--baseline-contender", "posix_spawn", "--format", "json");
    if (code != 0 && code != 2 && code != 3) /* 2, 3: a regression, an undecidable series */
        pk_test_fail(__FILE__, __LINE__, "pkbench compare exited %d: %s", code, text_of(&r.err));
    json_error_t jerr;
    json_t *j = json_loads(text_of(&r.out), 0, &jerr);
    if (j == NULL)
        pk_test_fail(__FILE__, __LINE__, "compare's JSON: %s", jerr.text);
    pk_result_release(&r);
    return j;
}

/* Loads the run's results file and what every series' cells must be; returns the document. */
static json_t *load_expect(const char *file, struct expect *e, size_t n, size_t base)
{
    json_error_t jerr;
    json_t *doc = json_load_file(file, 0, &jerr);
    if (doc == NULL)
        pk_test_fail(__FILE__, __LINE__, "%s: %s", file, jerr.text);
    const json_t *series = json_object_get(doc, "series");
    ASSERT_EQ(json_array_size(series), n);
    for (size_t i = 0; i < n; i++)
        expect_of(json_array_get(series, i), &e[i]);
    ASSERT(e[base].baseline);
    json_t *cmp = compare_json(file);
    expect_cells(e, n, &e[base], cmp);
    json_decref(cmp);
    return doc;
}

/* Where the line of series `prefix` ("pkbench: [k/n] name ") starts in err (it must be there,
 * once). */
static const char *line_at(const char *err, const char *prefix)
{
    const char *at = strstr(err, prefix);
    if (at == NULL)
        pk_test_fail(__FILE__, __LINE__, "no line \"%s\" in:\n%s", prefix, err);
    ASSERT(strstr(at + 1, prefix) == NULL);
    return at;
}

/* Checks a run line (the text of `line` after its name): the file's numbers, then `verdict`
 * (NULL: not checked beyond " vs posix_spawn: "; "": none), the marks, and "  ETA <d>" when
 * `eta`, and nothing else. */
static void check_run_line(const char *line, const struct expect *e, const char *verdict, bool eta)
{
    const char *p = strstr(line, e->line);
    if (p == NULL)
        pk_test_fail(__FILE__, __LINE__, "\"%s\" is not in: %s", e->line, line);
    p += strlen(e->line);
    if (verdict == NULL) { /* only that it has one, its marks and the time left when due */
        if (strstr(p, " vs posix_spawn: ") == NULL || strstr(p, e->marks) == NULL ||
            (strstr(p, "  ETA ") != NULL) != eta)
            pk_test_fail(__FILE__, __LINE__, "expected a verdict, \"%s\"%s in: %s", e->marks,
                         eta ? " and the time left" : "", line);
        return;
    } else {
        if (strncmp(p, verdict, strlen(verdict)) != 0)
            pk_test_fail(__FILE__, __LINE__, "expected \"%s\" after the numbers in: %s", verdict,
                         line);
        p += strlen(verdict);
    }
    if (e->marks[0] != '\0') {
        if (strncmp(p, "  ", 2) != 0 || strncmp(p + 2, e->marks, strlen(e->marks)) != 0)
            pk_test_fail(__FILE__, __LINE__, "expected the marks \"%s\" in: %s", e->marks, line);
        p += 2 + strlen(e->marks);
    }
    if (eta) {
        if (strncmp(p, "  ETA ", 6) != 0 || strchr("0123456789", p[6]) == NULL)
            pk_test_fail(__FILE__, __LINE__, "expected the time left at the end of: %s", line);
        p += 6 + strcspn(p + 6, "\n");
    }
    if (*p != '\n' && *p != '\0')
        pk_test_fail(__FILE__, __LINE__, "unexpected \"%.*s\" at the end of: %s",
                     (int)strcspn(p, "\n"), p, line);
}

/* The row of e in the final table: its cells, the Δ, CI and verdict, its marks. */
static void check_row(const char *out, const struct expect *e)
{
    const char *want[10];
    size_t n = 0;
    want[n++] = e->contender;
    want[n++] = e->median_cell;
    want[n++] = e->mean_sd_cell;
    want[n++] = e->rate_cell;
    want[n++] = e->baseline ? "baseline" : e->delta;
    if (!e->baseline) {
        want[n++] = e->ci;
        want[n++] = e->verdict;
    }
    if (e->marks[0] != '\0')
        want[n++] = e->marks;
    want[n] = NULL;
    pk_test_expect_row(out, want, __FILE__, __LINE__);
}

#define TINY "^spawn_only/(processkit|posix_spawn|vfork_exec)$"

/* --sequential: each series' line as it finishes (a series due to be measured again: after the
 * re-measure), the delta once the baseline has run; then the table; then report --print. */
TEST_IMPL(pkbench_terminal_output_matches_results_file)
{
    need_pkbench();
    char file[512], dir[512];
    snprintf(file, sizeof file, "%s/tiny.json", pk_test_tmpdir());
    snprintf(dir, sizeof dir, "%s/reports", pk_test_tmpdir());
    pk_result r;
    int code = PKBENCH(&r, "run", "--profile", "quick", "--no-prime", "--sequential", "--filter",
                       TINY, "--out", file);
    if (code != 0)
        pk_test_fail(__FILE__, __LINE__, "pkbench run exited %d: %s", code, text_of(&r.err));
    const char *out = text_of(&r.out), *err = text_of(&r.err);
    printf("# stderr:\n%s# stdout:\n%s", err, out);

    struct expect e[3];
    json_t *doc = load_expect(file, e, 3, 1);
    /* The registry's order: processkit first, then the baseline, then vfork_exec. */
    ASSERT_STR_EQ(e[0].contender, "processkit");
    ASSERT_STR_EQ(e[1].contender, "posix_spawn");
    ASSERT_STR_EQ(e[2].contender, "vfork_exec");

    /* While running: one plain line per series, with the file's numbers; the delta only once the
     * baseline had run; the time left on the lines printed while series were left to time. */
    ASSERT(strstr(err, "\033[") == NULL && strstr(out, "\033[") == NULL);
    EXPECT_IN(err, "pkbench: timing 3 series, quick profile: about ");
    const char *again = strstr(err, "pkbench: measuring again: "), *prev = err;
    bool any_again = e[0].attempts > 1 || e[1].attempts > 1 || e[2].attempts > 1;
    ASSERT((again != NULL) == any_again);
    for (size_t i = 0; i < 3; i++) {
        char prefix[128], line[1024], verdict[256];
        snprintf(prefix, sizeof prefix, "pkbench: [%zu/3] %s ", i + 1, e[i].name);
        const char *at = line_at(err, prefix);
        snprintf(line, sizeof line, "%.*s", (int)strcspn(at, "\n"), at);
        bool late = e[i].attempts > 1; /* measured again: its line once that was done */
        if (late) {
            ASSERT(at > again);
        } else {
            ASSERT(at > prev && (again == NULL || at < again));
            prev = at;
        }
        snprintf(verdict, sizeof verdict, "  %s %s vs posix_spawn: %s", e[i].delta, e[i].ci,
                 e[i].verdict);
        /* The verdict read then is the final one unless a series it depends on (the baseline,
         * or a member of its Holm family) was measured again after the line. */
        const char *want = i == 1               ? "  baseline"
                           : i == 0 && !late    ? ""
                           : late || !any_again ? verdict
                                                : NULL;
        check_run_line(line, &e[i], want, !late && i < 2);
    }

    /* At the end: the table, each cell the file's, aligned; then the results file's path. */
    char head[512], row[3][512];
    line_starting(out, "  contender", head, sizeof head);
    for (size_t i = 0; i < 3; i++) {
        check_row(out, &e[i]);
        char prefix[64];
        snprintf(prefix, sizeof prefix, "  %s ", e[i].contender);
        line_starting(out, prefix, row[i], sizeof row[i]);
        /* Right-aligned numbers end under their header; the names start in one column. */
        char h[64];
        snprintf(h, sizeof h, "median (%s)", e[i].table_unit);
        ASSERT_EQ(end_col(row[i], e[i].median_cell, __LINE__), end_col(head, h, __LINE__));
        snprintf(h, sizeof h, "mean ± sd (%s)", e[i].table_unit);
        ASSERT_EQ(end_col(row[i], e[i].mean_sd_cell, __LINE__), end_col(head, h, __LINE__));
        snprintf(h, sizeof h, "throughput (%s)", e[i].unit);
        ASSERT_EQ(end_col(row[i], e[i].rate_cell, __LINE__), end_col(head, h, __LINE__));
        ASSERT_EQ(start_col(row[i], e[i].contender, __LINE__), 2);
        ASSERT(row[i][strlen(row[i]) - 1] != ' '); /* no line ends in padding */
    }
    ASSERT_EQ(end_col(row[0], e[0].delta, __LINE__), end_col(head, "vs posix_spawn", __LINE__));
    ASSERT_EQ(end_col(row[1], "baseline", __LINE__), end_col(head, "vs posix_spawn", __LINE__));
    ASSERT_EQ(end_col(row[2], e[2].delta, __LINE__), end_col(head, "vs posix_spawn", __LINE__));
    for (size_t i = 0; i < 3; i += 2)
        ASSERT_EQ(start_col(row[i], e[i].verdict, __LINE__), start_col(head, "verdict", __LINE__));
    char tail[600];
    snprintf(tail, sizeof tail, "\nresults  %s\n", file);
    ASSERT(strlen(out) > strlen(tail));
    ASSERT_STR_EQ(out + strlen(out) - strlen(tail), tail);

    /* `pkbench report --print` shows the same tables, then where the report is. */
    size_t tables = strlen(out) - strlen(tail) + 1;
    char *run_tables = strndup(out, tables);
    pk_result_release(&r);
    ASSERT_EQ(PKBENCH(&r, "report", file, "--out", dir, "--no-plots", "--print"), 0);
    out = text_of(&r.out);
    ASSERT(strncmp(out, run_tables, tables) == 0);
    char report_line[600];
    snprintf(report_line, sizeof report_line, "report   %s/tiny.md\n", dir);
    ASSERT_STR_EQ(out + tables, report_line);
    pk_result_release(&r);
    /* Without --print: only the paths. */
    ASSERT_EQ(PKBENCH(&r, "report", file, "--out", dir, "--no-plots"), 0);
    ASSERT_STR_EQ(text_of(&r.out), report_line);
    pk_result_release(&r);
    free(run_tables);

    /* With the figures: one line per figure, its SVG first, its siblings named. */
    int plots = PKBENCH(&r, "report", file, "--out", dir);
    if (plots == 0) {
        char want[1400];
        snprintf(want, sizeof want,
                 "report   %s/tiny.md\nfigures  %s/tiny-spawn_only.gnuplot.svg (also .gnuplot.png, "
                 ".matplotlib.png)\n",
                 dir, dir);
        ASSERT_STR_EQ(text_of(&r.out), want);
        snprintf(want, sizeof want, "%s/tiny-spawn_only.matplotlib.png", dir);
        ASSERT_EQ(access(want, R_OK), 0);
    } else { /* gnuplot or matplotlib missing: said so, nothing listed */
        printf("# report with figures exited %d: %s", plots, text_of(&r.err));
        ASSERT_STR_EQ(text_of(&r.out), "");
    }
    pk_result_release(&r);

    /* A write error on stdout is an error, named. */
    int full = open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (full >= 0) {
        ASSERT_OK(pk_run(
            &(pk_command){.argv = (const char *const[]){PK_PKBENCH_PATH, "report", file, "--out",
                                                        dir, "--no-plots", "--print", NULL},
                          .out = {.kind = PK_STDIO_FD, .fd = full}},
            &r));
        close(full);
        ASSERT_EXITED(r, 1);
        EXPECT_IN(text_of(&r.err), "pkbench: cannot write to stdout: No space left on device");
        pk_result_release(&r);
    }
    json_decref(doc);
}

/* Seconds of a duration as pkb_fmt_duration writes it ("7s", "1m05s", "2h03m"); -1 if not one. */
static double seconds_of(const char *d)
{
    unsigned a = 0, b = 0;
    char u1 = 0, u2 = 0;
    int n = sscanf(d, "%u%c%u%c", &a, &u1, &b, &u2);
    if (n == 2 && u1 == 's')
        return a;
    if (n == 4 && u1 == 'm' && u2 == 's')
        return a * 60.0 + b;
    if (n == 4 && u1 == 'h' && u2 == 'm')
        return a * 3600.0 + b * 60.0;
    return -1;
}

/* The time left that the line starting with `prefix` gives ("... ETA 7s"). */
static double eta_of(const char *err, const char *prefix)
{
    char line[512];
    line_starting(err, prefix, line, sizeof line);
    const char *eta = strstr(line, "  ETA ");
    double s = eta != NULL ? seconds_of(eta + 6) : -1;
    if (s < 0)
        pk_test_fail(__FILE__, __LINE__, "no time left in: %s", line);
    return s;
}

/* Interleaved rounds, the default: a line per round with the time left, then, once every series
 * is final (after the last round, or after the re-measure when one was due), one line per
 * series with the file's numbers and the verdict the final table shows. */
TEST_IMPL(pkbench_terminal_rounds_lines)
{
    need_pkbench();
    char file[512];
    snprintf(file, sizeof file, "%s/rounds.json", pk_test_tmpdir());
    pk_result r;
    int code = PKBENCH(&r, "run", "--profile", "quick", "--no-prime", "--filter",
                       "^spawn_only/(processkit|posix_spawn)$", "--settle", "0.01", "--out", file);
    if (code != 0)
        pk_test_fail(__FILE__, __LINE__, "pkbench run exited %d: %s", code, text_of(&r.err));
    const char *err = text_of(&r.err), *out = text_of(&r.out);
    printf("# stderr:\n%s", err);
    struct expect e[2];
    json_t *doc = load_expect(file, e, 2, 1);
    EXPECT_IN(err, "pkbench: timing 2 series, quick profile, interleaved rounds: about ");
    /* Every round says where the run is and the time left, which shrinks as rounds go by. */
    double calibrating = eta_of(err, "pkbench: calibrating: warm-up and iteration counts");
    const char *prev = err;
    const int n = pkb_profile_quick.repetitions;
    char first[64], last[64], again_last[64];
    snprintf(first, sizeof first, "pkbench: round 1/%d ", n);
    snprintf(last, sizeof last, "pkbench: round %d/%d ", n, n);
    snprintf(again_last, sizeof again_last, "pkbench: again round %d/%d", n, n);
    for (int k = 1; k <= n; k++) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "pkbench: round %d/%d (2 series)  ETA ", k, n);
        const char *at = line_at(err, prefix);
        ASSERT(at > prev);
        prev = at;
    }
    ASSERT(eta_of(err, last) <= eta_of(err, first));
    ASSERT(eta_of(err, last) <= calibrating);
    /* The lines come once every series is final, in the suite's order, without a time left. */
    const char *again = strstr(err, again_last);
    ASSERT((again != NULL) == (e[0].attempts > 1 || e[1].attempts > 1));
    const char *l0 = line_at(err, "pkbench: [1/2] spawn_only/processkit ");
    const char *l1 = line_at(err, "pkbench: [2/2] spawn_only/posix_spawn ");
    ASSERT(l0 > prev && l1 > l0 && (again == NULL || l0 > again)); /* all wait for a re-measure */
    char line[1024], verdict[256];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(l0, "\n"), l0);
    snprintf(verdict, sizeof verdict, "  %s %s vs posix_spawn: %s", e[0].delta, e[0].ci,
             e[0].verdict);
    check_run_line(line, &e[0], verdict, false);
    snprintf(line, sizeof line, "%.*s", (int)strcspn(l1, "\n"), l1);
    check_run_line(line, &e[1], "  baseline", false);
    /* ... and the table says the same. */
    check_row(out, &e[0]);
    check_row(out, &e[1]);
    pk_result_release(&r);
    json_decref(doc);
}

/* ==== The pieces ================================================================================
 */

/* Removes every SGR sequence (ESC [ ... m) from s, in place. */
static char *strip_sgr(char *s)
{
    char *w = s;
    for (const char *p = s; *p;) {
        if (p[0] == '\033' && p[1] == '[') {
            p += 2;
            while (*p && *p != 'm')
                p++;
            p += *p == 'm';
            continue;
        }
        *w++ = *p++;
    }
    *w = '\0';
    return s;
}

TEST_IMPL(term_table_aligns_text_and_colour)
{
    ASSERT(pkb_table_new("") == NULL);
    ASSERT(pkb_table_new("lx") == NULL);
    ASSERT(pkb_table_new(NULL) == NULL);
    pkb_table *t = pkb_table_new("lrl");
    ASSERT(t != NULL);
    pkb_table_add(t, 0, "name");
    pkb_table_add(t, 0, "time");
    pkb_table_add(t, 0, "note");
    pkb_table_add(t, 0, "a");
    pkb_table_add(t, PKB_TONE_GOOD, "%.3f µs", 12.5);
    pkb_table_add(t, PKB_TONE_BAD, "two\nlines");
    pkb_table_add(t, 0, "longer name");
    pkb_table_add(t, 0, "1.000 ms");
    pkb_table_end_row(t); /* an empty last cell: no padding after the time */
    pkb_table_add(t, 0, "c");
    ASSERT_EQ(pkb_table_rows(t), 4);
    pkb_table_end_row(t);
    ASSERT_EQ(pkb_table_rows(t), 4);
    pkb_buf plain = {0}, color = {0};
    pkb_table_render(t, "> ", false, &plain);
    pkb_table_render(t, "> ", true, &color);
    pkb_table_free(t);
    ASSERT(!plain.failed && !color.failed);
    /* "µs" is two columns, so "12.500 µs" (9) ends where "1.000 ms" (8) and "time" end. */
    ASSERT_STR_EQ(plain.data, "> name              time  note\n"
                              "> a            12.500 µs  two lines\n"
                              "> longer name   1.000 ms\n"
                              "> c\n");
    ASSERT(strstr(color.data, "\033[1mname\033[0m") != NULL); /* the header is bold */
    ASSERT(strstr(color.data, "\033[32m12.500 µs\033[0m") != NULL);
    ASSERT(strstr(color.data, "\033[31mtwo lines\033[0m") != NULL);
    ASSERT_STR_EQ(strip_sgr(color.data), plain.data); /* colour never moves a column */
    pkb_buf_free(&plain);
    pkb_buf_free(&color);

    ASSERT_EQ(pkb_text_width("µs ± ×"), 6);
    char d[32];
    pkb_fmt_duration(d, sizeof d, 0);
    ASSERT_STR_EQ(d, "0s");
    pkb_fmt_duration(d, sizeof d, 0.4);
    ASSERT_STR_EQ(d, "1s");
    pkb_fmt_duration(d, sizeof d, 59.6);
    ASSERT_STR_EQ(d, "1m00s");
    pkb_fmt_duration(d, sizeof d, 425);
    ASSERT_STR_EQ(d, "7m05s");
    pkb_fmt_duration(d, sizeof d, 7380);
    ASSERT_STR_EQ(d, "2h03m");
    pkb_fmt_duration(d, sizeof d, -1);
    ASSERT_STR_EQ(d, "?");
    pkb_fmt_duration(d, sizeof d, NAN);
    ASSERT_STR_EQ(d, "?");
}

TEST_IMPL(term_color_only_where_wanted)
{
    int pty = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (pty < 0)
        pk_test_skip("no pseudo-terminal: posix_openpt: %s", strerror(errno));
    ASSERT_OK(grantpt(pty) == 0 && unlockpt(pty) == 0 ? 0 : -errno);
    int tty = open(ptsname(pty), O_RDWR | O_NOCTTY | O_CLOEXEC);
    ASSERT(tty >= 0);
    int fds[2];
    ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);

    unsetenv("NO_COLOR");
    setenv("TERM", "xterm-256color", 1);
    ASSERT(pkb_term_wants_color(tty));
    ASSERT(!pkb_term_wants_color(fds[1])); /* a pipe */
    setenv("NO_COLOR", "1", 1);
    ASSERT(!pkb_term_wants_color(tty));
    setenv("NO_COLOR", "", 1); /* no-color.org: only a non-empty value counts */
    ASSERT(pkb_term_wants_color(tty));
    unsetenv("NO_COLOR");
    setenv("TERM", "dumb", 1);
    ASSERT(!pkb_term_wants_color(tty));
    setenv("TERM", "", 1);
    ASSERT(!pkb_term_wants_color(tty));
    unsetenv("TERM");
    ASSERT(!pkb_term_wants_color(tty));

    pkb_buf b = {0};
    pkb_term_puts(&b, false, PKB_TONE_BAD, "x");
    pkb_term_puts(&b, true, PKB_TONE_PLAIN, "y");
    pkb_term_puts(&b, true, PKB_TONE_WARN, "z");
    ASSERT_STR_EQ(b.data, "xy\033[33mz\033[0m");
    pkb_buf_free(&b);
    close(tty);
    close(pty);
    close(fds[0]);
    close(fds[1]);
}

/* `./x` alone and `./x help` list every public recipe of the Justfile on one line each, with its
 * description. */
TEST_IMPL(x_help_lists_recipes)
{
    char *just = NULL;
    if (pk_resolve_program("just", NULL, &just, NULL) != 0)
        pk_test_skip("just is not in PATH (./x installs it from the npm package rust-just)");
    pk_result r;
    ASSERT_OK(
        pk_run(&(pk_command){.argv = (const char *const[]){just, "--summary", "--unsorted", NULL},
                             .cwd = PK_SOURCE_DIR},
               &r));
    ASSERT_EXITED(r, 0);
    char *names = strdup(text_of(&r.out));
    pk_result_release(&r);
    free(just);
    static const char *const forms[][2] = {{PK_SOURCE_DIR "/x", NULL},
                                           {PK_SOURCE_DIR "/x", "help"}};
    for (size_t f = 0; f < 2; f++) {
        ASSERT_OK(pk_run(
            &(pk_command){.argv = (const char *const[]){"sh", forms[f][0], forms[f][1], NULL}},
            &r));
        ASSERT_EXITED(r, 0);
        const char *out = text_of(&r.out);
        ASSERT(strncmp(out, "usage: ./x RECIPE", 17) == 0);
        size_t recipes = 0;
        char *save = NULL, *copy = strdup(names);
        for (char *name = strtok_r(copy, " \n", &save); name != NULL;
             name = strtok_r(NULL, " \n", &save), recipes++) {
            /* "    NAME [params]   # description": exactly one line, with a description. */
            size_t lines = 0;
            for (const char *p = out; p != NULL && *p;) {
                size_t len = strcspn(p, "\n");
                if (strncmp(p, "    ", 4) == 0 && strncmp(p + 4, name, strlen(name)) == 0 &&
                    (p[4 + strlen(name)] == ' ' || p[4 + strlen(name)] == '\n')) {
                    lines++;
                    const char *hash = memchr(p, '#', len);
                    if (hash == NULL || hash + 3 > p + len)
                        pk_test_fail(__FILE__, __LINE__, "recipe %s has no description: %.*s", name,
                                     (int)len, p);
                }
                p = p[len] == '\n' ? p + len + 1 : NULL;
            }
            if (lines != 1)
                pk_test_fail(__FILE__, __LINE__, "recipe %s is on %zu lines of:\n%s", name, lines,
                             out);
        }
        ASSERT_GE(recipes, 20);
        free(copy);
        pk_result_release(&r);
    }
    free(names);
}

/* Splits a Markdown table row "| a | b | c |" into trimmed cells; returns how many. */
static size_t md_cells(const char *row, size_t len, char cells[][128], size_t max)
{
    size_t n = 0;
    const char *p = row + 1, *end = row + len;
    while (p < end && n < max) {
        const char *bar = memchr(p, '|', (size_t)(end - p));
        if (bar == NULL)
            break;
        const char *a = p, *b = bar;
        while (a < b && *a == ' ')
            a++;
        while (b > a && b[-1] == ' ')
            b--;
        snprintf(cells[n++], 128, "%.*s", (int)(b - a), a);
        p = bar + 1;
    }
    return n;
}

/* The scenarios report both ways: every row of every table of the Markdown report of the fixture
 * is a row of the terminal view with the same cells (median, mean ± sd, throughput, Δ, its CI,
 * the verdict) and marks (disturbed repetitions, re-measured); the refused and failed series are
 * named with their reasons; the targets and the rivals' ratios are the Markdown's. */
TEST_IMPL(scenarios_terminal_matches_markdown)
{
    char dir[512], md_path[600], err[512];
    snprintf(dir, sizeof dir, "%s/reports", pk_test_tmpdir());
    ASSERT_OK(pkb_report_render(PK_SOURCE_DIR "/tests/data/compare-fixture.json", dir,
                                &(pkb_report_options){.no_plots = true}, err, sizeof err));
    snprintf(md_path, sizeof md_path, "%s/compare-fixture.md", dir);
    FILE *f = fopen(md_path, "re");
    ASSERT(f != NULL);
    static char md[1 << 17];
    md[fread(md, 1, sizeof md - 1, f)] = '\0';
    fclose(f);
    pkb_buf term = {0};
    ASSERT_OK(pkb_report_print(PK_SOURCE_DIR "/tests/data/compare-fixture.json", false, &term, err,
                               sizeof err));
    printf("%s", term.data);

    size_t rows = 0;
    char section[160] = "", *scope = NULL;
    for (const char *p = md; *p;) {
        size_t len = strcspn(p, "\n");
        if (strncmp(p, "### `", 5) == 0 && strncmp(p, "### `Targets", 12) != 0) {
            snprintf(section, sizeof section, "\n%.*s  (", (int)(len - 6), p + 5);
            scope = strstr(term.data, section);
            if (scope == NULL)
                pk_test_fail(__FILE__, __LINE__, "no section %s in the terminal view", p);
        }
        char c[8][128];
        if (scope != NULL && strncmp(p, "| `", 3) == 0 && md_cells(p, len, c, 8) == 7) {
            /* md: "`name` (marks[^note])", median, mean ± sd, throughput, Δ, CI, verdict (bold
             * when slower or faster); terminal: name, the same cells, marks (no footnotes). */
            char name[128], marks[128] = "", verdict[128];
            size_t k = strcspn(c[0] + 1, "`");
            snprintf(name, sizeof name, "%.*s", (int)k, c[0] + 1);
            const char *open = strstr(c[0] + k, " (");
            for (size_t i = 0, w = 0; open != NULL && open[2 + i] != '\0' && w + 1 < sizeof marks;
                 i++) {
                if (open[2 + i] == '[') /* a footnote: "[^noisy]" */
                    i += strcspn(open + 2 + i, "]");
                else
                    marks[w++] = open[2 + i];
                marks[w] = '\0';
            }
            if (marks[0] != '\0')
                marks[strlen(marks) - 1] = '\0'; /* the closing parenthesis */
            snprintf(verdict, sizeof verdict, "%s", c[6] + (c[6][0] == '*' ? 2 : 0));
            if (c[6][0] == '*')
                verdict[strlen(verdict) - 2] = '\0';
            if (strcmp(c[4], "baseline") == 0) {
                if (marks[0] == '\0')
                    EXPECT_ROW(scope, name, c[1], c[2], c[3], c[4]);
                else
                    EXPECT_ROW(scope, name, c[1], c[2], c[3], c[4], marks);
            } else if (marks[0] == '\0') {
                EXPECT_ROW(scope, name, c[1], c[2], c[3], c[4], c[5], verdict);
            } else {
                EXPECT_ROW(scope, name, c[1], c[2], c[3], c[4], c[5], verdict, marks);
            }
            rows++;
        }
        p += len + (p[len] == '\n');
    }
    ASSERT_EQ(rows, 18); /* every measured series of the fixture */
    EXPECT_IN(term.data, "  not timed: glib — refused: glib: read 1032000 bytes in 7999 lines");
    EXPECT_IN(term.data, "  not timed: vfork_exec — failed: vfork_exec: the iteration failed: ");
    EXPECT_ROW(term.data, "processkit ≤ +5% vs posix_spawn in stream_large_stdout",
               "+7.3% [+4.1%, +11.8%]", "undecidable (the CI straddles +5%)");
    EXPECT_IN(md, "| `processkit` ≤ +5% vs `posix_spawn` in `stream_large_stdout` | +7.3% [+4.1%, "
                  "+11.8%] | undecidable (the CI straddles +5%) |");
    /* posix_spawn, the baseline: at or below it, its ratios in the targets table itself. */
    EXPECT_ROW(term.data, "processkit at or below posix_spawn in every scenario",
               "1.014× [0.978×, 1.045×] in spawn_capture_small, 1.073× [1.041×, 1.118×] in "
               "stream_large_stdout, 1.030× [0.993×, 1.082×] in concurrent_fan_out, 0.809× "
               "[0.784×, 0.829×] in spawn_only",
               "not met (behind in stream_large_stdout)");
    const char *rivals = strstr(term.data, "\nprocesskit against its rivals");
    ASSERT(rivals != NULL);
    EXPECT_ROW(rivals, "spawn_only", "0.477× [0.463×, 0.489×]", "1.028× [0.991×, 1.056×]");
    EXPECT_ROW(rivals, "stream_large_stdout", "0.880× [0.859×, 0.910×]", "–");
    EXPECT_IN(md, "0.477× [0.463×, 0.489×] in `spawn_only` | met |");
    /* ... and where it could not be checked, why (glib was refused in stream_large_stdout). */
    EXPECT_IN(md, "1.028× [0.991×, 1.056×] in `spawn_only` | undecidable (not shown ahead in "
                  "`spawn_only`); not checked in `stream_large_stdout` (`glib` refused) |");
    EXPECT_ROW(term.data, "processkit ahead of glib in every scenario", "below",
               "undecidable (not shown ahead in spawn_only); not checked in stream_large_stdout "
               "(glib refused)");
    EXPECT_IN(term.data, "disturbed: 4 of 144 repetitions ended with more runnable tasks than the "
                         "machine's 2 logical CPUs");
    pkb_buf_free(&term);
}
