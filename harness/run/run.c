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
 * Noise. procs_running (/proc/stat) is read at the end of every call of the benchmark function;
 * GB calls it once per repetition after the first repetition's sizing trials, so the last N calls
 * are the N repetitions. A repetition that ended with more runnable tasks than CPUs is flagged.
 *
 * Nothing lost. The results file is rewritten atomically after every finished series; an
 * interrupt (SIGINT/SIGTERM) makes the running series stop at its next iteration, its partial
 * data is dropped, and the file keeps every finished series with "complete": false.
 *
 * Rounds (--interleave, --aa). By default each series runs all its repetitions in one go (one
 * registration with `repetitions`), so a drift of the machine lands on whichever series was
 * running. In rounds mode the runner calls pkb_run_benchmarks once per round instead,
 * re-registering the series for each call:
 *   - round 0 calibrates: every series is registered with the profile's warm-up and min_time and
 *     one repetition; Google Benchmark warms it up and sizes its iteration count. That sample is
 *     discarded and the count kept.
 *   - rounds 1..R (R = the profile's repetitions) each run every series once with exactly that
 *     iteration count (`iterations`, no warm-up, no sizing: one call of the benchmark function,
 *     one sample), in an order rotated by one series every round.
 * With --aa every series also gets a B copy (same workload, same state, same iteration count,
 * registered as "<name> [B]") run right next to it in every round, A B in odd rounds and B A in
 * even ones so neither copy always goes first. A's samples are the series' samples_ns as usual;
 * B's go to "noise_floor", with the series' minimum detectable effect (stats.h's pks_mde of A and
 * B at --alpha): the noise floor `pkbench compare` uses when this file is the base. The file is
 * rewritten after every round; an interrupt keeps the rounds every series completed. Series
 * records in `benchmarks` are the measured rounds' iteration runs, numbered as repetitions.
 */
#define _GNU_SOURCE
#include "run.h"
#include "run_internal.h"

#include "env.h"
#include "pkb_shim.h"
#include "processkit.h"
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

const pkb_profile pkb_profile_full = {"full", 20, 10.0, 0.25, 240.0};
const pkb_profile pkb_profile_quick = {"quick", 10, 0.05, 0.03, 15.0};

volatile sig_atomic_t pkb_interrupted;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double tv_ns(struct timeval tv)
{
    return (double)tv.tv_sec * 1e9 + (double)tv.tv_usec * 1e3;
}

static void iso_time(char *buf, size_t cap)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int pkb_write_json_atomic(json_t *doc, const char *path)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof tmp)
        return -ENAMETOOLONG;
    if (json_dump_file(doc, tmp, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) !=
        0) {
        int err = errno ? -errno : -EIO;
        unlink(tmp);
        return err;
    }
    if (rename(tmp, path) != 0) {
        int err = -errno;
        unlink(tmp);
        return err;
    }
    return 0;
}

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

/* ---- progress ------------------------------------------------------------------------------ */

struct pkb__progress pkb__progress;

static void show(const char *phase)
{
    double now = now_s();
    double left_series = pkb__progress.per_series_s - (now - pkb__progress.series_start);
    if (left_series < 0)
        left_series = 0;
    double eta = left_series +
                 pkb__progress.per_series_s * (double)(pkb__progress.total - pkb__progress.index) +
                 pkb__progress.later_s;
    if (pkb__progress.tty) {
        fprintf(stderr, "\r\033[K[%zu/%zu] %-48s %-9s elapsed %4.0fs  ETA %3.0fm%02.0fs",
                pkb__progress.index, pkb__progress.total, pkb__progress.name, phase,
                now - pkb__progress.run_start, floor(eta / 60), fmod(eta, 60));
        fflush(stderr);
    }
}

/* ---- priming ------------------------------------------------------------------------------- */

static json_t *prime(const pkb_profile *prof, bool enabled)
{
    json_t *batches = json_array();
    double start = now_s(), best = 0;
    int stable = 0, count = 0;
    static const char payload[] = "processkit small \n0123456789\nab\n";
    while (enabled && !pkb_interrupted && stable < 5 && now_s() - start < prof->priming_budget_s) {
        double t0 = now_s();
        for (int i = 0; i < 16; i++) {
            pk_result r;
            pk_run(
                &(pk_command){
                    .program = "cat",
                    .in = {.kind = PK_STDIO_BYTES, .data = payload, .len = sizeof payload - 1}},
                &r);
            pk_result_release(&r);
        }
        double ms = (now_s() - t0) * 1e3;
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
    return json_pack("{s:b, s:i, s:i, s:f, s:o, s:b, s:f}", "performed", enabled, "batches", count,
                     "runs_per_batch", 16, "seconds", now_s() - start, "batch_ms", batches,
                     "stable", stable >= 5, "budget_s", prof->priming_budget_s);
}

/* ---- the benchmark function ---------------------------------------------------------------- */

static void record_call(pkb_series *s)
{
    if (s->ncalls == s->capcalls) {
        size_t cap = s->capcalls ? s->capcalls * 2 : 64;
        int *p = realloc(s->call_procs, cap * sizeof *p);
        if (p == NULL)
            return;
        s->call_procs = p;
        s->capcalls = cap;
    }
    s->call_procs[s->ncalls++] = pkb_env_procs_running();
}

void pkb__bench(pkb_state *st, void *user)
{
    pkb_series *s = user;
    if (pkb__progress.name != s->name) {
        pkb__progress.name = s->name;
        pkb__progress.index++;
        pkb__progress.series_start = now_s();
        if (!pkb__progress.tty && !pkb__progress.rounds)
            fprintf(stderr, "pkbench: [%zu/%zu] %s\n", pkb__progress.index, pkb__progress.total,
                    s->name);
    }
    double child_ns = 0, self_ns = 0;
    int64_t n = 0;
    while (pkb_keep_running(st)) {
        if (pkb_interrupted) {
            pkb_skip_with_error(st, "interrupted");
            continue;
        }
        struct rusage c0, c1, p0, p1;
        getrusage(RUSAGE_CHILDREN, &c0);
        getrusage(RUSAGE_SELF, &p0);
        pkb_sample out;
        memset(&out, 0, sizeof out);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int rc = s->iterate(s->ctx, &out);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        getrusage(RUSAGE_SELF, &p1);
        getrusage(RUSAGE_CHILDREN, &c1);
        double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        pkb_set_iteration_time(st, secs);
        child_ns +=
            tv_ns(c1.ru_utime) - tv_ns(c0.ru_utime) + tv_ns(c1.ru_stime) - tv_ns(c0.ru_stime);
        self_ns +=
            tv_ns(p1.ru_utime) - tv_ns(p0.ru_utime) + tv_ns(p1.ru_stime) - tv_ns(p0.ru_stime);
        n++;
        char msg[256];
        if (rc != 0) {
            snprintf(msg, sizeof msg, "iteration failed: %s",
                     out.error[0] ? out.error : strerror(rc < 0 ? -rc : rc));
            pkb_skip_with_error(st, msg);
        } else if (s->check_counts &&
                   (out.bytes != s->expect_bytes || out.lines != s->expect_lines ||
                    out.children != s->expect_children || out.failures != 0)) {
            snprintf(msg, sizeof msg,
                     "iteration read %llu bytes / %llu lines from %d children (%d failed), "
                     "expected %llu / %llu from %d",
                     (unsigned long long)out.bytes, (unsigned long long)out.lines, out.children,
                     out.failures, (unsigned long long)s->expect_bytes,
                     (unsigned long long)s->expect_lines, s->expect_children);
            pkb_skip_with_error(st, msg);
        }
    }
    if (n > 0) {
        pkb_counter_set(st, "child_cpu_ns", child_ns, PKB_COUNTER_AVG_ITERATIONS);
        pkb_counter_set(st, "parent_cpu_ns", self_ns, PKB_COUNTER_AVG_ITERATIONS);
        pkb_counter_set(st, "throughput", s->work_per_iteration,
                        PKB_COUNTER_ITERATION_INVARIANT_RATE);
    }
    record_call(s);
    show(pkb__progress.phase[0] != '\0'                                        ? pkb__progress.phase
         : now_s() - pkb__progress.series_start < pkb__progress.prof->warmup_s ? "warm-up"
                                                                               : "measuring");
}

/* ---- collecting runs ----------------------------------------------------------------------- */

static double to_ns(double v, const char *unit)
{
    if (strcmp(unit, "us") == 0)
        return v * 1e3;
    if (strcmp(unit, "ms") == 0)
        return v * 1e6;
    if (strcmp(unit, "s") == 0)
        return v * 1e9;
    return v;
}

static double counter(const pkb_run *run, const char *name)
{
    for (size_t i = 0; i < run->counter_count; i++)
        if (strcmp(run->counters[i].name, name) == 0)
            return run->counters[i].value;
    return NAN;
}

json_t *pkb__gb_record(const pkb_run *run)
{
    json_t *o = json_pack("{s:s, s:I, s:I, s:s, s:s, s:I, s:I}", "name", run->name, "family_index",
                          (json_int_t)run->family_index, "per_family_instance_index",
                          (json_int_t)run->per_family_instance_index, "run_name", run->run_name,
                          "run_type", pkb_run_type_name(run->run_type), "repetitions",
                          (json_int_t)run->repetitions, "threads", (json_int_t)run->threads);
    if (run->run_type == PKB_RUN_ITERATION) {
        json_object_set_new(o, "repetition_index", json_integer(run->repetition_index));
    } else {
        json_object_set_new(o, "aggregate_name", json_string(run->aggregate_name));
        json_object_set_new(o, "aggregate_unit", json_string(run->aggregate_unit));
    }
    if (run->error_occurred) {
        json_object_set_new(o, "error_occurred", json_true());
        json_object_set_new(o, "error_message", json_string(run->error_message));
    }
    json_object_set_new(o, "iterations", json_integer(run->iterations));
    json_object_set_new(o, "real_time", json_real(run->real_time));
    json_object_set_new(o, "cpu_time", json_real(run->cpu_time));
    json_object_set_new(o, "time_unit", json_string(run->time_unit));
    if (run->label[0] != '\0')
        json_object_set_new(o, "label", json_string(run->label));
    for (size_t i = 0; i < run->counter_count; i++)
        json_object_set_new(o, run->counters[i].name, json_real(run->counters[i].value));
    return o;
}

static int grow_samples(pkb_series *s, size_t need)
{
    size_t n = need;
#define PKB__GROW(field)                                                                           \
    do {                                                                                           \
        void *p = realloc(s->field, n * sizeof *s->field);                                         \
        if (p == NULL)                                                                             \
            return -ENOMEM;                                                                        \
        s->field = p;                                                                              \
    } while (0)
    PKB__GROW(samples_ns);
    PKB__GROW(child_cpu_ns);
    PKB__GROW(parent_cpu_ns);
    PKB__GROW(iterations);
    PKB__GROW(procs_running);
#undef PKB__GROW
    return 0;
}

static json_t *series_json(const pkb_series *s, int cpus)
{
    json_t *o =
        json_pack("{s:s, s:s, s:s, s:s, s:b, s:s, s:s, s:f}", "name", s->name, "scenario",
                  s->scenario, "contender", s->contender, "description",
                  s->description ? s->description : "", "baseline", s->baseline, "status",
                  s->status == PKB_SERIES_MEASURED  ? "measured"
                  : s->status == PKB_SERIES_REFUSED ? "refused"
                                                    : "failed",
                  "unit", s->unit ? s->unit : "", "work_per_iteration", s->work_per_iteration);
    if (s->reason[0] != '\0')
        json_object_set_new(o, "reason", json_string(s->reason));
    json_t *samples = json_array(), *child = json_array(), *parent = json_array(),
           *iters = json_array(), *procs = json_array(), *noisy = json_array();
    for (size_t i = 0; i < s->nreps; i++) {
        json_array_append_new(samples, json_real(s->samples_ns[i]));
        json_array_append_new(child, json_real(s->child_cpu_ns[i]));
        json_array_append_new(parent, json_real(s->parent_cpu_ns[i]));
        json_array_append_new(iters, json_integer(s->iterations[i]));
        json_array_append_new(procs, json_integer(s->procs_running[i]));
        json_array_append_new(noisy, json_boolean(s->procs_running[i] > cpus));
    }
    json_object_set_new(o, "samples_ns", samples);
    json_object_set_new(o, "iterations", iters);
    json_object_set_new(o, "child_cpu_ns", child);
    json_object_set_new(o, "parent_cpu_ns", parent);
    json_object_set_new(o, "procs_running", procs);
    json_object_set_new(o, "noisy", noisy);
    if (s->nreps > 0) {
        pks_summary sum;
        if (pks_summarize(s->samples_ns, s->nreps, NULL, &sum) == 0)
            json_object_set_new(o, "summary",
                                json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f}", "n", (int)sum.n,
                                          "mean_ns", sum.mean, "sd_ns",
                                          isfinite(sum.sd) ? sum.sd : 0.0, "median_ns", sum.median,
                                          "min_ns", sum.min, "max_ns", sum.max, "cv",
                                          isfinite(sum.cv) ? sum.cv : 0.0));
    }
    if (s->extra != NULL)
        json_object_update(o, s->extra);
    return o;
}

/* Rebuilds series[] and benchmarks[] from the finished series and writes the file. */
int pkb__write_doc(struct pkb__collect *c)
{
    json_t *series = json_array(), *benchmarks = json_array();
    int cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (size_t i = 0; i < c->n; i++) {
        pkb_series *s = &c->series[i];
        if (!s->done)
            continue;
        json_array_append_new(series, series_json(s, cpus));
        if (s->gb_runs != NULL)
            json_array_extend(benchmarks, s->gb_runs);
    }
    json_object_set_new(c->doc, "series", series);
    json_object_set_new(c->doc, "benchmarks", benchmarks);
    int rc = pkb_write_json_atomic(c->doc, c->opts->out_path);
    if (rc != 0 && c->write_error == 0) {
        fprintf(stderr, "\npkbench: cannot write %s: %s\n", c->opts->out_path, strerror(-rc));
        c->write_error = rc;
    }
    return rc;
}

/* Appends one repetition's sample; returns its index, or -1 when out of memory. */
long pkb__append_sample(pkb_series *s, const pkb_run *run)
{
    if (grow_samples(s, s->nreps + 1) != 0)
        return -1;
    size_t k = s->nreps++;
    s->samples_ns[k] = to_ns(run->real_time, run->time_unit);
    s->child_cpu_ns[k] = counter(run, "child_cpu_ns");
    s->parent_cpu_ns[k] = counter(run, "parent_cpu_ns");
    s->iterations[k] = run->iterations;
    return (long)k;
}

static pkb_series *find_series(struct pkb__collect *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->series[i].name, name) == 0)
            return &c->series[i];
    return NULL;
}

void pkb__finish_series(struct pkb__collect *c, pkb_series *s)
{
    /* The last nreps calls of the benchmark function were the repetitions. */
    for (size_t i = 0; i < s->nreps; i++) {
        size_t call = s->ncalls >= s->nreps ? s->ncalls - s->nreps + i : 0;
        s->procs_running[i] = call < s->ncalls ? s->call_procs[call] : -1;
    }
    if (s->status == PKB_SERIES_PENDING)
        s->status = PKB_SERIES_MEASURED;
    s->done = true;
    pkb__write_doc(c);
}

int pkb__on_context(const pkb_context *ctx, void *user)
{
    struct pkb__collect *c = user;
    json_t *load = json_array(), *caches = json_array();
    for (size_t i = 0; i < ctx->load_avg_count; i++)
        json_array_append_new(load, json_real(ctx->load_avg[i]));
    for (size_t i = 0; i < ctx->cache_count; i++)
        json_array_append_new(caches, json_pack("{s:s, s:i, s:I, s:i}", "type", ctx->caches[i].type,
                                                "level", ctx->caches[i].level, "size",
                                                (json_int_t)ctx->caches[i].size, "num_sharing",
                                                ctx->caches[i].num_sharing));
    json_t *o = json_pack("{s:s, s:s, s:i, s:f, s:o, s:o, s:s}", "host_name", ctx->host_name,
                          "executable", ctx->executable, "num_cpus", ctx->num_cpus, "mhz_per_cpu",
                          ctx->mhz_per_cpu, "caches", caches, "load_avg", load,
                          "library_build_type", ctx->library_build_type);
    if (ctx->cpu_scaling != PKB_CPU_SCALING_UNKNOWN)
        json_object_set_new(o, "cpu_scaling_enabled",
                            json_boolean(ctx->cpu_scaling == PKB_CPU_SCALING_ENABLED));
    json_object_set_new(c->doc, "context", o);
    return 0;
}

int pkb__on_run(const pkb_run *run, void *user)
{
    struct pkb__collect *c = user;
    pkb_series *s = find_series(c, run->function_name);
    if (s == NULL || s->done)
        return pkb_interrupted ? 1 : 0;
    if (run->error_occurred && pkb_interrupted)
        return 1; /* an interrupted series is dropped, not recorded as failed */
    if (s->gb_runs == NULL)
        s->gb_runs = json_array();
    json_array_append_new(s->gb_runs, pkb__gb_record(run));
    if (run->run_type == PKB_RUN_ITERATION) {
        if (run->error_occurred) {
            if (s->status != PKB_SERIES_FAILED)
                snprintf(s->reason, sizeof s->reason, "%s", run->error_message);
            s->status = PKB_SERIES_FAILED;
        } else {
            pkb__append_sample(s, run);
        }
        /* A failed series reports no aggregates: it is finished at its last repetition. */
        if (run->repetition_index == run->repetitions - 1 &&
            (run->repetitions == 1 || s->status == PKB_SERIES_FAILED))
            pkb__finish_series(c, s);
    } else if (strcmp(run->aggregate_name, "cv") == 0) {
        pkb__finish_series(c, s);
    }
    return pkb_interrupted ? 1 : 0;
}

/* ---- the run ------------------------------------------------------------------------------- */

int pkb_run_series(pkb_series *series, size_t n, const pkb_suite_options *opts)
{
    const pkb_profile *prof = opts->profile;
    pkb__progress = (struct pkb__progress){
        .tty = isatty(2) == 1,
        .run_start = now_s(),
        .prof = prof,
        .per_series_s = prof->warmup_s + prof->repetitions * prof->min_time_s * 1.3 + 0.05,
    };
    char created[40];
    if (opts->created != NULL)
        snprintf(created, sizeof created, "%s", opts->created);
    else
        iso_time(created, sizeof created);
    json_t *command = json_array();
    for (int i = 0; i < opts->argc; i++)
        json_array_append_new(command, json_string(opts->argv[i]));
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string("pkbench-results"));
    json_object_set_new(doc, "schema_version", json_integer(1));
    json_object_set_new(doc, "suite", json_string(opts->suite));
    json_object_set_new(doc, "profile", json_string(prof->name));
    json_object_set_new(doc, "created", json_string(created));
    json_object_set_new(doc, "finished", json_null());
    json_object_set_new(doc, "complete", json_false());
    json_object_set_new(doc, "interrupted", json_false());
    json_object_set_new(doc, "command", command);
    json_object_set_new(doc, "filter", opts->filter ? json_string(opts->filter) : json_null());
    json_t *env = opts->environment != NULL ? json_incref(opts->environment) : pkb_env_capture();
    json_object_set(doc, "environment", env);
    json_object_set_new(doc, "settings",
                        json_pack("{s:i, s:f, s:f, s:f}", "repetitions", prof->repetitions,
                                  "min_time_s", prof->min_time_s, "warmup_s", prof->warmup_s,
                                  "priming_budget_s", prof->priming_budget_s));
    json_object_set_new(json_object_get(doc, "settings"), "cpu_affinity", cpu_affinity());
    bool rounds = opts->interleave || opts->aa; /* see "Rounds" above */
    if (rounds) {
        json_object_set_new(json_object_get(doc, "settings"), "interleave", json_true());
        json_object_set_new(json_object_get(doc, "settings"), "aa", json_boolean(opts->aa));
    }
    json_object_set_new(doc, "context", json_object());
    if (opts->suite_section != NULL)
        json_object_set(doc, opts->suite, opts->suite_section);

    struct pkb__collect c = {.series = series, .n = n, .doc = doc, .opts = opts};
    /* Refused series, and series a suite measured itself (forkathon), are recorded at once; the
     * rest is registered with Google Benchmark. */
    size_t timed = 0;
    pkb_clear();
    for (size_t i = 0; i < n; i++) {
        pkb_series *s = &series[i];
        if (s->status != PKB_SERIES_PENDING) {
            s->done = true;
            continue;
        }
        timed++;
        if (rounds)
            continue; /* registered round by round */
        int rc = pkb_register(&(pkb_def){.name = s->name,
                                         .fn = pkb__bench,
                                         .user = s,
                                         .time_mode = PKB_TIME_MANUAL,
                                         .unit = PKB_UNIT_NS,
                                         .repetitions = prof->repetitions,
                                         .min_warmup_time = prof->warmup_s,
                                         .min_time = prof->min_time_s});
        if (rc != 0) {
            fprintf(stderr, "pkbench: cannot register %s: %s\n", s->name, strerror(-rc));
            json_decref(env);
            json_decref(doc);
            return rc;
        }
    }
    pkb__progress.total = timed;
    pkb__write_doc(&c); /* the file exists from the start: refused series and the environment */

    json_object_set_new(doc, "priming", prime(prof, opts->prime && timed > 0));
    pkb__write_doc(&c);

    size_t matched = 0;
    int rc = timed == 0 ? 0
             : rounds   ? pkb__run_rounds(&c)
                        : pkb_run_benchmarks(&(pkb_run_options){.filter = "all",
                                                                .on_context = pkb__on_context,
                                                                .on_run = pkb__on_run,
                                                                .user = &c},
                                             &matched);
    if (pkb__progress.tty)
        fprintf(stderr, "\r\033[K");
    if (rc < 0 && !pkb_interrupted)
        fprintf(stderr, "pkbench: the benchmark run failed: %s\n", strerror(-rc));

    char finished[40];
    iso_time(finished, sizeof finished);
    pkb_env_finish(env);
    bool complete = !pkb_interrupted;
    for (size_t i = 0; i < n; i++)
        complete &= series[i].done;
    json_object_set_new(doc, "finished", json_string(finished));
    json_object_set_new(doc, "complete", json_boolean(complete));
    json_object_set_new(doc, "interrupted", json_boolean(pkb_interrupted != 0));
    pkb__write_doc(&c);
    json_decref(env);
    json_decref(doc);
    pkb_clear();
    if (c.write_error != 0)
        return c.write_error;
    if (pkb_interrupted)
        return 130;
    return rc < 0 ? rc : 0;
}

void pkb_series_free(pkb_series *s)
{
    free(s->samples_ns);
    free(s->child_cpu_ns);
    free(s->parent_cpu_ns);
    free(s->iterations);
    free(s->procs_running);
    free(s->call_procs);
    json_decref(s->gb_runs);
    json_decref(s->extra);
    memset(s, 0, sizeof *s);
}
