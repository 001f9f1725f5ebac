/*
 * pkb_shim — a small C API over Google Benchmark 1.7.1 (Debian's libbenchmark-dev).
 *
 * The harness is C17; Google Benchmark (GB) is C++. This header is the whole boundary: benchmark
 * functions receive an opaque pkb_state, registrations are option structs, and results come back
 * as plain C structs handed to a callback, one per run, carrying the field names of GB's JSON
 * reporter so the harness can write GB-compatible JSON itself.
 *
 * Conventions (as in processkit.h):
 *  - Every fallible function returns 0 or a negative errno value.
 *  - Option structs are meant for designated initializers; all-zero means the default.
 *  - The shim never keeps a caller's pointer past the call, except a definition's `user` pointer,
 *    which is handed back to its function on every call until pkb_clear().
 *  - No C++ exception ever crosses into C: each entry point catches everything and returns an
 *    error (-ENOMEM for std::bad_alloc, -EIO for anything else); an exception thrown by a
 *    benchmark function becomes an error run.
 *  - GB aborts the process on misuse (returning before the loop ends, pausing twice, ending the
 *    loop paused, Iterations together with MinTime/MinWarmUpTime...). The shim checks for each of
 *    these first and turns it into an error return or an error run instead.
 *  - Single-threaded: call everything from one thread. Benchmarks run on the calling thread.
 *
 * Typical use:
 *
 *     static void bm_spawn(pkb_state *st, void *user)
 *     {
 *         while (pkb_keep_running(st))
 *             spawn_and_wait(user);
 *         pkb_counter_set(st, "spawns_per_second", 1, PKB_COUNTER_ITERATION_INVARIANT_RATE);
 *     }
 *
 *     pkb_init(&argc, argv);
 *     pkb_register(&(pkb_def){.name = "spawn", .fn = bm_spawn, .user = &cfg, .repetitions = 5});
 *     pkb_run_benchmarks(&(pkb_run_options){.on_run = write_json_run, .user = &out}, NULL);
 */
#ifndef PKB_SHIM_H
#define PKB_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Inside a benchmark function
 * ------------------------------------------------------------------------------------------- */

/* The running benchmark: GB's State plus the shim's loop bookkeeping. Valid only during the call
 * of the benchmark function that received it. */
typedef struct pkb_state pkb_state;

/* Returns true while another iteration should run, false once the measurement is complete (or
 * after pkb_skip_with_error). The function must call it until it returns false; returning earlier
 * turns the run into an error run ("returned before pkb_keep_running() returned false") instead of
 * GB's abort. Called while timing is paused, it ends the run as an error run (GB would abort).
 * After it returned false it keeps returning false. */
bool pkb_keep_running(pkb_state *st);

/* Stops the timer, e.g. around per-iteration set-up; pkb_resume_timing starts it again. Only
 * inside the loop (after pkb_keep_running returned true). Both are costly (a clock read each);
 * keep them out of nanosecond loops.
 * Returns 0; -EINVAL outside the loop, when already paused (pause) or not paused (resume);
 * -ECANCELED after pkb_skip_with_error (nothing is done, and resume clears the paused mark so
 * the loop can end). */
int pkb_pause_timing(pkb_state *st);
int pkb_resume_timing(pkb_state *st);

/* Sets the time of the current iteration, for PKB_TIME_MANUAL benchmarks (ignored in the other
 * modes). Call it once per iteration; the run's time is the sum.
 * Returns 0, or -EINVAL when `seconds` is negative or not finite. */
int pkb_set_iteration_time(pkb_state *st, double seconds);

/* Counter flags: GB's Counter::Flags and OneK, or'ed. GB computes a counter's reported value once
 * per run from the value set, where `seconds` is the run's time in the benchmark's time mode
 * (real, manual or CPU) and `iterations` its iteration count. */
typedef enum pkb_counter_flag {
    /* value */
    PKB_COUNTER_PLAIN = 0,
    /* value / seconds (kIsRate) */
    PKB_COUNTER_RATE = 1 << 0,
    /* value / threads; threads is always 1 here (kAvgThreads) */
    PKB_COUNTER_AVG_THREADS = 1 << 1,
    /* value * iterations (kIsIterationInvariant) */
    PKB_COUNTER_ITERATION_INVARIANT = 1 << 2,
    /* value * iterations / seconds; with value 1, iterations per second
     * (kIsIterationInvariantRate) */
    PKB_COUNTER_ITERATION_INVARIANT_RATE = PKB_COUNTER_RATE | PKB_COUNTER_ITERATION_INVARIANT,
    /* value / iterations (kAvgIterations) */
    PKB_COUNTER_AVG_ITERATIONS = 1 << 3,
    /* value / iterations / seconds (kAvgIterationsRate) */
    PKB_COUNTER_AVG_ITERATIONS_RATE = PKB_COUNTER_RATE | PKB_COUNTER_AVG_ITERATIONS,
    /* 1 / the result, applied last (kInvert) */
    PKB_COUNTER_INVERT = 1 << 4,
    /* "k" means 1024 in GB's console display (kIs1024); the value itself is unchanged */
    PKB_COUNTER_1024 = 1 << 5,
} pkb_counter_flag;

/* Sets (or replaces) the counter `name` to `value` with `flags` (pkb_counter_flag values or'ed).
 * Counters become top-level keys in GB's JSON, so a name must not be one of its field names
 * ("name", "iterations", "real_time", ...). `name` is copied.
 * Returns 0; -EINVAL for a NULL/empty name or an unknown flag bit; -ENOMEM. */
int pkb_counter_set(pkb_state *st, const char *name, double value, unsigned flags);

/* Sets the run's label (GB's report_label, JSON "label"); the last call wins. Copied.
 * Returns 0; -EINVAL when `label` is NULL; -ENOMEM. */
int pkb_set_label(pkb_state *st, const char *label);

/* Marks the run as failed with `message` (copied; the first message wins). The current iteration
 * finishes, then pkb_keep_running returns false; called before the loop, the loop never runs.
 * The run is reported with error_occurred and no aggregates are computed from it.
 * Returns 0; -EINVAL when `message` is NULL; -ENOMEM. */
int pkb_skip_with_error(pkb_state *st, const char *message);

/* Iterations completed so far in this call (0 before the loop), and the number this call will
 * run (GB's max_iterations; it grows between calls until the minimum time is reached). */
int64_t pkb_iterations(const pkb_state *st);
int64_t pkb_max_iterations(const pkb_state *st);

/* The definition's `user` pointer (also passed to the function directly). */
void *pkb_user(const pkb_state *st);

/* ---------------------------------------------------------------------------------------------
 * Registering benchmarks
 * ------------------------------------------------------------------------------------------- */

typedef void pkb_fn(pkb_state *st, void *user);

/* Which time decides when a repetition has run long enough (min_time) and divides rate counters.
 * A run's real_time is wall-clock time (the manual time with PKB_TIME_MANUAL); its cpu_time is
 * always CPU time, of this thread (of the process with process_cpu). GB's own default is CPU time,
 * which counts neither waiting nor children: spawn benchmarks must never use it, so the zero
 * default here is real time. */
typedef enum pkb_time_mode {
    PKB_TIME_REAL = 0, /* wall clock (UseRealTime); run names end in "/real_time" */
    PKB_TIME_MANUAL,   /* pkb_set_iteration_time (UseManualTime); "/manual_time" */
    PKB_TIME_CPU,      /* CPU time (GB's default; children excluded) */
} pkb_time_mode;

typedef enum pkb_time_unit {
    PKB_UNIT_DEFAULT = 0, /* GB's default: ns, or --benchmark_time_unit given to pkb_init */
    PKB_UNIT_NS,
    PKB_UNIT_US,
    PKB_UNIT_MS,
    PKB_UNIT_S,
} pkb_time_unit;

typedef struct pkb_def {
    const char *name; /* required; copied. GB appends the options to form the run name:
                         "spawn/min_time:0.010/repeats:5/real_time" */
    pkb_fn *fn;       /* required */
    void *user;       /* handed to fn on every call; the caller keeps it alive until pkb_clear */
    pkb_time_mode time_mode;
    pkb_time_unit unit;     /* the unit of real_time/cpu_time in the runs */
    int repetitions;        /* 0: GB's --benchmark_repetitions (1). With 2 or more, each benchmark
                               also yields mean, median, stddev and cv aggregate runs */
    double min_warmup_time; /* seconds run and discarded before the first repetition (GB's
                               MinWarmUpTime); 0: --benchmark_min_warmup_time (none) */
    double min_time;        /* seconds each repetition runs at least; 0: --benchmark_min_time
                               (0.5 s) */
    int64_t iterations;     /* > 0: exactly this many iterations per repetition, no time-based
                               growth; excludes min_time and min_warmup_time (GB aborts on the
                               combination; the shim returns -EINVAL) */
    bool process_cpu;       /* cpu_time counts every thread of the process (MeasureProcessCPUTime;
                               "/process_time"), still never children */
} pkb_def;

/* Registers a benchmark; the definition is copied (except `user`, see above). Registration order
 * is run order. Call pkb_init first when passing GB flags that change defaults (e.g.
 * --benchmark_time_unit), since a registration captures them.
 * Returns 0; -EINVAL for a NULL def, a NULL/empty name, a NULL fn, a negative or non-finite
 * number, an unknown time mode or unit, or iterations combined with min_time/min_warmup_time;
 * -EBUSY while pkb_run_benchmarks is running; -ENOMEM. */
int pkb_register(const pkb_def *def);

/* Removes every registered benchmark (GB's ClearRegisteredBenchmarks), so a process can register
 * and run several suites one after another.
 * Returns 0, or -EBUSY while pkb_run_benchmarks is running. */
int pkb_clear(void);

/* ---------------------------------------------------------------------------------------------
 * Initializing and running
 * ------------------------------------------------------------------------------------------- */

/* Initializes GB once per process. With argv, GB parses and removes its own --benchmark_* flags
 * from argc/argv, leaving the rest in order; argc/argv may be NULL for none. GB also reads
 * BENCHMARK_* environment variables (BENCHMARK_FILTER, ...) as flag defaults. The flags apply
 * where a pkb_def field is zero (--benchmark_repetitions, --benchmark_min_time, ...), and since
 * the shim's reporter is GB's display reporter, --benchmark_display_aggregates_only and
 * --benchmark_report_aggregates_only also limit what on_run receives.
 * GB itself would exit(0) the process on --help or an invalid --benchmark_format,
 * --benchmark_out_format, --benchmark_time_unit or empty --benchmark_color (from argv or the
 * environment); pkb_init rejects those with -EINVAL before GB sees them, leaving argv untouched.
 * Only the first successful call initializes; later calls return 0 and leave argv untouched.
 * pkb_run_benchmarks calls pkb_init(NULL, NULL) itself when nobody did.
 * Returns 0; -EINVAL (see above, or argc without argv); -EBUSY while pkb_run_benchmarks is running;
 * -ENOMEM. */
int pkb_init(int *argc, char **argv);

typedef enum pkb_run_type {
    PKB_RUN_ITERATION = 0, /* one repetition's measurement */
    PKB_RUN_AGGREGATE,     /* a statistic over the repetitions */
} pkb_run_type;

/* "iteration" or "aggregate", as in GB's JSON. Static. */
const char *pkb_run_type_name(pkb_run_type type);

typedef struct pkb_counter {
    const char *name;
    double value; /* final: the flags are already applied */
} pkb_counter;

/* One run, named as in GB's JSON reporter. Every pointer, string and array lives only during the
 * on_run call; copy what you keep. Strings are never NULL ("" when absent). */
typedef struct pkb_run {
    const char *name;          /* run_name, plus "_<aggregate_name>" for aggregates */
    const char *run_name;      /* registered name plus GB's option suffixes */
    const char *function_name; /* the registered name alone (not in GB's JSON) */
    int64_t family_index;      /* among the benchmarks this pkb_run_benchmarks call matched */
    int64_t per_family_instance_index;
    pkb_run_type run_type;
    const char *aggregate_name; /* "mean", "median", "stddev", "cv"; "" for iterations */
    const char *aggregate_unit; /* "time", or "percentage" for cv (real_time/cpu_time then hold
                                   the fraction, e.g. 0.02 for 2%); "" for iterations */
    int64_t repetitions;
    int64_t repetition_index; /* 0-based; -1 for aggregates (GB's JSON omits it there) */
    int64_t threads;
    int64_t iterations; /* for aggregates: the number of repetitions aggregated */
    double real_time;   /* per iteration, in time_unit (see aggregate_unit for cv) */
    double cpu_time;
    const char *time_unit; /* "ns", "us", "ms", "s" */
    const char *label;
    bool error_occurred;
    const char *error_message;
    const pkb_counter *counters; /* sorted by name; GB's JSON writes them as top-level keys */
    size_t counter_count;
} pkb_run;

typedef enum pkb_cpu_scaling {
    PKB_CPU_SCALING_UNKNOWN = 0, /* GB's JSON omits cpu_scaling_enabled */
    PKB_CPU_SCALING_ENABLED,
    PKB_CPU_SCALING_DISABLED,
} pkb_cpu_scaling;

typedef struct pkb_cache {
    const char *type; /* "Data", "Instruction", "Unified" */
    int level;
    int64_t size; /* bytes */
    int num_sharing;
} pkb_cache;

/* The machine context GB reports once per pkb_run_benchmarks call (its JSON "context" object).
 * Lives only during the on_context call. */
typedef struct pkb_context {
    const char *host_name;
    const char *executable; /* argv[0] given to pkb_init, else the program's invocation name */
    int num_cpus;
    double mhz_per_cpu; /* unrounded; GB's JSON writes it rounded to an integer */
    pkb_cpu_scaling cpu_scaling;
    const double *load_avg; /* 1, 5 and 15 minutes on Linux */
    size_t load_avg_count;
    const pkb_cache *caches;
    size_t cache_count;
    const char *library_build_type; /* how libbenchmark itself was built: "release", "debug" */
} pkb_context;

/* Callbacks return 0 to go on, or a negative errno to stop: pkb_run_benchmarks then runs no further
 * benchmark function (GB still walks the remaining ones, each skipped at once), delivers no
 * further run, and returns that value (a positive one becomes -ECANCELED). */
typedef int pkb_context_fn(const pkb_context *ctx, void *user);
typedef int pkb_run_fn(const pkb_run *run, void *user);

/* The context GB would report, captured now without running anything (for a results file whose
 * series were measured outside GB), handed to fn once. Calls pkb_init(NULL, NULL) when nobody
 * did. Returns fn's return (a positive one becomes -ECANCELED), pkb_init's errors, -EINVAL for a
 * NULL fn, -ENOMEM. */
int pkb_context_capture(pkb_context_fn *fn, void *user);

typedef struct pkb_run_options {
    /* An extended regular expression (std::regex, as GB) searched for in each full run name, so
     * "^spawn/" selects the family "spawn". A leading '-' negates it (GB). NULL: GB's
     * --benchmark_filter (every benchmark by default); "" or "all": every benchmark. */
    const char *filter;
    pkb_context_fn *on_context; /* called once, before the first benchmark; may be NULL */
    pkb_run_fn *on_run;         /* called per run: a benchmark's repetitions in order, then its
                                   aggregates; may be NULL */
    void *user;                 /* passed to both callbacks */
    bool console;               /* also print GB's console table to stdout (off: silent) */
} pkb_run_options;

/* Runs the registered benchmarks that match the filter, in registration order, delivering every
 * run to opts->on_run. GB's own display reporter is replaced, so nothing is printed unless
 * opts->console is set (or --benchmark_out / --benchmark_list_tests were given to pkb_init).
 * `opts` may be NULL (all benchmarks, no callbacks). `*matched` (may be NULL) receives the number
 * of benchmarks the filter selected; none matching is not an error.
 * Returns 0; -EINVAL for an invalid filter; -EBUSY when called from inside a benchmark; a
 * callback's error (see pkb_context_fn); pkb_init's errors; -ENOMEM; -EIO for an unexpected C++
 * exception inside GB. */
int pkb_run_benchmarks(const pkb_run_options *opts, size_t *matched);

#ifdef __cplusplus
}
#endif

#endif /* PKB_SHIM_H */
