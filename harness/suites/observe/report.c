/*
 * The Markdown report of an observe results file (report.h).
 *
 * Every number comes from the file: the cells' numbers through pkb_observe_summarize
 * (observe.h), the same code the suite used for the summary it stored, and the gates from the
 * file's `observe` section. The only numbers typed in are the seed's prototype's, quoted from
 * ../shared/seeds/004 and labelled as its own; they are set against this run per second of
 * watching, because the seed's cells were 20 s long and a quick run's are not.
 *
 * The conclusions are worded from the numbers, each with the numbers it rests on, and say
 * nothing where the file has no data for them.
 */
#define _GNU_SOURCE
#include "suites/observe/report.h"

#include "common/md.h"
#include "suites/observe/observe.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- looking things up --------------------------------------------------------------------- */

static double numv(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The median of a {"median", "min", "max"} field, NaN when absent. */
static double med(const json_t *c, const char *key)
{
    return numv(json_object_get(c, key), "median");
}

static const json_t *cell(const json_t *sum, double hold, double rate, const char *observer)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(sum, "cells"), i, c)
    {
        if (numv(c, "hold_ms") == hold && numv(c, "rate") == rate &&
            strcmp(json_string_value(json_object_get(c, "observer")), observer) == 0)
            return c;
    }
    return NULL;
}

static bool is_measured(const json_t *c)
{
    const char *st = json_string_value(json_object_get(c, "status"));
    return c != NULL && st != NULL && strcmp(st, "measured") == 0;
}

static double top_rate(const json_t *sum)
{
    const json_t *rates = json_object_get(sum, "rates");
    return json_number_value(json_array_get(rates, json_array_size(rates) - 1));
}

static double duration_s(const pkb_results *r)
{
    return numv(pkb_results_field(r, "observe", "config"), "duration_s");
}

/* ---- formatting ---------------------------------------------------------------------------- */

/* CPU seconds, with enough digits for the small ones. */
static void fmt_s(pkb_buf *b, double s)
{
    if (!isfinite(s))
        pkb_buf_puts(b, "n/a");
    else if (fabs(s) >= 10)
        pkb_buf_printf(b, "%.1f", s);
    else if (fabs(s) >= 0.1)
        pkb_buf_printf(b, "%.3f", s);
    else
        pkb_buf_printf(b, "%.4f", s);
}

static void fmt_range(pkb_buf *b, const json_t *r, double scale, const char *unit)
{
    if (!json_is_object(r)) {
        pkb_buf_puts(b, "–");
        return;
    }
    fmt_s(b, numv(r, "median") * scale);
    pkb_buf_puts(b, unit);
    pkb_buf_puts(b, " (");
    fmt_s(b, numv(r, "min") * scale);
    pkb_buf_puts(b, "–");
    fmt_s(b, numv(r, "max") * scale);
    pkb_buf_puts(b, ")");
}

static void fmt_count(pkb_buf *b, double v)
{
    if (!isfinite(v)) {
        pkb_buf_puts(b, "–");
        return;
    }
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%.0f", v);
    for (int i = 0; i < n; i++) {
        if (i > 0 && digits[i - 1] != '-' && (n - i) % 3 == 0)
            pkb_buf_puts(b, ",");
        pkb_buf_printf(b, "%c", digits[i]);
    }
}

static void fmt_pct(pkb_buf *b, double ratio)
{
    if (!isfinite(ratio))
        pkb_buf_puts(b, "–");
    else if (ratio > 0 && ratio < 0.001)
        pkb_buf_printf(b, "%.3f%%", ratio * 100);
    else
        pkb_buf_printf(b, "%.1f%%", ratio * 100);
}

static void fmt_times(pkb_buf *b, double ratio)
{
    if (!isfinite(ratio))
        pkb_buf_puts(b, "n/a");
    else
        pkb_buf_printf(b, ratio >= 10 ? "%.0f×" : "%.1f×", ratio);
}

/* "1.6×", or "1.4×–1.9×" when the two differ as printed. */
static void fmt_times_span(pkb_buf *b, double lo, double hi)
{
    pkb_buf lo_s = {0}, hi_s = {0};
    fmt_times(&lo_s, lo);
    fmt_times(&hi_s, hi);
    pkb_buf_puts(b, lo_s.data);
    if (strcmp(lo_s.data, hi_s.data) != 0)
        pkb_buf_printf(b, "–%s", hi_s.data);
    pkb_buf_free(&lo_s);
    pkb_buf_free(&hi_s);
}

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

static void md_seed_table(const json_t *sum, double hold, pkb_buf *b)
{
    pkb_buf_printf(b, "### Hold %g ms: the seed's table\n\n", hold);
    pkb_buf_puts(b, "| rate/s | observer | CPU-s, median (min–max) | attributed N of M churned | "
                    "attributed, median (min–max) |\n|---:|---|---:|---:|---:|\n");
    size_t r, o;
    const json_t *rv, *ov;
    json_array_foreach(json_object_get(sum, "rates"), r, rv)
        json_array_foreach(json_object_get(sum, "observers"), o, ov)
    {
        const json_t *c = cell(sum, hold, json_number_value(rv), json_string_value(ov));
        if (c == NULL)
            continue;
        pkb_buf_printf(b, "| %g | ", json_number_value(rv));
        pkb_md_code(b, json_string_value(ov));
        if (!is_measured(c)) {
            pkb_buf_printf(b, " | %s: ", json_string_value(json_object_get(c, "status")));
            pkb_md_text(b, json_string_value(json_object_get(c, "reason")));
            pkb_buf_puts(b, " | | |\n");
            continue;
        }
        pkb_buf_puts(b, " | ");
        fmt_range(b, json_object_get(c, "cpu_s"), 1, "");
        pkb_buf_puts(b, " | ");
        fmt_count(b, numv(c, "attributed"));
        pkb_buf_puts(b, " of ");
        fmt_count(b, numv(c, "churned"));
        pkb_buf_puts(b, " | ");
        const json_t *a = json_object_get(c, "attribution");
        if (json_is_object(a)) {
            fmt_pct(b, numv(a, "median"));
            pkb_buf_puts(b, " (");
            fmt_pct(b, numv(a, "min"));
            pkb_buf_puts(b, "–");
            fmt_pct(b, numv(a, "max"));
            pkb_buf_puts(b, ")");
        } else {
            pkb_buf_puts(b, "–");
        }
        pkb_buf_puts(b, " |\n");
    }
    pkb_buf_puts(b, "\n");
}

static void md_extra_table(const json_t *sum, double hold, pkb_buf *b)
{
    pkb_buf_printf(b, "### Hold %g ms: the rest of the picture\n\n", hold);
    pkb_buf_puts(b, "| rate/s | observer | setup CPU-s | workload CPU-s (Δ vs none) | in BPF, ms | "
                    "events/conn | drops | wake-ups | polls | open at end: seen / truth | "
                    "long-lived | server side |\n"
                    "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    size_t r, o;
    const json_t *rv, *ov;
    json_array_foreach(json_object_get(sum, "rates"), r, rv)
        json_array_foreach(json_object_get(sum, "observers"), o, ov)
    {
        const json_t *c = cell(sum, hold, json_number_value(rv), json_string_value(ov));
        if (!is_measured(c))
            continue;
        pkb_buf_printf(b, "| %g | ", json_number_value(rv));
        pkb_md_code(b, json_string_value(ov));
        pkb_buf_puts(b, " | ");
        fmt_s(b, med(c, "setup_cpu_s"));
        pkb_buf_puts(b, " | ");
        fmt_s(b, med(c, "workload_cpu_s"));
        double d = numv(c, "workload_delta_s");
        if (isfinite(d) && strcmp(json_string_value(ov), "none") != 0) {
            pkb_buf_puts(b, d >= 0 ? " (+" : " (");
            fmt_s(b, d);
            pkb_buf_puts(b, ")");
        }
        pkb_buf_puts(b, " | ");
        fmt_range(b, json_object_get(c, "bpf_ms"), 1, "");
        pkb_buf_puts(b, " | ");
        double epc = med(c, "events_per_conn");
        if (isfinite(epc))
            pkb_buf_printf(b, "%.2f", epc);
        else
            pkb_buf_puts(b, "–");
        pkb_buf_puts(b, " | ");
        fmt_count(b, numv(c, "drops_total"));
        pkb_buf_puts(b, " | ");
        fmt_count(b, numv(c, "wakeups"));
        pkb_buf_puts(b, " | ");
        fmt_count(b, numv(c, "polls"));
        if (strcmp(json_string_value(ov), "none") == 0) {
            /* It watches nothing: only the truth. */
            pkb_buf_puts(b, " | – / ");
            fmt_count(b, numv(c, "open_truth"));
            pkb_buf_puts(b, " | – | – |\n");
            continue;
        }
        pkb_buf_puts(b, " | ");
        fmt_count(b, numv(c, "open_observed"));
        pkb_buf_puts(b, " / ");
        fmt_count(b, numv(c, "open_truth"));
        if (numv(c, "open_equal") < numv(c, "n"))
            pkb_buf_printf(b, " (**%.0f of %.0f equal**)", numv(c, "open_equal"), numv(c, "n"));
        pkb_buf_puts(b, " | ");
        fmt_count(b, numv(c, "long_attributed"));
        pkb_buf_puts(b, "/");
        fmt_count(b, numv(c, "long_lived"));
        pkb_buf_puts(b, " | ");
        fmt_count(b, numv(c, "server_attributed"));
        pkb_buf_puts(b, "/");
        fmt_count(b, numv(c, "accepted"));
        pkb_buf_puts(b, " |\n");
    }
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

/* ---- conclusions --------------------------------------------------------------------------- */

/* The median of key across measured cells at `hold` with rate > 0, for one observer: min and
 * max over those cells. Returns how many cells. */
static int
span(const json_t *sum, double hold, const char *observer, const char *key, double *lo, double *hi)
{
    int n = 0;
    size_t r;
    const json_t *rv;
    json_array_foreach(json_object_get(sum, "rates"), r, rv)
    {
        const json_t *c = cell(sum, hold, json_number_value(rv), observer);
        double v = med(c, key);
        if (json_number_value(rv) <= 0 || !is_measured(c) || !isfinite(v))
            continue;
        *lo = n == 0 ? v : fmin(*lo, v);
        *hi = n == 0 ? v : fmax(*hi, v);
        n++;
    }
    return n;
}

/* The range over rates of cpu(a) / cpu(b) at `hold`. Returns how many rates had both. */
static int ratio_span(
    const json_t *sum, double hold, const char *a, const char *b_name, double *lo, double *hi)
{
    int n = 0;
    size_t r;
    const json_t *rv;
    json_array_foreach(json_object_get(sum, "rates"), r, rv)
    {
        const json_t *ca = cell(sum, hold, json_number_value(rv), a);
        const json_t *cb = cell(sum, hold, json_number_value(rv), b_name);
        if (!is_measured(ca) || !is_measured(cb) || !(med(cb, "cpu_s") > 0))
            continue;
        double q = med(ca, "cpu_s") / med(cb, "cpu_s");
        *lo = n == 0 ? q : fmin(*lo, q);
        *hi = n == 0 ? q : fmax(*hi, q);
        n++;
    }
    return n;
}

static void concl_cost(const json_t *sum, double hold, double dur, pkb_buf *b)
{
    double rate = top_rate(sum);
    const json_t *best = NULL, *worst = NULL;
    size_t o;
    const json_t *ov;
    json_array_foreach(json_object_get(sum, "observers"), o, ov)
    {
        const json_t *c = cell(sum, hold, rate, json_string_value(ov));
        if (!is_measured(c) || strcmp(json_string_value(ov), "none") == 0)
            continue;
        if (best == NULL || med(c, "cpu_s") < med(best, "cpu_s"))
            best = c;
        if (worst == NULL || med(c, "cpu_s") > med(worst, "cpu_s"))
            worst = c;
    }
    if (best == NULL || best == worst)
        return;
    pkb_buf_printf(b,
                   "- **Cost, %g connections/s, hold %g ms.** The cheapest observer was `%s` "
                   "(",
                   rate, hold, json_string_value(json_object_get(best, "observer")));
    fmt_s(b, med(best, "cpu_s"));
    pkb_buf_printf(b, " CPU-s in a %g s cell), the dearest `%s` (", dur,
                   json_string_value(json_object_get(worst, "observer")));
    fmt_s(b, med(worst, "cpu_s"));
    pkb_buf_puts(b, " CPU-s): ");
    fmt_times(b, med(worst, "cpu_s") / med(best, "cpu_s"));
    pkb_buf_puts(b, " the cost.\n");
}

static void concl_pollers(const json_t *sum, double hold, pkb_buf *b)
{
    double lo, hi;
    if (ratio_span(sum, hold, "proc_poller", "diag_poller", &lo, &hi) > 0) {
        pkb_buf_printf(b,
                       "- **The socket table, hold %g ms.** `proc_poller` (the /proc/net/tcp "
                       "text) cost ",
                       hold);
        fmt_times_span(b, lo, hi);
        pkb_buf_printf(b,
                       " what `diag_poller` (sock_diag) cost at the same rates, with the same "
                       "owner walk: %s.\n",
                       hi < 1   ? "the text table is the cheaper one here"
                       : lo > 1 ? "sock_diag is the cheaper table at every rate"
                                : "neither is cheaper at every rate");
    }
    if (ratio_span(sum, hold, "diag_poller", "iter_poller", &lo, &hi) > 0) {
        pkb_buf_printf(b,
                       "- **The owner walk, hold %g ms.** Reading every process's "
                       "descriptors through /proc (`diag_poller`) cost ",
                       hold);
        fmt_times_span(b, lo, hi);
        pkb_buf_puts(b, " what one bpf_iter task_file walk (`iter_poller`) cost.\n");
    }
}

static void concl_attribution(const json_t *sum, pkb_buf *b)
{
    size_t h, o;
    const json_t *hv, *ov;
    json_array_foreach(json_object_get(sum, "observers"), o, ov)
    {
        const char *name = json_string_value(ov);
        if (strcmp(name, "none") == 0)
            continue;
        int parts = 0;
        json_array_foreach(json_object_get(sum, "holds"), h, hv)
        {
            double lo, hi;
            if (span(sum, json_number_value(hv), name, "attribution", &lo, &hi) == 0)
                continue;
            if (parts++ == 0)
                pkb_buf_printf(b, "- **Attribution, `%s`.** ", name);
            else
                pkb_buf_puts(b, "; ");
            pkb_buf_printf(b, "hold %g ms: ", json_number_value(hv));
            fmt_pct(b, lo);
            if (hi != lo) {
                pkb_buf_puts(b, "–");
                fmt_pct(b, hi);
            }
            pkb_buf_puts(b, " of the churned connections");
        }
        if (parts > 0)
            pkb_buf_puts(b, " (each cell's median, over the rates).\n");
    }
}

static void concl_drops(const json_t *sum, pkb_buf *b)
{
    size_t o;
    const json_t *ov;
    json_array_foreach(json_object_get(sum, "observers"), o, ov)
    {
        double total = 0;
        int cells = 0, lossy = 0;
        size_t i;
        const json_t *c;
        json_array_foreach(json_object_get(sum, "cells"), i, c)
        {
            double d = numv(c, "drops_total");
            if (!is_measured(c) || !json_equal(json_object_get(c, "observer"), ov) || isnan(d))
                continue;
            cells++;
            total += d;
            lossy += d > 0;
        }
        if (cells == 0)
            continue;
        pkb_buf_printf(b, "- **Ring-buffer drops, `%s`.** ", json_string_value(ov));
        if (total == 0) {
            pkb_buf_printf(b, "None in any of its %d cells.\n", cells);
        } else {
            fmt_count(b, total);
            pkb_buf_printf(b,
                           " records dropped, in %d of its %d cells: the ring was too small for "
                           "what it was handed between two reads.\n",
                           lossy, cells);
        }
    }
}

static void concl_workload(const json_t *sum, double hold, pkb_buf *b)
{
    double rate = top_rate(sum);
    const json_t *none = cell(sum, hold, rate, "none");
    if (!is_measured(none) || rate <= 0)
        return;
    double base = med(none, "workload_cpu_s");
    pkb_buf_printf(b, "- **The cost on the workload, %g/s, hold %g ms.** Alone it used ", rate,
                   hold);
    fmt_s(b, base);
    pkb_buf_puts(b, " CPU-s");
    size_t o;
    const json_t *ov;
    json_array_foreach(json_object_get(sum, "observers"), o, ov)
    {
        const json_t *c = cell(sum, hold, rate, json_string_value(ov));
        double d = numv(c, "workload_delta_s");
        if (!is_measured(c) || !isfinite(d) || strcmp(json_string_value(ov), "none") == 0)
            continue;
        pkb_buf_printf(b, "; watched by `%s` %s", json_string_value(ov), d >= 0 ? "+" : "");
        fmt_s(b, d);
        pkb_buf_printf(b, " (%+.0f%%)", base > 0 ? d / base * 100 : 0.0);
    }
    const json_t *spread = json_object_get(none, "workload_cpu_s");
    pkb_buf_puts(b, ". `none`'s own repetitions spanned ");
    fmt_s(b, numv(spread, "min"));
    pkb_buf_puts(b, "–");
    fmt_s(b, numv(spread, "max"));
    pkb_buf_puts(b, " CPU-s: a delta smaller than that spread is noise. The eBPF programs run in "
                    "the observed processes' own system calls and softirqs, so their cost shows "
                    "here rather than in the observer's CPU.\n");
}

static void concl_wakeups(const json_t *sum, double hold, pkb_buf *b)
{
    double rate = top_rate(sum);
    const json_t *w = cell(sum, hold, rate, "ebpf_ringbuf");
    const json_t *nw = cell(sum, hold, rate, "ebpf_ringbuf_batched");
    if (!is_measured(w) || !is_measured(nw) || rate <= 0)
        return;
    pkb_buf_printf(b, "- **Wake-ups, %g/s, hold %g ms.** Woken per event, the reader was woken ",
                   rate, hold);
    fmt_count(b, numv(w, "wakeups"));
    pkb_buf_puts(b, " times and used ");
    fmt_s(b, med(w, "cpu_s"));
    pkb_buf_puts(b, " CPU-s; reading every 100 ms instead, ");
    fmt_s(b, med(nw, "cpu_s"));
    pkb_buf_puts(b, " CPU-s (");
    fmt_times(b, med(w, "cpu_s") / med(nw, "cpu_s"));
    pkb_buf_puts(b, "), and the workload ");
    fmt_s(b, med(w, "workload_cpu_s"));
    pkb_buf_puts(b, " against ");
    fmt_s(b, med(nw, "workload_cpu_s"));
    pkb_buf_puts(b, " CPU-s.\n");
}

static void concl_open(const json_t *sum, pkb_buf *b)
{
    int cells = 0, equal = 0;
    size_t i;
    const json_t *c;
    pkb_buf misses = {0};
    json_array_foreach(json_object_get(sum, "cells"), i, c)
    {
        if (!is_measured(c) ||
            strcmp(json_string_value(json_object_get(c, "observer")), "none") == 0)
            continue;
        cells++;
        if (numv(c, "open_equal") == numv(c, "n")) {
            equal++;
            continue;
        }
        pkb_buf_printf(&misses, "%s`%s` at %g/s, hold %g ms", misses.len ? "; " : "",
                       json_string_value(json_object_get(c, "observer")), numv(c, "rate"),
                       numv(c, "hold_ms"));
    }
    if (cells > 0) {
        pkb_buf_printf(b,
                       "- **Open at the end.** In %d of %d cells every repetition's observer "
                       "counted exactly the connections the client held open at the freeze",
                       equal, cells);
        if (misses.len > 0)
            pkb_buf_printf(b, "; not in: %s", misses.data);
        pkb_buf_puts(b, ".\n");
    }
    pkb_buf_free(&misses);
}

static void concl_noise(const pkb_results *r, const json_t *sum, pkb_buf *b)
{
    double noisy = 0, reps = 0;
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(sum, "cells"), i, c)
    {
        noisy += is_measured(c) ? numv(c, "noisy") : 0;
        reps += is_measured(c) ? numv(c, "n") : 0;
    }
    const json_t *env = json_object_get(r->root, "environment");
    pkb_buf_printf(b,
                   "- **Noise.** %.0f of %.0f cells ended with more runnable tasks than CPUs "
                   "(%lld); load average ",
                   noisy, reps, (long long)r->logical_cpus);
    pkb_md_json_value(b, json_array_get(json_object_get(env, "loadavg_start"), 0));
    pkb_buf_puts(b, " at the start, ");
    pkb_md_json_value(b, json_array_get(json_object_get(env, "loadavg_end"), 0));
    pkb_buf_puts(b, " at the end. On a shared machine compare observers within this run, "
                    "never seconds across runs.\n");
}

static void md_conclusions(const pkb_results *r, const json_t *sum, pkb_buf *b)
{
    pkb_buf_puts(b, "## Conclusions\n\n");
    size_t h;
    const json_t *hv;
    json_array_foreach(json_object_get(sum, "holds"), h, hv)
    {
        concl_cost(sum, json_number_value(hv), duration_s(r), b);
        concl_pollers(sum, json_number_value(hv), b);
    }
    concl_attribution(sum, b);
    concl_drops(sum, b);
    json_array_foreach(json_object_get(sum, "holds"), h, hv)
    {
        concl_workload(sum, json_number_value(hv), b);
        concl_wakeups(sum, json_number_value(hv), b);
    }
    concl_open(sum, b);
    concl_noise(r, sum, b);
    pkb_buf_puts(b, "\n");
}

/* ---- the seed's prototype ------------------------------------------------------------------ */

/* ../shared/seeds/004: the earlier prototype (20 s per rate) and the shipped procinfo benchmark
 * (5 s per rate), per rate: poller CPU-s, eBPF CPU-s, and what the poller saw. */
static const struct {
    double rate, proto_poller, proto_ebpf, shipped_poller, shipped_ebpf;
    const char *poller_saw;
} seed[] = {
    {0, 0.46, 0.004, NAN, NAN, "0 of 0"},
    {50, 0.75, 0.78, 0.947, 0.248, "1 of ~1,100"},
    {200, 0.93, 1.14, 1.347, 0.473, "1 of ~4,400"},
    {500, 1.3, 1.00, 1.882, 1.307, "1 of ~11,000"},
};

/* Which of the two cost more: "the poller", "eBPF". */
static const char *dearer(double poller, double ebpf)
{
    return poller > ebpf ? "the poller" : "eBPF";
}

/* The seed's orderings at one rate against this run's. */
static void seed_ordering(const json_t *p, const json_t *e, size_t i, pkb_buf *b)
{
    double ours_p = med(p, "cpu_s"), ours_e = med(e, "cpu_s");
    const char *ours = dearer(ours_p, ours_e);
    pkb_buf_printf(b,
                   "- **%g/s: who costs more.** The seed's prototype found %s the dearer "
                   "(%.2f against %.2f CPU-s",
                   seed[i].rate, dearer(seed[i].proto_poller, seed[i].proto_ebpf),
                   fmax(seed[i].proto_poller, seed[i].proto_ebpf),
                   fmin(seed[i].proto_poller, seed[i].proto_ebpf));
    if (!isnan(seed[i].shipped_poller))
        pkb_buf_printf(b, "), its shipped benchmark %s (%.3f against %.3f",
                       dearer(seed[i].shipped_poller, seed[i].shipped_ebpf),
                       fmax(seed[i].shipped_poller, seed[i].shipped_ebpf),
                       fmin(seed[i].shipped_poller, seed[i].shipped_ebpf));
    pkb_buf_printf(b, "); here %s is the dearer by its own CPU (`proc_poller` ", ours);
    fmt_s(b, ours_p);
    pkb_buf_puts(b, ", `ebpf_ringbuf` ");
    fmt_s(b, ours_e);
    pkb_buf_printf(b, " CPU-s): the prototype's ordering is %s",
                   strcmp(ours, dearer(seed[i].proto_poller, seed[i].proto_ebpf)) == 0
                       ? "**reproduced**"
                       : "**not reproduced**");
    if (!isnan(seed[i].shipped_poller))
        pkb_buf_printf(b, ", the shipped benchmark's %s",
                       strcmp(ours, dearer(seed[i].shipped_poller, seed[i].shipped_ebpf)) == 0
                           ? "**reproduced**"
                           : "**not reproduced**");
    double dp = numv(p, "workload_delta_s"), de = numv(e, "workload_delta_s");
    if (isfinite(dp) && isfinite(de)) {
        pkb_buf_puts(b, ". Adding what each shifted onto the workload, the poller cost ");
        fmt_s(b, ours_p + dp);
        pkb_buf_puts(b, " and eBPF ");
        fmt_s(b, ours_e + de);
        pkb_buf_puts(b, " CPU-s");
    }
    pkb_buf_puts(b, ".\n");
}

static void md_seed(const pkb_results *r, const json_t *sum, pkb_buf *b)
{
    const json_t *holds = json_object_get(sum, "holds");
    double hold = json_number_value(json_array_get(holds, 0)), dur = duration_s(r);
    if (json_array_size(holds) == 0 || !(dur > 0))
        return;
    pkb_buf_printf(b,
                   "## Against the seed's prototype\n\nThe seed (procinfo's PERFORMANCE.md) "
                   "measured a once-a-second /proc poller and an eBPF backend under "
                   "uniform connect/close churn to a loopback listener — hold %g ms here — "
                   "on a Docker Desktop VM (aarch64): an earlier prototype with 20 s per rate, "
                   "then the shipped benchmark with 5 s per rate. Its numbers are quoted as it "
                   "gives them, and all are set per second of watching (CPU-s ÷ the cell's "
                   "length; this run's cells were %g s), because only that carries across "
                   "cell lengths. Its eBPF hooks were fentry/fexit; its events per connection "
                   "(9.57) belong to that hook set, ours to the hooks listed above.\n\n"
                   "| rate/s | seed prototype: poller / eBPF, CPU-s per s | seed shipped: "
                   "poller / eBPF | this run: `proc_poller` / `ebpf_ringbuf` | this run: "
                   "`ebpf_ringbuf`'s extra workload CPU per s | poller attributed: seed / "
                   "this run |\n|---:|---:|---:|---:|---:|---:|\n",
                   hold, dur);
    for (size_t i = 0; i < sizeof seed / sizeof seed[0]; i++) {
        const json_t *p = cell(sum, hold, seed[i].rate, "proc_poller");
        const json_t *e = cell(sum, hold, seed[i].rate, "ebpf_ringbuf");
        if (!is_measured(p) && !is_measured(e))
            continue;
        pkb_buf_printf(b, "| %g | %.4f / %.4f | ", seed[i].rate, seed[i].proto_poller / 20,
                       seed[i].proto_ebpf / 20);
        if (isnan(seed[i].shipped_poller))
            pkb_buf_puts(b, "– | ");
        else
            pkb_buf_printf(b, "%.4f / %.4f | ", seed[i].shipped_poller / 5,
                           seed[i].shipped_ebpf / 5);
        fmt_s(b, is_measured(p) ? med(p, "cpu_s") / dur : NAN);
        pkb_buf_puts(b, " / ");
        fmt_s(b, is_measured(e) ? med(e, "cpu_s") / dur : NAN);
        pkb_buf_puts(b, " | ");
        fmt_s(b, is_measured(e) ? numv(e, "workload_delta_s") / dur : NAN);
        pkb_buf_printf(b, " | %s / ", seed[i].poller_saw);
        if (is_measured(p)) {
            fmt_count(b, numv(p, "attributed"));
            pkb_buf_puts(b, " of ");
            fmt_count(b, numv(p, "churned"));
        } else {
            pkb_buf_puts(b, "–");
        }
        pkb_buf_puts(b, " |\n");
    }
    pkb_buf_puts(b, "\n");
    for (size_t i = 0; i < sizeof seed / sizeof seed[0]; i++) {
        const json_t *p = cell(sum, hold, seed[i].rate, "proc_poller");
        const json_t *e = cell(sum, hold, seed[i].rate, "ebpf_ringbuf");
        if (is_measured(p) && is_measured(e) && seed[i].rate > 0)
            seed_ordering(p, e, i, b);
    }
    const json_t *p = cell(sum, hold, top_rate(sum), "proc_poller");
    const json_t *e = cell(sum, hold, top_rate(sum), "ebpf_ringbuf");
    if (is_measured(p) && top_rate(sum) > 0) {
        double a = med(p, "attribution");
        pkb_buf_puts(b, "- **What the poller saw.** The seed's poller saw 1 churned connection "
                        "at every rate (its listener); here `proc_poller` attributed ");
        fmt_pct(b, a);
        pkb_buf_printf(b,
                       " at %g/s (hold %g ms): %s. With hold 0 a churned client socket lives "
                       "microseconds, then sits in TIME_WAIT with inode 0, where no owner "
                       "walk can find it.\n",
                       top_rate(sum), hold, a < 0.01 ? "**reproduced**" : "**not reproduced**");
    }
    if (is_measured(e) && top_rate(sum) > 0) {
        double ea = med(e, "attribution");
        pkb_buf_puts(b, "- **What eBPF saw.** The seed's eBPF backend saw every connection; "
                        "`ebpf_ringbuf` attributed ");
        fmt_pct(b, ea);
        pkb_buf_printf(b, ": %s.\n", ea >= 0.999 ? "**reproduced**" : "**not reproduced**");
    }
    double lo, hi;
    if (span(sum, hold, "ebpf_ringbuf", "cpu_s", &lo, &hi) >= 2) {
        pkb_buf_puts(b, "- The seed found eBPF's cost roughly flat from 50 to 500/s (0.75 to "
                        "1.0 CPU-s); `ebpf_ringbuf`'s own CPU here spanned ");
        fmt_s(b, lo);
        pkb_buf_puts(b, "–");
        fmt_s(b, hi);
        pkb_buf_printf(b, " CPU-s over the rates (%s).\n",
                       hi / lo < 1.5 ? "flat: **reproduced**"
                                     : "it grows with the event rate: **not reproduced**");
    }
    pkb_buf_puts(b, "\n");
}

static void md_bpf_programs(const json_t *sum, pkb_buf *b)
{
    double rate = top_rate(sum);
    bool head = false;
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(sum, "cells"), i, c)
    {
        const json_t *progs = json_object_get(c, "bpf_programs");
        if (!is_measured(c) || numv(c, "rate") != rate || json_array_size(progs) == 0)
            continue;
        if (!head)
            pkb_buf_printf(b,
                           "## Time inside the BPF programs, %g/s\n\nOne repetition (the "
                           "last) per cell; every run of the programs on the machine is "
                           "counted, other traffic included (the programs filter on the "
                           "cell's network namespace first).\n\n| hold | observer | program "
                           "| runs | ms | ns per run |\n|---:|---|---|---:|---:|---:|\n",
                           rate);
        head = true;
        size_t k;
        const json_t *p;
        json_array_foreach(progs, k, p)
        {
            double runs = numv(p, "run_cnt"), ns = numv(p, "run_ns");
            pkb_buf_printf(b, "| %g | `%s` | `%s` | ", numv(c, "hold_ms"),
                           json_string_value(json_object_get(c, "observer")),
                           json_string_value(json_object_get(p, "name")));
            fmt_count(b, runs);
            pkb_buf_printf(b, " | %.3f | %.0f |\n", ns / 1e6, runs > 0 ? ns / runs : 0.0);
        }
    }
    if (head)
        pkb_buf_puts(b, "\n");
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
                   numv(cfg, "long_lived"), numv(cfg, "duration_s"));
    pkb_md_json_value(b, json_object_get(sum, "rates"));
    pkb_buf_puts(b, " per second × holds ");
    pkb_md_json_value(b, json_object_get(sum, "holds"));
    pkb_buf_printf(b,
                   " ms; %.0f repetitions, interleaved (each repetition visits every cell, the "
                   "observers in an order rotated per cell). Medians over the repetitions, "
                   "with min–max.\n\n",
                   numv(cfg, "repetitions"));
    double done = numv(pkb_results_field(r, NULL, "observe"), "repetitions_done");
    if (done < numv(cfg, "repetitions"))
        pkb_buf_printf(b,
                       "> **Partial.** %.0f of %.0f repetitions had finished when this file "
                       "was written.\n\n",
                       done, numv(cfg, "repetitions"));
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
    md_conclusions(r, sum, b);
    md_seed(r, sum, b);
    md_bpf_programs(sum, b);
    pkb_md_appendix(r, b);
    json_decref(sum);
    return b->failed ? pkb_fail(err, err_len, -ENOMEM, "rendering %s: out of memory", r->file) : 0;
}
