/*
 * The suite runner.
 *
 * Timing. Each series becomes one Google Benchmark registration in manual-time mode: the
 * benchmark function times every iteration itself with CLOCK_MONOTONIC and reports it with
 * pkb_set_iteration_time, so GB's default CPU time (which excludes children) never decides
 * anything, and the per-iteration bookkeeping — two getrusage calls for the children's and our
 * own CPU — stays outside the measured interval. Children's CPU is the RUSAGE_CHILDREN delta
 * across the iteration (every contender reaps its children inside `run`), reported as the
 * per-iteration counter child_cpu_ns next to parent_cpu_ns. One GB repetition is one sample.
 *
 * Priming (the seed's rule). Before the first series, batches of 16 real spawns (processkit's
 * small capture through cat) are timed and thrown away until they stop getting faster: a new best
 * resets the count, a batch within 1.10x of the best counts one, anything slower resets it; five
 * in a row stop, and a time budget caps the loop. The batch times go into the file.
 *
 * Disturbance. Around every call of the benchmark function the runner measures what else used
 * the machine (run/disturb.h: other processes' share of the CPUs from /proc/stat, steal,
 * procs_running, involuntary context switches, migrations). In rounds mode a call is one
 * repetition; in a sequential run GB calls it once per repetition after the first repetition's
 * sizing trials, so the last N calls are the N repetitions. A repetition is marked disturbed by
 * disturb.h's rule; the marks are kept with the samples, never used to drop one.
 *
 * Re-measuring (remeasure.c). A timed series more than PKB_REMEASURE_SHARE of whose repetitions
 * were disturbed is measured once more after the others, the same way; both attempts are kept in
 * the file and the less disturbed one is the series' samples. Not with --aa.
 *
 * Progress (collect.c), on stderr: what is about to be timed and about how long; a live line on a
 * terminal; in rounds mode a line per round with the time left; and one line per finished series,
 * its summary as the suite's report reads it back from the file (pkb_suite_options.series_line),
 * printed once the file holds the series' final data: in a sequential run as each series
 * finishes, in rounds after the last round, and a series due to be re-measured after the
 * re-measure.
 *
 * Nothing lost. The results file is rewritten atomically after every finished series; an
 * interrupt (SIGINT/SIGTERM) makes the running series stop at its next iteration, its partial
 * data is dropped, and the file keeps every finished series with "complete": false.
 *
 * Rounds (the default; --aa). A sequential run (--sequential) runs each series' repetitions in
 * one go (one registration with `repetitions`), so a drift of the machine lands on whichever
 * series was running. In rounds mode the runner calls pkb_run_benchmarks once per round instead,
 * re-registering the series for each call:
 *   - round 0 calibrates: every series is registered with the profile's warm-up and min_time and
 *     one repetition; Google Benchmark warms it up and runs its sizing trials. That sample is
 *     discarded; the count is sized from the fastest undisturbed call of the round (calibrate.h),
 *     and a series with a disturbed call is calibrated once more right after it.
 *   - rounds 1..R (R = the profile's repetitions) each run every series once with exactly that
 *     iteration count (`iterations`, no warm-up, no sizing: one call of the benchmark function,
 *     one sample), in an order rotated by one series every round.
 * With --aa every series also gets a B copy (same workload, same state, same iteration count,
 * registered as "<name> [B]") run right next to it in every round, A B in odd rounds and B A in
 * even ones so neither copy always goes first. A's samples are the series' samples_ns as usual;
 * B's go to "noise_floor", with the series' minimum detectable effect (stats.h's pks_mde of A and
 * B at --alpha): the noise floor `pkbench compare` uses when this file is the base. The file is
 * rewritten after every round; an interrupt keeps the rounds every series completed.
 *
 * Settling (rounds' measured calls). Each sample follows another series, and on an unpinned
 * machine what that series did lingers: after a burst of CPU (a fan-out, a 1 MB stream, the CPU
 * control) the scheduler places the next children on the other CPU for tens of milliseconds,
 * each start paying a cross-CPU wake-up (measured on a 2-vCPU VM: a spawn+wait of the tiny
 * helper took 520 us instead of 290 for the first 20-30 spawns after a 30 ms spin, none of it
 * pinned). The order is rotated by one series per round, so a series follows the same series in
 * almost every round, and that carry-over became a bias, not noise: processkit, first in every
 * scenario, always came right after GLib or the CPU control, and its spawn_only sample read
 * 1.11-1.4x vfork_exec unpinned against 1.03-1.06x without the series before it. So before a
 * measured call's timed iterations the series runs its own iterations untimed for `settle_s`
 * (at least one); their errors and count checks are the timed ones', and the call's disturbance
 * is measured after them. Calibration (round 0) has Google Benchmark's warm-up instead.
 *
 * Google Benchmark's own records are not copied into the file: `benchmarks` is built from the
 * series (results.h's pkb_results_gb_records), the same in every mode, and `context` is GB's,
 * captured once at the start.
 */
#define _GNU_SOURCE
#include "run/run.h"

#include "common/term.h"
#include "run/collect.h"
#include "run/disturb.h"
#include "run/env.h"
#include "run/remeasure.h"
#include "run/rounds.h"
#include "processkit.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const pkb_profile pkb_profile_full = {"full", 20, 10.0, 0.25, 240.0, 0.15};
const pkb_profile pkb_profile_quick = {"quick", 20, 0.05, 0.03, 15.0, 0.15};

static json_t *new_doc(const pkb_suite_options *opts, json_t *env);
static long register_series(pkb_series *series, size_t n, const pkb_suite_options *opts);
static void announce(const pkb_series *series, size_t n, const pkb_suite_options *opts);
static json_t *prime(const pkb_profile *prof, bool enabled);
static int time_series(struct pkb__collect *c);
static void finish_doc(struct pkb__collect *c, json_t *env);
static json_t *cpu_affinity(void);

/* The run, top-down: the document's head, the series registered (or left to the rounds), the
 * announcement, priming, the timing (rounds.c, or Google Benchmark's repetitions through
 * collect.c), the re-measure (remeasure.c), the end fields. */
int pkb_run_series(pkb_series *series, size_t n, const pkb_suite_options *opts)
{
    const pkb_profile *prof = opts->profile;
    pkb__progress = (struct pkb__progress){
        .tty = isatty(2) == 1,
        .run_start = pkb__now_s(),
        .prof = prof,
        .per_series_s = prof->warmup_s + prof->repetitions * prof->min_time_s * 1.3 + 0.05,
    };
    json_t *env = opts->environment != NULL ? json_incref(opts->environment) : pkb_env_capture();
    json_t *doc = env != NULL ? new_doc(opts, env) : NULL;
    if (doc == NULL) {
        fprintf(stderr, "pkbench: out of memory\n");
        json_decref(env);
        return -ENOMEM;
    }
    struct pkb__collect c = {.series = series, .n = n, .doc = doc, .opts = opts};
    pkb_clear();
    long timed = register_series(series, n, opts);
    if (timed < 0) {
        json_decref(env);
        json_decref(doc);
        pkb_clear();
        return (int)timed;
    }
    pkb__progress.total = (size_t)timed;
    c.timed = (size_t)timed;
    announce(series, n, opts);
    pkb_context_capture(pkb__on_context, &c); /* GB's context, at the start of the run */
    pkb__write_doc(&c); /* the file exists from the start: refused series and the environment */
    json_object_set_new(doc, "priming", prime(prof, opts->prime && timed > 0));
    pkb__write_doc(&c);

    int rc = timed == 0 ? 0 : time_series(&c);
    if (rc == 0 && timed > 0)
        rc = pkb__remeasure(&c);
    pkb__show_finished(&c, true, false); /* the re-measured series, now settled in the file */
    if (pkb__progress.tty)
        fprintf(stderr, "\r\033[K");
    if (rc < 0 && !pkb_interrupted)
        fprintf(stderr, "pkbench: the benchmark run failed: %s\n", strerror(-rc));
    finish_doc(&c, env);
    json_decref(env);
    json_decref(doc);
    pkb_clear();
    if (c.write_error != 0)
        return c.write_error;
    if (pkb_interrupted)
        return 130;
    return rc < 0 ? rc : 0;
}

/* ---- the steps of the run, in order --------------------------------------------------------- */

/* The document's head: what ran, where, with which settings. NULL when out of memory. */
static json_t *new_doc(const pkb_suite_options *opts, json_t *env)
{
    const pkb_profile *prof = opts->profile;
    char created[40];
    if (opts->created != NULL)
        snprintf(created, sizeof created, "%s", opts->created);
    else
        pkb_iso_time(created, sizeof created);
    json_t *settings =
        json_pack("{s:i, s:f, s:f, s:f, s:o}", "repetitions", prof->repetitions, "min_time_s",
                  prof->min_time_s, "warmup_s", prof->warmup_s, "priming_budget_s",
                  prof->priming_budget_s, "cpu_affinity", cpu_affinity());
    if (settings != NULL) { /* see "Rounds", "Disturbance" and "Re-measuring" above */
        json_object_set_new(settings, "interleave", json_boolean(opts->interleave || opts->aa));
        if (opts->interleave || opts->aa) {
            json_object_set_new(settings, "aa", json_boolean(opts->aa));
            json_object_set_new(settings, "settle_s", json_real(opts->settle_s));
        }
        json_object_set_new(settings, "disturbance", pkb_disturb_rule_json());
        json_object_set_new(settings, "remeasure",
                            opts->aa ? json_null()
                                     : json_pack("{s:f, s:s}", "disturbed_share_above",
                                                 PKB_REMEASURE_SHARE, "keeps",
                                                 "both attempts; the series' samples are the less "
                                                 "disturbed one, the first on a tie"));
    }
    json_t *doc = settings == NULL ? NULL
                                   : pkb_results_doc_new(&(pkb_results_head){
                                         .suite = opts->suite,
                                         .profile = prof->name,
                                         .created = created,
                                         .argc = opts->argc,
                                         .argv = opts->argv,
                                         .filter = opts->filter,
                                         .environment = env,
                                         .settings = settings,
                                     });
    json_decref(settings);
    if (doc != NULL && opts->suite_section != NULL)
        json_object_set(doc, opts->suite, opts->suite_section);
    if (doc != NULL && opts->ab != NULL) /* shared: the looks it gains are written too */
        json_object_set(doc, "ab", opts->ab);
    if (doc != NULL && opts->build != NULL)
        json_object_set(doc, "build", opts->build);
    return doc;
}

/* Refused series, and series a suite measured itself (forkathon), are recorded at once; the rest
 * is registered with Google Benchmark (in rounds mode, round by round instead). Returns the
 * number to time, or a negative errno (message printed). */
static long register_series(pkb_series *series, size_t n, const pkb_suite_options *opts)
{
    const pkb_profile *prof = opts->profile;
    long timed = 0;
    for (size_t i = 0; i < n; i++) {
        pkb_series *s = &series[i];
        if (s->status != PKB_SERIES_PENDING) {
            s->done = true;
            continue;
        }
        s->line_no = (size_t)++timed;
        s->shown = false;
        if (opts->interleave || opts->aa)
            continue;
        int rc = pkb__register(s, prof);
        if (rc != 0)
            return rc;
    }
    return timed;
}

/* What is about to be timed and about how long it takes (priming aside), so a log says up front;
 * and the width the per-series lines align their names to. */
static void announce(const pkb_series *series, size_t n, const pkb_suite_options *opts)
{
    const pkb_profile *prof = opts->profile;
    for (size_t i = 0; i < n; i++) {
        int len = (int)strlen(series[i].name);
        if (series[i].status == PKB_SERIES_PENDING && len > pkb__progress.width)
            pkb__progress.width = len;
    }
    size_t timed = pkb__progress.total;
    if (timed == 0)
        return;
    double total = pkb__progress.per_series_s * (double)timed;
    if (opts->interleave || opts->aa) /* rounds.c's estimates: calibration, then the rounds */
        total = (prof->warmup_s + 3 * prof->min_time_s + 0.05) * (double)timed +
                (prof->min_time_s * 1.2 + 0.005) * (double)(timed * (opts->aa ? 2 : 1)) *
                    prof->repetitions;
    char about[32], budget[64] = "";
    pkb_fmt_duration(about, sizeof about, total);
    if (opts->prime) { /* priming ends when spawn times settle: unknown in advance, but bounded */
        char b[32];
        pkb_fmt_duration(b, sizeof b, prof->priming_budget_s);
        snprintf(budget, sizeof budget, " after priming (at most %s)", b);
    }
    const char *mode = opts->aa ? ", A/A rounds" : opts->interleave ? ", interleaved rounds" : "";
    if (opts->more_rounds != NULL && opts->max_time_s > 0) { /* rounds until decided */
        pkb_fmt_duration(about, sizeof about, opts->max_time_s);
        fprintf(stderr,
                "pkbench: timing %zu series, %s profile, interleaved rounds until every series "
                "is decided: at most %s\n",
                timed, prof->name, about);
        return;
    }
    fprintf(stderr, "pkbench: timing %zu series, %s profile%s: about %s%s\n", timed, prof->name,
            mode, about, budget);
}

static json_t *prime(const pkb_profile *prof, bool enabled)
{
    json_t *batches = json_array();
    double start = pkb__now_s(), best = 0;
    int stable = 0, count = 0;
    static const char payload[] = "processkit small \n0123456789\nab\n";
    while (enabled && !pkb_interrupted && stable < 5 &&
           pkb__now_s() - start < prof->priming_budget_s) {
        double t0 = pkb__now_s();
        for (int i = 0; i < 16; i++) {
            pk_result r;
            pk_run(
                &(pk_command){
                    .program = "cat",
                    .in = {.kind = PK_STDIO_BYTES, .data = payload, .len = sizeof payload - 1}},
                &r);
            pk_result_release(&r);
        }
        double ms = (pkb__now_s() - t0) * 1e3;
        json_array_append_new(batches, json_real(ms));
        count++;
        if (best == 0 || ms < best) {
            best = ms;
            stable = 0; /* a new best resets the count */
        } else if (ms <= best * 1.10) {
            stable++;
        } else {
            stable = 0;
        }
        if (pkb__progress.tty) {
            fprintf(stderr, "\r\033[Kpriming: batch %d, %.2f ms (best %.2f, %d/5 stable)", count,
                    ms, best, stable);
            fflush(stderr);
        }
    }
    if (pkb__progress.tty)
        fprintf(stderr, "\r\033[K");
    if (enabled && count > 0)
        fprintf(stderr, "pkbench: primed: %d batches of 16 spawns in %.1f s, %s\n", count,
                pkb__now_s() - start, stable >= 5 ? "stable" : "the budget ran out");
    return json_pack("{s:b, s:i, s:i, s:f, s:o, s:b, s:f}", "performed", enabled, "batches", count,
                     "runs_per_batch", 16, "seconds", pkb__now_s() - start, "batch_ms", batches,
                     "stable", stable >= 5, "budget_s", prof->priming_budget_s);
}

/* Times every registered series, one after another or in rounds. */
static int time_series(struct pkb__collect *c)
{
    if (c->opts->interleave || c->opts->aa)
        return pkb__run_rounds(c);
    size_t matched = 0;
    return pkb_run_benchmarks(
        &(pkb_run_options){
            .filter = "all", .on_context = pkb__on_context, .on_run = pkb__on_run, .user = c},
        &matched);
}

/* The end fields: when it finished, whether every series finished, whether it was interrupted. */
static void finish_doc(struct pkb__collect *c, json_t *env)
{
    char finished[40];
    pkb_iso_time(finished, sizeof finished);
    pkb_env_finish(env);
    bool complete = !pkb_interrupted && !c->opts->partial;
    for (size_t i = 0; i < c->n; i++)
        complete &= c->series[i].done;
    pkb_results_doc_finish(c->doc, finished, complete, pkb_interrupted != 0);
    pkb__write_doc(c);
}

/* ---- helpers -------------------------------------------------------------------------------- */

/* The CPUs this process may run on, as a list ("0-1", "1", "0,2-3"): `taskset -c 1 pkbench run`
 * records "1". Pinned and unpinned runs of spawn benchmarks differ by up to 2x on small VMs, so
 * `pkbench compare` checks this key. */
static json_t *cpu_affinity(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return json_null();
    char buf[256] = "";
    size_t len = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && len < sizeof buf - 16; cpu++) {
        if (!CPU_ISSET(cpu, &set))
            continue;
        int last = cpu;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set))
            last++;
        int w = last > cpu
                    ? snprintf(buf + len, sizeof buf - len, "%s%d-%d", len ? "," : "", cpu, last)
                    : snprintf(buf + len, sizeof buf - len, "%s%d", len ? "," : "", cpu);
        len += w > 0 ? (size_t)w : 0;
        cpu = last;
    }
    return json_string(buf);
}

void pkb_iso_time(char *buf, size_t cap)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
