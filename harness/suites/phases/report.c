/*
 * The phases suite's report: where a Linux start goes, computed from one results file.
 *
 *   - the phase table: every phase series' mean ± sd and median per spawn+wait, and its delta
 *     against os_spawn_plain of the same file, as a time and in %;
 *   - the primitives table: per call (a primitive's samples are divided by the file's
 *     calls_per_iteration), with what each one saw (threads, processes, PATH entries);
 *   - the reconciliation the seed did by hand, for every composite: its base (os_spawn_plain,
 *     or the phase series its `base` names) + the primitives its `composition` lists, against
 *     the measured composite (pkb_reconcile);
 *   - the targets among phase series (issue 14's capture path: every default of pk_run within
 *     1.10× of the same I/O by hand), decided as the scenarios report decides its own
 *     (results/verdict.h: paired by round, met only when the whole 95% CI meets the limit);
 *   - the spawn lock: 16 parallel spawns with and without one process-global lock;
 *   - the host (the file's "phases" object), priming, settings and environment.
 *
 * Nothing is typed in: the composition comes from the file (phases/attribution/series.c wrote it
 * from its table), and the rule's constants and pkb_reconcile from phases/attribution/phases.h.
 */
#define _GNU_SOURCE
#include "suites/phases/view.h"

#include "common/md.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== The view =================================================================================
 */

static int bad(char *err, size_t err_len, const pkb_results *r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int bad(char *err, size_t err_len, const pkb_results *r, const char *fmt, ...)
{
    if (err != NULL && err_len > 0) {
        int n = snprintf(err, err_len, "%s: ", r->file);
        va_list ap;
        va_start(ap, fmt);
        if (n >= 0 && (size_t)n < err_len)
            vsnprintf(err + n, err_len - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -EBADMSG;
}

static const char *kind_of_group(const char *group)
{
    return strcmp(group, "primitive") == 0    ? "primitive"
           : strcmp(group, "spawn_lock") == 0 ? "lock"
           : strcmp(group, "phase") == 0      ? "phase"
                                              : "other";
}

static bool all_strings(const json_t *a)
{
    size_t i;
    const json_t *v;
    json_array_foreach(a, i, v)
    {
        if (!json_is_string(v))
            return false;
    }
    return true;
}

/* The phases fields of series i, checked; the per-call statistics. */
static int load_one(const pkb_results *r, size_t i, pkb__phase_series *p, char *err, size_t len)
{
    const json_t *j = p->j;
    const json_t *kind = json_object_get(j, "kind"),
                 *calls = json_object_get(j, "calls_per_iteration");
    const json_t *comp = json_object_get(j, "composition"), *steps = json_object_get(j, "steps");
    const json_t *walk = json_object_get(j, "walk");
    if (kind != NULL && !json_is_string(kind))
        return bad(err, len, r, "series[%zu].kind is not a string", i);
    p->kind = kind != NULL ? json_string_value(kind) : kind_of_group(r->series[i].scenario);
    if (strcmp(p->kind, "phase") != 0 && strcmp(p->kind, "primitive") != 0 &&
        strcmp(p->kind, "lock") != 0 && kind != NULL)
        return bad(err, len, r, "series[%zu].kind \"%.40s\" is not phase, primitive or lock", i,
                   p->kind);
    if (calls != NULL && (!json_is_integer(calls) || json_integer_value(calls) < 1))
        return bad(err, len, r, "series[%zu].calls_per_iteration is not a positive integer", i);
    p->calls = calls != NULL ? (double)json_integer_value(calls) : 1.0;
    if (comp != NULL && (!json_is_array(comp) || !all_strings(comp)))
        return bad(err, len, r, "series[%zu].composition is not an array of strings", i);
    if (comp != NULL && json_array_size(comp) > PKB__MAX_PARTS)
        return bad(err, len, r, "series[%zu].composition has more than %d parts", i,
                   PKB__MAX_PARTS);
    if (steps != NULL && (!json_is_array(steps) || !all_strings(steps)))
        return bad(err, len, r, "series[%zu].steps is not an array of strings", i);
    if (walk != NULL && !json_is_string(walk))
        return bad(err, len, r, "series[%zu].walk is not a string", i);
    const json_t *base = json_object_get(j, "base");
    if (base != NULL && !json_is_string(base))
        return bad(err, len, r, "series[%zu].base is not a string", i);
    const pkb_results_series *s = &r->series[i];
    if (s->measured) {
        p->mean = s->sum.mean / p->calls;
        p->sd = s->sum.sd / p->calls; /* NaN with one sample */
        p->median = s->sum.median / p->calls;
    }
    return 0;
}

static long find_primitive(const pkb_results *r, const pkb__phases_view *v, const char *name)
{
    for (size_t i = 0; i < r->nseries; i++)
        if (strcmp(v->series[i].kind, "primitive") == 0 && strcmp(PKB__NAME(r, i), name) == 0)
            return (long)i;
    return -1;
}

static long find_phase(const pkb_results *r, const pkb__phases_view *v, const char *name)
{
    for (size_t i = 0; i < r->nseries; i++)
        if (strcmp(v->series[i].kind, "phase") == 0 && strcmp(PKB__NAME(r, i), name) == 0)
            return (long)i;
    return -1;
}

static const char *not_measured_why(const pkb_results_series *s)
{
    if (strcmp(s->status, "measured") == 0)
        return "measured, but no samples";
    return s->status; /* "refused" or "failed"; the not-timed list gives the reason */
}

static void build_row(const pkb_results *r, pkb__phases_view *v, size_t i, pkb__recon_row *row)
{
    row->composite = i;
    const json_t *comp = json_object_get(v->series[i].j, "composition");
    size_t k;
    const json_t *name;
    json_array_foreach(comp, k, name)
    {
        long p = find_primitive(r, v, json_string_value(name));
        if (p >= 0)
            row->parts[row->nparts++] = (size_t)p;
        if (row->missing != NULL)
            continue;
        if (p < 0)
            row->missing = json_string_value(name), row->why = "not in this file";
        else if (!r->series[p].measured)
            row->missing = PKB__NAME(r, p), row->why = not_measured_why(&r->series[p]);
    }
    const json_t *named = json_object_get(v->series[i].j, "base");
    long base = named != NULL ? find_phase(r, v, json_string_value(named)) : v->plain;
    row->base_name = named != NULL ? json_string_value(named) : "os_spawn_plain";
    if (!r->series[i].measured)
        row->missing = PKB__NAME(r, i), row->why = not_measured_why(&r->series[i]);
    else if (named == NULL && v->plain < 0)
        row->missing = "os_spawn_plain", row->why = "no measured baseline in this file";
    else if (base < 0)
        row->missing = row->base_name, row->why = "not in this file";
    else if (!r->series[base].measured)
        row->missing = row->base_name, row->why = not_measured_why(&r->series[base]);
    if (row->missing != NULL)
        return;
    row->base = (size_t)base;
    pkb_recon_term parts[PKB__MAX_PARTS];
    for (size_t p = 0; p < row->nparts; p++)
        parts[p] = (pkb_recon_term){v->series[row->parts[p]].mean, v->series[row->parts[p]].sd};
    const pkb__phase_series *c = &v->series[i], *b = &v->series[base];
    row->complete =
        pkb_reconcile((pkb_recon_term){c->mean, c->sd}, (pkb_recon_term){b->mean, b->sd}, parts,
                      row->nparts, &row->rec) == 0;
    if (!row->complete)
        row->missing = PKB__NAME(r, i), row->why = "not a positive time";
}

int pkb__phases_view_load(const pkb_results *r, pkb__phases_view *v, char *err, size_t err_len)
{
    memset(v, 0, sizeof *v);
    v->plain = -1;
    v->series = calloc(r->nseries + 1, sizeof *v->series);
    v->rows = calloc(r->nseries + 1, sizeof *v->rows);
    if (v->series == NULL || v->rows == NULL) {
        pkb__phases_view_free(v);
        if (err != NULL && err_len > 0)
            snprintf(err, err_len, "%s: out of memory", r->file);
        return -ENOMEM;
    }
    const json_t *series = json_object_get(r->root, "series");
    for (size_t i = 0; i < r->nseries; i++) {
        v->series[i].j = json_array_get(series, i);
        int rc = load_one(r, i, &v->series[i], err, err_len);
        if (rc != 0) {
            pkb__phases_view_free(v);
            return rc;
        }
    }
    for (size_t i = 0; i < r->nscenarios; i++)
        if (strcmp(r->scenarios[i].name, "phase") == 0)
            v->plain = r->scenarios[i].baseline;
    for (size_t i = 0; i < r->nseries; i++) {
        if (strcmp(v->series[i].kind, "phase") != 0 || (long)i == v->plain ||
            json_object_get(v->series[i].j, "composition") == NULL)
            continue;
        pkb__recon_row *row = &v->rows[v->nrows++];
        build_row(r, v, i, row);
        v->ncomplete += row->complete;
    }
    return 0;
}

bool pkb__phase_vs_plain(
    const pkb_results *r, const pkb__phases_view *v, size_t i, double *diff_ns, double *fraction)
{
    if (v->plain < 0 || (long)i == v->plain || !r->series[i].measured)
        return false;
    const pkb__phase_series *p = &v->series[i], *plain = &v->series[v->plain];
    *diff_ns = p->mean - plain->mean;
    *fraction = *diff_ns / plain->mean;
    return true;
}

void pkb__phases_view_free(pkb__phases_view *v)
{
    free(v->series);
    free(v->rows);
    memset(v, 0, sizeof *v);
}

/* ==== Markdown ================================================================================ */

/* A time in the unit its size reads best in, to 4 significant figures (common/md.h): the phases
 * span 100 ns primitives to 80 ms Windows starts under Wine. */
static void us(pkb_buf *b, double ns)
{
    pkb_fmt_time(b, ns);
}

static void mean_sd(pkb_buf *b, const pkb_results_series *s, const pkb__phase_series *p)
{
    pkb_fmt_time_sd(b, p->mean, s->n >= 2 ? p->sd : NAN);
    if (s->n < 2)
        pkb_buf_puts(b, ", n = 1");
}

static void signed_us(pkb_buf *b, double ns)
{
    pkb_fmt_time_signed(b, fabs(ns) < 0.5 ? 0.0 : ns);
}

/* "+3.000 µs (+12.0%)": a difference and its fraction. */
static void signed_us_delta(pkb_buf *b, double ns, double fraction)
{
    signed_us(b, ns);
    pkb_buf_puts(b, " (");
    pkb_fmt_delta(b, fraction);
    pkb_buf_puts(b, ")");
}

void pkb__vs_plain(const pkb_results *r, const pkb__phases_view *v, size_t i, pkb_buf *b)
{
    double diff, fraction;
    if ((long)i == v->plain)
        pkb_buf_puts(b, "baseline");
    else if (pkb__phase_vs_plain(r, v, i, &diff, &fraction))
        signed_us_delta(b, diff, fraction);
    else
        pkb_buf_puts(b, "n/a");
}

/* For the terminal view (terminal.c), the same cells (view.h). */
void pkb__us(pkb_buf *b, double ns)
{
    us(b, ns);
}

void pkb__mean_sd_us(pkb_buf *b, const pkb_results_series *s, const pkb__phase_series *p)
{
    mean_sd(b, s, p);
}

void pkb__signed_us(pkb_buf *b, double ns)
{
    signed_us(b, ns);
}

static void noisy_mark(pkb_buf *b, const pkb_results_series *s)
{
    if (s->noisy > 0)
        pkb_buf_printf(b, " (%zu of %zu repetition%s disturbed[^noisy])", s->noisy, s->n,
                       s->n == 1 ? "" : "s");
    if (s->attempts > 1)
        pkb_buf_printf(b, " (re-measured, attempt %ld kept[^remeasured])", s->attempt_used + 1);
}

static long long int_field(const json_t *j, const char *key)
{
    return json_integer_value(json_object_get(j, key));
}

/* What a series saw in its untimed first iteration, from its extra fields. */
static void md_seen(pkb_buf *b, const json_t *j)
{
    if (json_object_get(j, "processes") != NULL)
        pkb_buf_printf(b, "%lld processes, %lld threads on the machine", int_field(j, "processes"),
                       int_field(j, "threads"));
    else if (json_object_get(j, "threads_found") != NULL)
        pkb_buf_printf(b, "%lld thread%s", int_field(j, "threads_found"),
                       int_field(j, "threads_found") == 1 ? "" : "s");
    else if (json_object_get(j, "members_found") != NULL)
        pkb_buf_printf(b, "%lld member%s", int_field(j, "members_found"),
                       int_field(j, "members_found") == 1 ? "" : "s");
    else if (json_object_get(j, "path_entries") != NULL) {
        const char *program = json_string_value(json_object_get(j, "program"));
        pkb_md_code(b, program != NULL ? program : "?");
        pkb_buf_printf(b, " in entry %lld of %lld PATH entries", int_field(j, "found_in_entry"),
                       int_field(j, "path_entries"));
    }
}

/* "+pidfd +pgroup, direct walk" from the file's steps and walk; else the description. */
static void md_adds(pkb_buf *b, const pkb_results_series *s, const json_t *j)
{
    const json_t *steps = json_object_get(j, "steps");
    const char *walk = json_string_value(json_object_get(j, "walk"));
    if (steps == NULL) {
        pkb_md_text(b, s->description ? s->description : "");
        return;
    }
    size_t i;
    const json_t *step;
    json_array_foreach(steps, i, step)
        pkb_buf_printf(b, "%s+%s", i > 0 ? " " : "", json_string_value(step));
    if (walk != NULL)
        pkb_buf_printf(b, ", %s walk", walk);
}

static void
md_not_timed(const pkb_results *r, const char *kind, const pkb__phases_view *v, pkb_buf *b)
{
    bool any = false;
    for (size_t i = 0; i < r->nseries; i++) {
        const pkb_results_series *s = &r->series[i];
        if (s->measured || strcmp(v->series[i].kind, kind) != 0)
            continue;
        pkb_buf_puts(b, any ? "" : "Not timed:\n\n");
        any = true;
        pkb_md_unmeasured(b, s->contender, s);
    }
    if (any)
        pkb_buf_puts(b, "\n");
}

static size_t count_kind(const pkb_results *r, const pkb__phases_view *v, const char *kind)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nseries; i++)
        n += strcmp(v->series[i].kind, kind) == 0;
    return n;
}

/* The Windows table (phases/attribution/series.windows.c): the seed's series and two more. */
static void md_how_to_read_windows(const json_t *host, pkb_buf *b)
{
    pkb_buf_puts(b, "## How to read it\n\nEvery phase series starts the same child, ");
    pkb_md_code(b, json_string_value(json_object_get(host, "child")));
    pkb_buf_puts(
        b, " `/c exit`, named by its absolute path, so no series pays for a program lookup, and "
           "waits for it. `os_spawn_plain` (CreateProcessW + wait) is the floor. The "
           "`os_spawn_suspended_resume_*` series add a CREATE_SUSPENDED start and the resume of "
           "its primary thread, found by a system-wide ToolHelp snapshot (`snapshot`), by "
           "NtGetNextThread on the process handle (`direct`), or not looked for at all: the "
           "thread handle CreateProcess returned (`handle`). The `containment_sequence_*` series "
           "add a Job Object with kill-on-close and the assignment; `containment_job_list` makes "
           "the job and has the child born in it (PROC_THREAD_ATTRIBUTE_JOB_LIST), with no "
           "suspension; `processkit` is the library's own start. Primitives time one step with "
           "no child. Times are the mean ± sample standard deviation of the repetitions, and "
           "the median; deltas are against `os_spawn_plain` of this same run. The snapshot's "
           "cost grows with the machine: the host table below gives its live processes and "
           "threads.\n\n");
}

static void md_how_to_read(const pkb_results *r, pkb_buf *b)
{
    const json_t *host = json_object_get(r->root, "phases");
    if (json_is_string(json_object_get(host, "platform")) &&
        strcmp(json_string_value(json_object_get(host, "platform")), "windows") == 0) {
        md_how_to_read_windows(host, b);
        return;
    }
    const char *child =
        json_string_value(json_object_get(json_object_get(r->root, "phases"), "child"));
    pkb_buf_puts(b, "## How to read it\n\n"
                    "Every phase series starts the same child, ");
    if (child != NULL) {
        pkb_md_code(b, child);
        pkb_buf_puts(b, " ");
    }
    pkb_buf_puts(
        b, "(the tiny static helper: no libc, `_start` exits 0), named by its absolute path, so "
           "no series pays for a program lookup. `os_spawn_plain` (vfork + execve + waitpid) is "
           "the floor; each other phase series adds steps of the library's containment sequence "
           "(`+pidfd`, `+pgroup`, `+pdeathsig`, `+cgroup`), mirrored with raw system calls, and "
           "finds the new child's threads either directly (its own `/proc/<pid>/task`, or the "
           "leaf's `cgroup.procs`) or by a snapshot of every `/proc/<n>/task` on the machine. "
           "`processkit` is the library's own spawn into a fresh group. Primitives time one "
           "step with no child. Times are the mean ± sample standard deviation of the "
           "repetitions (each the mean wall time of one iteration; a primitive that runs "
           "several calls per iteration is divided by that count), and the median. Deltas are "
           "against `os_spawn_plain` of this same run; compare only within one run.\n\n");
}

/* The table of the measured series of `kind`: `header` before the first row; each row the
 * series' name (marked when disturbed), then `cells`. Returns whether it had a row. */
static bool
md_kind_table(const pkb_results *r,
              const pkb__phases_view *v,
              const char *kind,
              const char *header,
              void (*cells)(const pkb_results *, const pkb__phases_view *, size_t, pkb_buf *),
              pkb_buf *b)
{
    bool any = false;
    for (size_t i = 0; i < r->nseries; i++) {
        const pkb_results_series *s = &r->series[i];
        if (!s->measured || strcmp(v->series[i].kind, kind) != 0)
            continue;
        pkb_buf_puts(b, any ? "" : header);
        any = true;
        pkb_buf_puts(b, "| ");
        pkb_md_code(b, s->contender);
        noisy_mark(b, s);
        pkb_buf_puts(b, " | ");
        cells(r, v, i, b);
        pkb_buf_puts(b, " |\n");
    }
    return any;
}

/* adds | mean ± sd | median | delta vs os_spawn_plain | found */
static void phase_cells(const pkb_results *r, const pkb__phases_view *v, size_t i, pkb_buf *b)
{
    const pkb__phase_series *p = &v->series[i];
    md_adds(b, &r->series[i], p->j);
    pkb_buf_puts(b, " | ");
    mean_sd(b, &r->series[i], p);
    pkb_buf_puts(b, " | ");
    us(b, p->median);
    pkb_buf_puts(b, " | ");
    pkb__vs_plain(r, v, i, b);
    pkb_buf_puts(b, " | ");
    md_seen(b, p->j);
}

static void md_phases(const pkb_results *r, const pkb__phases_view *v, pkb_buf *b)
{
    pkb_buf_puts(b, "## Phase series\n\n");
    if (count_kind(r, v, "phase") == 0) {
        pkb_buf_puts(b, "The file holds no phase series.\n\n");
        return;
    }
    bool header = md_kind_table(r, v, "phase",
                                "| series | adds | mean ± sd | median | delta vs `os_spawn_plain` "
                                "| found |\n|---|---|---:|---:|---:|---|\n",
                                phase_cells, b);
    if (header)
        pkb_buf_puts(b, "\n");
    if (header && v->plain < 0)
        pkb_buf_puts(b, "`os_spawn_plain` was not measured: no deltas.\n\n");
    md_not_timed(r, "phase", v, b);
}

/* what | mean ± sd | median | calls per iteration | found */
static void primitive_cells(const pkb_results *r, const pkb__phases_view *v, size_t i, pkb_buf *b)
{
    const pkb_results_series *s = &r->series[i];
    const pkb__phase_series *p = &v->series[i];
    pkb_md_text(b, s->description ? s->description : "");
    pkb_buf_puts(b, " | ");
    mean_sd(b, s, p);
    pkb_buf_puts(b, " | ");
    us(b, p->median);
    pkb_buf_printf(b, " | %.0f | ", p->calls);
    md_seen(b, p->j);
}

static void md_primitives(const pkb_results *r, const pkb__phases_view *v, pkb_buf *b)
{
    pkb_buf_puts(b, "## Primitives\n\nEach step alone, with no child involved, so that no spawn "
                    "outlier can hide it; per call.\n\n");
    bool header = md_kind_table(r, v, "primitive",
                                "| primitive | what | mean ± sd | median | calls per iteration | "
                                "found |\n|---|---|---:|---:|---:|---|\n",
                                primitive_cells, b);
    pkb_buf_puts(b, header ? "\n" : "The file holds no measured primitive.\n\n");
    md_not_timed(r, "primitive", v, b);
}

/* "`os_spawn_plain` + `pidfd_open` + `direct_thread_walk`" */
static void md_terms(const pkb_results *r, const pkb__recon_row *row, pkb_buf *b)
{
    pkb_md_code(b, row->base_name);
    for (size_t k = 0; k < row->nparts; k++) {
        pkb_buf_puts(b, " + ");
        pkb_md_code(b, PKB__NAME(r, row->parts[k]));
    }
}

/* One composite's row of the reconciliation table; returns whether it is flagged. */
static bool md_recon_row(const pkb_results *r, const pkb__recon_row *row, pkb_buf *b)
{
    pkb_buf_puts(b, "| ");
    pkb_md_code(b, PKB__NAME(r, row->composite));
    pkb_buf_puts(b, " | ");
    md_terms(r, row, b);
    if (!row->complete) {
        pkb_buf_puts(b, " | n/a | n/a | n/a | n/a | n/a | not reconciled: ");
        pkb_md_code(b, row->missing);
        pkb_buf_puts(b, " ");
        pkb_md_text(b, row->why);
        pkb_buf_puts(b, " |\n");
        return false;
    }
    const pkb_reconciliation *c = &row->rec;
    pkb_buf_puts(b, " | ");
    us(b, c->predicted_ns);
    pkb_buf_puts(b, " | ");
    us(b, c->measured_ns);
    pkb_buf_puts(b, " | ");
    signed_us(b, c->residual_ns);
    pkb_buf_puts(b, " | ");
    pkb_fmt_delta(b, c->residual_fraction);
    pkb_buf_puts(b, " | ");
    us(b, c->threshold_ns);
    pkb_buf_puts(b, c->flagged ? " | **flagged** |\n" : " | within |\n");
    return c->flagged;
}

/* A flagged composite in words: what its parts leave unaccounted for, or overshoot by. */
static void md_recon_flagged(const pkb_results *r, const pkb__recon_row *row, pkb_buf *b)
{
    if (!row->complete || !row->rec.flagged)
        return;
    const pkb_reconciliation *c = &row->rec;
    pkb_buf_puts(b, " ");
    pkb_md_code(b, PKB__NAME(r, row->composite));
    pkb_buf_puts(b, ": the parts sum to ");
    us(b, c->predicted_ns);
    pkb_buf_puts(b, " against a measured ");
    us(b, c->measured_ns);
    pkb_buf_puts(b, c->residual_ns > 0 ? ", leaving " : ", which the parts overshoot by ");
    us(b, fabs(c->residual_ns));
    pkb_buf_puts(b, c->residual_ns > 0 ? " unaccounted for (limit " : " (limit ");
    us(b, c->threshold_ns);
    pkb_buf_puts(b, ").");
}

static void
md_reconciliation(const pkb_results *r, const pkb__phases_view *v, bool plots, pkb_buf *b)
{
    pkb_buf_printf(
        b,
        "## Reconciliation\n\n"
        "For every composite phase series, its base plus the primitives it contains (its "
        "`base` and `composition` in the results file, declared once next to the series in "
        "`phases/attribution/series.c`) against the measured composite. The base is "
        "`os_spawn_plain` unless the series builds on another phase series: a step only a child "
        "can take (close_range, CLONE_INTO_CGROUP) has no child-less primitive, so it is "
        "measured against the series before it, and its cost is the residual there. Residual = "
        "measured − sum, as a time and in %% of the measured composite. A residual is **flagged** "
        "when its absolute value exceeds max(%.0f%% of the measured composite, %.0f × the "
        "combined standard deviation), the combined standard deviation being the square root of "
        "the sum of the variances of every term (composite, base, each primitive). A positive "
        "residual is cost the primitives do not account for; a negative one, steps that cost "
        "less inside the sequence than alone.\n\n",
        PKB_RECON_MIN_FRACTION * 100, PKB_RECON_SD_FACTOR);
    if (v->nrows == 0) {
        pkb_buf_puts(b, "The file holds no composite phase series.\n\n");
        return;
    }
    pkb_buf_puts(b, "| composite | base + primitives | sum | measured | residual | residual % | "
                    "limit | |\n|---|---|---:|---:|---:|---:|---:|---|\n");
    size_t flagged = 0;
    for (size_t i = 0; i < v->nrows; i++)
        flagged += md_recon_row(r, &v->rows[i], b);
    pkb_buf_printf(b, "\n%zu of %zu composite%s reconciled", v->ncomplete, v->nrows,
                   v->nrows == 1 ? "" : "s");
    if (v->ncomplete > 0)
        pkb_buf_printf(b, "; %zu flagged", flagged);
    pkb_buf_puts(b, ".");
    for (size_t i = 0; i < v->nrows; i++)
        md_recon_flagged(r, &v->rows[i], b);
    pkb_buf_puts(b, "\n\n");
    if (plots && v->ncomplete > 0) {
        char stem[256];
        pkb_figure_stem(r, PKB__PHASES_FIGURE, stem, sizeof stem);
        pkb_md_figure(b, stem,
                      "Each composite's mean as its base, its primitives and the residual, "
                      "stacked");
    }
}

static void md_lock(const pkb_results *r, const pkb__phases_view *v, pkb_buf *b)
{
    if (count_kind(r, v, "lock") == 0)
        return;
    pkb_buf_puts(b, "## Spawn lock\n\nThe same parallel spawns with and without one "
                    "process-global lock held around each clone.\n\n");
    long unlocked = -1, locked = -1;
    bool header = false;
    for (size_t i = 0; i < r->nseries; i++) {
        const pkb_results_series *s = &r->series[i];
        const pkb__phase_series *p = &v->series[i];
        if (!s->measured || strcmp(p->kind, "lock") != 0)
            continue;
        const json_t *is_locked = json_object_get(p->j, "locked");
        if (json_is_boolean(is_locked))
            *(json_is_true(is_locked) ? &locked : &unlocked) = (long)i;
        if (!header)
            pkb_buf_puts(b, "| series | what | mean ± sd | median | per child |\n"
                            "|---|---|---:|---:|---:|\n");
        header = true;
        pkb_buf_puts(b, "| ");
        pkb_md_code(b, s->contender);
        noisy_mark(b, s);
        pkb_buf_puts(b, " | ");
        pkb_md_text(b, s->description ? s->description : "");
        pkb_buf_puts(b, " | ");
        mean_sd(b, s, p);
        pkb_buf_puts(b, " | ");
        us(b, p->median);
        pkb_buf_puts(b, " | ");
        us(b, s->work > 0 ? p->mean / s->work : p->mean);
        pkb_buf_puts(b, " |\n");
    }
    pkb_buf_puts(b, header ? "\n" : "");
    if (locked >= 0 && unlocked >= 0) {
        const pkb__phase_series *l = &v->series[locked], *u = &v->series[unlocked];
        double diff = l->mean - u->mean;
        /* One sample's sd is NaN: it counts as 0, as in the reconciliation. */
        double sd = sqrt((isnan(l->sd) ? 0 : l->sd * l->sd) + (isnan(u->sd) ? 0 : u->sd * u->sd));
        pkb_buf_puts(b, "Locked against unlocked: ");
        signed_us_delta(b, diff, diff / u->mean);
        pkb_buf_puts(b, " per batch, against a combined standard deviation of ");
        us(b, sd);
        pkb_buf_puts(b, ": ");
        pkb_buf_puts(b, fabs(diff) > PKB_RECON_SD_FACTOR * sd
                            ? "outside twice the combined standard deviation, so the lock's "
                              "effect is resolved at this noise level.\n\n"
                            : "inside twice the combined standard deviation, so no reliable "
                              "effect of the lock is resolved at this noise level.\n\n");
    }
    md_not_timed(r, "lock", v, b);
}

int pkb__phases_markdown(const pkb_results *r, bool plots, pkb_buf *b, char *err, size_t err_len)
{
    pkb__phases_view v;
    int rc = pkb__phases_view_load(r, &v, err, err_len);
    if (rc != 0)
        return rc;
    pkb_md_title(r, b);
    md_how_to_read(r, b);
    md_phases(r, &v, b);
    md_primitives(r, &v, b);
    md_reconciliation(r, &v, plots, b);
    pkb__phases_md_targets(r, b);
    md_lock(r, &v, b);
    const json_t *host = json_object_get(r->root, "phases");
    if (json_is_object(host)) {
        pkb_buf_puts(b, "## Host\n\n");
        pkb_md_object_table(b, host);
        pkb_buf_puts(b, "\n");
    }
    pkb_md_appendix(r, b);
    pkb__phases_view_free(&v);
    if (b->failed) {
        if (err != NULL && err_len > 0)
            snprintf(err, err_len, "rendering %s: out of memory", r->file);
        return -ENOMEM;
    }
    return 0;
}
