/*
 * Many results files, one table (harness/report/cross.h, `pkbench report FILE... | DIR`), the
 * identity every file carries (results/identity.h) and the numbers as a reader wants them
 * (common/md.h's formatter):
 *
 *  - the formatter: units chosen for the size, 3–4 significant figures, rounding into the next
 *    unit;
 *  - identity: a new file's host, id and revision, an older committed file's derived stand-ins,
 *    a Wine file's platform;
 *  - the table: a Linux file and a Windows (Wine) file of one host in two columns, every cell a
 *    same-host ratio exactly as the file's samples give it, the baselines, a warning naming
 *    exactly the keys that differ inside the rows, --absolute;
 *  - the same with real files: tests/data/table-linux-quick.json (`PKBENCH_HOST=vm pkbench run
 *    --profile quick --no-prime --filter '^spawn_only/(processkit|posix_spawn|vfork_exec)$'
 *    --settle 0.01` on this VM) and table-wine-quick.json (pkbench.exe under Wine, `--filter
 *    '^spawn_only/'`), both of one revision: they validate, and make one table with a column
 *    per platform;
 *  - two runs in one cell pooled, and the revision named as differing;
 *  - the command line: a directory (a JSON file that is not results skipped), the files it
 *    writes, the warnings on stderr, bad keys named.
 */
#define _GNU_SOURCE
#include "test.h"

#include "common/md.h"
#include "report/cross.h"
#include "results/identity.h"
#include "synth.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif

#define ASSERT_HAS(hay, needle)                                                                    \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (h_ == NULL || strstr(h_, n_) == NULL)                                                  \
            pk_test_fail(__FILE__, __LINE__, "expected \"%s\" in:\n%s", n_, h_ ? h_ : "(null)");   \
    } while (0)

#define ASSERT_LACKS(hay, needle)                                                                  \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (h_ != NULL && strstr(h_, n_) != NULL)                                                  \
            pk_test_fail(__FILE__, __LINE__, "did not expect \"%s\" in:\n%s", n_, h_);             \
    } while (0)

/* ==== numbers ================================================================================= */

static void expect_fmt(void (*fmt)(pkb_buf *, double), double v, const char *want)
{
    pkb_buf b = {0};
    fmt(&b, v);
    if (b.data == NULL || strcmp(b.data, want) != 0)
        pk_test_fail(__FILE__, __LINE__, "%.17g: got \"%s\", want \"%s\"", v, b.data ? b.data : "",
                     want);
    pkb_buf_free(&b);
}

static void sig4(pkb_buf *b, double v)
{
    pkb_fmt_sig(b, v, 4);
}

TEST_IMPL(md_numbers_read_well)
{
    /* The report that motivated it printed "81798.265 ± 2883.078 µs". */
    pkb_buf b = {0};
    pkb_fmt_time_sd(&b, 81798265, 2883078);
    ASSERT_STR_EQ(b.data, "81.80 ± 2.88 ms");
    pkb_buf_free(&b);
    pkb_fmt_time_sd(&b, 2163000, 49000);
    ASSERT_STR_EQ(b.data, "2.163 ± 0.0490 ms");
    pkb_buf_free(&b);
    pkb_fmt_time_sd(&b, 611200, NAN);
    ASSERT_STR_EQ(b.data, "611.2 µs");
    pkb_buf_free(&b);

    expect_fmt(pkb_fmt_time, 81798265, "81.80 ms");
    expect_fmt(pkb_fmt_time, 611234, "611.2 µs");
    expect_fmt(pkb_fmt_time, 12.345, "12.35 ns");
    expect_fmt(pkb_fmt_time, 999.96, "1.000 µs"); /* rounds into the next unit */
    expect_fmt(pkb_fmt_time, 999949, "999.9 µs");
    expect_fmt(pkb_fmt_time, 1.5e9, "1.500 s");
    expect_fmt(pkb_fmt_time, 4321e9, "4,321 s");
    expect_fmt(pkb_fmt_time, -512, "-512.0 ns");
    expect_fmt(pkb_fmt_time, NAN, "n/a");
    expect_fmt(pkb_fmt_time_signed, 1234, "+1.234 µs");
    expect_fmt(pkb_fmt_time_signed, -1234, "-1.234 µs");
    expect_fmt(pkb_fmt_time_signed, 0, "+0.000 ns");
    expect_fmt(pkb_fmt_ratio, 0.81234, "0.812×");
    expect_fmt(pkb_fmt_ratio, 1.05349, "1.053×");
    expect_fmt(pkb_fmt_ratio, 12.349, "12.35×");
    expect_fmt(sig4, 81798.265, "81,800");
    expect_fmt(sig4, 0.012345, "0.01235");
    expect_fmt(sig4, -0.00001, "-0.00001000");
    expect_fmt(sig4, 0, "0.000");
}

/* ==== synthetic files ========================================================================= */

/* A results document of one scenario, spawn_only: the baseline `base` with 20 lognormal samples
 * around base_ns, and every other contender exactly `factor[i]` times the baseline in every round
 * (so its per-round ratio is exactly that). Rounds 1..20. */
static json_t *doc_of(uint64_t seed,
                      const char *base,
                      double base_ns,
                      const char *const *others,
                      const double *factor,
                      size_t nothers)
{
    double samples[8][20];
    pk_test_series s[8];
    pks_rng rng;
    pks_rng_seed(&rng, seed);
    pk_test_lognormal(&rng, samples[0], 20, base_ns, 0.03);
    char names[8][64];
    snprintf(names[0], sizeof names[0], "spawn_only/%s", base);
    s[0] = (pk_test_series){names[0], samples[0], 20, NULL};
    for (size_t i = 0; i < nothers; i++) {
        for (size_t k = 0; k < 20; k++)
            samples[i + 1][k] = samples[0][k] * factor[i];
        snprintf(names[i + 1], sizeof names[i + 1], "spawn_only/%s", others[i]);
        s[i + 1] = (pk_test_series){names[i + 1], samples[i + 1], 20, NULL};
    }
    json_t *doc = pk_test_results_doc(s, nothers + 1);
    json_object_set_new(doc, "suite", json_string("scenarios"));
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(doc, "series"), i, x)
    {
        json_object_set_new(x, "baseline", json_boolean(i == 0));
        json_t *round = json_array();
        for (int k = 1; k <= 20; k++)
            json_array_append_new(round, json_integer(k));
        json_object_set_new(x, "round", round);
    }
    return doc;
}

static void set_env(json_t *doc, const char *key, json_t *v)
{
    json_object_set_new(json_object_get(doc, "environment"), key, v);
}

/* The same VM measured natively and under Wine. */
static json_t *linux_doc(const char *commit)
{
    json_t *doc = doc_of(1, "posix_spawn", 100e3, (const char *const[]){"processkit", "vfork_exec"},
                         (const double[]){0.80, 0.75}, 2);
    set_env(doc, "host", json_string("vm"));
    set_env(doc, "host_id", json_string("0123456789ab"));
    set_env(doc, "git_commit", json_string(commit));
    return doc;
}

static json_t *wine_doc(void)
{
    json_t *doc = doc_of(2, "createprocess", 1.2e6, (const char *const[]){"processkit"},
                         (const double[]){1.08}, 1);
    set_env(doc, "host", json_string("vm"));
    set_env(doc, "host_id", json_string("ba9876543210"));
    set_env(doc, "kernel", json_string("Windows NT 6.1 build 7601"));
    set_env(doc, "distribution",
            json_string("Wine 8.0 on Linux 6.1.0 (not Windows: Wine's "
                        "timings)"));
    set_env(doc, "wine", json_string("8.0"));
    set_env(doc, "libc", json_string("msvcrt (mingw-w64)"));
    set_env(doc, "spawn_mechanism", json_string("createprocess_job_list"));
    set_env(doc, "containment", json_string("job"));
    set_env(doc, "git_commit", json_string("1111111111111111111111111111111111111111"));
    return doc;
}

static void write_to(const char *dir, const char *name, json_t *doc, char *path, size_t cap)
{
    ASSERT((size_t)snprintf(path, cap, "%s/%s", dir, name) < cap);
    pk_test_write_doc(doc, path);
}

TEST_IMPL(results_identity_new_old_and_wine)
{
    char dir[512], p_new[700], p_wine[700];
    snprintf(dir, sizeof dir, "%s", pk_test_tmpdir());
    json_t *doc = linux_doc("abcdef0123456789abcdef0123456789abcdef01");
    set_env(doc, "git_dirty", json_true());
    set_env(doc, "git_commit_time", json_string("2026-12-05T13:43:49+01:00"));
    write_to(dir, "new.json", doc, p_new, sizeof p_new);
    write_to(dir, "wine.json", wine_doc(), p_wine, sizeof p_wine);

    pkb_results r;
    char err[512];
    pkb_identity id;
    ASSERT_EQ(pkb_results_load(p_new, &r, err, sizeof err), 0);
    pkb_identity_of(&r, &id);
    ASSERT_STR_EQ(id.host, "vm");
    ASSERT_STR_EQ(id.host_id, "0123456789ab");
    ASSERT(!id.host_derived);
    ASSERT_STR_EQ(id.os, "Linux");
    ASSERT_STR_EQ(id.revision, "abcdef012345-dirty");
    ASSERT(id.dirty == 1);
    ASSERT_STR_EQ(id.commit_time, "2026-12-05T13:43:49+01:00");
    char v[256];
    pkb_identity_key(&r, NULL, "glibc", v, sizeof v);
    ASSERT_STR_EQ(v, "glibc 2.36");
    pkb_identity_key(&r, NULL, "settings.repetitions", v, sizeof v);
    ASSERT_STR_EQ(v, "20");
    pkb_identity_key(&r, NULL, "aslr", v, sizeof v);
    ASSERT_STR_EQ(v, "full");
    pkb_identity_key(&r, NULL, "no_such_field", v, sizeof v);
    ASSERT_STR_EQ(v, "n/a");
    ASSERT(pkb_identity_key_in(&r, "thp") && !pkb_identity_key_in(&r, "no_such_field"));
    ASSERT(!pkb_identity_key_in(&r, "settings.thp")); /* an environment field, not a setting */
    pkb_results_free(&r);

    ASSERT_EQ(pkb_results_load(p_wine, &r, err, sizeof err), 0);
    pkb_identity_of(&r, &id);
    ASSERT_STR_EQ(id.os, "Windows (Wine 8.0)");
    pkb_results_free(&r);

    /* A file from before the identity fields (committed in tests/data): it still loads, with a
     * host derived from its environment and its revision as recorded. The suite it names,
     * "compare", is the scenarios suite's older name. */
    ASSERT_EQ(pkb_results_load(PK_TEST_DATA_DIR "/compare-fixture.json", &r, err, sizeof err), 0);
    ASSERT(pkb_results_field(&r, "environment", "host") == NULL);
    pkb_identity_of(&r, &id);
    ASSERT(id.host_derived);
    ASSERT(strncmp(id.host, "host-", 5) == 0 && strlen(id.host) == 11);
    ASSERT_EQ(strlen(id.host_id), 12);
    ASSERT(strncmp(id.host + 5, id.host_id, 6) == 0);
    ASSERT_STR_EQ(id.revision, "580c2497b027");
    ASSERT(id.commit_time == NULL && id.dirty == 0);
    ASSERT_STR_EQ(pkb_identity_suite(r.suite), "scenarios");
    pkb_identity again;
    pkb_identity_of(&r, &again); /* derived the same way every time */
    ASSERT_STR_EQ(again.host_id, id.host_id);
    pkb_results_free(&r);
}

/* The cell of row `row` and column `col` (labels), or fails. */
static const pkb_cross_cell *cell_at(const pkb_cross_table *t, const char *row, const char *col)
{
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++)
            if (strcmp(t->row_label[r], row) == 0 && strcmp(t->col_label[c], col) == 0)
                return &t->cells[r * t->ncols + c];
    pk_test_fail(__FILE__, __LINE__, "no cell %s × %s", row, col);
    return NULL;
}

static const pkb_cross_diff *diff_of(const pkb_cross_table *t, const char *key)
{
    for (size_t i = 0; i < t->ndiffs; i++)
        if (strcmp(t->diffs[i].key, key) == 0)
            return &t->diffs[i];
    return NULL;
}

TEST_IMPL(report_many_linux_and_wine_in_one_table)
{
    char dir[512], pl[700], pw[700];
    snprintf(dir, sizeof dir, "%s", pk_test_tmpdir());
    write_to(dir, "linux.json", linux_doc("2222222222222222222222222222222222222222"), pl,
             sizeof pl);
    write_to(dir, "wine.json", wine_doc(), pw, sizeof pw);
    pkb_cross c;
    char err[1024];
    ASSERT_EQ(pkb_cross_build((const char *const[]){pl, pw}, 2, NULL, &c, err, sizeof err), 0);
    ASSERT_EQ(c.ntables, 1);
    const pkb_cross_table *t = &c.tables[0];
    ASSERT_STR_EQ(t->suite, "scenarios");
    /* A column per platform of the one host, a row per series. */
    ASSERT_EQ(t->ncols, 2);
    ASSERT_STR_EQ(t->col_label[0], "vm · Linux");
    ASSERT_STR_EQ(t->col_label[1], "vm · Windows (Wine 8.0)");
    ASSERT_EQ(t->nrows, 4);

    /* Each cell is its file's same-host ratio: exactly the factor the samples were drawn with,
     * paired by round, never the 12x between the two hosts' absolute times. */
    const pkb_cross_cell *x = cell_at(t, "spawn_only/processkit", "vm · Linux");
    ASSERT(x->kind == PKB_CROSS_RATIO && x->paired && x->files == 1);
    ASSERT(fabs(x->ratio.estimate - 0.80) < 1e-12 && fabs(x->ratio.lo - 0.80) < 1e-12);
    ASSERT(x->word == PKB_WORD_FASTER);
    ASSERT_STR_EQ(x->base, "posix_spawn");
    x = cell_at(t, "spawn_only/processkit", "vm · Windows (Wine 8.0)");
    ASSERT(x->kind == PKB_CROSS_RATIO && fabs(x->ratio.estimate - 1.08) < 1e-12);
    ASSERT_STR_EQ(x->base, "createprocess");
    ASSERT(x->word == PKB_WORD_NEGLIGIBLE); /* +8% is within the report's 10% bar */
    ASSERT(cell_at(t, "spawn_only/posix_spawn", "vm · Linux")->kind == PKB_CROSS_BASELINE);
    ASSERT(cell_at(t, "spawn_only/posix_spawn", "vm · Windows (Wine 8.0)")->kind ==
           PKB_CROSS_EMPTY);
    ASSERT(cell_at(t, "spawn_only/createprocess", "vm · Windows (Wine 8.0)")->kind ==
           PKB_CROSS_BASELINE);
    ASSERT(cell_at(t, "spawn_only/vfork_exec", "vm · Windows (Wine 8.0)")->kind == PKB_CROSS_EMPTY);

    /* A warning for every key that differs inside a row, and for no other: the host's id (one
     * machine id each), the kernel, the distribution, the C library, the spawn mechanism, the
     * containment and the revision. The platform is a column key: not warned about. */
    static const char *const differ[] = {"host_id", "kernel",      "distribution", "libc",
                                         "spawn",   "containment", "revision"};
    for (size_t i = 0; i < sizeof differ / sizeof differ[0]; i++) {
        const pkb_cross_diff *d = diff_of(t, differ[i]);
        if (d == NULL)
            pk_test_fail(__FILE__, __LINE__, "no warning for %s", differ[i]);
        ASSERT(d->nvalues == 2 && d->nrows_differ == 1); /* only processkit is in both */
        ASSERT(d->in_col[0 * t->ncols + 0] && !d->in_col[0 * t->ncols + 1]);
        ASSERT(!d->in_col[1 * t->ncols + 0] && d->in_col[1 * t->ncols + 1]);
    }
    ASSERT_EQ(t->ndiffs, sizeof differ / sizeof differ[0]);
    ASSERT(diff_of(t, "os") == NULL && diff_of(t, "host") == NULL);
    const pkb_cross_diff *k = diff_of(t, "kernel");
    ASSERT_STR_EQ(k->values[0], "6.1.0");
    ASSERT_STR_EQ(k->values[1], "Windows NT 6.1 build 7601");

    pkb_buf md = {0}, term = {0};
    pkb_cross_markdown(&c, &md);
    pkb_cross_terminal(&c, false, &term);
    ASSERT_HAS(md.data, "| `spawn_only/processkit` | **0.800×** [0.800, 0.800] faster | 1.080× "
                        "[1.080, 1.080] negligible |");
    ASSERT_HAS(md.data, "**Warning: 7 keys differ inside rows**");
    ASSERT_HAS(md.data, "> In 1 of 4 rows (`spawn_only/processkit`):\n> - `host_id`: ");
    ASSERT_HAS(md.data, "\n> - `kernel`: `6.1.0` (vm · Linux); `Windows NT 6.1 build 7601` (vm "
                        "· Windows (Wine 8.0))\n");
    ASSERT_HAS(md.data, "Baselines: vm · Linux: `posix_spawn`; vm · Windows (Wine 8.0): "
                        "`createprocess`.");
    ASSERT_LACKS(md.data, " µs");
    ASSERT_LACKS(md.data, " ms");
    ASSERT_HAS(term.data, "warning: 7 keys differ inside rows (not a row or column key):\n"
                          "    In 1 of 4 rows (spawn_only/processkit):\n");
    ASSERT_HAS(term.data, "      kernel: '6.1.0' (vm · Linux); 'Windows NT 6.1 build 7601' (vm · "
                          "Windows (Wine 8.0))\n");
    ASSERT_HAS(term.data, "0.800× [0.800, 0.800] faster");
    pkb_buf_free(&md);
    pkb_buf_free(&term);
    pkb_cross_free(&c);

    /* --absolute: the medians, and a warning that they do not compare across hosts. */
    ASSERT_EQ(pkb_cross_build((const char *const[]){pl, pw}, 2,
                              &(pkb_cross_options){.absolute = true}, &c, err, sizeof err),
              0);
    t = &c.tables[0];
    x = cell_at(t, "spawn_only/createprocess", "vm · Windows (Wine 8.0)");
    ASSERT(x->kind == PKB_CROSS_ABSOLUTE && x->median_ns > 1e6 && x->median_ns < 1.5e6);
    pkb_cross_markdown(&c, &md);
    ASSERT_HAS(md.data, "**Absolute times**");
    ASSERT_HAS(md.data, " ms |");
    pkb_buf_free(&md);
    pkb_cross_free(&c);

    /* --cols os, --rows contender: the same cells under other keys; a key no file has is named. */
    ASSERT_EQ(pkb_cross_build((const char *const[]){pl, pw}, 2,
                              &(pkb_cross_options){.rows = "contender", .cols = "os"}, &c, err,
                              sizeof err),
              0);
    x = cell_at(&c.tables[0], "processkit", "Windows (Wine 8.0)");
    ASSERT(fabs(x->ratio.estimate - 1.08) < 1e-12);
    pkb_cross_free(&c);
    ASSERT_EQ(pkb_cross_build((const char *const[]){pl, pw}, 2,
                              &(pkb_cross_options){.cols = "host,colour"}, &c, err, sizeof err),
              -EINVAL);
    ASSERT_HAS(err, "--cols: no file has a key 'colour' (keys: host, host_id, os,");
    ASSERT_EQ(pkb_cross_build((const char *const[]){pl, pw}, 2,
                              &(pkb_cross_options){.rows = "series,glibc", .cols = "libc"}, &c, err,
                              sizeof err),
              -EINVAL);
    ASSERT_HAS(err, "the key 'glibc' is in both --rows and --cols");
    ASSERT_EQ(pkb_cross_build((const char *const[]){pl, pw}, 2,
                              &(pkb_cross_options){.rows = "series,,os"}, &c, err, sizeof err),
              -EINVAL);
    ASSERT_HAS(err, "--rows: an empty key");
}

TEST_IMPL(report_many_real_linux_and_wine_files)
{
    const char *linux_file = PK_TEST_DATA_DIR "/table-linux-quick.json";
    const char *wine_file = PK_TEST_DATA_DIR "/table-wine-quick.json";
    pk_test_need_jsonschema();
    pk_test_validate_results(linux_file);
    pk_test_validate_results(wine_file);
    pkb_cross c;
    char err[1024];
    ASSERT_EQ(
        pkb_cross_build((const char *const[]){linux_file, wine_file}, 2, NULL, &c, err, sizeof err),
        0);
    ASSERT(c.files.files[0].id.host_id[0] != '\0' && !c.files.files[0].id.host_derived);
    ASSERT_STR_EQ(c.files.files[0].id.revision, c.files.files[1].id.revision);
    ASSERT_EQ(c.ntables, 1);
    const pkb_cross_table *t = &c.tables[0];
    ASSERT_EQ(t->ncols, 2);
    ASSERT_STR_EQ(t->col_label[0], "vm · Linux");
    ASSERT_STR_EQ(t->col_label[1], "vm · Windows (Wine 8.0)");
    for (size_t col = 0; col < 2; col++) {
        const pkb_cross_cell *x = cell_at(t, "spawn_only/processkit", t->col_label[col]);
        ASSERT(x->kind == PKB_CROSS_RATIO && x->paired);
        ASSERT(x->ratio.lo <= x->ratio.estimate && x->ratio.estimate <= x->ratio.hi);
        ASSERT_STR_EQ(x->base, col == 0 ? "posix_spawn" : "createprocess");
    }
    ASSERT(cell_at(t, "spawn_only/posix_spawn", "vm · Linux")->kind == PKB_CROSS_BASELINE);
    ASSERT(cell_at(t, "spawn_only/createprocess", "vm · Windows (Wine 8.0)")->kind ==
           PKB_CROSS_BASELINE);
    /* What differs between the platforms is named; what the columns say is not. */
    static const char *const differ[] = {"host_id", "kernel", "distribution",
                                         "libc",    "spawn",  "containment"};
    for (size_t i = 0; i < sizeof differ / sizeof differ[0]; i++)
        if (diff_of(t, differ[i]) == NULL)
            pk_test_fail(__FILE__, __LINE__, "no warning for %s", differ[i]);
    ASSERT(diff_of(t, "os") == NULL && diff_of(t, "host") == NULL &&
           diff_of(t, "revision") == NULL);
    pkb_buf md = {0};
    pkb_cross_markdown(&c, &md);
    printf("%s", md.data);
    const char *table = strstr(md.data, "| series |");
    ASSERT(table != NULL);
    ASSERT_LACKS(table, " µs"); /* no absolute time in the table */
    pkb_buf_free(&md);
    pkb_cross_free(&c);
}

TEST_IMPL(report_many_pools_a_cell_and_names_the_revision)
{
    /* Two runs of one host at two revisions in one column: pooled per round, and the revision
     * named as what differs inside the row. */
    char dir[512], p1[700], p2[700];
    snprintf(dir, sizeof dir, "%s", pk_test_tmpdir());
    write_to(dir, "r1.json", linux_doc("3333333333333333333333333333333333333333"), p1, sizeof p1);
    json_t *doc = doc_of(9, "posix_spawn", 100e3, (const char *const[]){"processkit", "vfork_exec"},
                         (const double[]){0.90, 0.75}, 2);
    set_env(doc, "host", json_string("vm"));
    set_env(doc, "host_id", json_string("0123456789ab"));
    set_env(doc, "git_commit", json_string("4444444444444444444444444444444444444444"));
    write_to(dir, "r2.json", doc, p2, sizeof p2);
    pkb_cross c;
    char err[1024];
    ASSERT_EQ(pkb_cross_build((const char *const[]){p1, p2}, 2, NULL, &c, err, sizeof err), 0);
    const pkb_cross_table *t = &c.tables[0];
    ASSERT_EQ(t->ncols, 1);
    const pkb_cross_cell *x = cell_at(t, "spawn_only/processkit", "vm · Linux");
    /* 20 rounds at 0.80 and 20 at 0.90: the median of the 40 pooled ratios lies between. */
    ASSERT(x->kind == PKB_CROSS_RATIO && x->files == 2 && x->paired);
    ASSERT(x->ratio.estimate > 0.80 - 1e-12 && x->ratio.estimate < 0.90 + 1e-12);
    ASSERT(x->ratio.lo >= 0.80 - 1e-12 && x->ratio.hi <= 0.90 + 1e-12);
    x = cell_at(t, "spawn_only/vfork_exec", "vm · Linux");
    ASSERT(x->files == 2 && fabs(x->ratio.estimate - 0.75) < 1e-12);
    ASSERT(cell_at(t, "spawn_only/posix_spawn", "vm · Linux")->kind == PKB_CROSS_BASELINE);
    const pkb_cross_diff *d = diff_of(t, "revision");
    ASSERT(d != NULL && d->nrows_differ == t->nrows && d->nvalues == 2);
    ASSERT_EQ(t->ndiffs, 1);
    pkb_buf md = {0};
    pkb_cross_markdown(&c, &md);
    ASSERT_HAS(md.data, "(2 files)");
    ASSERT_HAS(md.data, "> In every row:\n> - `revision`: `333333333333` (vm · Linux); "
                        "`444444444444` (vm · Linux)\n");
    pkb_buf_free(&md);
    pkb_cross_free(&c);

    /* With the revision as a column key the runs stand apart and nothing is warned about. */
    ASSERT_EQ(pkb_cross_build((const char *const[]){p1, p2}, 2,
                              &(pkb_cross_options){.cols = "revision"}, &c, err, sizeof err),
              0);
    ASSERT(c.tables[0].ncols == 2 && c.tables[0].ndiffs == 0);
    x = cell_at(&c.tables[0], "spawn_only/processkit", "444444444444");
    ASSERT(x->files == 1 && fabs(x->ratio.estimate - 0.90) < 1e-12);
    pkb_cross_free(&c);
}

static int run_pkbench(const char *const *args, pk_result *r)
{
    const char *argv[24] = {PK_PKBENCH_PATH};
    int n = 1;
    for (; args[n - 1] != NULL && n < 23; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .timeout_ms = 60000}, r));
    ASSERT_EQ(r->outcome.kind, PK_OUTCOME_EXITED);
    printf("# pkbench %s: exit %d\n# stdout: %s\n# stderr: %s\n", args[0], r->outcome.code,
           r->out.data ? r->out.data : "", r->err.data ? r->err.data : "");
    return r->outcome.code;
}

TEST_IMPL(report_many_command_line)
{
    if (PK_PKBENCH_PATH[0] == '\0')
        pk_test_skip_gate("build", "pkbench is built only with PK_BUILD_BENCH");
    char dir[512], study[600], out[600], path[700], hidden[700];
    snprintf(dir, sizeof dir, "%s", pk_test_tmpdir());
    snprintf(study, sizeof study, "%s/fleet", dir);
    snprintf(out, sizeof out, "%s/reports", dir);
    ASSERT_EQ(mkdir(study, 0755), 0);
    snprintf(hidden, sizeof hidden, "%s/.staging", study);
    ASSERT_EQ(mkdir(hidden, 0755), 0);
    char sub[700];
    snprintf(sub, sizeof sub, "%s/linux-runner", study);
    ASSERT_EQ(mkdir(sub, 0755), 0);
    write_to(sub, "scenarios.json", linux_doc("5555555555555555555555555555555555555555"), path,
             sizeof path);
    write_to(study, "wine.json", wine_doc(), path, sizeof path);
    /* Not results: skipped and named. In a hidden directory: not even seen. */
    write_to(study, "summary.json", json_pack("{s:i}", "rows", 3), path, sizeof path);
    write_to(hidden, "broken.json", json_pack("{s:s}", "schema", "pkbench-results"), path,
             sizeof path);

    pk_result r;
    ASSERT_EQ(
        run_pkbench((const char *const[]){"report", study, "--out", out, "--print", NULL}, &r), 0);
    ASSERT_HAS(r.out.data, "table    ");
    ASSERT_HAS(r.out.data, "/reports/fleet.md");
    ASSERT_HAS(r.out.data, "data     ");
    ASSERT_HAS(r.out.data, "0.800× [0.800, 0.800] faster");
    ASSERT_HAS(r.err.data, "pkbench: warning: the scenarios table: 7 keys differ inside rows: "
                           "host_id, kernel, distribution, libc, spawn, containment, revision");
    ASSERT_HAS(r.err.data, "skipped");
    ASSERT_HAS(r.err.data, "summary.json: not a pkbench results file");
    pk_result_release(&r);
    snprintf(path, sizeof path, "%s/fleet.md", out);
    char *md = pk_test_slurp(path);
    ASSERT_HAS(md, "linux-runner/scenarios.json");
    ASSERT_HAS(md, "Skipped 1 JSON file that is not pkbench results:");
    free(md);
    snprintf(path, sizeof path, "%s/fleet.json", out);
    json_error_t jerr;
    json_t *j = json_load_file(path, 0, &jerr);
    ASSERT(j != NULL);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "schema")), "pkbench-table");
    json_t *table = json_array_get(json_object_get(j, "tables"), 0);
    json_t *cells = json_object_get(table, "cells");
    ASSERT_EQ(json_array_size(cells), 4);
    /* The rows in the order the files give them: posix_spawn, processkit, ... */
    ASSERT_STR_EQ(json_string_value(
                      json_object_get(json_array_get(json_object_get(table, "rows"), 1), "label")),
                  "spawn_only/processkit");
    json_t *pk = json_array_get(json_array_get(cells, 1), 0);
    ASSERT_STR_EQ(json_string_value(json_object_get(pk, "verdict")), "faster");
    ASSERT(fabs(json_real_value(json_object_get(pk, "ratio")) - 0.8) < 1e-9);
    ASSERT(json_is_null(json_array_get(json_array_get(cells, 0), 1))); /* no posix_spawn there */
    json_decref(j);

    /* Bad keys and names are named; nothing is written. */
    ASSERT_EQ(run_pkbench((const char *const[]){"report", study, "--out", out, "--rows", "colour",
                                                "--name", "bad", NULL},
                          &r),
              1);
    ASSERT_HAS(r.err.data, "--rows: no file has a key 'colour'");
    pk_result_release(&r);
    snprintf(path, sizeof path, "%s/bad.md", out);
    struct stat st;
    ASSERT(stat(path, &st) != 0 && errno == ENOENT);
    ASSERT_EQ(run_pkbench((const char *const[]){"report", study, "--name", "a/b", NULL}, &r), 1);
    ASSERT_HAS(r.err.data, "--name is a file name without a directory");
    pk_result_release(&r);
    ASSERT_EQ(run_pkbench((const char *const[]){"report", hidden, NULL}, &r), 1);
    ASSERT_HAS(r.err.data, "missing required field");
    pk_result_release(&r);
    /* A file given and also found in a directory given would count twice. */
    snprintf(path, sizeof path, "%s/wine.json", study);
    ASSERT_EQ(run_pkbench((const char *const[]){"report", study, path, NULL}, &r), 1);
    ASSERT_HAS(r.err.data, "wine.json, given twice");
    pk_result_release(&r);
}
