/*
 * `pkbench compare` and `pkbench check`: the command line over compare.h.
 *
 * compare reads files only. check measures: it runs `pkbench run` (this very executable, as a
 * child process, so every suite `run` knows works here unchanged, and the run sees exactly the
 * environment a direct run would: no extra cgroup, the same PKBENCH_TINY; its rounds spread a
 * neighbour's burst over every series; --sequential opts out), compares the new file with the
 * baseline, and before it reports a regression re-runs only the series that regressed (a filter
 * built from their names) and compares again. A regression is reported only when it repeats: two
 * independent runs must both show it, so noise has to strike twice (≈ p² instead of p). The
 * re-run's comparison corrects for the re-run series only. Both new results files are kept and
 * named on stderr. A series the baseline measured that the run lacks or failed is not re-run: it
 * fails the check (exit 2) as it is. When the first comparison was drift-corrected, the re-run
 * also measures the control series, so its comparison is corrected for its own drift.
 * (PKBENCH_CHECK_RUNNER names a program to start instead of this pkbench: the tests use it to
 * feed check prepared runs, so that "a regression that does not repeat is never confirmed" is
 * checked deterministically rather than on a noisy machine.)
 *
 * Exit status (both commands): 0 no regression; 2 a (confirmed) regression, or a series missing
 * or failed in the new run; 3 none of those, but a series was undecidable (too few samples, too
 * noisy) or could not run for an environmental reason (named); 1 a usage or input error (one line
 * on stderr, nothing written); 130 interrupted (check: the run's file keeps finished series).
 */
#define _GNU_SOURCE
#include "regress/compare.h"

#include "common/files.h"
#include "common/parse.h"
#include "processkit.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char compare_usage[] =
    "usage: pkbench compare BASE.json NEW.json [--format text|md|json] [--out FILE]\n"
    "                       [--alpha A] [--threshold PCT] [--cv-limit PCT] [--filter REGEX]\n"
    "                       [--env-keys K1,K2,...] [--strict-env]\n"
    "                       [--no-drift-correction] [--drift-limit PCT]\n"
    "       pkbench compare FILE.json --baseline-contender NAME [options as above]\n"
    "\n"
    "Between two files the control series (marked `control`: code that cannot change with the\n"
    "library) measure the machine's drift; every other series is judged drift-corrected, and a\n"
    "drift above --drift-limit (default 25%), controls that disagree, or a scenario whose drift\n"
    "is more than 15% off the whole machine's make it undecidable (\"machine changed\", exit 3).\n"
    "--no-drift-correction judges the raw samples.\n"
    "Exit status: 0 no regression; 2 a regression or a series missing in NEW; 3 undecidable;\n"
    "1 a usage or input error.\n";

static const char check_usage[] =
    "usage: pkbench check --baseline FILE [--suite NAME] [--profile quick|full] [--filter REGEX]\n"
    "                     [--no-prime] [--sequential] [--settle S] [--repetitions N]\n"
    "                     [--out FILE]\n"
    "                     [--format text|md|json] [--alpha A] [--threshold PCT] [--cv-limit PCT]\n"
    "                     [--env-keys LIST]\n"
    "                     [--strict-env] [--no-drift-correction] [--drift-limit PCT]\n";

static int usage_error(const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int usage_error(const char *usage, const char *fmt, ...)
{
    fputs("pkbench: ", stderr);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fputs(usage, stderr);
    return 1;
}

/* Every option of both commands; each command accepts the ones its table lists. */
enum {
    OPT_ALPHA = 1000,
    OPT_THRESHOLD,
    OPT_CV_LIMIT,
    OPT_FILTER,
    OPT_ENV_KEYS,
    OPT_FORMAT,
    OPT_STRICT_ENV,
    OPT_OUT,
    OPT_BASELINE_CONTENDER,
    OPT_BASELINE,
    OPT_SUITE,
    OPT_PROFILE,
    OPT_NO_PRIME,
    OPT_SEQUENTIAL,
    OPT_SETTLE,
    OPT_REPETITIONS,
    OPT_NO_DRIFT,
    OPT_DRIFT_LIMIT,
    OPT_HELP = 'h',
};

#define COMPARE_OPTIONS                                                                            \
    {"alpha", required_argument, NULL, OPT_ALPHA},                                                 \
        {"threshold", required_argument, NULL, OPT_THRESHOLD},                                     \
        {"cv-limit", required_argument, NULL, OPT_CV_LIMIT},                                       \
        {"filter", required_argument, NULL, OPT_FILTER},                                           \
        {"env-keys", required_argument, NULL, OPT_ENV_KEYS},                                       \
        {"format", required_argument, NULL, OPT_FORMAT},                                           \
        {"strict-env", no_argument, NULL, OPT_STRICT_ENV},                                         \
        {"out", required_argument, NULL, OPT_OUT},                                                 \
        {"no-drift-correction", no_argument, NULL, OPT_NO_DRIFT},                                  \
        {"drift-limit", required_argument, NULL, OPT_DRIFT_LIMIT},                                 \
    {                                                                                              \
        "help", no_argument, NULL, OPT_HELP                                                        \
    }

static const struct option compare_options[] = {
    COMPARE_OPTIONS,
    {"baseline-contender", required_argument, NULL, OPT_BASELINE_CONTENDER},
    {NULL, 0, NULL, 0},
};

static const struct option check_options[] = {
    COMPARE_OPTIONS,
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"suite", required_argument, NULL, OPT_SUITE},
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"no-prime", no_argument, NULL, OPT_NO_PRIME},
    {"sequential", no_argument, NULL, OPT_SEQUENTIAL},
    {"settle", required_argument, NULL, OPT_SETTLE},
    {"repetitions", required_argument, NULL, OPT_REPETITIONS},
    {NULL, 0, NULL, 0},
};

/* getopt_long over argv[1..] (argv[1], the command, plays the program), printing nothing of its
 * own: ':' a missing value, '?' an unknown option, named by the caller. */
static int next_option(int argc, char **argv, const struct option *options)
{
    opterr = 0;
    return getopt_long(argc - 1, argv + 1, ":h", options, NULL);
}

static int getopt_failed(const char *usage, const char *cmd, int opt, char **argv)
{
    const char *arg = argv[optind]; /* argv + 1 is what getopt saw: its optind - 1 */
    if (opt == ':')
        return usage_error(usage, "%s: %s needs a value", cmd, arg);
    return usage_error(usage, "%s: unknown option '%s'", cmd, arg);
}

/* A percentage ("5", "5%") or "none": the fraction, negative for none (compare.h). */
static bool parse_percent(const char *v, double *frac)
{
    double x;
    if (strcmp(v, "none") == 0) {
        *frac = -1;
        return true;
    }
    if (!pkb_parse_number(v, true, &x) || x < 0 || x >= 1000)
        return false;
    *frac = x == 0 ? -1 : x / 100;
    return true;
}

/* The options compare and check share. Returns 1 when `opt` was one of them, 0 when it was not,
 * -1 after printing a usage error. */
static int compare_option(int opt,
                          const char *v,
                          pkb_compare_options *o,
                          pkb_compare_format *format,
                          const char **out,
                          const char *usage)
{
    switch (opt) {
    case OPT_STRICT_ENV:
        o->strict_env = true;
        return 1;
    case OPT_NO_DRIFT:
        o->no_drift_correction = true;
        return 1;
    case OPT_DRIFT_LIMIT:
        if (!parse_percent(v, &o->drift_limit) || o->drift_limit <= 0)
            return -usage_error(usage,
                                "--drift-limit needs a percentage above 0 (25 or 25%%), "
                                "got '%s'",
                                v);
        return 1;
    case OPT_ALPHA:
        if (!pkb_parse_number(v, false, &o->alpha) || !(o->alpha > 0 && o->alpha < 1))
            return -usage_error(usage, "--alpha needs a number in (0, 1), got '%s'", v);
        return 1;
    case OPT_THRESHOLD:
        if (!parse_percent(v, &o->threshold))
            return -usage_error(usage,
                                "--threshold needs a percentage (5 or 5%%) or none, got '%s'", v);
        return 1;
    case OPT_CV_LIMIT:
        if (!parse_percent(v, &o->cv_limit))
            return -usage_error(usage, "--cv-limit needs a percentage (5 or 5%%) or none, got '%s'",
                                v);
        return 1;
    case OPT_FILTER:
        o->filter = v;
        return 1;
    case OPT_ENV_KEYS:
        o->env_keys = v;
        return 1;
    case OPT_FORMAT:
        if (pkb_compare_parse_format(v, format) != 0)
            return -usage_error(usage, "--format needs text, md or json, got '%s'", v);
        return 1;
    case OPT_OUT:
        if (v[0] == '\0')
            return -usage_error(usage, "--out needs a file name");
        *out = v;
        return 1;
    }
    return 0;
}

/* Writes text to path atomically, or to stdout when path is NULL. */
static int emit(const char *text, const char *path)
{
    if (path == NULL) {
        fputs(text, stdout);
        return fflush(stdout) == 0 ? 0 : -EIO;
    }
    return pkb_write_text_atomic(path, text, strlen(text));
}

static void warn_env(const pkb_compare *c)
{
    if (c->nenv == 0)
        return;
    fputs("pkbench: warning: the environments differ:", stderr);
    for (size_t i = 0; i < c->nenv; i++)
        fprintf(stderr, "%s %s '%s' (base) vs '%s' (new)", i ? ";" : "", c->env[i].key,
                c->env[i].base, c->env[i].cand);
    fputs(" (--strict-env makes this an error)\n", stderr);
}

static void warn_settings(const pkb_compare *c)
{
    if (c->nsettings == 0)
        return;
    fputs("pkbench: warning: the runs were made with different settings:", stderr);
    for (size_t i = 0; i < c->nsettings; i++)
        fprintf(stderr, "%s %s '%s' (base) vs '%s' (new)", i ? ";" : "", c->settings[i].key,
                c->settings[i].base, c->settings[i].cand);
    fputs(" (--strict-env makes this an error)\n", stderr);
}

/* Between two runs, a rank test over each run's samples cannot tell a regression from the whole
 * machine being slower in one run; an A/A noise floor, or a confirming re-run, can. */
static void warn_no_floor(const pkb_compare *c, const char *how)
{
    if (c->cand_path == NULL || c->noise_floor_known || c->drift_applied)
        return; /* the drift correction separates the machine's shift from the code's */
    fprintf(
        stderr,
        "pkbench: warning: %s has no noise floor: between two runs a shift of the whole machine "
        "reads as a change; make the base with `pkbench run --aa`%s\n",
        c->base_path, how);
}

static void say_status(const pkb_compare *c, const char *prefix)
{
    if (c->status == 0)
        return;
    char line[2048];
    pkb_compare_summary_line(c, line, sizeof line);
    fprintf(stderr, "pkbench: %s%s\n", prefix, line);
}

/* ==== compare ================================================================================ */

int pkb_cmd_compare(int argc, char **argv)
{
    const char *files[2] = {NULL, NULL}, *out = NULL;
    size_t nfiles = 0;
    pkb_compare_options o = {0};
    pkb_compare_format format = PKB_COMPARE_TEXT;
    int opt;
    while ((opt = next_option(argc, argv, compare_options)) != -1) {
        if (opt == OPT_HELP) {
            fputs(compare_usage, stdout);
            return 0;
        }
        int r = compare_option(opt, optarg, &o, &format, &out, compare_usage);
        if (r < 0)
            return 1;
        if (r > 0)
            continue;
        if (opt == OPT_BASELINE_CONTENDER && optarg[0] != '\0')
            o.baseline_contender = optarg;
        else if (opt == OPT_BASELINE_CONTENDER)
            return usage_error(compare_usage, "--baseline-contender needs a contender's name");
        else
            return getopt_failed(compare_usage, "compare", opt, argv);
    }
    for (int i = optind + 1; i < argc; i++) {
        if (nfiles == 2)
            return usage_error(compare_usage, "compare: extra argument '%s'", argv[i]);
        files[nfiles++] = argv[i];
    }
    if (o.baseline_contender != NULL && nfiles != 1)
        return usage_error(compare_usage,
                           "compare: --baseline-contender takes exactly one results file");
    if (o.baseline_contender == NULL && nfiles != 2)
        return usage_error(compare_usage, "compare: needs BASE.json and NEW.json");

    int rc = out != NULL ? pkb_check_writable(out) : 0;
    if (rc != 0) {
        fprintf(stderr, "pkbench: cannot write %s: %s\n", out, strerror(-rc));
        return 1;
    }
    pkb_compare c;
    char err[1024] = "";
    rc = pkb_compare_files(files[0], files[1], &o, &c, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "pkbench: %s\n", err[0] ? err : strerror(-rc));
        return 1;
    }
    warn_env(&c);
    warn_settings(&c);
    warn_no_floor(&c, ", or use `pkbench check`, which confirms a regression by a re-run");
    char *text;
    rc = pkb_compare_render(&c, format, &text);
    if (rc == 0) {
        rc = emit(text, out);
        free(text);
        if (rc != 0)
            fprintf(stderr, "pkbench: cannot write %s: %s\n", out ? out : "the output",
                    strerror(-rc));
    } else {
        fprintf(stderr, "pkbench: out of memory\n");
    }
    int status = rc != 0 ? 1 : c.status;
    if (rc == 0)
        say_status(&c, "");
    pkb_compare_free(&c);
    return status;
}

/* ==== check ================================================================================== */

static pk_cancel *check_cancel;
static volatile sig_atomic_t check_interrupted;

static void on_check_signal(int sig)
{
    (void)sig;
    check_interrupted = 1;
    /* SIGTERM, not the signal we got: a terminal's Ctrl-C already reached the child, whose
     * SIGINT handler is one-shot; its SIGTERM handler stops it the same graceful way. */
    if (check_cancel != NULL)
        pk_cancel_trigger(check_cancel);
}

struct check_args {
    const char *suite, *profile, *filter;
    const char *settle;      /* --settle, passed on to the runs as given (NULL: run's default) */
    const char *repetitions; /* --repetitions, likewise */
    bool prime, sequential;
};

/* Runs `pkbench run` into `out` with `filter`. Returns its exit status, or 1 after a message. */
static int run_child(const struct check_args *a, const char *filter, const char *out)
{
    char self[PATH_MAX];
    /* PKBENCH_CHECK_RUNNER, for tests: a program started in place of this pkbench with the same
     * arguments, so that the confirmation logic can be checked on prepared results files. */
    const char *runner = getenv("PKBENCH_CHECK_RUNNER");
    ssize_t n = runner != NULL && runner[0] != '\0'
                    ? snprintf(self, sizeof self, "%s", runner)
                    : readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0 || n >= (ssize_t)sizeof self) {
        fprintf(stderr, "pkbench: cannot find this executable: %s\n", strerror(errno));
        return 1;
    }
    self[n] = '\0';
    const char *argv[16] = {self,        "run",      "--suite", a->suite,
                            "--profile", a->profile, "--out",   out};
    int k = 8;
    if (filter != NULL) {
        argv[k++] = "--filter";
        argv[k++] = filter;
    }
    if (!a->prime)
        argv[k++] = "--no-prime";
    if (a->sequential)
        argv[k++] = "--sequential";
    if (a->settle != NULL) {
        argv[k++] = "--settle";
        argv[k++] = a->settle;
    }
    if (a->repetitions != NULL) {
        argv[k++] = "--repetitions";
        argv[k++] = a->repetitions;
    }
    argv[k] = NULL;
    pk_result r;
    int rc = pk_run(
        &(pk_command){
            .argv = argv,
            /* The run's tables and path (its stdout): check prints the comparison and the
             * paths itself, and its own stdout stays the comparison's (--format json). The
             * run's progress lines (stderr) show as it goes. */
            .out = {.kind = PK_STDIO_NULL},
            .err = {.kind = PK_STDIO_INHERIT},
            .containment = PK_CONTAIN_NONE, /* measured exactly as a direct run */
            .grace_ms = 30000,
            .cancel = check_cancel,
        },
        &r);
    int status = 1;
    if (rc == PK_ECANCELLED)
        status = 130;
    else if (rc != 0)
        fprintf(stderr, "pkbench: cannot start %s run: %s\n", self, pk_strerror(rc));
    else if (r.outcome.kind == PK_OUTCOME_EXITED)
        status = r.outcome.code;
    else if (r.outcome.kind == PK_OUTCOME_CANCELLED) /* how it ended after our SIGTERM */
        status = r.outcome.signo != 0 ? 130 : r.outcome.code;
    else
        fprintf(stderr, "pkbench: the run ended by signal %d\n", r.outcome.signo);
    pk_result_release(&r);
    return status;
}

/* "^(a|b)$" with the names' ERE metacharacters escaped. */
static char *names_filter(const pkb_compare *c)
{
    size_t cap = 8;
    for (size_t i = 0; i < c->nrows; i++)
        cap += 2 * strlen(c->rows[i].name) + 1;
    char *f = malloc(cap), *p = f;
    if (f == NULL)
        return NULL;
    p += sprintf(p, "^(");
    bool first = true;
    for (size_t i = 0; i < c->nrows; i++) {
        /* the controls too: the re-run's comparison is drift-corrected like the first */
        if (c->rows[i].d.verdict != PKS_REGRESSED && !(c->rows[i].control && c->drift_applied))
            continue;
        if (!first)
            *p++ = '|';
        first = false;
        for (const char *s = c->rows[i].name; *s; s++) {
            if (strchr(".[]()*+?{}|^$\\", *s) != NULL)
                *p++ = '\\';
            *p++ = *s;
        }
    }
    strcpy(p, ")$");
    return f;
}

static const pkb_compare_row *row_named(const pkb_compare *c, const char *name)
{
    for (size_t i = 0; i < c->nrows; i++)
        if (strcmp(c->rows[i].name, name) == 0)
            return &c->rows[i];
    return NULL;
}

static void print_rendered(const pkb_compare *c, pkb_compare_format format)
{
    char *text;
    if (pkb_compare_render(c, format, &text) == 0) {
        fputs(text, stdout);
        free(text);
    }
}

/* The conclusion of a check: the final status, and the text/Markdown/JSON that says it. */
static int conclude(const pkb_compare *first,
                    const pkb_compare *again,
                    const char *results,
                    const char *rerun_path,
                    const char *baseline,
                    pkb_compare_format format)
{
    size_t confirmed = 0;
    bool undecided = first->undecidable > 0;
    json_t *jc = json_array(), *jn = json_array();
    char line[4096] = "";
    size_t used = 0;
    for (size_t i = 0; again != NULL && i < first->nrows; i++) {
        const pkb_compare_row *r1 = &first->rows[i];
        if (r1->d.verdict != PKS_REGRESSED)
            continue;
        const pkb_compare_row *r2 = row_named(again, r1->name);
        bool repeat = r2 != NULL && r2->d.verdict == PKS_REGRESSED;
        undecided |= r2 == NULL || r2->d.verdict == PKS_UNDECIDABLE;
        confirmed += repeat;
        json_array_append_new(repeat ? jc : jn, json_string(r1->name));
        if (format != PKB_COMPARE_JSON && used < sizeof line) {
            char d2[64] = "not measured again";
            if (r2 != NULL)
                snprintf(d2, sizeof d2, "%+.1f%%, %s", 100 * r2->s.delta,
                         pks_verdict_name(r2->d.verdict));
            int w = snprintf(line + used, sizeof line - used, "%s%s %s (%+.1f%%, then %s)\n",
                             format == PKB_COMPARE_MD ? "- " : "  ",
                             repeat ? "confirmed:   " : "not repeated:", r1->name,
                             100 * r1->s.delta, d2);
            used += w > 0 ? (size_t)w : 0;
        }
    }
    /* A series missing from the run is not re-run: it fails the check as it is. */
    int status = confirmed > 0 || first->missing > 0     ? 2
                 : undecided || first->environmental > 0 ? 3
                                                         : 0;
    if (again == NULL)
        status = first->status;
    if (format == PKB_COMPARE_JSON) {
        json_t *doc = json_object();
        json_object_set_new(doc, "schema", json_string("pkbench-check"));
        json_object_set_new(doc, "schema_version", json_integer(1));
        json_object_set_new(doc, "baseline", json_string(baseline));
        json_object_set_new(doc, "results", json_string(results));
        json_object_set_new(doc, "comparison", pkb_compare_json(first));
        json_t *rerun = json_null();
        if (again != NULL)
            rerun = json_pack("{s:s, s:s, s:o}", "results", rerun_path, "why",
                              "these series regressed in the first run; a regression is reported "
                              "only when it repeats",
                              "comparison", pkb_compare_json(again));
        json_object_set_new(doc, "rerun", rerun);
        json_object_set_new(doc, "confirmed", jc);
        json_object_set_new(doc, "not_repeated", jn);
        json_object_set_new(doc, "status", json_integer(status));
        char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
        if (s != NULL)
            printf("%s\n", s);
        free(s);
        json_decref(doc);
        return status;
    }
    json_decref(jc);
    json_decref(jn);
    if (again != NULL) {
        printf("%s", line);
        printf("\n%s %zu of %zu regression%s repeated.\n",
               format == PKB_COMPARE_MD ? "**Conclusion:**" : "Conclusion:", confirmed,
               first->regressed, first->regressed == 1 ? "" : "s");
    }
    fflush(stdout);
    return status;
}

/* The stderr line after a re-run: what repeated, or that nothing did. */
static void say_confirmed(const pkb_compare *first, const pkb_compare *again, int status)
{
    fprintf(stderr, "pkbench: %s",
            status == 2 ? "regressed (repeated in the re-run):"
                        : "no regression repeated in the re-run");
    size_t k = 0;
    for (size_t i = 0; status == 2 && i < again->nrows; i++) {
        const pkb_compare_row *r2 = &again->rows[i], *r1 = row_named(first, r2->name);
        if (r2->d.verdict == PKS_REGRESSED && r1 != NULL && r1->d.verdict == PKS_REGRESSED)
            fprintf(stderr, "%s %s (%+.1f%%, then %+.1f%%)", k++ ? "," : "", r2->name,
                    100 * r1->s.delta, 100 * r2->s.delta);
    }
    if (status == 3) {
        fputs("; cannot decide:", stderr);
        for (int pass = 0; pass < 2; pass++) {
            const pkb_compare *c = pass ? again : first;
            for (size_t i = 0; i < c->nrows; i++) {
                if (c->rows[i].d.verdict != PKS_UNDECIDABLE)
                    continue;
                char why[200];
                pkb_compare_why(c, &c->rows[i], why, sizeof why);
                fprintf(stderr, "%s %s (%s%s)", k++ ? "," : "", c->rows[i].name,
                        pass ? "re-run: " : "", why);
            }
        }
    }
    fputc('\n', stderr);
}

static void default_paths(const char *out, char *path, size_t cap, char *rerun, size_t rcap)
{
    if (out != NULL) {
        snprintf(path, cap, "%s", out);
    } else {
        char stamp[32];
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
        snprintf(path, cap, "results/check-%s.json", stamp);
    }
    size_t n = strlen(path);
    bool json = n > 5 && strcmp(path + n - 5, ".json") == 0;
    if (snprintf(rerun, rcap, "%.*s-rerun.json", (int)(json ? n - 5 : n), path) >= (int)rcap)
        rerun[0] = '\0';
}

/* check's command line. Returns 0, or 1 after a usage message; -1 for --help (printed). */
struct check_cli {
    struct check_args run;
    const char *baseline, *out;
    pkb_compare_options o;
    pkb_compare_format format;
};

static int parse_check(int argc, char **argv, struct check_cli *c)
{
    *c = (struct check_cli){.run = {.suite = "scenarios", .profile = "quick", .prime = true}};
    int opt;
    while ((opt = next_option(argc, argv, check_options)) != -1) {
        if (opt == OPT_HELP) {
            fputs(check_usage, stdout);
            return -1;
        }
        int r = compare_option(opt, optarg, &c->o, &c->format, &c->out, check_usage);
        if (r < 0)
            return 1;
        if (r > 0)
            continue;
        if (opt == OPT_NO_PRIME)
            c->run.prime = false;
        else if (opt == OPT_SEQUENTIAL)
            c->run.sequential = true;
        else if (opt == OPT_SETTLE) {
            double v;
            if (!pkb_parse_number(optarg, false, &v) || !(v >= 0 && v <= 60))
                return usage_error(check_usage,
                                   "check: --settle needs seconds from 0 to 60, got '%s'", optarg);
            c->run.settle = optarg;
        } else if (opt == OPT_REPETITIONS) {
            long v;
            if (!pkb_parse_count(optarg, PKS_MIN_SAMPLES, PKB_MAX_REPETITIONS, &v))
                return usage_error(check_usage,
                                   "check: --repetitions needs a count from %d to %d, got '%s'",
                                   PKS_MIN_SAMPLES, PKB_MAX_REPETITIONS, optarg);
            c->run.repetitions = optarg;
        } else if (opt != OPT_BASELINE && opt != OPT_SUITE && opt != OPT_PROFILE)
            return getopt_failed(check_usage, "check", opt, argv);
        else if (optarg[0] == '\0')
            return usage_error(check_usage, "check: --%s needs a value",
                               opt == OPT_BASELINE ? "baseline"
                               : opt == OPT_SUITE  ? "suite"
                                                   : "profile");
        else
            *(opt == OPT_BASELINE ? &c->baseline
              : opt == OPT_SUITE  ? &c->run.suite
                                  : &c->run.profile) = optarg;
    }
    if (optind + 1 < argc)
        return usage_error(check_usage, "check: unexpected argument '%s'", argv[optind + 1]);
    c->run.filter = c->o.filter;
    if (c->baseline == NULL)
        return usage_error(check_usage, "check: --baseline FILE is required");
    if (strcmp(c->run.profile, "quick") != 0 && strcmp(c->run.profile, "full") != 0)
        return usage_error(check_usage, "--profile needs full or quick, got '%s'", c->run.profile);
    return 0;
}

/* The baseline is readable, the output paths fit, results/ exists when it is the default. */
static int prepare_check(const struct check_cli *c, char *path, char *rerun, size_t cap)
{
    char err[1024] = "";
    if (pkb_compare_check_file(c->baseline, err, sizeof err) != 0) {
        fprintf(stderr, "pkbench: %s\n", err);
        return 1;
    }
    default_paths(c->out, path, cap, rerun, cap);
    if (rerun[0] == '\0')
        return usage_error(check_usage, "check: --out path too long: '%s'", path);
    if (c->out == NULL && mkdir("results", 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "pkbench: cannot create results/: %s\n", strerror(errno));
        return 1;
    }
    /* Before anything is measured: both runs' results, and the comparison. */
    const char *outs[2] = {path, rerun};
    for (int i = 0; i < 2; i++) {
        int rc = pkb_check_writable(outs[i]);
        if (rc != 0) {
            fprintf(stderr, "pkbench: cannot write %s: %s\n", outs[i], strerror(-rc));
            return 1;
        }
    }
    if (pk_cancel_new(&check_cancel) != 0) {
        fprintf(stderr, "pkbench: out of memory\n");
        return 1;
    }
    struct sigaction sa = {.sa_handler = on_check_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return 0;
}

/* The first run and its comparison. Returns the exit status so far; *have says whether `first`
 * holds a comparison. */
static int first_run(const struct check_cli *c, const char *path, pkb_compare *first, bool *have)
{
    char err[1024] = "";
    int status = run_child(&c->run, c->run.filter, path);
    if (status == 0) {
        int rc = pkb_compare_files(c->baseline, path, &c->o, first, err, sizeof err);
        *have = rc == 0;
        status = rc == 0 ? first->status : 1;
        if (rc != 0)
            fprintf(stderr, "pkbench: %s\n", err);
    }
    if (*have) {
        warn_env(first);
        warn_settings(first);
        warn_no_floor(first, " (a regression here is still confirmed by a re-run)");
        if (c->format != PKB_COMPARE_JSON)
            print_rendered(first, c->format);
    }
    return status;
}

/* Re-runs only the series that regressed and compares them again. Returns the exit status so
 * far; *have says whether `again` holds a comparison. The re-run's filter is returned in *filter
 * for the caller to free once `again` is no longer used: the comparison borrows it (its opts). */
static int confirm_run(const struct check_cli *c,
                       const pkb_compare *first,
                       const char *rerun,
                       pkb_compare *again,
                       bool *have,
                       char **filter_out)
{
    char *filter = names_filter(first);
    *filter_out = filter;
    char list[2048] = "", err[1024] = "";
    size_t used = 0;
    for (size_t i = 0; i < first->nrows && used < sizeof list; i++) {
        const pkb_compare_row *r = &first->rows[i];
        if (r->d.verdict != PKS_REGRESSED)
            continue;
        int w = snprintf(list + used, sizeof list - used, "%s%s (%+.1f%%)", used ? ", " : "",
                         r->name, 100 * r->s.delta);
        used += w > 0 ? (size_t)w : 0;
    }
    fprintf(stderr, "pkbench: re-running %zu series that regressed, to confirm: %s\n",
            first->regressed, list);
    if (c->format != PKB_COMPARE_JSON)
        printf("\n%sRe-running the %zu series that regressed, once: %s. A regression counts "
               "only when it repeats.\n\n",
               c->format == PKB_COMPARE_MD ? "### Confirmation\n\n" : "", first->regressed, list);
    fflush(stdout);
    int status = filter != NULL ? run_child(&c->run, filter, rerun) : 1;
    if (status == 0) {
        pkb_compare_options o2 = c->o;
        o2.filter = filter;
        int rc = pkb_compare_files(c->baseline, rerun, &o2, again, err, sizeof err);
        *have = rc == 0;
        if (rc != 0) {
            fprintf(stderr, "pkbench: %s\n", err);
            status = 1;
        } else if (c->format != PKB_COMPARE_JSON) {
            print_rendered(again, c->format);
            printf("\n");
        }
    }
    return status;
}

/* The last lines on stderr: the verdict and where the results are. */
static void say_where(int status,
                      const pkb_compare *first,
                      bool have_first,
                      const pkb_compare *again,
                      bool have_again,
                      const char *path,
                      const char *rerun)
{
    if (have_again)
        say_confirmed(first, again, status);
    else if (have_first && status == first->status)
        say_status(first, "");
    if (status == 130 && have_first)
        fprintf(stderr,
                "pkbench: check interrupted during the re-run; results %s and %s (partial)\n", path,
                rerun);
    else if (status == 130)
        fprintf(stderr, "pkbench: check interrupted; results so far in %s\n", path);
    else if (have_first)
        fprintf(stderr, "pkbench: results %s%s%s\n", path, have_again ? " and " : "",
                have_again ? rerun : "");
}

int pkb_cmd_check(int argc, char **argv)
{
    struct check_cli c;
    int status = parse_check(argc, argv, &c);
    if (status != 0)
        return status < 0 ? 0 : status;
    char path[PATH_MAX], rerun[PATH_MAX];
    status = prepare_check(&c, path, rerun, sizeof path);
    if (status != 0)
        return status;
    pkb_compare first = {0}, again = {0};
    bool have_first = false, have_again = false;
    char *rerun_filter = NULL;
    status = first_run(&c, path, &first, &have_first);
    if (have_first && first.regressed > 0)
        status = confirm_run(&c, &first, rerun, &again, &have_again, &rerun_filter);
    if (have_first && (first.regressed == 0 || have_again))
        status = conclude(&first, have_again ? &again : NULL, path, rerun, c.baseline, c.format);
    say_where(status, &first, have_first, &again, have_again, path, rerun);
    pkb_compare_free(&first);
    pkb_compare_free(&again);
    free(rerun_filter);
    pk_cancel_free(check_cancel);
    check_cancel = NULL;
    pk_cleanup();
    return status;
}
