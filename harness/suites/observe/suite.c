/*
 * The observe suite: what it costs to watch processes' TCP connections, and how much of the
 * churn each way of watching attributes to a process (METHODOLOGY.md, "What watching costs";
 * the seed's procinfo study, ../shared/seeds/004_*).
 *
 * The grid: churn rates × hold times, each cell run by every observer (observers/registry.h)
 * in a fresh network namespace (cell.h), repeated; full = the seed's 0/50/200/500 connections
 * per second × hold 0 and 250 ms, 20 s per cell, 5 repetitions; quick = 0/200 × 0/250 ms,
 * 1.5 s, 2 repetitions. Interleaved: each repetition visits every cell, and within a cell the
 * observers take turns in an order rotated by one per cell and repetition, so the machine's
 * drift lands on all of them alike.
 *
 * Before anything runs, every observer is probed; one that cannot run here (no BPF, no BTF, not
 * root) is recorded as refused with its one-line reason, printed, and the rest run. The runner
 * does not time these series (Google Benchmark cannot run 20-second cells in rounds): the suite
 * measures them and hands them to pkb_run_series settled — after every repetition too, marked
 * partial, so a long run that dies keeps what it measured. The results file's `observe` section
 * holds the configuration, the gates (what could run, which hooks attached, every refusal) and
 * the summary (observe.h).
 *
 * PKBENCH_CHURN overrides the workload program's path, PKBENCH_OBSERVE_BTF the kernel BTF the
 * eBPF observers use (a missing file makes them SKIP: how the tests force the gate), and
 * PKBENCH_OBSERVE_CELL_MS the duration of a cell.
 */
#define _GNU_SOURCE
#include "suites/own.h"

#include "common/parse.h"
#include "run/disturb.h"
#include "suites/observe/cell.h"
#include "suites/observe/netns.h"
#include "suites/observe/observe.h"
#include "suites/observe/observers/bpf.h"
#include "suites/observe/view.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PKB_CHURN_PATH
#define PKB_CHURN_PATH ""
#endif

/* ---- configuration ------------------------------------------------------------------------- */

struct config {
    const double *rates;
    size_t nrates;
    const int *holds;
    size_t nholds;
    int duration_ms;
    int repetitions;
    int long_lived;
};

static const double full_rates[] = {0, 50, 200, 500};
static const double quick_rates[] = {0, 200};
static const int holds[] = {0, 250};

static const struct config full_config = {full_rates, 4, holds, 2, 20000, 5, 10};
static const struct config quick_config = {quick_rates, 2, holds, 2, 1500, 2, 10};

/* What the runner records as settings: the repetitions, and a sample's length (a cell). */
static pkb_profile ob_profile;

/* ---- series -------------------------------------------------------------------------------- */

struct item {
    pkb_series *s;
    const pkb_observer *ob;
    double rate;
    int hold_ms;
    json_t *o; /* the series' "observe" object (borrowed from s->extra) */
};

/* The per-repetition arrays of an "observe" object, in observe.h's order. */
static const char *const metrics[] = {
    "cpu_s",         "user_s",         "sys_s",
    "setup_cpu_s",   "wall_s",         "client_cpu_s",
    "server_cpu_s",  "workload_cpu_s", "churned",
    "failures",      "seen",           "attributed",
    "misattributed", "long_seen",      "long_attributed",
    "accepted",      "server_seen",    "server_attributed",
    "open_truth",    "open_observed",  "polls",
    "rows_max",      "timewait_max",   "events",
    "submitted",     "drops",          "wakeups",
    "bpf_run_ns",    "bpf_run_cnt",    "bpf_programs",
    "late_max_us",   "late_1ms",
};

static json_t *observe_extra(const pkb_observer *ob, double rate, int hold, const struct config *c)
{
    json_t *o = json_pack("{s:s, s:f, s:i, s:f, s:i, s:s, s:s}", "observer", ob->name, "rate", rate,
                          "hold_ms", hold, "duration_s", c->duration_ms / 1000.0, "long_lived",
                          c->long_lived, "hooks", "", "netns", "");
    for (size_t i = 0; o != NULL && i < sizeof metrics / sizeof metrics[0]; i++)
        json_object_set_new(o, metrics[i], json_array());
    return json_pack("{s:o}", "observe", o);
}

static size_t
build_items(const struct config *c, const regex_t *re, pkb_series *series, struct item *items)
{
    size_t n = 0;
    for (size_t h = 0; h < c->nholds; h++) {
        for (size_t r = 0; r < c->nrates; r++) {
            for (size_t k = 0; k < pkb_observer_count; k++) {
                const pkb_observer *ob = pkb_observers[k];
                pkb_series *s = &series[n];
                snprintf(s->scenario, sizeof s->scenario, "rate%g_hold%dms", c->rates[r],
                         c->holds[h]);
                snprintf(s->contender, sizeof s->contender, "%s", ob->name);
                snprintf(s->name, sizeof s->name, "%s/%s", s->scenario, s->contender);
                if (re != NULL && regexec(re, s->name, 0, NULL, 0) != 0) {
                    memset(s, 0, sizeof *s);
                    continue;
                }
                s->description = ob->description;
                s->unit = "cells";
                s->work_per_iteration = 1;
                s->baseline = strcmp(ob->name, "proc_poller") == 0;
                s->extra = observe_extra(ob, c->rates[r], c->holds[h], c);
                items[n] = (struct item){.s = s,
                                         .ob = ob,
                                         .rate = c->rates[r],
                                         .hold_ms = c->holds[h],
                                         .o = json_object_get(s->extra, "observe")};
                n++;
            }
        }
    }
    return n;
}

static void settle(pkb_series *s, pkb_series_status status, const char *why)
{
    s->status = status;
    if (snprintf(s->reason, sizeof s->reason, "%s", why) >= (int)sizeof s->reason)
        memcpy(s->reason + sizeof s->reason - 4, "...", 4); /* cut, and says so */
}

/* ---- recording a cell ---------------------------------------------------------------------- */

static void push(json_t *o, const char *key, json_t *v)
{
    json_array_append_new(json_object_get(o, key), v != NULL ? v : json_null());
}

static json_t *count_or_null(bool has, uint64_t v)
{
    return has ? json_integer((json_int_t)v) : json_null();
}

static json_t *programs_json(const pkb_obs_view *v)
{
    json_t *a = json_array();
    for (int i = 0; i < v->nprogs; i++)
        json_array_append_new(a, json_pack("{s:s, s:I, s:I}", "name", v->progs[i].name, "run_cnt",
                                           (json_int_t)v->progs[i].run_cnt, "run_ns",
                                           (json_int_t)v->progs[i].run_ns));
    return a;
}

/* One repetition of a cell, with what disturbed it since `mark` (run/disturb.h). */
static void record(struct item *it, const pkb_cell_result *res, const pkb_disturb_mark *mark)
{
    const pkb_obs_view *v = &res->view;
    bool polls = v->has & PKB_OBS_HAS_POLLS, ring = v->has & PKB_OBS_HAS_RING;
    bool bpf = (v->has & PKB_OBS_HAS_BPF) && v->bpf_run_ns != UINT64_MAX;
    json_t *o = it->o;
    double workload = res->client_cpu_s + res->server_cpu_s;
    push(o, "cpu_s", json_real(res->cpu_s));
    push(o, "user_s", json_real(res->user_s));
    push(o, "sys_s", json_real(res->sys_s));
    push(o, "setup_cpu_s", json_real(res->setup_cpu_s));
    push(o, "wall_s", json_real(res->wall_s));
    push(o, "client_cpu_s", json_real(res->client_cpu_s));
    push(o, "server_cpu_s", json_real(res->server_cpu_s));
    push(o, "workload_cpu_s", json_real(workload));
    push(o, "churned", count_or_null(true, res->churned));
    push(o, "failures", count_or_null(true, res->failures));
    push(o, "seen", count_or_null(true, res->seen));
    push(o, "attributed", count_or_null(true, res->attributed));
    push(o, "misattributed", count_or_null(true, res->misattributed));
    push(o, "long_seen", count_or_null(true, res->long_seen));
    push(o, "long_attributed", count_or_null(true, res->long_attributed));
    push(o, "accepted", count_or_null(true, res->accepted));
    push(o, "server_seen", count_or_null(true, res->server_seen));
    push(o, "server_attributed", count_or_null(true, res->server_attributed));
    push(o, "open_truth", count_or_null(true, res->open_truth));
    push(o, "open_observed", count_or_null(true, res->open_observed));
    push(o, "late_1ms", count_or_null(true, res->late_1ms));
    push(o, "late_max_us", json_integer(res->late_max_us));
    push(o, "polls", count_or_null(polls, v->polls));
    push(o, "rows_max", count_or_null(polls, v->rows_max));
    push(o, "timewait_max", count_or_null(polls, v->timewait_max));
    push(o, "events", count_or_null(ring, v->events));
    push(o, "submitted", count_or_null(ring, v->submitted));
    push(o, "drops", count_or_null(ring, v->drops));
    push(o, "wakeups", count_or_null(ring, v->wakeups));
    push(o, "bpf_run_ns", count_or_null(bpf, v->bpf_run_ns));
    push(o, "bpf_run_cnt", count_or_null(bpf, v->bpf_run_cnt));
    push(o, "bpf_programs", bpf ? programs_json(v) : NULL);
    json_object_set_new(o, "hooks", json_string(v->hooks));
    json_object_set_new(o, "netns", json_string(res->netns ? res->netns : ""));

    pkb_series *s = it->s;
    size_t k = s->nreps++;
    s->samples_ns[k] = res->cpu_s * 1e9;
    s->parent_cpu_ns[k] = res->cpu_s * 1e9;
    s->child_cpu_ns[k] = workload * 1e9;
    s->iterations[k] = 1;
    pkb_disturb_end(mark, &s->disturb[k]);
}

/* ---- gates: what can run here -------------------------------------------------------------- */

static long read_long(const char *path)
{
    FILE *f = fopen(path, "re");
    long v = -1;
    if (f != NULL) {
        if (fscanf(f, "%ld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static json_t *host_facts(void)
{
    char lockdown[128] = "";
    FILE *f = fopen("/sys/kernel/security/lockdown", "re");
    if (f != NULL) {
        if (fgets(lockdown, sizeof lockdown, f) == NULL)
            lockdown[0] = '\0';
        lockdown[strcspn(lockdown, "\n")] = '\0';
        fclose(f);
    }
    bool tracefs = false;
    char line[1024];
    f = fopen("/proc/self/mountinfo", "re");
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        tracefs |= strstr(line, " - tracefs ") != NULL;
    if (f != NULL)
        fclose(f);
    long bpf_off = read_long("/proc/sys/kernel/unprivileged_bpf_disabled");
    long tw = read_long("/proc/sys/net/ipv4/tcp_tw_reuse");
    return json_pack("{s:i, s:o, s:s?, s:b, s:o}", "euid", (int)geteuid(),
                     "unprivileged_bpf_disabled",
                     bpf_off >= 0 ? json_integer(bpf_off) : json_null(), "lockdown",
                     lockdown[0] ? lockdown : NULL, "tracefs_mounted", tracefs, "tcp_tw_reuse",
                     tw >= 0 ? json_integer(tw) : json_null());
}

/* Probes every observer that has a selected series; refuses the series of those that cannot
 * run (with the reason, printed once each), and all of them when no network namespace can be
 * made. Returns the gates object. */
static json_t *gate(struct item *items, size_t n, const pkb_obs_options *o)
{
    json_t *observers = json_object();
    for (size_t k = 0; k < pkb_observer_count; k++) {
        const pkb_observer *ob = pkb_observers[k];
        size_t mine = 0;
        for (size_t i = 0; i < n; i++)
            mine += items[i].ob == ob;
        if (mine == 0)
            continue;
        char why[400] = "";
        int rc = ob->probe(ob, o, why, sizeof why);
        json_object_set_new(observers, ob->name,
                            json_pack("{s:b, s:s?}", "runs", rc == 0, "reason", rc ? why : NULL));
        if (rc == 0)
            continue;
        fprintf(stderr, "pkbench: observe: SKIP %s: %s\n", ob->name, why);
        for (size_t i = 0; i < n; i++) {
            if (items[i].ob != ob)
                continue;
            settle(items[i].s, PKB_SERIES_REFUSED, why);
            items[i].s->environmental = true; /* the host lacks it: a skip, not a failure */
        }
    }
    /* A trial namespace: without one no cell can run. (Unprivileged, this is where pkbench
     * enters its own user namespace, after the eBPF probes above.) */
    pkb_netns ns;
    char why[400] = "";
    int rc = pkb_netns_enter(&ns, why, sizeof why);
    const char *how = rc == 0 ? ns.how : NULL;
    if (rc == 0)
        pkb_netns_leave(&ns);
    else
        fprintf(stderr, "pkbench: observe: SKIP every observer: %s\n", why);
    for (size_t i = 0; rc != 0 && i < n; i++) {
        if (items[i].s->status != PKB_SERIES_PENDING)
            continue;
        settle(items[i].s, PKB_SERIES_REFUSED, why);
        items[i].s->environmental = true;
    }
    return json_pack("{s:o, s:{s:b, s:s?, s:s?}, s:o, s:o}", "observers", observers, "netns",
                     "works", rc == 0, "how", how, "reason", rc ? why : NULL, "bpf",
                     pkb__bpf_gates(), "host", host_facts());
}

/* ---- the run ------------------------------------------------------------------------------- */

struct run {
    pkb_series *series;
    struct item *items;
    size_t n;
    const struct config *c;
    pkb_suite_options *opts;
    pkb_obs_options obs;
    const char *churn;
    json_t *gates;
    int rounds_done;
};

static json_t *config_json(const struct run *st)
{
    json_t *rates = json_array(), *hs = json_array();
    for (size_t i = 0; i < st->c->nrates; i++)
        json_array_append_new(rates, json_real(st->c->rates[i]));
    for (size_t i = 0; i < st->c->nholds; i++)
        json_array_append_new(hs, json_integer(st->c->holds[i]));
    return json_pack("{s:o, s:o, s:f, s:i, s:i, s:i, s:i, s:I, s:s, s:s}", "rates", rates,
                     "holds_ms", hs, "duration_s", st->c->duration_ms / 1000.0, "repetitions",
                     st->c->repetitions, "long_lived", st->c->long_lived, "poll_ms",
                     st->obs.poll_ms, "batch_ms", st->obs.batch_ms, "ring_bytes",
                     (json_int_t)st->obs.ring_bytes, "btf", st->obs.btf_path, "churn", st->churn);
}

/* Writes the results file with every series measured so far (partial: not the last write, the
 * file says complete: false). Returns pkb_run_series's status. */
static int write_results(struct run *st, bool partial)
{
    pkb_series *out = calloc(st->n ? st->n : 1, sizeof *out);
    json_t *view = json_array();
    if (out == NULL || view == NULL) {
        free(out);
        json_decref(view);
        fprintf(stderr, "pkbench: out of memory\n");
        return 1;
    }
    size_t m = 0;
    for (size_t i = 0; i < st->n; i++) {
        pkb_series *s = st->items[i].s;
        if (s->status == PKB_SERIES_PENDING && s->nreps == 0)
            continue; /* not run yet */
        out[m] = *s;  /* shallow: the runner only reads what it writes */
        if (out[m].status == PKB_SERIES_PENDING)
            out[m].status = PKB_SERIES_MEASURED;
        json_array_append_new(view, pkb_series_json(&out[m]));
        m++;
    }
    json_t *summary = pkb_observe_summarize(view);
    json_decref(view);
    json_t *section = json_pack("{s:o, s:O, s:i, s:o}", "config", config_json(st), "gates",
                                st->gates, "repetitions_done", st->rounds_done, "summary",
                                summary != NULL ? summary : json_object());
    st->opts->partial = partial;
    int rc = pkb_suite_run(out, m, st->opts, section);
    st->opts->partial = false;
    free(out);
    return rc;
}

static void progress(const struct run *st,
                     size_t done,
                     size_t total,
                     double t0,
                     int rep,
                     const struct item *it,
                     const pkb_cell_result *res)
{
    double elapsed = (double)(pkb_obs_now_ns() / 1000000) / 1000.0 - t0;
    double left = done > 0 ? elapsed / (double)done * (double)(total - done) : 0;
    fprintf(stderr,
            "pkbench: observe [%zu/%zu, rep %d/%d] %-24s CPU %.4f s, attributed %llu of %llu", done,
            total, rep + 1, st->c->repetitions, it->s->name, res->cpu_s,
            (unsigned long long)res->attributed, (unsigned long long)res->churned);
    if (res->view.has & PKB_OBS_HAS_RING)
        fprintf(stderr, ", drops %llu", (unsigned long long)res->view.drops);
    fprintf(stderr, ", open %llu/%llu, workload %.3f s (%.0f min %02.0f s left)\n",
            (unsigned long long)res->open_observed, (unsigned long long)res->open_truth,
            res->client_cpu_s + res->server_cpu_s, floor(left / 60), fmod(left, 60));
}

/* One repetition of the grid: every cell, the observers rotated. Returns 0 or -EINTR. */
static int repetition(struct run *st, int rep, size_t *done, size_t total, double t0)
{
    struct item **cell = calloc(pkb_observer_count, sizeof *cell);
    if (cell == NULL)
        return -ENOMEM;
    int rc = 0;
    for (size_t h = 0, ci = 0; h < st->c->nholds && rc == 0; h++) {
        for (size_t r = 0; r < st->c->nrates && rc == 0; r++, ci++) {
            size_t k = 0;
            for (size_t i = 0; i < st->n; i++)
                if (st->items[i].rate == st->c->rates[r] &&
                    st->items[i].hold_ms == st->c->holds[h] &&
                    st->items[i].s->status == PKB_SERIES_PENDING)
                    cell[k++] = &st->items[i];
            for (size_t j = 0; j < k && rc == 0; j++) {
                struct item *it = cell[(j + (size_t)rep + ci) % k];
                pkb_cell_config cc = {.churn_path = st->churn,
                                      .rate = it->rate,
                                      .hold_ms = it->hold_ms,
                                      .duration_ms = st->c->duration_ms,
                                      .long_lived = st->c->long_lived,
                                      .obs = st->obs};
                pkb_cell_result res;
                char why[512] = "";
                pkb_disturb_mark mark;
                pkb_disturb_begin(&mark);
                int crc = pkb_cell_run(&cc, it->ob, &res, why, sizeof why);
                if (crc == -EINTR || pkb_interrupted) {
                    if (crc == 0)
                        pkb_cell_result_free(&res);
                    rc = -EINTR;
                    break;
                }
                (*done)++;
                if (crc != 0) {
                    fprintf(stderr, "pkbench: observe: %s failed: %s\n", it->s->name, why);
                    settle(it->s, PKB_SERIES_FAILED, why);
                    continue;
                }
                if (res.cpu_s <= 0) {
                    settle(it->s, PKB_SERIES_FAILED, "the observer's CPU time read 0");
                } else {
                    record(it, &res, &mark);
                    progress(st, *done, total, t0, rep, it, &res);
                }
                pkb_cell_result_free(&res);
            }
        }
    }
    free(cell);
    return rc;
}

static int measure(struct run *st)
{
    size_t pending = 0, done = 0;
    for (size_t i = 0; i < st->n; i++) {
        if (pkb_own_alloc_samples(st->items[i].s, (size_t)st->c->repetitions) != 0) {
            fprintf(stderr, "pkbench: out of memory\n");
            return 1;
        }
        pending += st->items[i].s->status == PKB_SERIES_PENDING;
    }
    size_t total = pending * (size_t)st->c->repetitions;
    double t0 = (double)(pkb_obs_now_ns() / 1000000) / 1000.0;
    double about = (double)total * (st->c->duration_ms / 1000.0 + 0.25);
    fprintf(stderr,
            "pkbench: observe: %zu cells of %.1f s (%zu series × %d repetitions), about %.0f %s\n",
            total, st->c->duration_ms / 1000.0, pending, st->c->repetitions,
            about < 120 ? ceil(about) : ceil(about / 60), about < 120 ? "s" : "min");
    for (int rep = 0; rep < st->c->repetitions && pending > 0; rep++) {
        int rc = repetition(st, rep, &done, total, t0);
        if (rc == -EINTR)
            break;
        if (rc != 0) {
            fprintf(stderr, "pkbench: out of memory\n");
            return 1;
        }
        st->rounds_done = rep + 1;
        if (rep + 1 < st->c->repetitions) {
            int wrc = write_results(st, true);
            if (wrc != 0 && wrc != 130)
                return wrc;
        }
    }
    return write_results(st, false);
}

/* The workload program and the cell length override, checked before anything runs. Returns 0
 * or 1 (message printed). */
static int check_inputs(const char *churn, struct config *c)
{
    if (churn[0] == '\0' || access(churn, X_OK) != 0) {
        fprintf(stderr,
                "pkbench: the observe workload '%s' is missing (build the pk_churn target, or "
                "set PKBENCH_CHURN)\n",
                churn);
        return 1;
    }
    const char *ms = getenv("PKBENCH_OBSERVE_CELL_MS");
    long v;
    if (ms != NULL && ms[0] != '\0') {
        if (!pkb_parse_count(ms, 100, 3600000, &v)) {
            fprintf(stderr,
                    "pkbench: PKBENCH_OBSERVE_CELL_MS needs milliseconds from 100 to 3600000, "
                    "got '%s'\n",
                    ms);
            return 1;
        }
        c->duration_ms = (int)v;
    }
    return 0;
}

static int run(const pkb_cli *cli, pkb_suite_options *opts)
{
    bool quick = strcmp(opts->profile->name, "quick") == 0;
    struct config c = quick ? quick_config : full_config;
    const char *churn = getenv("PKBENCH_CHURN");
    churn = churn != NULL && churn[0] != '\0' ? churn : PKB_CHURN_PATH;
    if (check_inputs(churn, &c) != 0)
        return 1;
    ob_profile = (pkb_profile){quick ? "quick" : "full", c.repetitions, 0.0,
                               c.duration_ms / 1000.0,   0.0,           0.0};
    opts->profile = &ob_profile;
    opts->interleave = true; /* its own repetitions, the observers rotated per cell */
    pkb_own_run o;
    if (pkb_own_begin(&o, cli, opts, c.nholds * c.nrates * pkb_observer_count,
                      sizeof(struct item)) != 0)
        return 1;
    size_t n = build_items(&c, o.filter, o.series, o.items);
    int rc = pkb_own_selected(cli, n);
    if (rc == 0) {
        struct run st = {
            .series = o.series, .items = o.items, .n = n, .c = &c, .opts = opts, .churn = churn};
        st.obs = pkb_obs_defaults(&(pkb_obs_options){.btf_path = getenv("PKBENCH_OBSERVE_BTF")});
        st.gates = gate(o.items, n, &st.obs);
        rc = measure(&st);
        json_decref(st.gates);
    }
    pkb_own_end(&o, cli, opts);
    return rc;
}

const pkb_suite pkb_suite_observe = {
    .name = "observe",
    .description = "what watching connections costs: /proc and sock_diag pollers against eBPF "
                   "ring buffers, under loopback connection churn",
    .run = run,
    .report = {.markdown = pkb__observe_markdown,
               .figures = pkb__observe_figures,
               .terminal = pkb__observe_terminal},
};
