/*
 * The Markdown report of a forkathon results file (view.h).
 *
 * Every number comes from the file's series through pkb_forkathon_summarize (forkathon.h), the
 * same code the suite used for the summary it stored; the memory at each ladder step comes from
 * the file's `forkathon.ladder`. The only numbers typed in are Wemm's own, quoted from his 2003
 * post (summary.c) and labelled as his.
 *
 *   - Wemm's table is what time(1) prints, per binary: the median over the runs of user, sys and
 *     wall seconds and of %CPU = (user + sys) / wall, plus wall / N (µs per fork).
 *   - Ratios: vfork vs fork = fork's median wall (or CPU) / vfork's, per linkage; dynamic vs
 *     static = the dynamic binary's / the static one's, per loop. "3×" reads "3 times faster".
 *   - The ladder: per mechanism × THP setting, the median µs per spawn at each step, and the
 *     least-squares line through (measured RSS in MiB, median µs): slope in µs per MiB, R².
 */
#define _GNU_SOURCE
#include "suites/forkathon/view.h"

#include "common/md.h"
#include "suites/forkathon/forkathon.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double numv(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A time given in µs, in the unit it reads best in, to 4 significant figures (common/md.h). */
static void fmt_us(pkb_buf *b, double us)
{
    pkb_fmt_time(b, us * 1e3);
}

static void fmt_ratio(pkb_buf *b, const json_t *v)
{
    if (json_is_number(v))
        pkb_buf_printf(b, "%.2f×", json_number_value(v));
    else
        pkb_buf_puts(b, "n/a");
}

static void fmt_step(pkb_buf *b, double mib)
{
    if (mib >= 1024 && fmod(mib, 1024) == 0)
        pkb_buf_printf(b, "%.0f GiB", mib / 1024);
    else
        pkb_buf_printf(b, "%.0f MiB", mib);
}

/* For the terminal view (terminal.c), the same formatters (view.h). */
double pkb__fk_num(const json_t *o, const char *key)
{
    return numv(o, key);
}

void pkb__fk_us(pkb_buf *b, double us)
{
    fmt_us(b, us);
}

void pkb__fk_ratio(pkb_buf *b, const json_t *v)
{
    fmt_ratio(b, v);
}

/* ---- title, settings, environment ---------------------------------------------------------- */

static void md_title(const pkb_results *r, pkb_buf *b)
{
    const json_t *root = r->root;
    pkb_buf_puts(b, "# forkathon: ");
    pkb_md_text(b, json_string_value(json_object_get(root, "profile")));
    pkb_buf_puts(b, " profile, ");
    pkb_md_text(b, json_string_value(json_object_get(root, "created")));
    pkb_buf_puts(b, "\n\nThe fork/vfork study, rendered by `pkbench report` from ");
    pkb_md_provenance(r, b);
    pkb_buf_puts(b, "\n\n");
    if (!json_is_true(json_object_get(root, "complete")))
        pkb_buf_puts(b, "> **Incomplete run.** It was interrupted: only the samples taken before "
                        "are in this report.\n\n");
}

/* A two-column table of the fields of `obj`, skipping those named in `skip` (NULL-terminated). */
static void md_fields(pkb_buf *b, const json_t *obj, const char *const *skip)
{
    pkb_buf_puts(b, "| field | value |\n|---|---|\n");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        bool skipped = false;
        for (size_t i = 0; skip != NULL && skip[i] != NULL && !skipped; i++)
            skipped = strcmp(skip[i], key) == 0;
        if (skipped)
            continue;
        pkb_buf_puts(b, "| ");
        pkb_md_code(b, key);
        pkb_buf_puts(b, " | ");
        pkb_md_json_value(b, v);
        pkb_buf_puts(b, " |\n");
    }
    pkb_buf_puts(b, "\n");
}

/* ---- Wemm's experiment --------------------------------------------------------------------- */

/* csh's time: "0.120u 17.192s 0:17.81 97.1%". */
static void time_line(pkb_buf *b, const json_t *row)
{
    double wall = numv(row, "wall_s");
    int minutes = isfinite(wall) ? (int)(wall / 60) : 0;
    pkb_buf_printf(b, "`%.3fu %.3fs %d:%05.2f %.1f%%`", numv(row, "user_s"), numv(row, "sys_s"),
                   minutes, wall - 60.0 * minutes, numv(row, "cpu_pct"));
}

static void wemm_table(pkb_buf *b, const json_t *rows, bool ours)
{
    pkb_buf_puts(b, "| binary | loop | N | runs | user | sys | wall | %CPU | wall per fork | "
                    "as time(1) prints it |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row)
    {
        pkb_buf_puts(b, "| ");
        pkb_md_code(b, json_string_value(json_object_get(row, "binary")));
        pkb_buf_printf(b, " | %s | ", json_string_value(json_object_get(row, "mechanism")));
        pkb_fmt_count(b, (double)(long long)numv(row, "iterations"));
        pkb_buf_printf(b, " | %d | %.3f s | %.3f s | %.2f s", (int)numv(row, "runs"),
                       numv(row, "user_s"), numv(row, "sys_s"), numv(row, "wall_s"));
        if (ours && numv(row, "runs") > 1)
            pkb_buf_printf(b, " (%.2f–%.2f)", numv(row, "wall_min_s"), numv(row, "wall_max_s"));
        pkb_buf_printf(b, " | %.1f%% | ", numv(row, "cpu_pct"));
        fmt_us(b, numv(row, "us_per_fork"));
        pkb_buf_puts(b, " | ");
        time_line(b, row);
        pkb_buf_puts(b, " |\n");
    }
    pkb_buf_puts(b, "\n");
}

static const json_t *
ratio(const json_t *summary, const char *set, const char *group, const char *key)
{
    return json_object_get(json_object_get(json_object_get(summary, set), group), key);
}

static void ratio_row(pkb_buf *b,
                      const json_t *sum,
                      const char *label,
                      const char *group,
                      const char *k1,
                      const char *k2)
{
    pkb_buf_printf(b, "| %s | ", label);
    fmt_ratio(b, ratio(sum, "ratios", group, k1));
    pkb_buf_puts(b, " | ");
    fmt_ratio(b, ratio(sum, "ratios", group, k2));
    pkb_buf_puts(b, " | ");
    fmt_ratio(b, ratio(sum, "ratios_2003", group, k1));
    pkb_buf_puts(b, " | ");
    fmt_ratio(b, ratio(sum, "ratios_2003", group, k2));
    pkb_buf_puts(b, " |\n");
}

static void md_wemm(const pkb_results *r, const json_t *sum, bool plots, pkb_buf *b)
{
    const json_t *rows = json_object_get(sum, "wemm");
    pkb_buf_puts(b, "## Wemm's forkathon: fork vs vfork, static vs dynamic\n\n");
    if (json_array_size(rows) == 0) {
        pkb_buf_puts(b, "Not measured in this run.\n\n");
        return;
    }
    const json_t *fk = json_object_get(r->root, "forkathon");
    pkb_buf_puts(b, "Peter Wemm's loop (freebsd-current, 27 Nov 2003): N times `fork()` (or "
                    "`vfork()`), the child calls `_exit(0)`, the parent `waitpid()`s for it. One "
                    "source (`phases/forkathon.c`) linked statically and dynamically; each run is "
                    "one child of pkbench, started without a group of its own, as a shell's "
                    "`time ./forkathon` would. user and sys are the kernel's rusage of the reaped "
                    "run (the loop and all its children), wall is from the spawn to the reap, "
                    "%CPU = (user + sys) / wall. ");
    if (json_is_integer(json_object_get(fk, "wemm_rounds")))
        pkb_buf_printf(b,
                       "Each binary ran %lld times, the four interleaved in rounds of rotating "
                       "order; the table gives medians over the runs, with the wall range. ",
                       (long long)json_integer_value(json_object_get(fk, "wemm_rounds")));
    pkb_buf_puts(b, "Every run in the table reaped exactly the N children it started and left "
                    "none (a run that did not fails its series: see \"Not measured\").\n\n");
    wemm_table(b, rows, true);

    pkb_buf_puts(b, "Wemm's own numbers (FreeBSD 5-current, 2003; one run each, csh's time):\n\n");
    wemm_table(b, json_object_get(sum, "wemm_2003"), false);

    pkb_buf_puts(b, "### The ratios\n\n"
                    "| vfork vs fork (fork ÷ vfork) | static | dynamic | Wemm 2003 static | "
                    "Wemm 2003 dynamic |\n|---|---:|---:|---:|---:|\n");
    ratio_row(b, sum, "wall time", "vfork_vs_fork", "static", "dynamic");
    ratio_row(b, sum, "CPU (user + sys)", "vfork_vs_fork_cpu", "static", "dynamic");
    pkb_buf_puts(b, "\n| dynamic vs static (dynamic ÷ static) | fork | vfork | Wemm 2003 fork | "
                    "Wemm 2003 vfork |\n|---|---:|---:|---:|---:|\n");
    ratio_row(b, sum, "wall time", "dynamic_vs_static", "fork", "vfork");
    ratio_row(b, sum, "CPU (user + sys)", "dynamic_vs_static_cpu", "fork", "vfork");
    pkb_buf_puts(b, "\n");

    const json_t *vs = ratio(sum, "ratios", "vfork_vs_fork", "static"),
                 *vd = ratio(sum, "ratios", "vfork_vs_fork", "dynamic"),
                 *df = ratio(sum, "ratios", "dynamic_vs_static", "fork"),
                 *dv = ratio(sum, "ratios", "dynamic_vs_static", "vfork");
    if (json_is_number(vs) && json_is_number(vd)) {
        pkb_buf_printf(b,
                       "In this run vfork is **%.2f× faster than fork for the static parent and "
                       "%.2f× for the dynamic one** (by wall time; Wemm measured 2.7× and 7.7×, "
                       "his \"3 times\" and \"9 times\" are the CPU ratios, 2.9× and 8.6×).",
                       json_number_value(vs), json_number_value(vd));
        if (json_is_number(df) && json_is_number(dv))
            pkb_buf_printf(b,
                           " Forking the dynamic parent costs %.2f× forking the static one; with "
                           "vfork the linkage costs %.2f× (Wemm: 2.79× and 0.98×): fork "
                           "duplicates every mapping of the parent, and a dynamic parent has "
                           "several times more (ld.so, libc.so, their segments), whose children "
                           "also resolve `_exit` through ld.so anew; vfork copies nothing.",
                           json_number_value(df), json_number_value(dv));
        pkb_buf_puts(b, "\n\n");
    }
    char stem[256];
    if (plots && pkb__forkathon_figure(r, "wemm", stem, sizeof stem))
        pkb_md_figure(b, stem, "µs per fork of the four binaries, this run and Wemm 2003");
}

/* ---- the RSS ladder ------------------------------------------------------------------------ */

static const json_t *point_at(const json_t *curve, double step)
{
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(curve, "points"), i, p)
    {
        if (numv(p, "step_mib") == step)
            return p;
    }
    return NULL;
}

static bool is_vfork_family(const char *mech)
{
    return strcmp(mech, "fork_execve") != 0;
}

static void md_cost_table(const json_t *curves, const json_t *steps, pkb_buf *b)
{
    pkb_buf_puts(b, "| mechanism | THP |");
    size_t i;
    const json_t *st;
    json_array_foreach(steps, i, st)
    {
        pkb_buf_puts(b, " ");
        fmt_step(b, json_number_value(st));
        pkb_buf_puts(b, " |");
    }
    pkb_buf_puts(b, " slope (µs/MiB) | R² |\n|---|---|");
    for (i = 0; i < json_array_size(steps); i++)
        pkb_buf_puts(b, "---:|");
    pkb_buf_puts(b, "---:|---:|\n");
    const json_t *c;
    json_array_foreach(curves, i, c)
    {
        pkb_buf_puts(b, "| ");
        pkb_md_code(b, json_string_value(json_object_get(c, "mechanism")));
        pkb_buf_printf(b, " | %s |", json_string_value(json_object_get(c, "thp")));
        size_t k;
        json_array_foreach(steps, k, st)
        {
            const json_t *p = point_at(c, json_number_value(st));
            pkb_buf_puts(b, " ");
            if (p != NULL)
                fmt_us(b, numv(p, "median_us"));
            else
                pkb_buf_puts(b, "–");
            pkb_buf_puts(b, " |");
        }
        const json_t *fit = json_object_get(c, "fit");
        if (json_is_object(fit))
            pkb_buf_printf(b, " %.3f | %.3f |\n", numv(fit, "slope_us_per_mib"), numv(fit, "r2"));
        else
            pkb_buf_puts(b, " n/a | n/a |\n");
    }
    pkb_buf_puts(b, "\n");
}

static void md_fit_table(const json_t *curves, pkb_buf *b)
{
    pkb_buf_puts(b, "| mechanism | THP | slope (µs per MiB) | intercept | R² | points | "
                    "predicted extra at 1 GiB |\n|---|---|---:|---:|---:|---:|---:|\n");
    size_t i;
    const json_t *c;
    json_array_foreach(curves, i, c)
    {
        const json_t *fit = json_object_get(c, "fit");
        if (!json_is_object(fit))
            continue;
        pkb_buf_puts(b, "| ");
        pkb_md_code(b, json_string_value(json_object_get(c, "mechanism")));
        pkb_buf_printf(b, " | %s | %.3f | ", json_string_value(json_object_get(c, "thp")),
                       numv(fit, "slope_us_per_mib"));
        fmt_us(b, numv(fit, "intercept_us"));
        pkb_buf_printf(b, " | %.4f | %d | ", numv(fit, "r2"), (int)numv(fit, "n"));
        fmt_us(b, numv(fit, "slope_us_per_mib") * 1024);
        pkb_buf_puts(b, " |\n");
    }
    pkb_buf_puts(b, "\n");
}

static const json_t *find_curve(const json_t *curves, const char *mech, const char *thp)
{
    size_t i;
    const json_t *c;
    json_array_foreach(curves, i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "mechanism")), mech) == 0 &&
            strcmp(json_string_value(json_object_get(c, "thp")), thp) == 0)
            return c;
    }
    return NULL;
}

static void md_fit_words(const json_t *curves, pkb_buf *b)
{
    static const char *const thps[] = {"off", "on"};
    for (int t = 0; t < 2; t++) {
        const json_t *fork = find_curve(curves, "fork_execve", thps[t]);
        const json_t *fit = json_object_get(fork, "fit");
        if (!json_is_object(fit))
            continue;
        const json_t *pts = json_object_get(fork, "points");
        const json_t *last = json_array_get(pts, json_array_size(pts) - 1);
        pkb_buf_printf(b,
                       "- **fork+execve, THP %s: %.2f µs per MiB** of the parent's resident "
                       "memory (R² %.4f, %d steps); at ",
                       thps[t], numv(fit, "slope_us_per_mib"), numv(fit, "r2"),
                       (int)numv(fit, "n"));
        fmt_step(b, numv(last, "step_mib"));
        pkb_buf_puts(b, " one spawn took ");
        fmt_us(b, numv(last, "median_us"));
        const json_t *vf =
            point_at(find_curve(curves, "vfork_execve", thps[t]), numv(last, "step_mib"));
        if (vf != NULL) {
            pkb_buf_puts(b, ", against ");
            fmt_us(b, numv(vf, "median_us"));
            pkb_buf_printf(b, " for vfork+execve (%.0f×)",
                           numv(last, "median_us") / numv(vf, "median_us"));
        }
        pkb_buf_puts(b, t == 0 ? ". The research note (`spawn.md`) measured ≈28 µs/MiB on these "
                                 "machines.\n"
                               : ". Huge pages leave the kernel one entry to copy per 2 MiB "
                                 "instead of 512.\n");
    }
    for (int t = 0; t < 2; t++) {
        double lo = INFINITY, hi = -INFINITY;
        size_t n = 0;
        size_t i;
        const json_t *c;
        json_array_foreach(curves, i, c)
        {
            const json_t *fit = json_object_get(c, "fit");
            if (!json_is_object(fit) ||
                !is_vfork_family(json_string_value(json_object_get(c, "mechanism"))) ||
                strcmp(json_string_value(json_object_get(c, "thp")), thps[t]) != 0)
                continue;
            lo = fmin(lo, numv(fit, "slope_us_per_mib"));
            hi = fmax(hi, numv(fit, "slope_us_per_mib"));
            n++;
        }
        if (n == 0)
            continue;
        pkb_buf_printf(b,
                       "- The vfork family with THP %s (vfork, clone3, posix_spawn, processkit; "
                       "%zu curves): slopes from %.3f to %.3f µs per MiB, i.e. at most ",
                       thps[t], n, lo, hi);
        fmt_us(b, fmax(fabs(lo), fabs(hi)) * 1024);
        pkb_buf_puts(b, " per GiB — flat, next to fork's growth. Their R² says little: a flat "
                        "line explains no variance, so R² measures noise there; read the "
                        "slope.\n");
    }
    pkb_buf_puts(b, "\n");
}

static void md_memory(const json_t *points, pkb_buf *b)
{
    pkb_buf_puts(b,
                 "### The memory at each step\n\n"
                 "| THP | step | VmRSS during the step | in huge pages | VmRSS after unmapping | "
                 "released | touched in |\n|---|---:|---:|---:|---:|---|---:|\n");
    size_t i;
    const json_t *p;
    json_array_foreach(points, i, p)
    {
        pkb_buf_printf(b, "| %s | ", json_string_value(json_object_get(p, "thp")));
        fmt_step(b, numv(p, "step_mib"));
        pkb_buf_printf(b, " | %.1f MiB | %.1f MiB | %.1f MiB (before: %.1f) | %s | %.2f s |\n",
                       numv(p, "rss_kib") / 1024, numv(p, "anon_huge_kib") / 1024,
                       numv(p, "rss_after_free_kib") / 1024, numv(p, "rss_before_kib") / 1024,
                       json_is_true(json_object_get(p, "released")) ? "yes" : "**no**",
                       numv(p, "touch_s"));
    }
    pkb_buf_puts(b, "\n");
}

static void md_ladder(const pkb_results *r, const json_t *sum, bool plots, pkb_buf *b)
{
    const json_t *curves = json_object_get(sum, "curves");
    const json_t *fk = json_object_get(r->root, "forkathon");
    pkb_buf_puts(b, "## Spawn cost as the parent's resident memory grows\n\n");
    if (json_array_size(curves) == 0) {
        pkb_buf_puts(b, "Not measured in this run.\n\n");
        return;
    }
    pkb_buf_puts(b, "pkbench itself maps and touches anonymous memory to each step, then "
                    "times spawn+exec+wait of the tiny static helper (no libc; `_start` exits 0) "
                    "with each mechanism, interleaved in rounds of rotating order; then it "
                    "unmaps the memory and checks that VmRSS fell back before the next step. "
                    "THP off is `MADV_NOHUGEPAGE`, on is `MADV_HUGEPAGE`");
    const char *mode = json_string_value(json_object_get(fk, "thp_enabled"));
    if (mode != NULL) {
        pkb_buf_puts(b, " (the system's mode: ");
        pkb_md_code(b, mode);
        pkb_buf_puts(b, ")");
    }
    pkb_buf_puts(b, ". ");
    if (json_is_integer(json_object_get(fk, "ladder_rounds")))
        pkb_buf_printf(
            b,
            "Each cell is the median of %lld samples; a sample is the mean of %lld "
            "spawns, except fork+execve above 0 MiB: 512 / step spawns, at least one "
            "(a fork of a 4 GiB parent takes ~0.1 s). ",
            (long long)json_integer_value(json_object_get(fk, "ladder_rounds")),
            (long long)json_integer_value(json_object_get(fk, "flat_cycles_per_sample")));
    pkb_buf_puts(b, "The line is the least-squares fit of those medians against the RSS "
                    "measured at each step (VmRSS, in MiB: the 0 MiB step is pkbench's own "
                    "few MiB), so the slope is the cost of one more MiB of resident parent.\n\n");
    pkb_buf_puts(b, "Mechanisms:\n\n");
    for (size_t m = 0; m < pkb_fk_mechanism_count; m++) {
        pkb_buf_puts(b, "- ");
        pkb_md_code(b, pkb_fk_mechanism_names[m]);
        pkb_buf_puts(b, ": ");
        pkb_md_text(b, pkb_fk_mechanism_descriptions[m]);
        pkb_buf_puts(b, "\n");
    }
    pkb_buf_puts(b, "\n### Median µs per spawn+exec+wait\n\n");
    const json_t *steps = json_object_get(fk, "ladder_steps_mib");
    json_t *own = NULL;
    if (!json_is_array(steps)) { /* no section: the steps the curves have */
        own = json_array();
        size_t i;
        const json_t *c;
        json_array_foreach(curves, i, c)
        {
            size_t k;
            const json_t *p;
            json_array_foreach(json_object_get(c, "points"), k, p)
            {
                bool seen = false;
                for (size_t j = 0; j < json_array_size(own) && !seen; j++)
                    seen = json_number_value(json_array_get(own, j)) == numv(p, "step_mib");
                if (!seen)
                    json_array_append_new(own, json_real(numv(p, "step_mib")));
            }
        }
        steps = own;
    }
    md_cost_table(curves, steps, b);
    json_decref(own);
    pkb_buf_puts(b, "### Least-squares fits\n\n");
    md_fit_table(curves, b);
    md_fit_words(curves, b);
    char stem[256];
    if (plots && pkb__forkathon_figure(r, "rss_ladder", stem, sizeof stem))
        pkb_md_figure(b, stem, "µs per spawn against the parent's RSS, log-log");
    if (json_array_size(json_object_get(fk, "ladder")) > 0)
        md_memory(json_object_get(fk, "ladder"), b);
}

/* ---- noise and the rest -------------------------------------------------------------------- */

/* Refused and failed series, with the reason the file gives: never silently missing. */
static void md_not_measured(const pkb_results *r, pkb_buf *b)
{
    bool any = false;
    for (size_t i = 0; i < r->nseries; i++) {
        const pkb_results_series *s = &r->series[i];
        if (s->measured)
            continue;
        if (!any)
            pkb_buf_puts(b, "## Not measured\n\n");
        any = true;
        pkb_md_unmeasured(b, s->name, s);
    }
    if (any)
        pkb_buf_puts(b, "\n");
}

static void md_noise(const pkb_results *r, pkb_buf *b)
{
    size_t noisy = 0, total = 0;
    bool measured = false;
    for (size_t i = 0; i < r->nseries; i++) {
        if (r->series[i].measured) {
            noisy += r->series[i].noisy;
            total += r->series[i].n;
            measured = measured || r->series[i].disturbance_measured;
        }
    }
    if (total == 0)
        return;
    if (measured)
        pkb_buf_printf(b,
                       "Noise: %zu of %zu samples were disturbed — other processes used more "
                       "than a quarter of the machine's %lld logical CPUs while they ran, or the "
                       "hypervisor stole more than 5%% (each sample's measures are in the "
                       "results file's `disturbance`); they are kept in every number above. The "
                       "suite measures itself and does not re-measure.\n\n",
                       noisy, total, r->logical_cpus);
    else
        pkb_buf_printf(b,
                       "Noise: %zu of %zu samples ended with more runnable tasks than the "
                       "machine's %lld logical CPUs (`procs_running`); they are kept in every "
                       "number above.\n\n",
                       noisy, total, r->logical_cpus);
}

int pkb__forkathon_markdown(const pkb_results *r, bool plots, pkb_buf *b, char *err, size_t err_len)
{
    json_t *sum = pkb_forkathon_summarize(json_object_get(r->root, "series"));
    if (sum == NULL)
        return pkb_fail(err, err_len, -ENOMEM, "rendering %s: out of memory", r->file);
    md_title(r, b);
    pkb_buf_puts(b, "## How to read it\n\n"
                    "Two experiments (METHODOLOGY.md, \"fork vs vfork\"). First Wemm's: how much "
                    "faster a vfork+_exit+waitpid loop is than a fork one, for a statically and "
                    "a dynamically linked parent, as time(1) reports it. Then the cost of "
                    "spawn+exec+wait by mechanism as the parent's resident memory grows: fork "
                    "copies the parent's page tables, so it grows linearly with RSS; the vfork "
                    "family (vfork, clone3 with CLONE_VM|CLONE_VFORK, glibc's posix_spawn, "
                    "processkit) shares the parent's memory until the exec and stays flat. "
                    "Absolute times depend on the machine and its load; the ratios and slopes "
                    "are what carries over.\n\n");
    md_wemm(r, sum, plots, b);
    md_ladder(r, sum, plots, b);
    md_not_measured(r, b);
    md_noise(r, b);
    pkb_buf_puts(b, "## Settings\n\n");
    md_fields(b, json_object_get(r->root, "settings"), NULL);
    const json_t *fk = json_object_get(r->root, "forkathon");
    if (json_is_object(fk)) {
        static const char *const skip[] = {"ladder", "summary", NULL};
        pkb_buf_puts(b, "## The study's configuration\n\n");
        md_fields(b, fk, skip);
    }
    pkb_buf_puts(b, "## Environment\n\n");
    md_fields(b, json_object_get(r->root, "environment"), NULL);
    json_decref(sum);
    return b->failed ? pkb_fail(err, err_len, -ENOMEM, "rendering %s: out of memory", r->file) : 0;
}
