/*
 * render — the report engine (report.h): the sections every suite's report shares (title first;
 * priming, settings, environment and footnotes last), and pkb_report_write, which stages the
 * suite's Markdown and figures in a private directory and renames them into place only when all
 * are complete.
 */
#define _GNU_SOURCE
#include "report/report.h"

#include "common/files.h"
#include "common/md.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ==== Shared sections ========================================================================= */

void pkb_md_provenance(const pkb_results *r, pkb_buf *b)
{
    pkb_md_code(b, r->file);
    pkb_buf_puts(b, " (pkbench-results, schema version 1); generated, not edited by hand. "
                    "Command: `");
    size_t i;
    const json_t *arg;
    json_array_foreach(pkb_results_field(r, NULL, "command"), i, arg)
    {
        pkb_buf_puts(b, i > 0 ? " " : "");
        for (const char *s = json_string_value(arg); s != NULL && *s; s++)
            pkb_buf_printf(b, "%c", *s == '`' ? '\'' : *s == '\n' ? ' ' : *s);
    }
    pkb_buf_puts(b, "`.");
    const char *filter = json_string_value(pkb_results_field(r, NULL, "filter"));
    if (filter != NULL) {
        pkb_buf_puts(b, " Filter: ");
        pkb_md_code(b, filter);
        pkb_buf_puts(b, ".");
    }
}

void pkb_md_title(const pkb_results *r, pkb_buf *b)
{
    pkb_buf_puts(b, "# ");
    pkb_md_text(b, json_string_value(pkb_results_field(r, NULL, "suite")));
    pkb_buf_puts(b, ": ");
    pkb_md_text(b, json_string_value(pkb_results_field(r, NULL, "profile")));
    pkb_buf_puts(b, " profile, ");
    pkb_md_text(b, json_string_value(pkb_results_field(r, NULL, "created")));
    pkb_buf_puts(b, "\n\nRendered by `pkbench report` from ");
    pkb_md_provenance(r, b);
    const char *finished = json_string_value(pkb_results_field(r, NULL, "finished"));
    if (finished != NULL) {
        pkb_buf_puts(b, " Finished: ");
        pkb_md_text(b, finished);
        pkb_buf_puts(b, ".");
    }
    pkb_buf_puts(b, "\n\n");
    if (!json_is_true(pkb_results_field(r, NULL, "complete")))
        pkb_buf_puts(b, "> **Incomplete run.** It was interrupted: only the series that finished "
                        "are in this report.\n\n");
    /* A Windows build run under Wine (its environment's `wine`): say so before any number. */
    const char *wine =
        json_string_value(json_object_get(json_object_get(r->root, "environment"), "wine"));
    if (wine != NULL) {
        pkb_buf_puts(b, "> **Measured under Wine ");
        pkb_md_text(b, wine);
        pkb_buf_puts(b, ", not on Windows.** These are Wine's process creation and I/O on Linux: "
                        "they show that the Windows code runs and how its parts compare here, "
                        "and say nothing about Windows timings.\n\n");
    }
}

static void md_priming(const pkb_results *r, pkb_buf *b)
{
    const json_t *p = json_object_get(r->root, "priming");
    pkb_buf_puts(b, "## Priming\n\n");
    if (!json_is_true(json_object_get(p, "performed"))) {
        pkb_buf_puts(b, "Not performed: the first series started without priming.\n\n");
        return;
    }
    pkb_buf_puts(b, "Before the first timed series pkbench spawned real children, recording "
                    "nothing, until batch times stopped falling.\n\n");
    long long batches = json_integer_value(json_object_get(p, "batches"));
    pkb_buf_printf(b, "- Batches: %lld", batches);
    const json_t *runs = json_object_get(p, "runs_per_batch");
    if (runs != NULL)
        pkb_buf_printf(b, " of %lld runs each", (long long)json_integer_value(runs));
    pkb_buf_printf(b, ", in %.3f s\n", json_number_value(json_object_get(p, "seconds")));
    if (json_is_true(json_object_get(p, "stable"))) {
        pkb_buf_puts(b, "- Outcome: stable (batch times stopped falling)\n");
    } else {
        pkb_buf_puts(b, "- Outcome: budget exhausted (the time budget");
        const json_t *budget = pkb_results_field(r, "settings", "priming_budget_s");
        if (budget != NULL)
            pkb_buf_printf(b, ", %.3f s,", json_number_value(budget));
        pkb_buf_puts(b, " ran out before batch times stopped falling)\n");
    }
    const json_t *ms = json_object_get(p, "batch_ms");
    pkb_buf_puts(b, "- Batch times (ms, in order): ");
    size_t i;
    const json_t *v;
    json_array_foreach(ms, i, v)
        pkb_buf_printf(b, "%s%.3f", i > 0 ? ", " : "", json_number_value(v));
    pkb_buf_puts(b, json_array_size(ms) == 0 ? "none recorded\n\n" : "\n\n");
}

static void md_footnotes(const pkb_results *r, pkb_buf *b)
{
    bool noisy = false, measured = false, remeasured = false;
    for (size_t i = 0; i < r->nseries; i++) {
        const pkb_results_series *s = &r->series[i];
        noisy = noisy || (s->measured && s->noisy > 0);
        measured = measured || (s->measured && s->disturbance_measured);
        remeasured = remeasured || (s->measured && s->attempts > 1);
    }
    const json_t *rule = pkb_results_field(r, "settings", "disturbance");
    if (noisy && measured)
        pkb_buf_printf(b,
                       "\n[^noisy]: A repetition is marked disturbed when, while it ran, other "
                       "processes used more than %.0f%% of the machine's CPU capacity (wall "
                       "time × %lld logical CPUs; /proc/stat's busy time minus pkbench's and its "
                       "children's CPU) or the hypervisor stole more than %.0f%% of it. The "
                       "results file keeps every repetition's measures (`disturbance`: the "
                       "others' share, steal, involuntary context switches, migrations, and "
                       "`procs_running`). Disturbed repetitions are kept in every statistic of "
                       "this report, not removed.\n",
                       100 * json_number_value(json_object_get(rule, "others_cpu_above")),
                       r->logical_cpus,
                       100 * json_number_value(json_object_get(rule, "steal_above")));
    else if (noisy)
        pkb_buf_printf(b,
                       "\n[^noisy]: A repetition is marked disturbed (noisy) when the runnable "
                       "tasks at its end (`procs_running` in /proc/stat) outnumbered the "
                       "machine's %lld logical CPUs: something else competed for the CPUs while "
                       "it ran. They are kept in every statistic of this report, not removed.\n",
                       r->logical_cpus);
    if (remeasured)
        pkb_buf_printf(
            b,
            "\n[^remeasured]: A series more than %.0f%% of whose repetitions were "
            "disturbed was measured once more, after the others; both attempts are in "
            "the results file (`attempts`), and its numbers here are the less "
            "disturbed attempt's (the first one on a tie).\n",
            100 * json_number_value(json_object_get(pkb_results_field(r, "settings", "remeasure"),
                                                    "disturbed_share_above")));
}

/* The series whose first calibration saw a disturbed call (METHODOLOGY.md, "Sizing the
 * samples"), named: their counts came from a second pass. */
static void md_calibration(const pkb_results *r, pkb_buf *b)
{
    size_t again = 0;
    for (size_t i = 0; i < r->nseries; i++)
        again += r->series[i].calibration_passes == 2;
    if (again == 0)
        return;
    pkb_buf_printf(b,
                   "## Calibration\n\nOther load ran during the first calibration of %zu series (a "
                   "call marked disturbed), so they were calibrated once more before the measured "
                   "rounds; their iteration counts come from the fastest undisturbed call of "
                   "both passes unless marked otherwise (each series' `calibration` in the "
                   "results file):",
                   again);
    for (size_t i = 0, k = 0; i < r->nseries; i++) {
        const pkb_results_series *s = &r->series[i];
        if (s->calibration_passes == 2)
            pkb_buf_printf(b, "%s `%s`%s", k++ > 0 ? "," : "", s->name,
                           s->calibration_disturbed ? " (sized from a disturbed call)" : "");
    }
    pkb_buf_puts(b, ".\n\n");
}

void pkb_md_appendix(const pkb_results *r, pkb_buf *b)
{
    md_priming(r, b);
    md_calibration(r, b);
    pkb_buf_puts(b, "## Settings\n\n");
    pkb_md_object_table(b, json_object_get(r->root, "settings"));
    pkb_buf_puts(b, "\n## Environment\n\n");
    pkb_md_object_table(b, json_object_get(r->root, "environment"));
    md_footnotes(r, b);
}

void pkb_md_unmeasured(pkb_buf *b, const char *name, const pkb_results_series *s)
{
    pkb_buf_puts(b, "- ");
    pkb_md_code(b, name);
    pkb_buf_printf(b, ": %s — ", s->status);
    pkb_md_text(b, s->reason ? s->reason : "no reason given");
    pkb_buf_puts(b, "\n");
}

void pkb_md_figure(pkb_buf *b, const char *stem, const char *alt)
{
    pkb_buf_printf(b, "![%s](%s.gnuplot.svg)\n\n", alt, stem);
    pkb_buf_printf(b,
                   "Figures: [gnuplot PNG](%s.gnuplot.png), [gnuplot SVG](%s.gnuplot.svg), "
                   "[matplotlib PNG](%s.matplotlib.png); drawn from [%s.dat](%s.dat) by "
                   "[%s.gp](%s.gp) and [%s.py](%s.py).\n\n",
                   stem, stem, stem, stem, stem, stem, stem, stem, stem);
}

/* ==== Staging and committing ================================================================== */

/* Moves every output into place, the report last, so a reader who sees the new report sees
 * its figures (and its JSON) too. */
static int commit(const char *name,
                  bool json,
                  const pkb_buf *figure_files,
                  const char *stage,
                  const char *out_dir)
{
    int rc = 0;
    for (size_t at = 0; rc == 0 && at < figure_files->len;
         at += strlen(figure_files->data + at) + 1)
        rc = pkb_commit_file(stage, out_dir, figure_files->data + at);
    char file[300];
    snprintf(file, sizeof file, "%s.json", name);
    if (rc == 0 && json)
        rc = pkb_commit_file(stage, out_dir, file);
    snprintf(file, sizeof file, "%s.md", name);
    if (rc == 0)
        rc = pkb_commit_file(stage, out_dir, file);
    pkb_sync_dir(out_dir);
    return rc;
}

static int fail_out(char *err, size_t err_len, int rc, const char *what, const char *path)
{
    return pkb_fail(err, err_len, rc, "%s %s: %s", what, path, strerror(-rc));
}

/* doc into dir/name as indented text with a newline at the end: 0, or a negative errno. */
static int write_json(const char *dir, const char *name, const json_t *doc)
{
    char *text = pkb_json_text(doc, 2);
    pkb_buf b = {0};
    pkb_buf_printf(&b, "%s\n", text != NULL ? text : "");
    int rc = text == NULL || b.failed ? -ENOMEM : pkb_write_file(dir, name, b.data, b.len);
    free(text);
    pkb_buf_free(&b);
    return rc;
}

/* Writes the report (and its JSON) and draws the figures into the staging directory, then
 * commits. */
static int stage_and_commit(const char *name,
                            const pkb_buf *md,
                            const json_t *json,
                            pkb_figures *figs,
                            const char *stage,
                            const char *out_dir,
                            const pkb_report_options *opts,
                            char *err,
                            size_t err_len)
{
    char md_name[300], json_name[300];
    snprintf(md_name, sizeof md_name, "%s.md", name);
    snprintf(json_name, sizeof json_name, "%s.json", name);
    int rc = pkb_write_file(stage, md_name, md->data, md->len);
    if (rc == 0 && json != NULL)
        rc = write_json(stage, json_name, json);
    if (rc != 0)
        return fail_out(err, err_len, rc, "cannot write in", stage);
    rc = pkb_figures_render(figs, stage, opts, err, err_len);
    const pkb_buf *written = &figs->written;
    if (rc == 0) {
        rc = commit(name, json != NULL, written, stage, out_dir);
        if (rc != 0)
            fail_out(err, err_len, rc, "cannot move the report into", out_dir);
    }
    if (rc == 0 && opts->written != NULL) { /* the caller's list: the figures, the report last */
        for (size_t at = 0; at < written->len; at += strlen(written->data + at) + 1)
            pkb_buf_printf(opts->written, "%s%c", written->data + at, '\0');
        if (json != NULL)
            pkb_buf_printf(opts->written, "%s%c", json_name, '\0');
        pkb_buf_printf(opts->written, "%s%c", md_name, '\0');
    }
    return rc;
}

int pkb_report_write_doc(const char *name,
                         const pkb_buf *md,
                         const json_t *json,
                         pkb_figures *figs,
                         const char *out_dir,
                         const pkb_report_options *opts,
                         char *err,
                         size_t err_len)
{
    static const pkb_report_options defaults = {0};
    pkb_figures none = {0};
    if (opts == NULL)
        opts = &defaults;
    if (figs == NULL)
        figs = &none;
    if (md->failed)
        return pkb_fail(err, err_len, -ENOMEM, "rendering %s: out of memory", name);
    int rc = pkb_make_dirs(out_dir);
    if (rc != 0)
        return fail_out(err, err_len, rc, "cannot create", out_dir);
    char stage[PATH_MAX];
    if (snprintf(stage, sizeof stage, "%s/.%s.report-XXXXXX", out_dir, name) >= (int)sizeof stage)
        return fail_out(err, err_len, -ENAMETOOLONG, "cannot stage in", out_dir);
    if (mkdtemp(stage) == NULL)
        return fail_out(err, err_len, -errno, "cannot stage in", out_dir);
    rc = stage_and_commit(name, md, json, figs, stage, out_dir, opts, err, err_len);
    pkb_remove_tree(stage);
    return rc;
}

int pkb_report_write(const pkb_results *r,
                     const pkb_report_kind *kind,
                     const char *out_dir,
                     const pkb_report_options *opts,
                     char *err,
                     size_t err_len)
{
    static const pkb_report_options defaults = {0};
    if (opts == NULL)
        opts = &defaults;
    bool plots = !opts->no_plots && kind->figures != NULL;
    pkb_buf md = {0};
    pkb_figures figs = {0};
    int rc = kind->markdown(r, plots, &md, err, err_len);
    if (rc == 0 && md.failed)
        rc = pkb_fail(err, err_len, -ENOMEM, "rendering %s: out of memory", r->file);
    if (rc == 0 && plots)
        rc = kind->figures(r, &figs, err, err_len);
    if (rc == 0)
        rc = pkb_report_write_doc(r->name, &md, NULL, &figs, out_dir, opts, err, err_len);
    pkb_figures_free(&figs);
    pkb_buf_free(&md);
    return rc;
}
