/*
 * The Markdown report of an observe results file (view.h).
 *
 * Every number comes from the file: the cells' numbers through pkb_observe_summarize
 * (observe.h), the same code the suite used for the summary it stored, and the gates from the
 * file's `observe` section. This file writes the intro, what could run here (gates, hooks,
 * refusals) and the cell tables, and puts the report together; conclude.c words the
 * conclusions and sets the seed's prototype against this run.
 */
#define _GNU_SOURCE
#include "suites/observe/view.h"

#include "common/md.h"
#include "suites/observe/observe.h"
#include "suites/observe/text.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- what could run ------------------------------------------------------------------------ */

static void md_gates(const pkb_results *r, pkb_buf *b)
{
    const json_t *gates = pkb_results_field(r, "observe", "gates");
    if (!json_is_object(gates))
        return;
    pkb_buf_puts(b, "## What could run here\n\n| observer | runs here | hooks it used, or why "
                    "not |\n|---|---|---|\n");
    const json_t *obs = json_object_get(gates, "observers");
    const json_t *sum_series = json_object_get(r->root, "series");
    const char *name;
    const json_t *g;
    json_object_foreach((json_t *)obs, name, g)
    {
        pkb_buf_puts(b, "| ");
        pkb_md_code(b, name);
        pkb_buf_printf(b, " | %s | ",
                       json_is_true(json_object_get(g, "runs")) ? "yes" : "**SKIP**");
        const char *text = json_string_value(json_object_get(g, "reason"));
        /* The hooks come from the last measured series of this observer. */
        size_t i;
        const json_t *s;
        json_array_foreach(sum_series, i, s)
        {
            const json_t *o = json_object_get(s, "observe");
            const char *hooks = json_string_value(json_object_get(o, "hooks"));
            if (text == NULL && hooks != NULL && hooks[0] != '\0' &&
                strcmp(json_string_value(json_object_get(o, "observer")), name) == 0)
                text = hooks;
        }
        pkb_md_text(b, text != NULL ? text : "");
        pkb_buf_puts(b, " |\n");
    }
    const json_t *ns = json_object_get(gates, "netns");
    pkb_buf_puts(b, "\nEach cell ran in a fresh network namespace (");
    pkb_md_text(b, json_is_true(json_object_get(ns, "works"))
                       ? json_string_value(json_object_get(ns, "how"))
                       : json_string_value(json_object_get(ns, "reason")));
    pkb_buf_puts(b, ").");
    const json_t *host = json_object_get(gates, "host");
    pkb_buf_printf(b, " Host: euid %lld, kernel.unprivileged_bpf_disabled ",
                   (long long)json_integer_value(json_object_get(host, "euid")));
    pkb_md_json_value(b, json_object_get(host, "unprivileged_bpf_disabled"));
    pkb_buf_puts(b, ", lockdown ");
    pkb_md_json_value(b, json_object_get(host, "lockdown"));
    pkb_buf_printf(b, ", tracefs %s.\n\n",
                   json_is_true(json_object_get(host, "tracefs_mounted")) ? "mounted"
                                                                          : "not mounted");
    const json_t *bpf = json_object_get(gates, "bpf");
    if (!json_is_true(json_object_get(bpf, "built"))) {
        pkb_buf_puts(b, "The eBPF programs were not built: ");
        pkb_md_text(b, json_string_value(json_object_get(bpf, "reason")));
        pkb_buf_puts(b, ".\n\n");
        return;
    }
    const json_t *hooks = json_object_get(bpf, "hooks");
    if (json_object_size(hooks) == 0)
        return;
    pkb_buf_puts(b, "eBPF hooks, tried in order (fentry/fexit, then tp_btf, raw_tp, the classic "
                    "tracepoint; for accept the per-syscall tracepoint before the all-syscall "
                    "sys_exit, see METHODOLOGY.md); the first that loads and attaches is used:\n\n"
                    "| hook | used | refused before it |\n|---|---|---|\n");
    json_object_foreach((json_t *)hooks, name, g)
    {
        pkb_buf_printf(b, "| %s | ", name);
        const char *chosen = json_string_value(json_object_get(g, "chosen"));
        pkb_md_text(b, chosen != NULL ? chosen : "none");
        pkb_buf_puts(b, " | ");
        size_t i;
        const json_t *x;
        json_array_foreach(json_object_get(g, "refused"), i, x)
        {
            pkb_buf_puts(b, i > 0 ? "; " : "");
            pkb_md_text(b, json_string_value(json_object_get(x, "variant")));
            pkb_buf_puts(b, ": ");
            pkb_md_text(b, json_string_value(json_object_get(x, "error")));
        }
        pkb_buf_puts(b, " |\n");
    }
    pkb_buf_puts(b, "\n");
}

/* ---- the tables ---------------------------------------------------------------------------- */

/* A row per cell of the hold, rate by rate and observer by observer: `row` gets the cell (NULL
 * when the file has none), its rate and its observer. */
static void md_cells(const json_t *sum,
                     double hold,
                     void (*row)(const json_t *c, double rate, const char *observer, pkb_buf *b),
                     pkb_buf *b)
{
    size_t r, o;
    const json_t *rv, *ov;
    json_array_foreach(json_object_get(sum, "rates"), r, rv)
        json_array_foreach(json_object_get(sum, "observers"), o, ov)
            row(pkb__obs_cell(sum, hold, json_number_value(rv), json_string_value(ov)),
                json_number_value(rv), json_string_value(ov), b);
}

/* "| rate | `observer`", how a row of either table starts. */
static void row_head(pkb_buf *b, double rate, const char *observer)
{
    pkb_buf_printf(b, "| %g | ", rate);
    pkb_md_code(b, observer);
}

/* "a<sep>b" of two counts of cell c. */
static void counts(pkb_buf *b, const json_t *c, const char *a, const char *sep, const char *of)
{
    pkb__obs_fmt_count(b, pkb__obs_num(c, a));
    pkb_buf_puts(b, sep);
    pkb__obs_fmt_count(b, pkb__obs_num(c, of));
}

static void seed_row(const json_t *c, double rate, const char *observer, pkb_buf *b)
{
    if (c == NULL)
        return;
    row_head(b, rate, observer);
    if (!pkb__obs_measured(c)) {
        pkb_buf_printf(b, " | %s: ", json_string_value(json_object_get(c, "status")));
        pkb_md_text(b, json_string_value(json_object_get(c, "reason")));
        pkb_buf_puts(b, " | | |\n");
        return;
    }
    pkb_buf_puts(b, " | ");
    pkb__obs_fmt_range(b, json_object_get(c, "cpu_s"), 1, "");
    pkb_buf_puts(b, " | ");
    counts(b, c, "attributed", " of ", "churned");
    pkb_buf_puts(b, " | ");
    pkb__obs_fmt_pct_range(b, json_object_get(c, "attribution"));
    pkb_buf_puts(b, " |\n");
}

static void md_seed_table(const json_t *sum, double hold, pkb_buf *b)
{
    pkb_buf_printf(b, "### Hold %g ms: the seed's table\n\n", hold);
    pkb_buf_puts(b, "| rate/s | observer | CPU-s, median (min–max) | attributed N of M churned | "
                    "attributed, median (min–max) |\n|---:|---|---:|---:|---:|\n");
    md_cells(sum, hold, seed_row, b);
    pkb_buf_puts(b, "\n");
}

/* The open sockets seen against the truth, the long-lived connections and the server's side. */
static void attribution_cells(const json_t *c, const char *observer, pkb_buf *b)
{
    if (strcmp(observer, "none") == 0) {
        /* It watches nothing: only the truth. */
        pkb_buf_puts(b, " | – / ");
        pkb__obs_fmt_count(b, pkb__obs_num(c, "open_truth"));
        pkb_buf_puts(b, " | – | – |\n");
        return;
    }
    pkb_buf_puts(b, " | ");
    counts(b, c, "open_observed", " / ", "open_truth");
    if (pkb__obs_num(c, "open_equal") < pkb__obs_num(c, "n"))
        pkb_buf_printf(b, " (**%.0f of %.0f equal**)", pkb__obs_num(c, "open_equal"),
                       pkb__obs_num(c, "n"));
    pkb_buf_puts(b, " | ");
    counts(b, c, "long_attributed", "/", "long_lived");
    pkb_buf_puts(b, " | ");
    counts(b, c, "server_attributed", "/", "accepted");
    pkb_buf_puts(b, " |\n");
}

static void extra_row(const json_t *c, double rate, const char *observer, pkb_buf *b)
{
    if (!pkb__obs_measured(c))
        return;
    row_head(b, rate, observer);
    pkb_buf_puts(b, " | ");
    pkb__obs_fmt_s(b, pkb__obs_median(c, "setup_cpu_s"));
    pkb_buf_puts(b, " | ");
    pkb__obs_fmt_s(b, pkb__obs_median(c, "workload_cpu_s"));
    double d = pkb__obs_num(c, "workload_delta_s");
    if (isfinite(d) && strcmp(observer, "none") != 0) {
        pkb_buf_puts(b, d >= 0 ? " (+" : " (");
        pkb__obs_fmt_s(b, d);
        pkb_buf_puts(b, ")");
    }
    pkb_buf_puts(b, " | ");
    pkb__obs_fmt_range(b, json_object_get(c, "bpf_ms"), 1, "");
    pkb_buf_puts(b, " | ");
    double epc = pkb__obs_median(c, "events_per_conn");
    if (isfinite(epc))
        pkb_buf_printf(b, "%.2f", epc);
    else
        pkb_buf_puts(b, "–");
    pkb_buf_puts(b, " | ");
    pkb__obs_fmt_count(b, pkb__obs_num(c, "drops_total"));
    pkb_buf_puts(b, " | ");
    pkb__obs_fmt_count(b, pkb__obs_num(c, "wakeups"));
    pkb_buf_puts(b, " | ");
    pkb__obs_fmt_count(b, pkb__obs_num(c, "polls"));
    attribution_cells(c, observer, b);
}

static void md_extra_table(const json_t *sum, double hold, pkb_buf *b)
{
    pkb_buf_printf(b, "### Hold %g ms: the rest of the picture\n\n", hold);
    pkb_buf_puts(b, "| rate/s | observer | setup CPU-s | workload CPU-s (Δ vs none) | in BPF, ms | "
                    "events/conn | drops | wake-ups | polls | open at end: seen / truth | "
                    "long-lived | server side |\n"
                    "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    md_cells(sum, hold, extra_row, b);
    pkb_buf_puts(b, "\nMedians over the repetitions. *Setup*: the observer's CPU before watching "
                    "(loading and attaching BPF, opening sockets). *Workload*: the client's and "
                    "server's own CPU from T0; Δ against `none` in the same cell is what the "
                    "observer shifts onto them. *In BPF*: time inside the BPF programs "
                    "(BPF_STATS_RUN_TIME), whoever's CPU it ran on. *Events/conn*: records "
                    "consumed ÷ connections churned (both ends, and the long-lived ones' few). "
                    "*Wake-ups*: reads that found records (woken per event, or the batched "
                    "reader's timed reads). "
                    "*Open at end*: client connections the observer believed ESTABLISHED at its "
                    "last look, owned by the client, against the client's count. *Long-lived*, "
                    "*server side*: attributed of the long-lived connections, and of the "
                    "server's accepted sockets.\n\n");
}

/* ---- the report ---------------------------------------------------------------------------- */

static void md_intro(const pkb_results *r, const json_t *sum, pkb_buf *b)
{
    const json_t *cfg = pkb_results_field(r, "observe", "config");
    pkb_buf_printf(b,
                   "## What was measured\n\nWhat it costs to watch processes' TCP connections, "
                   "and how much of the churn each way of watching attributes to the right "
                   "process (METHODOLOGY.md, \"What watching costs\"). Each cell: a fresh "
                   "network namespace; a server and a client process (`pk_churn`, started with "
                   "processkit); %.0f long-lived connections, then connections opened at a "
                   "fixed rate on an exact schedule for %g s, each held for the cell's hold "
                   "time and closed by the client first; then the client freezes and the "
                   "observer takes its last look. Observer CPU is its thread's CPU from the "
                   "start of the window to the end of that look; the workload's is its two "
                   "processes' own from T0. Every socket is keyed by its inode, never by its "
                   "port. Grid: rates ",
                   pkb__obs_num(cfg, "long_lived"), pkb__obs_num(cfg, "duration_s"));
    pkb_md_json_value(b, json_object_get(sum, "rates"));
    pkb_buf_puts(b, " per second × holds ");
    pkb_md_json_value(b, json_object_get(sum, "holds"));
    pkb_buf_printf(b,
                   " ms; %.0f repetitions, interleaved (each repetition visits every cell, the "
                   "observers in an order rotated per cell). Medians over the repetitions, "
                   "with min–max.\n\n",
                   pkb__obs_num(cfg, "repetitions"));
    double done = pkb__obs_num(pkb_results_field(r, NULL, "observe"), "repetitions_done");
    if (done < pkb__obs_num(cfg, "repetitions"))
        pkb_buf_printf(b,
                       "> **Partial.** %.0f of %.0f repetitions had finished when this file "
                       "was written.\n\n",
                       done, pkb__obs_num(cfg, "repetitions"));
}

int pkb__observe_markdown(const pkb_results *r, bool plots, pkb_buf *b, char *err, size_t err_len)
{
    json_t *sum = pkb_observe_summarize(json_object_get(r->root, "series"));
    if (sum == NULL)
        return pkb_fail(err, err_len, -ENOMEM, "rendering %s: out of memory", r->file);
    pkb_md_title(r, b);
    md_intro(r, sum, b);
    md_gates(r, b);
    pkb_buf_puts(b, "## The cells\n\n");
    size_t h;
    const json_t *hv;
    json_array_foreach(json_object_get(sum, "holds"), h, hv)
    {
        md_seed_table(sum, json_number_value(hv), b);
        md_extra_table(sum, json_number_value(hv), b);
    }
    static const char *const alts[] = {"observer CPU per cell against the rate",
                                       "share of churned connections attributed",
                                       "workload CPU per cell by observer"};
    for (size_t f = 0; plots && f < 3; f++) {
        if (!pkb__observe_has_figure(sum, pkb__observe_figure_names[f]))
            continue;
        char stem[256];
        pkb_figure_stem(r, pkb__observe_figure_names[f], stem, sizeof stem);
        pkb_md_figure(b, stem, alts[f]);
    }
    pkb__observe_conclusions(r, sum, b);
    pkb__observe_seed(r, sum, b);
    pkb__observe_bpf_programs(sum, b);
    pkb_md_appendix(r, b);
    json_decref(sum);
    return b->failed ? pkb_fail(err, err_len, -ENOMEM, "rendering %s: out of memory", r->file) : 0;
}
