/*
 * report — the Markdown report of one results file, and pkb_report_render, which stages every
 * output file in a private directory and renames them into place only when all are complete
 * (see report.h).
 *
 * The report reproduces the seed document's "Measured results" table and "Conclusions", worded
 * from the numbers:
 *
 *   - mean ± sd and the median are stats.h's pks_summarize of the series' samples_ns (one value
 *     per repetition: the mean wall time of one iteration), in the unit the mean reads best in;
 *   - throughput = work_per_iteration / mean time, in the series' unit (runs/s, MiB/s, ...);
 *   - delta = (mean − baseline mean) / baseline mean, against the measured baseline series of the
 *     same scenario in the same file, printed as +x.x%;
 *   - a contender's overhead is negligible when |delta| ≤ PKB_REPORT_NEGLIGIBLE (10%);
 *   - the targets are ratios of means processkit / other, checked only where both were measured.
 *
 * Nothing is typed in: change the file and every number and verdict follows. The conclusions and
 * targets are worded in report_verdict.c, the file read and checked in report_load.c, the plots
 * drawn by plot.c.
 */
#define _GNU_SOURCE
#include "contender.h"
#include "report_forkathon.h"
#include "report_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ==== Text buffer ============================================================================ */

void pkb__buf_printf(pkb__buf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->data ? b->data + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len <= (size_t)n)
            cap *= 2;
        char *bigger = realloc(b->data, cap);
        if (bigger == NULL) {
            b->failed = true;
            return;
        }
        b->data = bigger;
        b->cap = cap;
    }
}

void pkb__buf_puts(pkb__buf *b, const char *s)
{
    pkb__buf_printf(b, "%s", s);
}

void pkb__buf_free(pkb__buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void pkb__buf_sanitized(pkb__buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
        pkb__buf_printf(b, "%c", keep ? c : '_');
    }
}

const char *pkb__time_unit(double ns, double *scale)
{
    static const struct {
        double below, scale;
        const char *name;
    } units[] = {{1e3, 1, "ns"}, {1e6, 1e3, "µs"}, {1e9, 1e6, "ms"}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (ns < units[i].below) {
            *scale = units[i].scale;
            return units[i].name;
        }
    }
    *scale = 1e9;
    return "s";
}

/* ==== Markdown pieces ======================================================================== */

/* Text for a table cell or a sentence: a pipe would end the cell, a newline the row. */
void pkb__md_text(pkb__buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            pkb__buf_puts(b, "\\|");
        else if (*s == '\n' || *s == '\r')
            pkb__buf_puts(b, " ");
        else
            pkb__buf_printf(b, "%c", *s);
    }
}

/* A name as inline code. */
void pkb__md_code(pkb__buf *b, const char *s)
{
    pkb__buf_puts(b, "`");
    for (; *s; s++) {
        if (*s == '|')
            pkb__buf_puts(b, "\\|");
        else if (*s == '\n' || *s == '\r' || *s == '`')
            pkb__buf_puts(b, *s == '`' ? "'" : " ");
        else
            pkb__buf_printf(b, "%c", *s);
    }
    pkb__buf_puts(b, "`");
}

/* "+2.3%": one decimal, as the seed; never "-0.0%". */
void pkb__fmt_delta(pkb__buf *b, double d)
{
    double pct = d * 100;
    if (fabs(pct) < 0.05)
        pct = 0;
    pkb__buf_printf(b, "%+.1f%%", pct);
}

/* A rate with four significant digits, thousands separated: 1,634 / 469.3 / 17.49 / 1.234. */
static void fmt_rate(pkb__buf *b, double v)
{
    if (!isfinite(v)) {
        pkb__buf_puts(b, "n/a");
        return;
    }
    if (v < 1000) {
        pkb__buf_printf(b, "%.*f", v >= 100 ? 1 : v >= 10 ? 2 : 3, v);
        return;
    }
    char digits[64];
    int n = snprintf(digits, sizeof digits, "%.0f", v);
    for (int i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            pkb__buf_puts(b, ",");
        pkb__buf_printf(b, "%c", digits[i]);
    }
}

/* A JSON value as a table cell: strings as text, numbers shortest, arrays joined. */
void pkb__md_json_value(pkb__buf *b, const json_t *v)
{
    if (json_is_string(v)) {
        pkb__md_text(b, json_string_value(v));
    } else if (json_is_integer(v)) {
        pkb__buf_printf(b, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        pkb__buf_printf(b, "%.15g", json_real_value(v));
    } else if (json_is_boolean(v)) {
        pkb__buf_puts(b, json_is_true(v) ? "true" : "false");
    } else if (json_is_null(v)) {
        pkb__buf_puts(b, "null");
    } else if (json_is_array(v)) {
        size_t i;
        const json_t *item;
        json_array_foreach(v, i, item)
        {
            if (i > 0)
                pkb__buf_puts(b, ", ");
            pkb__md_json_value(b, item);
        }
    } else {
        char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (text == NULL) {
            b->failed = true;
            return;
        }
        pkb__buf_puts(b, "`");
        pkb__md_text(b, text);
        pkb__buf_puts(b, "`");
        free(text);
    }
}

/* A two-column table of every field of a JSON object, in the file's order. */
static void md_object_table(pkb__buf *b, const json_t *obj)
{
    pkb__buf_puts(b, "| field | value |\n|---|---|\n");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        pkb__buf_puts(b, "| ");
        pkb__md_code(b, key);
        pkb__buf_puts(b, " | ");
        pkb__md_json_value(b, v);
        pkb__buf_puts(b, " |\n");
    }
}

static const json_t *field(const pkb__results *r, const char *object, const char *key)
{
    const json_t *o = object ? json_object_get(r->root, object) : r->root;
    return json_object_get(o, key);
}

static const char *str_field(const pkb__results *r, const char *object, const char *key)
{
    return json_string_value(field(r, object, key));
}

/* ==== The report, section by section ========================================================= */

static void md_title(const pkb__results *r, pkb__buf *b)
{
    pkb__buf_puts(b, "# ");
    pkb__md_text(b, str_field(r, NULL, "suite"));
    pkb__buf_puts(b, ": ");
    pkb__md_text(b, str_field(r, NULL, "profile"));
    pkb__buf_puts(b, " profile, ");
    pkb__md_text(b, str_field(r, NULL, "created"));
    pkb__buf_puts(b, "\n\nRendered by `pkbench report` from ");
    pkb__md_code(b, r->file);
    pkb__buf_puts(b, " (pkbench-results, schema version 1); generated, not edited by hand. "
                     "Command: `");
    const json_t *cmd = field(r, NULL, "command");
    size_t i;
    const json_t *arg;
    json_array_foreach(cmd, i, arg)
    {
        pkb__buf_puts(b, i > 0 ? " " : "");
        const char *s = json_string_value(arg);
        for (; *s; s++)
            pkb__buf_printf(b, "%c", *s == '`' ? '\'' : *s == '\n' ? ' ' : *s);
    }
    pkb__buf_puts(b, "`.");
    const char *filter = str_field(r, NULL, "filter");
    if (filter != NULL) {
        pkb__buf_puts(b, " Filter: ");
        pkb__md_code(b, filter);
        pkb__buf_puts(b, ".");
    }
    const char *finished = str_field(r, NULL, "finished");
    if (finished != NULL) {
        pkb__buf_puts(b, " Finished: ");
        pkb__md_text(b, finished);
        pkb__buf_puts(b, ".");
    }
    pkb__buf_puts(b, "\n\n");
    if (!json_is_true(field(r, NULL, "complete")))
        pkb__buf_puts(b, "> **Incomplete run.** It was interrupted: only the series that finished "
                         "are in this report.\n\n");
}

static void md_how_to_read(const pkb__results *r, pkb__buf *b)
{
    size_t lo = SIZE_MAX, hi = 0;
    for (size_t i = 0; i < r->nseries; i++) {
        if (r->series[i].measured) {
            lo = r->series[i].n < lo ? r->series[i].n : lo;
            hi = r->series[i].n > hi ? r->series[i].n : hi;
        }
    }
    pkb__buf_puts(b, "## How to read it\n\n");
    if (hi == 0)
        pkb__buf_puts(b, "No series was measured. ");
    else if (lo == hi)
        pkb__buf_printf(b, "Each measured series has %zu repetitions. ", lo);
    else
        pkb__buf_printf(b, "Each measured series has %zu to %zu repetitions. ", lo, hi);
    pkb__buf_puts(b, "A repetition's value is the mean wall time of one iteration: start the "
                     "child (or children), feed stdin, consume the output, reap. The table gives "
                     "the mean ± sample standard deviation of those values, as the seed document "
                     "does, and their median, which one disturbed repetition cannot move much. "
                     "Throughput is the work of one iteration divided by the mean time. The delta "
                     "is (mean − baseline mean) / baseline mean against the baseline contender of "
                     "the same scenario in this same run: negative is faster than the baseline. "
                     "Absolute times depend on the machine and its load; compare contenders only "
                     "within one run.\n\n");
}

/* Each contender's one-line description (the first series that gives one), in file order. */
static void md_contenders(const pkb__results *r, pkb__buf *b)
{
    bool any = false;
    for (size_t i = 0; i < r->nseries; i++) {
        const pkb__series *s = &r->series[i];
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(r->series[k].contender, s->contender) == 0 &&
                   r->series[k].description != NULL;
        if (seen || s->description == NULL)
            continue;
        if (!any)
            pkb__buf_puts(b, "Contenders:\n\n");
        any = true;
        pkb__buf_puts(b, "- ");
        pkb__md_code(b, s->contender);
        pkb__buf_puts(b, ": ");
        pkb__md_text(b, s->description);
        pkb__buf_puts(b, "\n");
    }
    if (any)
        pkb__buf_puts(b, "\n");
}

static void md_not_timed(const pkb__results *r, const pkb__scenario *sc, pkb__buf *b)
{
    bool any = false;
    for (size_t k = 0; k < sc->count; k++) {
        const pkb__series *s = &r->series[sc->members[k]];
        if (s->measured)
            continue;
        if (!any)
            pkb__buf_puts(b, "Not timed:\n\n");
        any = true;
        pkb__buf_puts(b, "- ");
        pkb__md_code(b, s->contender);
        if (strcmp(s->status, "measured") == 0) {
            pkb__buf_puts(b, ": measured, but the file holds no samples\n");
            continue;
        }
        pkb__buf_printf(b, ": %s — ", s->status);
        pkb__md_text(b, s->reason ? s->reason : "no reason given");
        pkb__buf_puts(b, "\n");
    }
    if (any)
        pkb__buf_puts(b, "\n");
}

static void md_plot_links(const pkb__scenario *sc, pkb__buf *b)
{
    const char *st = sc->stem;
    pkb__buf_puts(b, "![");
    pkb__md_code(b, sc->name);
    pkb__buf_printf(b, ": mean time per iteration by contender, ± sd](%s.gnuplot.svg)\n\n", st);
    pkb__buf_printf(b,
                    "Figures: [gnuplot PNG](%s.gnuplot.png), [gnuplot SVG](%s.gnuplot.svg), "
                    "[matplotlib PNG](%s.matplotlib.png); drawn from [%s.dat](%s.dat) by "
                    "[%s.gp](%s.gp) and [%s.py](%s.py).\n\n",
                    st, st, st, st, st, st, st, st, st);
}

static void md_scenario(const pkb__results *r, const pkb__scenario *sc, bool plots, pkb__buf *b)
{
    pkb__buf_puts(b, "### ");
    pkb__md_code(b, sc->name);
    pkb__buf_puts(b, "\n\n");
    int known = pkb_scenario_from_name(sc->name);
    if (known >= 0) {
        pkb__buf_puts(b, "Workload: ");
        pkb__md_text(b, pkb_scenario_description((pkb_scenario)known));
        pkb__buf_puts(b, ". ");
    }
    pkb__buf_puts(b, "Throughput in ");
    pkb__md_text(b, r->series[sc->members[0]].unit);
    pkb__buf_puts(b, ".\n\n");

    const pkb__series *base = sc->baseline >= 0 ? &r->series[sc->baseline] : NULL;
    if (sc->measured > 0) {
        pkb__buf_puts(b, "| contender | mean ± sd | median | throughput | delta vs baseline |\n"
                         "|---|---:|---:|---:|---:|\n");
    }
    for (size_t k = 0; k < sc->count; k++) {
        const pkb__series *s = &r->series[sc->members[k]];
        if (!s->measured)
            continue;
        double scale;
        const char *unit = pkb__time_unit(s->sum.mean, &scale);
        pkb__buf_puts(b, "| ");
        pkb__md_code(b, s->contender);
        if (s->noisy > 0)
            pkb__buf_printf(b, " (%zu of %zu repetition%s noisy[^noisy])", s->noisy, s->n,
                            s->n == 1 ? "" : "s");
        if (s->n >= 2)
            pkb__buf_printf(b, " | %.3f ± %.3f %s | ", s->sum.mean / scale, s->sum.sd / scale,
                            unit);
        else
            pkb__buf_printf(b, " | %.3f %s, n = 1 | ", s->sum.mean / scale, unit);
        pkb__buf_printf(b, "%.3f %s | ", s->sum.median / scale, unit);
        if (s->work > 0) {
            fmt_rate(b, s->work / (s->sum.mean * 1e-9));
            pkb__buf_puts(b, " ");
            pkb__md_text(b, s->unit);
        } else {
            pkb__buf_puts(b, "n/a");
        }
        pkb__buf_puts(b, " | ");
        if (s == base)
            pkb__buf_puts(b, "baseline");
        else if (base != NULL)
            pkb__fmt_delta(b, (s->sum.mean - base->sum.mean) / base->sum.mean);
        else
            pkb__buf_puts(b, "n/a");
        pkb__buf_puts(b, " |\n");
    }
    if (sc->measured > 0)
        pkb__buf_puts(b, "\n");
    if (sc->measured > 0 && base == NULL)
        pkb__buf_puts(b, "No measured baseline in this scenario: no deltas.\n\n");
    md_not_timed(r, sc, b);
    if (plots && sc->measured > 0)
        md_plot_links(sc, b);
}

/* ---- priming, settings, environment --------------------------------------------------------- */

static void md_priming(const pkb__results *r, pkb__buf *b)
{
    const json_t *p = json_object_get(r->root, "priming");
    pkb__buf_puts(b, "## Priming\n\n");
    if (!json_is_true(json_object_get(p, "performed"))) {
        pkb__buf_puts(b, "Not performed: the first series started without priming.\n\n");
        return;
    }
    pkb__buf_puts(b, "Before the first timed series pkbench spawned real children, recording "
                     "nothing, until batch times stopped falling.\n\n");
    long long batches = json_integer_value(json_object_get(p, "batches"));
    pkb__buf_printf(b, "- Batches: %lld", batches);
    const json_t *runs = json_object_get(p, "runs_per_batch");
    if (runs != NULL)
        pkb__buf_printf(b, " of %lld runs each", (long long)json_integer_value(runs));
    pkb__buf_printf(b, ", in %.3f s\n", json_number_value(json_object_get(p, "seconds")));
    if (json_is_true(json_object_get(p, "stable"))) {
        pkb__buf_puts(b, "- Outcome: stable (batch times stopped falling)\n");
    } else {
        pkb__buf_puts(b, "- Outcome: budget exhausted (the time budget");
        const json_t *budget = field(r, "settings", "priming_budget_s");
        if (budget != NULL)
            pkb__buf_printf(b, ", %.3f s,", json_number_value(budget));
        pkb__buf_puts(b, " ran out before batch times stopped falling)\n");
    }
    const json_t *ms = json_object_get(p, "batch_ms");
    pkb__buf_puts(b, "- Batch times (ms, in order): ");
    size_t i;
    const json_t *v;
    json_array_foreach(ms, i, v)
        pkb__buf_printf(b, "%s%.3f", i > 0 ? ", " : "", json_number_value(v));
    pkb__buf_puts(b, json_array_size(ms) == 0 ? "none recorded\n\n" : "\n\n");
}

static void md_footnotes(const pkb__results *r, pkb__buf *b)
{
    bool noisy = false;
    for (size_t i = 0; i < r->nseries; i++)
        noisy = noisy || (r->series[i].measured && r->series[i].noisy > 0);
    if (!noisy)
        return;
    pkb__buf_printf(b,
                    "\n[^noisy]: A repetition is flagged noisy when the runnable tasks at its end "
                    "(`procs_running` in /proc/stat) outnumbered the machine's %lld logical "
                    "CPUs: something else competed for the CPUs while it ran. Noisy repetitions "
                    "are kept in every statistic of this report, not removed.\n",
                    r->logical_cpus);
}

int pkb__markdown(const pkb__results *r, bool plots, pkb__buf *b)
{
    md_title(r, b);
    md_how_to_read(r, b);
    pkb__buf_puts(b, "## Measured results\n\n");
    md_contenders(r, b);
    if (r->nscenarios == 0)
        pkb__buf_puts(b, "The file holds no series.\n\n");
    for (size_t i = 0; i < r->nscenarios; i++)
        md_scenario(r, &r->scenarios[i], plots, b);
    pkb__md_conclusions(r, b);
    pkb__md_targets(r, b);
    pkb__md_appendix(r, b);
    return b->failed ? -ENOMEM : 0;
}

void pkb__md_title(const pkb__results *r, pkb__buf *b)
{
    md_title(r, b);
}

void pkb__md_appendix(const pkb__results *r, pkb__buf *b)
{
    md_priming(r, b);
    pkb__buf_puts(b, "## Settings\n\n");
    md_object_table(b, json_object_get(r->root, "settings"));
    pkb__buf_puts(b, "\n## Environment\n\n");
    md_object_table(b, json_object_get(r->root, "environment"));
    md_footnotes(r, b);
}

void pkb__md_object_table(pkb__buf *b, const json_t *obj)
{
    md_object_table(b, obj);
}

/* ==== Output files ============================================================================ */

int pkb__write_file(const char *dir, const char *name, const char *data, size_t len)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return -ENAMETOOLONG;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    int rc = 0;
    for (size_t done = 0; done < len && rc == 0;) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0 && errno != EINTR)
            rc = -errno;
        else if (w > 0)
            done += (size_t)w;
    }
    if (rc == 0 && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

/* mkdir -p: every missing component of `dir`, mode 0755. */
static int make_dirs(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return -ENAMETOOLONG;
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return -errno;
        *p = saved;
        if (saved == '\0')
            break;
    }
    struct stat st;
    if (stat(dir, &st) != 0)
        return -errno;
    return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Renames stage/name to out_dir/name after syncing it (tools' files were not synced yet). */
static int commit_file(const char *stage, const char *out_dir, const char *name)
{
    char from[PATH_MAX], to[PATH_MAX];
    if (snprintf(from, sizeof from, "%s/%s", stage, name) >= (int)sizeof from ||
        snprintf(to, sizeof to, "%s/%s", out_dir, name) >= (int)sizeof to)
        return -ENAMETOOLONG;
    int fd = open(from, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = fsync(fd) == 0 ? 0 : -errno;
    close(fd);
    if (rc == 0 && rename(from, to) != 0)
        rc = -errno;
    return rc;
}

/* Moves one figure's files into place. */
static int commit_figure(const char *stage, const char *out_dir, const char *stem)
{
    static const char *const plot_suffixes[] = {".dat",         ".gp", ".gnuplot.png",
                                                ".gnuplot.svg", ".py", ".matplotlib.png"};
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < sizeof plot_suffixes / sizeof plot_suffixes[0]; k++) {
        char name[320];
        snprintf(name, sizeof name, "%s%s", stem, plot_suffixes[k]);
        rc = commit_file(stage, out_dir, name);
    }
    return rc;
}

/* Moves every output into place: the plots' files, then the report. */
static int commit(const pkb__results *r, const char *stage, const char *out_dir, bool plots)
{
    int rc = 0;
    char stem[300];
    if (pkb__forkathon_is(r)) { /* the forkathon suite's own figures (report_forkathon.h) */
        pkb__buf names = {0};
        rc = plots ? pkb__forkathon_plot_files(r, &names) : 0;
        for (size_t at = 0; plots && rc == 0 && at < names.len; at += strlen(names.data + at) + 1)
            rc = commit_file(stage, out_dir, names.data + at);
        pkb__buf_free(&names);
    } else if (pkb__phases_report(r)) {
        if (plots && pkb__phases_plot_stem(r, stem, sizeof stem))
            rc = commit_figure(stage, out_dir, stem);
    } else {
        for (size_t i = 0; plots && rc == 0 && i < r->nscenarios; i++)
            if (r->scenarios[i].measured > 0)
                rc = commit_figure(stage, out_dir, r->scenarios[i].stem);
    }
    char md[300];
    snprintf(md, sizeof md, "%s.md", r->name);
    if (rc == 0)
        rc = commit_file(stage, out_dir, md);
    int dfd = open(out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return rc;
}

static int fail_out(char *err, size_t err_len, int rc, const char *what, const char *path)
{
    if (err != NULL && err_len > 0)
        snprintf(err, err_len, "%s %s: %s", what, path, strerror(-rc));
    return rc;
}

int pkb_report_render(const char *results_path,
                      const char *out_dir,
                      const pkb_report_options *opts,
                      char *err,
                      size_t err_len)
{
    static const pkb_report_options defaults = {0};
    if (opts == NULL)
        opts = &defaults;
    if (err != NULL && err_len > 0)
        err[0] = '\0';
    if (results_path == NULL || results_path[0] == '\0' || out_dir == NULL || out_dir[0] == '\0') {
        if (err != NULL && err_len > 0)
            snprintf(err, err_len, "report: %s",
                     results_path == NULL || results_path[0] == '\0' ? "no results file given"
                                                                     : "no output directory given");
        return -EINVAL;
    }
    pkb__results r;
    int rc = pkb__results_load(results_path, &r, err, err_len);
    if (rc != 0)
        return rc;
    bool plots = !opts->no_plots, phases = pkb__phases_report(&r),
         forkathon = pkb__forkathon_is(&r);
    pkb__buf md = {0};
    if (forkathon)
        rc = pkb__forkathon_markdown(&r, plots, &md);
    else if (phases)
        rc = pkb__phases_markdown(&r, plots, &md, err, err_len);
    else
        rc = pkb__markdown(&r, plots, &md);
    if (rc != 0) {
        if (!phases)
            fail_out(err, err_len, rc, "rendering", results_path);
        goto out;
    }
    rc = make_dirs(out_dir);
    if (rc != 0) {
        fail_out(err, err_len, rc, "cannot create", out_dir);
        goto out;
    }
    char stage[PATH_MAX];
    if (snprintf(stage, sizeof stage, "%s/.%s.report-XXXXXX", out_dir, r.name) >=
        (int)sizeof stage) {
        rc = fail_out(err, err_len, -ENAMETOOLONG, "cannot stage in", out_dir);
        goto out;
    }
    if (mkdtemp(stage) == NULL) {
        rc = fail_out(err, err_len, -errno, "cannot stage in", out_dir);
        goto out;
    }
    char md_name[300];
    snprintf(md_name, sizeof md_name, "%s.md", r.name);
    rc = pkb__write_file(stage, md_name, md.data, md.len);
    if (rc != 0)
        fail_out(err, err_len, rc, "cannot write in", stage);
    if (rc == 0 && plots)
        rc = forkathon ? pkb__forkathon_plots_render(&r, stage, opts, err, err_len)
             : phases  ? pkb__phases_plots_render(&r, stage, opts, err, err_len)
                       : pkb__plots_render(&r, stage, opts, err, err_len);
    if (rc == 0) {
        rc = commit(&r, stage, out_dir, plots);
        if (rc != 0)
            fail_out(err, err_len, rc, "cannot move the report into", out_dir);
    }
    nftw(stage, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
out:
    pkb__buf_free(&md);
    pkb__results_free(&r);
    return rc;
}
