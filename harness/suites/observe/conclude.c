/*
 * conclude — the observe report's reading of its numbers (view.h): the conclusions, each
 * worded from the cells it rests on and silent where the file has no data for it; the seed's
 * prototype set against this run; and the time inside the BPF programs.
 *
 * The only numbers typed in are the seed's, quoted from ../shared/seeds/004 (its prototype, 20 s
 * per rate, and its shipped benchmark, 5 s per rate) and labelled as its own; they are set
 * against this run per second of watching, because the cells' lengths differ.
 */
#define _GNU_SOURCE
#include "suites/observe/view.h"

#include "common/md.h"
#include "run/disturb.h"
#include "suites/observe/text.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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
        const json_t *c = pkb__obs_cell(sum, hold, json_number_value(rv), observer);
        double v = pkb__obs_median(c, key);
        if (json_number_value(rv) <= 0 || !pkb__obs_measured(c) || !isfinite(v))
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
        const json_t *ca = pkb__obs_cell(sum, hold, json_number_value(rv), a);
        const json_t *cb = pkb__obs_cell(sum, hold, json_number_value(rv), b_name);
        if (!pkb__obs_measured(ca) || !pkb__obs_measured(cb) || !(pkb__obs_median(cb, "cpu_s") > 0))
            continue;
        double q = pkb__obs_median(ca, "cpu_s") / pkb__obs_median(cb, "cpu_s");
        *lo = n == 0 ? q : fmin(*lo, q);
        *hi = n == 0 ? q : fmax(*hi, q);
        n++;
    }
    return n;
}

static void concl_cost(const json_t *sum, double hold, double dur, pkb_buf *b)
{
    double rate = pkb__obs_top_rate(sum);
    const json_t *best = NULL, *worst = NULL;
    size_t o;
    const json_t *ov;
    json_array_foreach(json_object_get(sum, "observers"), o, ov)
    {
        const json_t *c = pkb__obs_cell(sum, hold, rate, json_string_value(ov));
        if (!pkb__obs_measured(c) || strcmp(json_string_value(ov), "none") == 0)
            continue;
        if (best == NULL || pkb__obs_median(c, "cpu_s") < pkb__obs_median(best, "cpu_s"))
            best = c;
        if (worst == NULL || pkb__obs_median(c, "cpu_s") > pkb__obs_median(worst, "cpu_s"))
            worst = c;
    }
    if (best == NULL || best == worst)
        return;
    pkb_buf_printf(b,
                   "- **Cost, %g connections/s, hold %g ms.** The cheapest observer was `%s` "
                   "(",
                   rate, hold, json_string_value(json_object_get(best, "observer")));
    pkb__obs_fmt_s(b, pkb__obs_median(best, "cpu_s"));
    pkb_buf_printf(b, " CPU-s in a %g s cell), the dearest `%s` (", dur,
                   json_string_value(json_object_get(worst, "observer")));
    pkb__obs_fmt_s(b, pkb__obs_median(worst, "cpu_s"));
    pkb_buf_puts(b, " CPU-s): ");
    pkb__obs_fmt_times(b, pkb__obs_median(worst, "cpu_s") / pkb__obs_median(best, "cpu_s"));
    pkb_buf_puts(b, " the cost.\n");
}

/* The start of a conclusion on two observers at `hold`: "- **<title>, hold H ms.** <what> cost
 * <lo>–<hi>×", their CPU ratio's span over the rates (ratio_span), for the caller to finish. */
static void
ratio_lead(pkb_buf *b, const char *title, double hold, const char *what, double lo, double hi)
{
    pkb_buf_printf(b, "- **%s, hold %g ms.** %s cost ", title, hold, what);
    pkb__obs_fmt_times_span(b, lo, hi);
}

static void concl_pollers(const json_t *sum, double hold, pkb_buf *b)
{
    double lo, hi;
    if (ratio_span(sum, hold, "proc_poller", "diag_poller", &lo, &hi) > 0) {
        ratio_lead(b, "The socket table", hold, "`proc_poller` (the /proc/net/tcp text)", lo, hi);
        pkb_buf_printf(b,
                       " what `diag_poller` (sock_diag) cost at the same rates, with the same "
                       "owner walk: %s.\n",
                       hi < 1   ? "the text table is the cheaper one here"
                       : lo > 1 ? "sock_diag is the cheaper table at every rate"
                                : "neither is cheaper at every rate");
    }
    if (ratio_span(sum, hold, "diag_poller", "iter_poller", &lo, &hi) > 0) {
        ratio_lead(b, "The owner walk", hold,
                   "Reading every process's descriptors through /proc (`diag_poller`)", lo, hi);
        pkb_buf_puts(b, " what one bpf_iter task_file walk (`iter_poller`) cost.\n");
    }
}

/* A poller sees a socket in its table but attributes it only if the owner walk that follows
 * still finds it open: the slower the look, the more it loses in between. */
static void concl_seen(const json_t *sum, pkb_buf *b)
{
    double rate = pkb__obs_top_rate(sum);
    size_t h, o;
    const json_t *hv, *ov;
    json_array_foreach(json_object_get(sum, "holds"), h, hv)
    {
        double hold = json_number_value(hv), tw = NAN;
        pkb_buf list = {0};
        json_array_foreach(json_object_get(sum, "observers"), o, ov)
        {
            const json_t *c = pkb__obs_cell(sum, hold, rate, json_string_value(ov));
            double churned = pkb__obs_num(c, "churned"), seen = pkb__obs_num(c, "seen");
            if (!pkb__obs_measured(c) || !isfinite(pkb__obs_num(c, "polls")) || !(churned > 0))
                continue;
            pkb_buf_printf(&list, "%s`%s` ", list.len ? "; " : "", json_string_value(ov));
            pkb__obs_fmt_pct(&list, seen / churned);
            pkb_buf_puts(&list, " seen, ");
            pkb__obs_fmt_pct(&list, pkb__obs_num(c, "attributed") / churned);
            pkb_buf_puts(&list, " attributed");
            tw = isnan(tw) ? pkb__obs_num(c, "timewait_max")
                           : fmax(tw, pkb__obs_num(c, "timewait_max"));
        }
        if (list.len > 0) {
            pkb_buf_printf(b,
                           "- **Seen is not attributed, %g/s, hold %g ms.** Of the churned "
                           "connections: %s (medians). A look reads the table, then walks the "
                           "owners; a socket closed in between is seen without one, and the "
                           "slower the look the more are lost. The tables held up to ",
                           rate, hold, list.data);
            pkb__obs_fmt_count(b, tw);
            pkb_buf_puts(b, " TIME_WAIT rows, inode 0, which no walk can attribute.\n");
        }
        pkb_buf_free(&list);
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
            pkb__obs_fmt_pct(b, lo);
            if (hi != lo) {
                pkb_buf_puts(b, "–");
                pkb__obs_fmt_pct(b, hi);
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
            double d = pkb__obs_num(c, "drops_total");
            if (!pkb__obs_measured(c) || !json_equal(json_object_get(c, "observer"), ov) ||
                isnan(d))
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
            pkb__obs_fmt_count(b, total);
            pkb_buf_printf(b,
                           " records dropped, in %d of its %d cells: the ring was too small for "
                           "what it was handed between two reads.\n",
                           lossy, cells);
        }
    }
}

static void concl_workload(const json_t *sum, double hold, pkb_buf *b)
{
    double rate = pkb__obs_top_rate(sum);
    const json_t *none = pkb__obs_cell(sum, hold, rate, "none");
    if (!pkb__obs_measured(none) || rate <= 0)
        return;
    double base = pkb__obs_median(none, "workload_cpu_s");
    pkb_buf_printf(b, "- **The cost on the workload, %g/s, hold %g ms.** Alone it used ", rate,
                   hold);
    pkb__obs_fmt_s(b, base);
    pkb_buf_puts(b, " CPU-s");
    size_t o;
    const json_t *ov;
    json_array_foreach(json_object_get(sum, "observers"), o, ov)
    {
        const json_t *c = pkb__obs_cell(sum, hold, rate, json_string_value(ov));
        double d = pkb__obs_num(c, "workload_delta_s");
        if (!pkb__obs_measured(c) || !isfinite(d) || strcmp(json_string_value(ov), "none") == 0)
            continue;
        pkb_buf_printf(b, "; watched by `%s` %s", json_string_value(ov), d >= 0 ? "+" : "");
        pkb__obs_fmt_s(b, d);
        pkb_buf_printf(b, " (%+.0f%%)", base > 0 ? d / base * 100 : 0.0);
    }
    const json_t *spread = json_object_get(none, "workload_cpu_s");
    pkb_buf_puts(b, ". `none`'s own repetitions spanned ");
    pkb__obs_fmt_s(b, pkb__obs_num(spread, "min"));
    pkb_buf_puts(b, "–");
    pkb__obs_fmt_s(b, pkb__obs_num(spread, "max"));
    pkb_buf_puts(b, " CPU-s: a delta smaller than that spread is noise. The eBPF programs run in "
                    "the observed processes' own system calls and softirqs, so their cost shows "
                    "here rather than in the observer's CPU.\n");
}

static void concl_wakeups(const json_t *sum, double hold, pkb_buf *b)
{
    double rate = pkb__obs_top_rate(sum);
    const json_t *w = pkb__obs_cell(sum, hold, rate, "ebpf_ringbuf");
    const json_t *nw = pkb__obs_cell(sum, hold, rate, "ebpf_ringbuf_batched");
    if (!pkb__obs_measured(w) || !pkb__obs_measured(nw) || rate <= 0)
        return;
    pkb_buf_printf(b, "- **Wake-ups, %g/s, hold %g ms.** Woken per event, the reader was woken ",
                   rate, hold);
    pkb__obs_fmt_count(b, pkb__obs_num(w, "wakeups"));
    pkb_buf_puts(b, " times and used ");
    pkb__obs_fmt_s(b, pkb__obs_median(w, "cpu_s"));
    pkb_buf_puts(b, " CPU-s; reading every 100 ms instead, ");
    pkb__obs_fmt_s(b, pkb__obs_median(nw, "cpu_s"));
    pkb_buf_puts(b, " CPU-s (");
    pkb__obs_fmt_times(b, pkb__obs_median(w, "cpu_s") / pkb__obs_median(nw, "cpu_s"));
    pkb_buf_puts(b, "), and the workload ");
    pkb__obs_fmt_s(b, pkb__obs_median(w, "workload_cpu_s"));
    pkb_buf_puts(b, " against ");
    pkb__obs_fmt_s(b, pkb__obs_median(nw, "workload_cpu_s"));
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
        if (!pkb__obs_measured(c) ||
            strcmp(json_string_value(json_object_get(c, "observer")), "none") == 0)
            continue;
        cells++;
        if (pkb__obs_num(c, "open_equal") == pkb__obs_num(c, "n")) {
            equal++;
            continue;
        }
        pkb_buf_printf(&misses, "%s`%s` at %g/s, hold %g ms", misses.len ? "; " : "",
                       json_string_value(json_object_get(c, "observer")), pkb__obs_num(c, "rate"),
                       pkb__obs_num(c, "hold_ms"));
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
    double noisy = 0, reps = 0, disturbed = 0;
    bool measured_disturbance = false;
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(sum, "cells"), i, c)
    {
        if (!pkb__obs_measured(c))
            continue;
        noisy += pkb__obs_num(c, "noisy");
        reps += pkb__obs_num(c, "n");
        if (json_object_get(c, "disturbed") != NULL) {
            measured_disturbance = true;
            disturbed += pkb__obs_num(c, "disturbed");
        }
    }
    const json_t *env = json_object_get(r->root, "environment");
    pkb_buf_printf(b,
                   "- **Noise.** %.0f of %.0f cells ended with more runnable tasks than CPUs "
                   "(%lld)",
                   noisy, reps, (long long)r->logical_cpus);
    if (measured_disturbance)
        pkb_buf_printf(b,
                       "; %.0f were marked disturbed (other processes used more than %.0f%% of "
                       "the machine's CPU, or the hypervisor more than %.0f%%, while the cell ran)",
                       disturbed, PKB_DISTURB_OTHERS * 100, PKB_DISTURB_STEAL * 100);
    pkb_buf_puts(b, "; load average ");
    pkb_md_json_value(b, json_array_get(json_object_get(env, "loadavg_start"), 0));
    pkb_buf_puts(b, " at the start, ");
    pkb_md_json_value(b, json_array_get(json_object_get(env, "loadavg_end"), 0));
    pkb_buf_puts(b, " at the end. On a shared machine compare observers within this run, "
                    "never seconds across runs.\n");
}

void pkb__observe_conclusions(const pkb_results *r, const json_t *sum, pkb_buf *b)
{
    pkb_buf_puts(b, "## Conclusions\n\n");
    size_t h;
    const json_t *hv;
    json_array_foreach(json_object_get(sum, "holds"), h, hv)
    {
        concl_cost(sum, json_number_value(hv), pkb__obs_duration(r), b);
        concl_pollers(sum, json_number_value(hv), b);
    }
    concl_attribution(sum, b);
    concl_seen(sum, b);
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
    double ours_p = pkb__obs_median(p, "cpu_s"), ours_e = pkb__obs_median(e, "cpu_s");
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
    pkb__obs_fmt_s(b, ours_p);
    pkb_buf_puts(b, ", `ebpf_ringbuf` ");
    pkb__obs_fmt_s(b, ours_e);
    pkb_buf_printf(b, " CPU-s): the prototype's ordering is %s",
                   strcmp(ours, dearer(seed[i].proto_poller, seed[i].proto_ebpf)) == 0
                       ? "**reproduced**"
                       : "**not reproduced**");
    if (!isnan(seed[i].shipped_poller))
        pkb_buf_printf(b, ", the shipped benchmark's %s",
                       strcmp(ours, dearer(seed[i].shipped_poller, seed[i].shipped_ebpf)) == 0
                           ? "**reproduced**"
                           : "**not reproduced**");
    double dp = pkb__obs_num(p, "workload_delta_s"), de = pkb__obs_num(e, "workload_delta_s");
    if (isfinite(dp) && isfinite(de)) {
        pkb_buf_puts(b, ". Adding what each shifted onto the workload, the poller cost ");
        pkb__obs_fmt_s(b, ours_p + dp);
        pkb_buf_puts(b, " and eBPF ");
        pkb__obs_fmt_s(b, ours_e + de);
        pkb_buf_puts(b, " CPU-s");
    }
    pkb_buf_puts(b, ".\n");
}

/* The seed's table, the row of seed[i]: its numbers per second of watching beside this run's. */
static void seed_row(const json_t *sum, double hold, double dur, size_t i, pkb_buf *b)
{
    const json_t *p = pkb__obs_cell(sum, hold, seed[i].rate, "proc_poller");
    const json_t *e = pkb__obs_cell(sum, hold, seed[i].rate, "ebpf_ringbuf");
    if (!pkb__obs_measured(p) && !pkb__obs_measured(e))
        return;
    pkb_buf_printf(b, "| %g | %.4f / %.4f | ", seed[i].rate, seed[i].proto_poller / 20,
                   seed[i].proto_ebpf / 20);
    if (isnan(seed[i].shipped_poller))
        pkb_buf_puts(b, "– | ");
    else
        pkb_buf_printf(b, "%.4f / %.4f | ", seed[i].shipped_poller / 5, seed[i].shipped_ebpf / 5);
    pkb__obs_fmt_s(b, pkb__obs_measured(p) ? pkb__obs_median(p, "cpu_s") / dur : NAN);
    pkb_buf_puts(b, " / ");
    pkb__obs_fmt_s(b, pkb__obs_measured(e) ? pkb__obs_median(e, "cpu_s") / dur : NAN);
    pkb_buf_puts(b, " | ");
    pkb__obs_fmt_s(b, pkb__obs_measured(e) ? pkb__obs_num(e, "workload_delta_s") / dur : NAN);
    pkb_buf_printf(b, " | %s / ", seed[i].poller_saw);
    if (pkb__obs_measured(p)) {
        pkb__obs_fmt_count(b, pkb__obs_num(p, "attributed"));
        pkb_buf_puts(b, " of ");
        pkb__obs_fmt_count(b, pkb__obs_num(p, "churned"));
    } else {
        pkb_buf_puts(b, "–");
    }
    pkb_buf_puts(b, " |\n");
}

/* What the seed found at the top rate and over the rates, and whether this run reproduced it. */
static void seed_findings(const json_t *sum, double hold, pkb_buf *b)
{
    const json_t *p = pkb__obs_cell(sum, hold, pkb__obs_top_rate(sum), "proc_poller");
    const json_t *e = pkb__obs_cell(sum, hold, pkb__obs_top_rate(sum), "ebpf_ringbuf");
    if (pkb__obs_measured(p) && pkb__obs_top_rate(sum) > 0) {
        double a = pkb__obs_median(p, "attribution");
        pkb_buf_puts(b, "- **What the poller saw.** The seed's poller saw 1 churned connection "
                        "at every rate (its listener); here `proc_poller` attributed ");
        pkb__obs_fmt_pct(b, a);
        pkb_buf_printf(b,
                       " at %g/s (hold %g ms): %s. With hold 0 a churned client socket lives "
                       "microseconds, then sits in TIME_WAIT with inode 0, where no owner "
                       "walk can find it.\n",
                       pkb__obs_top_rate(sum), hold,
                       a < 0.01 ? "**reproduced**" : "**not reproduced**");
    }
    if (pkb__obs_measured(e) && pkb__obs_top_rate(sum) > 0) {
        double ea = pkb__obs_median(e, "attribution");
        pkb_buf_puts(b, "- **What eBPF saw.** The seed's eBPF backend saw every connection; "
                        "`ebpf_ringbuf` attributed ");
        pkb__obs_fmt_pct(b, ea);
        pkb_buf_printf(b, ": %s.\n", ea >= 0.999 ? "**reproduced**" : "**not reproduced**");
    }
    double lo, hi;
    if (span(sum, hold, "ebpf_ringbuf", "cpu_s", &lo, &hi) >= 2) {
        pkb_buf_puts(b, "- The seed found eBPF's cost roughly flat from 50 to 500/s (0.75 to "
                        "1.0 CPU-s); `ebpf_ringbuf`'s own CPU here spanned ");
        pkb__obs_fmt_s(b, lo);
        pkb_buf_puts(b, "–");
        pkb__obs_fmt_s(b, hi);
        pkb_buf_printf(b, " CPU-s over the rates (%s).\n",
                       hi / lo < 1.5 ? "flat: **reproduced**"
                                     : "it grows with the event rate: **not reproduced**");
    }
}

void pkb__observe_seed(const pkb_results *r, const json_t *sum, pkb_buf *b)
{
    const json_t *holds = json_object_get(sum, "holds");
    double hold = json_number_value(json_array_get(holds, 0)), dur = pkb__obs_duration(r);
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
    for (size_t i = 0; i < sizeof seed / sizeof seed[0]; i++)
        seed_row(sum, hold, dur, i, b);
    pkb_buf_puts(b, "\n");
    for (size_t i = 0; i < sizeof seed / sizeof seed[0]; i++) {
        const json_t *p = pkb__obs_cell(sum, hold, seed[i].rate, "proc_poller");
        const json_t *e = pkb__obs_cell(sum, hold, seed[i].rate, "ebpf_ringbuf");
        if (pkb__obs_measured(p) && pkb__obs_measured(e) && seed[i].rate > 0)
            seed_ordering(p, e, i, b);
    }
    seed_findings(sum, hold, b);
    pkb_buf_puts(b, "\n");
}

void pkb__observe_bpf_programs(const json_t *sum, pkb_buf *b)
{
    double rate = pkb__obs_top_rate(sum);
    bool head = false;
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(sum, "cells"), i, c)
    {
        const json_t *progs = json_object_get(c, "bpf_programs");
        if (!pkb__obs_measured(c) || pkb__obs_num(c, "rate") != rate || json_array_size(progs) == 0)
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
            double runs = pkb__obs_num(p, "run_cnt"), ns = pkb__obs_num(p, "run_ns");
            pkb_buf_printf(b, "| %g | `%s` | `%s` | ", pkb__obs_num(c, "hold_ms"),
                           json_string_value(json_object_get(c, "observer")),
                           json_string_value(json_object_get(p, "name")));
            pkb__obs_fmt_count(b, runs);
            pkb_buf_printf(b, " | %.3f | %.0f |\n", ns / 1e6, runs > 0 ? ns / runs : 0.0);
        }
    }
    if (head)
        pkb_buf_puts(b, "\n");
}
