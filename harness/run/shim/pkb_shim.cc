/*
 * pkb_shim.cc — the C API of pkb_shim.h over Google Benchmark (GB) 1.7.1.
 *
 * Registration wraps each C function in a lambda that captures the function and its user pointer
 * (1.7.1's Setup/Teardown take no closure, but RegisterBenchmark takes any callable). The lambda
 * puts a pkb_state on its stack, calls the C function, and afterwards checks what GB would
 * otherwise abort on. Running passes a BenchmarkReporter subclass as GB's display reporter: it
 * converts each Run into a pkb_run and calls the C callback, and optionally forwards to GB's
 * ConsoleReporter.
 *
 * GB 1.7.1 enforces its contracts with BM_CHECK, which aborts the process: returning from the
 * benchmark before KeepRunning() returned false, PauseTiming twice, ending the loop paused,
 * PauseTiming/ResumeTiming after SkipWithError, KeepRunning after it returned false, MinTime(0),
 * Iterations with MinWarmUpTime. Its flag parser exits the process on --help and on invalid
 * enumerated flag values. Each of those is checked here first and becomes an error instead.
 *
 * No exception leaves this file: every extern "C" function catches everything, and the
 * benchmark path turns an exception into SkipWithError, so none unwinds through GB's frames.
 */
#include "run/shim/pkb_shim.h"

#include <benchmark/benchmark.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <memory>
#include <new>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

using benchmark::BenchmarkReporter;
using benchmark::Counter;

struct pkb_state {
    benchmark::State *gb;
    void *user;
    bool in_loop;  /* pkb_keep_running returned true and has not yet returned false */
    bool finished; /* pkb_keep_running returned false */
    bool paused;   /* pkb_pause_timing without a matching resume */
};

namespace
{

/* The pkb_run_benchmarks call in progress. stop_error is the first callback error (or internal
 * failure); once it is set, benchmark functions are no longer called and runs are no longer
 * delivered. */
struct Session {
    int stop_error = 0;
};

Session *g_session = nullptr;
bool g_initialized = false;
/* GB keeps the argv[0] pointer it was given; this copy outlives the caller's argv. */
std::string g_executable;

/* Call only inside a catch block. */
int error_from_exception() noexcept
{
    try {
        throw;
    } catch (const std::bad_alloc &) {
        return -ENOMEM;
    } catch (...) {
        return -EIO;
    }
}

/* Runs f the C API's way: 0, or the negative errno of what it threw. */
template <typename F> int guarded(F &&f) noexcept
{
    try {
        f();
        return 0;
    } catch (...) {
        return error_from_exception();
    }
}

void stop(Session &s, int rc) noexcept
{
    if (s.stop_error == 0)
        s.stop_error = rc < 0 ? rc : -ECANCELED;
}

bool stopped() noexcept
{
    return g_session != nullptr && g_session->stop_error != 0;
}

/* SkipWithError copies the message into a std::string, which could throw. */
void skip(benchmark::State &gb, const char *message) noexcept
{
    try {
        gb.SkipWithError(message);
    } catch (...) {
    }
}

void skip_after_throw(benchmark::State &gb, const char *what) noexcept
{
    if (gb.error_occurred())
        return;
    try {
        skip(gb, ("benchmark function threw: " + std::string(what)).c_str());
    } catch (...) {
        skip(gb, "benchmark function threw an exception");
    }
}

/* The body of every registered benchmark. */
void run_benchmark(benchmark::State &gb, pkb_fn *fn, void *user) noexcept
{
    if (stopped()) {
        skip(gb, "pkb: the run was stopped by a callback");
        return;
    }
    pkb_state st = {&gb, user, false, false, false};
    try {
        fn(&st, user);
    } catch (const std::exception &e) {
        skip_after_throw(gb, e.what());
    } catch (...) {
        skip_after_throw(gb, "an exception not derived from std::exception");
    }
    /* GB would abort ("Benchmark returned before State::KeepRunning() returned false!"). */
    if (!gb.error_occurred() && !st.finished)
        skip(gb, "benchmark function returned before pkb_keep_running() returned false");
}

/* A C caller may store any int in an enum field, but in C++ loading a value outside the enum's
 * range is undefined (UBSan's enum check): read C-supplied enums as their bytes. */
template <class E> int enum_value(const E &e)
{
    static_assert(sizeof(E) == sizeof(int), "C enums are int-sized");
    int v;
    std::memcpy(&v, &e, sizeof v);
    return v;
}

bool is_finite_nonnegative(double v)
{
    return std::isfinite(v) && v >= 0;
}

int check_def(const pkb_def *def)
{
    if (def == nullptr || def->name == nullptr || def->name[0] == '\0' || def->fn == nullptr)
        return -EINVAL;
    int mode = enum_value(def->time_mode), unit = enum_value(def->unit);
    if (mode < PKB_TIME_REAL || mode > PKB_TIME_CPU || unit < PKB_UNIT_DEFAULT || unit > PKB_UNIT_S)
        return -EINVAL;
    if (def->repetitions < 0 || def->iterations < 0)
        return -EINVAL;
    if (!is_finite_nonnegative(def->min_time) || !is_finite_nonnegative(def->min_warmup_time))
        return -EINVAL;
    if (def->iterations > 0 && (def->min_time > 0 || def->min_warmup_time > 0))
        return -EINVAL;
    return 0;
}

benchmark::TimeUnit gb_unit(int unit)
{
    switch (unit) {
    case PKB_UNIT_US:
        return benchmark::kMicrosecond;
    case PKB_UNIT_MS:
        return benchmark::kMillisecond;
    case PKB_UNIT_S:
        return benchmark::kSecond;
    default:
        return benchmark::kNanosecond;
    }
}

/* ---- flags GB would exit on ---------------------------------------------------------------- */

/* GB's syntax is "--name" or "--name=value", one leading "--" only. Returns what follows the
 * name (either "" or "=value"), or nullptr when `arg` is not this flag. */
const char *after_flag(const char *arg, const char *name)
{
    size_t n = std::strlen(name);
    if (arg == nullptr || std::strncmp(arg, "--", 2) != 0 || std::strncmp(arg + 2, name, n) != 0)
        return nullptr;
    const char *rest = arg + 2 + n;
    return *rest == '\0' || *rest == '=' ? rest : nullptr;
}

/* The value GB will end up with: the last "--name=value" in argv, else the environment variable
 * GB reads it from, else nullptr (GB's default, always valid). */
const char *effective_value(int argc, char **argv, const char *name, const char *env)
{
    const char *v = nullptr;
    for (int i = 1; i < argc; i++) {
        const char *rest = after_flag(argv[i], name);
        if (rest != nullptr && *rest == '=')
            v = rest + 1;
    }
    return v != nullptr ? v : std::getenv(env);
}

bool one_of(const char *v, std::initializer_list<const char *> valid)
{
    for (const char *ok : valid)
        if (std::strcmp(v, ok) == 0)
            return true;
    return false;
}

/* True when GB 1.7.1's flag parser would print its usage and exit(0): --help, or an invalid
 * value of one of these flags, from argv or the environment. */
bool gb_would_exit(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (after_flag(argv[i], "help") != nullptr)
            return true;
    const char *format = effective_value(argc, argv, "benchmark_format", "BENCHMARK_FORMAT");
    const char *out_format =
        effective_value(argc, argv, "benchmark_out_format", "BENCHMARK_OUT_FORMAT");
    const char *unit = effective_value(argc, argv, "benchmark_time_unit", "BENCHMARK_TIME_UNIT");
    const char *color = effective_value(argc, argv, "benchmark_color", "BENCHMARK_COLOR");
    for (const char *f : {format, out_format})
        if (f != nullptr && !one_of(f, {"console", "json", "csv"}))
            return true;
    if (unit != nullptr && !one_of(unit, {"", "ns", "us", "ms", "s"}))
        return true;
    return color != nullptr && color[0] == '\0';
}

/* GB compiles the filter with std::regex(extended) after stripping one leading '-' (negation);
 * an invalid one only prints a message and matches nothing, so check it here first. */
int check_filter(const char *filter)
{
    const char *re = filter[0] == '-' ? filter + 1 : filter;
    try {
        std::regex compiled(re, std::regex::extended);
        (void)compiled;
        return 0;
    } catch (const std::regex_error &) {
        return -EINVAL;
    }
}

/* ---- the reporter -------------------------------------------------------------------------- */

/* How libbenchmark itself was compiled is known only inside it: its JSON reporter prints it. */
const std::string &library_build_type(const BenchmarkReporter::Context &ctx)
{
    static std::string type;
    if (type.empty()) {
        benchmark::JSONReporter json;
        std::ostringstream out;
        json.SetOutputStream(&out);
        json.SetErrorStream(&out);
        json.ReportContext(ctx);
        const std::string text = out.str(), key = "\"library_build_type\": \"";
        size_t at = text.find(key), end = std::string::npos;
        if (at != std::string::npos)
            end = text.find('"', at += key.size());
        type = end != std::string::npos ? text.substr(at, end - at) : "unknown";
    }
    return type;
}

pkb_cpu_scaling scaling(benchmark::CPUInfo::Scaling s)
{
    switch (s) {
    case benchmark::CPUInfo::ENABLED:
        return PKB_CPU_SCALING_ENABLED;
    case benchmark::CPUInfo::DISABLED:
        return PKB_CPU_SCALING_DISABLED;
    default:
        return PKB_CPU_SCALING_UNKNOWN;
    }
}

/* A context as the C struct, handed to fn. */
int deliver(const BenchmarkReporter::Context &ctx, pkb_context_fn *fn, void *user)
{
    const benchmark::CPUInfo &cpu = ctx.cpu_info;
    std::vector<pkb_cache> caches;
    caches.reserve(cpu.caches.size());
    for (const benchmark::CPUInfo::CacheInfo &c : cpu.caches)
        caches.push_back({c.type.c_str(), c.level, c.size, c.num_sharing});
    pkb_context c = {};
    c.host_name = ctx.sys_info.name.c_str();
    c.executable = BenchmarkReporter::Context::executable_name != nullptr
                       ? BenchmarkReporter::Context::executable_name
                       : "";
    c.num_cpus = cpu.num_cpus;
    c.mhz_per_cpu = cpu.cycles_per_second / 1e6;
    c.cpu_scaling = scaling(cpu.scaling);
    c.load_avg = cpu.load_avg.data();
    c.load_avg_count = cpu.load_avg.size();
    c.caches = caches.data();
    c.cache_count = caches.size();
    c.library_build_type = library_build_type(ctx).c_str();
    return fn(&c, user);
}

/* One run of GB's as a pkb_run, to fn: what it returns. */
int deliver(const BenchmarkReporter::Run &run, pkb_run_fn *fn, void *user)
{
    const std::string name = run.benchmark_name(), run_name = run.run_name.str();
    std::vector<pkb_counter> counters;
    counters.reserve(run.counters.size());
    for (const auto &kv : run.counters)
        counters.push_back({kv.first.c_str(), kv.second.value});

    const bool aggregate = run.run_type == BenchmarkReporter::Run::RT_Aggregate;
    /* As GB's JSON reporter: cv is a fraction, not a time, and is not divided by the
     * iterations (for aggregates, the number of repetitions). */
    const bool percentage = aggregate && run.aggregate_unit == benchmark::kPercentage;
    pkb_run r = {};
    r.name = name.c_str();
    r.run_name = run_name.c_str();
    r.function_name = run.run_name.function_name.c_str();
    r.family_index = run.family_index;
    r.per_family_instance_index = run.per_family_instance_index;
    r.run_type = aggregate ? PKB_RUN_AGGREGATE : PKB_RUN_ITERATION;
    r.aggregate_name = aggregate ? run.aggregate_name.c_str() : "";
    r.aggregate_unit = !aggregate ? "" : percentage ? "percentage" : "time";
    r.repetitions = run.repetitions;
    r.repetition_index = aggregate ? -1 : run.repetition_index;
    r.threads = run.threads;
    r.iterations = run.iterations;
    r.real_time = percentage ? run.real_accumulated_time : run.GetAdjustedRealTime();
    r.cpu_time = percentage ? run.cpu_accumulated_time : run.GetAdjustedCPUTime();
    r.time_unit = benchmark::GetTimeUnitString(run.time_unit);
    r.label = run.report_label.c_str();
    r.error_occurred = run.error_occurred;
    r.error_message = run.error_message.c_str();
    r.counters = counters.data();
    r.counter_count = counters.size();
    return fn(&r, user);
}

class Reporter final : public BenchmarkReporter
{
  public:
    Reporter(const pkb_run_options &opts, Session &session) : opts_(opts), session_(session)
    {
        /* GB's own messages ("Failed to match any benchmarks...") stay out of the terminal. */
        SetErrorStream(&quiet_);
        if (opts.console) {
            int o = benchmark::ConsoleReporter::OO_Tabular;
            if (isatty(STDOUT_FILENO))
                o |= benchmark::ConsoleReporter::OO_Color;
            console_.reset(
                new benchmark::ConsoleReporter(benchmark::ConsoleReporter::OutputOptions(o)));
        }
    }

    bool ReportContext(const Context &ctx) override
    {
        try {
            if (session_.stop_error != 0)
                return false;
            if (opts_.on_context != nullptr) {
                int rc = deliver_context(ctx);
                if (rc != 0) {
                    stop(session_, rc);
                    return false;
                }
            }
            return console_ == nullptr || console_->ReportContext(ctx);
        } catch (...) {
            stop(session_, error_from_exception());
            return false;
        }
    }

    void ReportRuns(const std::vector<Run> &runs) override
    {
        try {
            if (session_.stop_error != 0)
                return;
            if (console_ != nullptr)
                console_->ReportRuns(runs);
            for (const Run &run : runs) {
                int rc = opts_.on_run != nullptr ? deliver_run(run) : 0;
                if (rc != 0) {
                    stop(session_, rc);
                    return;
                }
            }
        } catch (...) {
            stop(session_, error_from_exception());
        }
    }

    void Finalize() override
    {
        try {
            if (console_ != nullptr)
                console_->Finalize();
        } catch (...) {
            stop(session_, error_from_exception());
        }
    }

  private:
    int deliver_context(const Context &ctx)
    {
        return deliver(ctx, opts_.on_context, opts_.user);
    }

    int deliver_run(const Run &run)
    {
        return deliver(run, opts_.on_run, opts_.user);
    }

    const pkb_run_options &opts_;
    Session &session_;
    std::ostringstream quiet_;
    std::unique_ptr<benchmark::ConsoleReporter> console_;
};

} // namespace

/* ---- inside a benchmark function ------------------------------------------------------------ */

bool pkb_keep_running(pkb_state *st)
{
    if (st == nullptr || st->finished)
        return false; /* GB aborts on KeepRunning after it returned false */
    try {
        if (st->paused) {
            /* Ending the loop with the timer stopped aborts in GB; make it an error run. */
            if (!st->gb->error_occurred())
                skip(*st->gb, "pkb_keep_running() called while timing was paused");
            st->paused = false;
        }
        bool more = st->gb->KeepRunning();
        st->in_loop = more;
        st->finished = !more;
        return more;
    } catch (...) {
        skip(*st->gb, "pkb_keep_running() failed inside Google Benchmark");
        st->in_loop = false;
        st->finished = true;
        return false;
    }
}

int pkb_pause_timing(pkb_state *st)
{
    if (st == nullptr || !st->in_loop || st->paused)
        return -EINVAL;
    if (st->gb->error_occurred())
        return -ECANCELED;
    return guarded([st] {
        st->gb->PauseTiming();
        st->paused = true;
    });
}

int pkb_resume_timing(pkb_state *st)
{
    if (st == nullptr || !st->in_loop || !st->paused)
        return -EINVAL;
    st->paused = false;
    if (st->gb->error_occurred())
        return -ECANCELED;
    return guarded([st] { st->gb->ResumeTiming(); });
}

int pkb_set_iteration_time(pkb_state *st, double seconds)
{
    if (st == nullptr || !is_finite_nonnegative(seconds))
        return -EINVAL;
    return guarded([st, seconds] { st->gb->SetIterationTime(seconds); });
}

/* The low four flag bits are GB's own. */
static_assert(int(PKB_COUNTER_RATE) == int(Counter::kIsRate), "flag values");
static_assert(int(PKB_COUNTER_AVG_THREADS) == int(Counter::kAvgThreads), "flag values");
static_assert(int(PKB_COUNTER_ITERATION_INVARIANT) == int(Counter::kIsIterationInvariant),
              "flag values");
static_assert(int(PKB_COUNTER_AVG_ITERATIONS) == int(Counter::kAvgIterations), "flag values");

int pkb_counter_set(pkb_state *st, const char *name, double value, unsigned flags)
{
    const unsigned gb_bits = PKB_COUNTER_RATE | PKB_COUNTER_AVG_THREADS |
                             PKB_COUNTER_ITERATION_INVARIANT | PKB_COUNTER_AVG_ITERATIONS;
    if (st == nullptr || name == nullptr || name[0] == '\0' ||
        (flags & ~(gb_bits | PKB_COUNTER_INVERT | PKB_COUNTER_1024)) != 0)
        return -EINVAL;
    Counter::Flags f = Counter::Flags(flags & gb_bits);
    if (flags & PKB_COUNTER_INVERT)
        f = f | Counter::kInvert;
    Counter::OneK k = (flags & PKB_COUNTER_1024) ? Counter::kIs1024 : Counter::kIs1000;
    return guarded([st, name, value, f, k] { st->gb->counters[name] = Counter(value, f, k); });
}

int pkb_set_label(pkb_state *st, const char *label)
{
    if (st == nullptr || label == nullptr)
        return -EINVAL;
    return guarded([st, label] { st->gb->SetLabel(label); });
}

int pkb_skip_with_error(pkb_state *st, const char *message)
{
    if (st == nullptr || message == nullptr)
        return -EINVAL;
    return guarded([st, message] { st->gb->SkipWithError(message); });
}

int64_t pkb_iterations(const pkb_state *st)
{
    return st != nullptr ? st->gb->iterations() : 0;
}

int64_t pkb_max_iterations(const pkb_state *st)
{
    return st != nullptr ? st->gb->max_iterations : 0;
}

void *pkb_user(const pkb_state *st)
{
    return st != nullptr ? st->user : nullptr;
}

/* ---- registering ---------------------------------------------------------------------------- */

int pkb_register(const pkb_def *def)
{
    if (g_session != nullptr)
        return -EBUSY;
    int rc = check_def(def);
    if (rc != 0)
        return rc;
    try {
        pkb_fn *fn = def->fn;
        void *user = def->user;
        benchmark::internal::Benchmark *b = benchmark::RegisterBenchmark(
            def->name, [fn, user](benchmark::State &gb) { run_benchmark(gb, fn, user); });
        int mode = enum_value(def->time_mode), unit = enum_value(def->unit);
        if (mode == PKB_TIME_REAL)
            b->UseRealTime();
        else if (mode == PKB_TIME_MANUAL)
            b->UseManualTime();
        if (def->process_cpu)
            b->MeasureProcessCPUTime();
        if (unit != PKB_UNIT_DEFAULT)
            b->Unit(gb_unit(unit));
        /* Zero means "GB's flag": the setters CHECK-fail on zero, and each call also adds a
         * suffix to the run name. */
        if (def->repetitions > 0)
            b->Repetitions(def->repetitions);
        if (def->min_warmup_time > 0)
            b->MinWarmUpTime(def->min_warmup_time);
        if (def->min_time > 0)
            b->MinTime(def->min_time);
        if (def->iterations > 0)
            b->Iterations(def->iterations);
        return 0;
    } catch (...) {
        return error_from_exception();
    }
}

int pkb_clear(void)
{
    if (g_session != nullptr)
        return -EBUSY;
    return guarded([] { benchmark::ClearRegisteredBenchmarks(); });
}

/* ---- initializing and running ---------------------------------------------------------------- */

int pkb_init(int *argc, char **argv)
{
    if (g_session != nullptr)
        return -EBUSY;
    if (g_initialized)
        return 0;
    if ((argc == nullptr) != (argv == nullptr) || (argc != nullptr && *argc < 0))
        return -EINVAL;
    try {
        int n = argc != nullptr ? *argc : 0;
        if (gb_would_exit(n, argv))
            return -EINVAL;
        g_executable = n > 0 && argv[0] != nullptr ? argv[0] : program_invocation_name;
        if (n > 0) {
            benchmark::Initialize(argc, argv);
        } else {
            int one = 1;
            char *none[] = {g_executable.data(), nullptr};
            benchmark::Initialize(&one, none);
        }
        BenchmarkReporter::Context::executable_name = g_executable.c_str();
        g_initialized = true;
        return 0;
    } catch (...) {
        return error_from_exception();
    }
}

const char *pkb_run_type_name(pkb_run_type type)
{
    return enum_value(type) == PKB_RUN_AGGREGATE ? "aggregate" : "iteration";
}

int pkb_run_benchmarks(const pkb_run_options *opts, size_t *matched)
{
    if (matched != nullptr)
        *matched = 0;
    if (g_session != nullptr)
        return -EBUSY;
    const pkb_run_options none = {};
    const pkb_run_options &o = opts != nullptr ? *opts : none;
    int rc = pkb_init(nullptr, nullptr);
    if (rc != 0)
        return rc;
    if (o.filter != nullptr && (rc = check_filter(o.filter)) != 0)
        return rc;
    Session session;
    try {
        Reporter reporter(o, session);
        g_session = &session;
        size_t n = o.filter != nullptr ? benchmark::RunSpecifiedBenchmarks(&reporter, o.filter)
                                       : benchmark::RunSpecifiedBenchmarks(&reporter);
        g_session = nullptr;
        if (matched != nullptr)
            *matched = n;
        return session.stop_error;
    } catch (...) {
        g_session = nullptr;
        return error_from_exception();
    }
}

int pkb_context_capture(pkb_context_fn *fn, void *user)
{
    if (fn == nullptr)
        return -EINVAL;
    int rc = pkb_init(nullptr, nullptr);
    if (rc != 0)
        return rc;
    try {
        BenchmarkReporter::Context ctx;
        rc = deliver(ctx, fn, user);
        return rc > 0 ? -ECANCELED : rc;
    } catch (...) {
        return error_from_exception();
    }
}
