/*
 * pkrun — a tree-safe timeout(1): runs a command in a private group so that nothing it starts
 * outlives it, forwards its output line by line as it comes, enforces time limits with a grace
 * period, keeps a bounded head or tail of the output, and can write the typed outcome as JSON.
 *
 * Exit status (as coreutils timeout where they overlap):
 *   the child's own code; 124 when a time limit ended it; 125 pkrun's own failure (bad
 *   arguments, containment unavailable, output over a fail-loud cap); 126 found but not
 *   executable; 127 not found; 128+N when the child died of signal N.
 * SIGINT, SIGTERM and SIGHUP sent to pkrun are forwarded to the whole tree (through a cancel
 * handle), followed by SIGKILL after the grace; pkrun returns only when the tree is gone.
 */
#define _GNU_SOURCE
#include "os.h"
#include "processkit.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_TIMEOUT  124
#define EXIT_OWN      125
#define EXIT_NOEXEC   126
#define EXIT_NOTFOUND 127

static const char usage_text[] =
    "usage: pkrun [--timeout S] [--grace S] [--idle-timeout S] [--max-bytes N] [--max-lines N]\n"
    "             [--keep head|tail|fail] [--containment auto|cgroup|pgroup|job]\n"
    "             [--pdeathsig] [--json FILE|-] [--verbose] -- PROGRAM [ARGS...]\n";

static void usage(FILE *f)
{
    fputs(usage_text, f);
}

static _Noreturn void help(void)
{
    usage(stdout);
    fputs("\n"
          "Runs PROGRAM in a private group (a cgroup v2 leaf when the host delegates one, else a\n"
          "process group) so that nothing it starts outlives it, forwarding its stdout and stderr\n"
          "line by line.\n"
          "\n"
          "  --timeout S        end the tree S after the start\n"
          "  --idle-timeout S   end it after S without any output\n"
          "  --grace S          after a limit: SIGTERM, then SIGKILL S later (default 2; 0 kills\n"
          "                     at once). Also used for forwarded signals.\n"
          "  --max-bytes N      keep at most N bytes of each stream (default 1M when no cap is\n"
          "                     given)\n"
          "  --max-lines N      keep at most N lines of each stream\n"
          "  --keep POLICY      tail (default): the last lines; head: the first lines; fail: like\n"
          "                     head, and exit 125 when the output did not fit\n"
          "  --containment M    auto (default), cgroup (fail when unavailable), pgroup, job\n"
          "                     (Windows: a Job Object, what auto picks there)\n"
          "  --pdeathsig        SIGKILL the child if pkrun itself dies\n"
          "  --json FILE|-      write the outcome as JSON to FILE (- for stdout, after the run)\n"
          "  --verbose          say on stderr which mechanisms are in use and how the run ended\n"
          "  -h, --help         print this help and exit\n"
          "\n"
          "S, a duration: a decimal number (1, 1.5, .25, 2e-3) and an optional unit: ms, s (the\n"
          "default), m, h or d; at most 1e9 seconds. N, a count: digits and an optional K, M or G\n"
          "(binary: 1K = 1024); at most 1T. No signs, spaces or hex in either.\n"
          "A value follows its option as --timeout=5 or --timeout 5; a long option may be\n"
          "shortened while it stays unambiguous. Options end at PROGRAM or at --: everything\n"
          "after is PROGRAM's, untouched.\n"
          "\n"
          "Exit status: the child's code; 124 time limit; 125 pkrun failed or bad arguments;\n"
          "126 not executable; 127 not found; 128+N the child died of signal N.\n",
          stdout);
    exit(fflush(stdout) == 0 ? 0 : EXIT_OWN);
}

/* ---- arguments ----------------------------------------------------------------------------- */

struct options {
    double timeout, grace, idle;
    size_t max_bytes, max_lines;
    pk_keep keep;
    pk_containment containment;
    bool pdeathsig, verbose;
    const char *json;
    char **argv;
};

/* getopt_long's codes for the options: above any character, so that only -h has a short form. */
enum {
    OPT_TIMEOUT = 256,
    OPT_GRACE,
    OPT_IDLE,
    OPT_MAX_BYTES,
    OPT_MAX_LINES,
    OPT_KEEP,
    OPT_CONTAINMENT,
    OPT_PDEATHSIG,
    OPT_JSON,
    OPT_VERBOSE,
    OPT_HELP = 'h',
};

static const struct option long_options[] = {
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"grace", required_argument, NULL, OPT_GRACE},
    {"idle-timeout", required_argument, NULL, OPT_IDLE},
    {"max-bytes", required_argument, NULL, OPT_MAX_BYTES},
    {"max-lines", required_argument, NULL, OPT_MAX_LINES},
    {"keep", required_argument, NULL, OPT_KEEP},
    {"containment", required_argument, NULL, OPT_CONTAINMENT},
    {"pdeathsig", no_argument, NULL, OPT_PDEATHSIG},
    {"json", required_argument, NULL, OPT_JSON},
    {"verbose", no_argument, NULL, OPT_VERBOSE},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* The table entry of an option code; messages use its full name, as the user may have typed a
 * shortened one. */
static const struct option *option_by_code(int code)
{
    for (const struct option *lo = long_options; lo->name != NULL; lo++)
        if (lo->val == code)
            return lo;
    return NULL;
}

static _Noreturn void bad_arg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void bad_arg(const char *fmt, ...)
{
    va_list ap;
    fputs("pkrun: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    usage(stderr);
    exit(EXIT_OWN);
}

/* Explains what getopt_long rejected (it prints nothing itself: opterr is 0). `arg` is the
 * argument it stopped at. */
static _Noreturn void bad_option(int c, const char *arg)
{
    const struct option *lo = option_by_code(optopt);
    if (c == ':' && lo != NULL)
        bad_arg("--%s: needs a value", lo->name);
    const char *eq = strchr(arg, '=');
    if (lo != NULL)
        bad_arg("--%s: takes no value, got '%s'", lo->name, eq != NULL ? eq + 1 : arg);
    if (optopt != 0)
        bad_arg("unknown option '-%c'", optopt);
    /* A long option: unknown, or a prefix of more than one (getopt_long says not which). */
    size_t len = strcspn(arg + 2, "=");
    char some[128] = "";
    int n = 0;
    for (lo = long_options; lo->name != NULL; lo++) {
        if (strncmp(lo->name, arg + 2, len) == 0) {
            size_t used = strlen(some);
            snprintf(some + used, sizeof some - used, "%s--%s", n++ ? ", " : "", lo->name);
        }
    }
    if (n > 1 && len > 0)
        bad_arg("ambiguous option '%.*s': %s", (int)len + 2, arg, some);
    bad_arg("unknown option '%.*s'", (int)len + 2, arg);
}

/* A duration into seconds: a decimal number and an optional unit. Strict, so that a typo never
 * becomes a different limit: no sign, space, hex, inf or nan, nothing after the unit. Returns
 * NULL, or what is wrong with v. */
static const char *parse_duration(const char *v, double *seconds)
{
    static const struct {
        const char *unit;
        double scale;
    } units[] = {{"", 1}, {"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}};
    static const char bad[] = "is not a duration (examples: 1.5, 250ms, 2m)";
    /* strtod alone would take leading spaces, signs, "inf", "nan" and hex floats. */
    if ((v[0] < '0' || v[0] > '9') && v[0] != '.')
        return bad;
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || strspn(v, "0123456789.eE+-") < (size_t)(end - v))
        return bad;
    if (errno == ERANGE && d < 1)
        return bad; /* an underflow: more digits than any clock has */
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].unit) == 0) {
            *seconds = d * units[i].scale;
            return errno == 0 && *seconds <= 1e9 ? NULL : "is over the limit of 1e9 seconds";
        }
    }
    return bad;
}

/* A count with an optional binary K, M or G suffix. Strict like parse_duration. Returns NULL, or
 * what is wrong with v. */
static const char *parse_count(const char *v, size_t *count)
{
    static const char bad[] = "is not a count (examples: 500, 64K, 1M)";
    if (v[0] < '0' || v[0] > '9')
        return bad; /* strtoull would take spaces and signs, and wrap "-1" around */
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10, end++;
    else if (*end == 'M' || *end == 'm')
        shift = 20, end++;
    else if (*end == 'G' || *end == 'g')
        shift = 30, end++;
    if (*end != '\0')
        return bad;
    if (errno != 0 || n > (1ULL << 40) >> shift)
        return "is over the limit of 1T";
    *count = (size_t)(n << shift);
    return NULL;
}

/* The values --keep and --containment accept, in the order the help lists them. */
struct choice {
    const char *name;
    int value;
};

static const struct choice keep_choices[] = {
    {"head", PK_KEEP_HEAD}, {"tail", PK_KEEP_TAIL}, {"fail", PK_KEEP_FAIL}, {NULL, 0}};
static const struct choice containment_choices[] = {{"auto", PK_CONTAIN_AUTO},
                                                    {"cgroup", PK_CONTAIN_CGROUP},
                                                    {"pgroup", PK_CONTAIN_PGROUP},
                                                    {"job", PK_CONTAIN_JOB},
                                                    {NULL, 0}};

static int parse_choice(const char *opt, const char *v, const struct choice *choices)
{
    char names[64] = "";
    for (const struct choice *c = choices; c->name != NULL; c++) {
        if (strcmp(v, c->name) == 0)
            return c->value;
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", c == choices ? "" : ", ", c->name);
    }
    bad_arg("--%s: '%s' is not one of %s", opt, v, names);
}

static double duration_arg(const char *opt, const char *v)
{
    double d;
    const char *why = parse_duration(v, &d);
    if (why != NULL)
        bad_arg("--%s: '%s' %s", opt, v, why);
    return d;
}

static size_t count_arg(const char *opt, const char *v)
{
    size_t n;
    const char *why = parse_count(v, &n);
    if (why != NULL)
        bad_arg("--%s: '%s' %s", opt, v, why);
    return n;
}

/* Applies one option getopt_long found (with its value, if it takes one); a bad value ends
 * pkrun with exit 125 and a message naming the option. */
static void apply_option(struct options *o, int code, const char *v)
{
    const char *opt = option_by_code(code)->name;
    switch (code) {
    case OPT_TIMEOUT:
        o->timeout = duration_arg(opt, v);
        break;
    case OPT_GRACE:
        o->grace = duration_arg(opt, v);
        break;
    case OPT_IDLE:
        o->idle = duration_arg(opt, v);
        break;
    case OPT_MAX_BYTES:
        o->max_bytes = count_arg(opt, v);
        break;
    case OPT_MAX_LINES:
        o->max_lines = count_arg(opt, v);
        break;
    case OPT_KEEP:
        o->keep = (pk_keep)parse_choice(opt, v, keep_choices);
        break;
    case OPT_CONTAINMENT:
        o->containment = (pk_containment)parse_choice(opt, v, containment_choices);
        break;
    case OPT_PDEATHSIG:
        o->pdeathsig = true;
        break;
    case OPT_JSON:
        if (v[0] == '\0')
            bad_arg("--json: needs a file name, or - for stdout");
        o->json = v;
        break;
    case OPT_VERBOSE:
        o->verbose = true;
        break;
    case OPT_HELP:
        help();
    }
}

static void parse(int argc, char **argv, struct options *o)
{
    *o = (struct options){.grace = 2.0, .keep = PK_KEEP_TAIL};
    opterr = 0;
    /* "+": options end at the first non-option (PROGRAM) or at "--", so the program's own options
     * reach it untouched; ":" tells a missing value apart from an unknown option. */
    int c;
    while ((c = getopt_long(argc, argv, "+:h", long_options, NULL)) != -1) {
        if (c == '?' || c == ':')
            bad_option(c, argv[optind - 1]);
        apply_option(o, c, optarg);
    }
    if (optind >= argc)
        bad_arg("no PROGRAM given");
    o->argv = argv + optind;
    if (o->max_bytes == 0 && o->max_lines == 0)
        o->max_bytes = 1 << 20;
}

/* ---- forwarding and signals ---------------------------------------------------------------- */

static pk_cancel *cancel;

static int forward(void *user, const pk_line *line)
{
    (void)user;
    /* Raw mode: the line is the child's bytes, unchanged. */
    pkrun_write(line->stream, line->data, line->len, line->newline);
    return 0;
}

/* ---- JSON ---------------------------------------------------------------------------------- */

/* A JSON string: escapes, and U+FFFD for bytes that are not valid UTF-8. */
static void json_string(FILE *f, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        if (c == '"' || c == '\\') {
            fprintf(f, "\\%c", c), i++;
        } else if (c == '\n') {
            fputs("\\n", f), i++;
        } else if (c == '\t') {
            fputs("\\t", f), i++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c), i++;
        } else if (c < 0x80) {
            fputc(c, f), i++;
        } else {
            size_t len = c >= 0xC2 && c <= 0xDF   ? 2
                         : c >= 0xE0 && c <= 0xEF ? 3
                         : c >= 0xF0 && c <= 0xF4 ? 4
                                                  : 0;
            bool ok = len > 0 && i + len <= n;
            for (size_t k = 1; ok && k < len; k++)
                ok = (u[i + k] & 0xC0) == 0x80;
            /* overlongs, surrogates and values above U+10FFFF */
            if (ok && len == 3)
                ok = !(c == 0xE0 && u[i + 1] < 0xA0) && !(c == 0xED && u[i + 1] > 0x9F);
            if (ok && len == 4)
                ok = !(c == 0xF0 && u[i + 1] < 0x90) && !(c == 0xF4 && u[i + 1] > 0x8F);
            if (ok) {
                fwrite(u + i, 1, len, f);
                i += len;
            } else {
                fputs("\\ufffd", f);
                i++;
            }
        }
    }
    fputc('"', f);
}

static void json_stream(FILE *f, const char *name, const pk_output *o, pk_keep keep)
{
    fprintf(f, "    \"%s\": {\"bytes\": %llu, \"lines\": %llu, \"dropped_lines\": %llu, ", name,
            (unsigned long long)o->total_bytes, (unsigned long long)o->total_lines,
            (unsigned long long)o->dropped_lines);
    fprintf(f, "\"truncated\": %s, \"kept\": \"%s\", \"kept_bytes\": %zu, \"text\": ",
            o->truncated ? "true" : "false", keep == PK_KEEP_TAIL ? "tail" : "head", o->len);
    json_string(f, o->data != NULL ? o->data : "", o->len);
    fputs("}", f);
}

/* How the run ended: the outcome's kind and its details, pkrun's own exit status, the times. */
static void json_outcome(FILE *f, const pk_outcome *oc, int rc, int status)
{
    fprintf(f, "  \"outcome\": \"%s\",\n", pk_outcome_kind_name(oc->kind));
    if (oc->kind == PK_OUTCOME_SPAWN_FAILED)
        fprintf(f, "  \"stage\": \"%s\",\n  \"error\": \"%s\",\n", pk_stage_name(oc->stage),
                pk_errname(oc->error));
    else if (oc->kind == PK_OUTCOME_CRASHED)
        fprintf(f, "  \"ntstatus\": \"0x%08X\",\n  \"ntstatus_name\": \"%s\",\n",
                (unsigned)oc->ntstatus,
                pk_ntstatus_name(oc->ntstatus) ? pk_ntstatus_name(oc->ntstatus) : "unknown");
    else if (oc->signo != 0)
        fprintf(f, "  \"signal\": %d,\n  \"core_dumped\": %s,\n", oc->signo,
                oc->core_dumped ? "true" : "false");
    else
        fprintf(f, "  \"exit_code\": %d,\n", oc->code);
    if (rc != 0)
        fprintf(f, "  \"run_error\": \"%s\",\n", pk_errname(rc));
    fprintf(f, "  \"pkrun_exit_status\": %d,\n", status);
    fprintf(f, "  \"wall_ms\": %.3f,\n  \"user_ms\": %.3f,\n  \"sys_ms\": %.3f,\n",
            (double)oc->wall_ns / 1e6, (double)oc->user_us / 1e3, (double)oc->sys_us / 1e3);
}

static int
write_json(const char *path, const struct options *o, const pk_result *r, int rc, int status)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : NULL;
    char tmp[4096];
    if (f == NULL) {
        /* Atomic: a reader never sees half a file. */
        f = pkrun_create_temp(path, tmp, sizeof tmp);
        if (f == NULL) {
            fprintf(stderr, "pkrun: cannot write %s: %s\n", tmp, strerror(errno));
            return -1;
        }
    }
    bool downgraded = r->containment == PK_CONTAIN_PGROUP && o->containment == PK_CONTAIN_AUTO;
    fprintf(f, "{\n  \"schema\": \"pkrun\",\n  \"schema_version\": 1,\n  \"argv\": [");
    for (char **a = o->argv; *a != NULL; a++) {
        json_string(f, *a, strlen(*a));
        if (a[1] != NULL)
            fputs(", ", f);
    }
    fprintf(f, "],\n  \"spawn_mechanism\": \"%s\",\n", pk_mechanism_name(pk_spawn_mechanism()));
    fprintf(f, "  \"containment\": \"%s\",\n  \"containment_requested\": \"%s\",\n",
            pk_containment_name(r->containment), pk_containment_name(o->containment));
    fprintf(f, "  \"containment_downgraded\": %s,\n", downgraded ? "true" : "false");
    json_outcome(f, &r->outcome, rc, status);
    fputs("  \"streams\": {\n", f);
    json_stream(f, "stdout", &r->out, o->keep);
    fputs(",\n", f);
    json_stream(f, "stderr", &r->err, o->keep);
    fputs("\n  }\n}\n", f);
    if (f == stdout)
        return fflush(f) == 0 ? 0 : -1;
    if (fclose(f) != 0 || pkrun_replace(tmp, path) != 0) {
        fprintf(stderr, "pkrun: cannot write %s: %s\n", path, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}

/* ---- main ---------------------------------------------------------------------------------- */

static int exit_status(int rc, const pk_result *r)
{
    const pk_outcome *oc = &r->outcome;
    switch (oc->kind) {
    case PK_OUTCOME_SPAWN_FAILED:
        if (rc == PK_ENOTFOUND || (rc == -ENOENT && oc->stage == PK_STAGE_EXEC))
            return EXIT_NOTFOUND;
        if (rc == -EACCES || rc == -ENOEXEC || rc == -EISDIR)
            return EXIT_NOEXEC;
        return EXIT_OWN;
    case PK_OUTCOME_TIMED_OUT:
    case PK_OUTCOME_IDLE_TIMED_OUT:
        return EXIT_TIMEOUT;
    case PK_OUTCOME_EXITED:
    case PK_OUTCOME_SIGNALED:
    case PK_OUTCOME_CANCELLED:
        if (rc == PK_ETOOLARGE)
            return EXIT_OWN;
        return oc->signo != 0 ? 128 + oc->signo : oc->code;
    case PK_OUTCOME_CRASHED: /* Windows: exit with the crash code itself, as cmd.exe shows it */
        return (int)oc->ntstatus;
    case PK_OUTCOME_NONE:
        break;
    }
    return EXIT_OWN;
}

/* SIGINT, SIGTERM and SIGHUP trigger the cancel handle instead of ending pkrun: the run then
 * signals the whole tree, SIGKILLs it after the grace, and pkrun returns once it is gone. */
static int forward_signals(void)
{
    int rc = pk_cancel_new(&cancel);
    if (rc != 0)
        return rc;
    return pkrun_forward_signals(cancel);
}

/* Seconds to whole milliseconds, rounded. */
static int64_t to_ms(double seconds)
{
    return (int64_t)(seconds * 1000 + 0.5);
}

/* A limit in milliseconds: a tiny positive one stays a limit (1 ms), as 0 would mean none. */
static int64_t limit_ms(double seconds)
{
    return seconds > 0 && to_ms(seconds) == 0 ? 1 : to_ms(seconds);
}

/* The run the options describe: stdin inherited; stdout and stderr captured raw, so the
 * forwarded bytes are the child's own, each kept within the cap. */
static pk_command command_for(const struct options *o)
{
    pk_stdio out = {
        .kind = PK_STDIO_CAPTURE,
        .raw = true,
        .capture = {.keep = o->keep, .max_bytes = o->max_bytes, .max_lines = o->max_lines},
    };
    return (pk_command){
        .argv = (const char *const *)o->argv,
        .in.kind = PK_STDIO_INHERIT,
        .out = out,
        .err = out,
        .containment = o->containment,
        .pdeathsig = o->pdeathsig ? PKRUN_SIGKILL : 0,
        .timeout_ms = limit_ms(o->timeout),
        .idle_timeout_ms = limit_ms(o->idle),
        .grace_ms = to_ms(o->grace),
        .cancel = cancel,
        .on_line = forward,
    };
}

/* One line on stderr for a run that failed in a way the exit status alone does not explain. */
static void report_failure(const struct options *o, int rc, const pk_result *r)
{
    if (r->outcome.kind == PK_OUTCOME_SPAWN_FAILED) {
        if (rc == PK_ENOTFOUND)
            fprintf(stderr, "pkrun: %s: not found in PATH (searched %s)\n", o->argv[0],
                    r->searched ? r->searched : "");
        else if (rc == PK_ENOCONTAIN)
            fprintf(stderr, "pkrun: --containment %s: %s\n", pk_containment_name(o->containment),
                    pk_strerror(rc));
        else
            fprintf(stderr, "pkrun: %s: %s (stage %s)\n", o->argv[0], pk_strerror(rc),
                    pk_stage_name(r->outcome.stage));
    } else if (rc == PK_ETOOLARGE) {
        fprintf(stderr,
                "pkrun: output over the --keep fail cap: stdout %llu bytes / %llu lines, "
                "stderr %llu bytes / %llu lines\n",
                (unsigned long long)r->out.total_bytes, (unsigned long long)r->out.total_lines,
                (unsigned long long)r->err.total_bytes, (unsigned long long)r->err.total_lines);
    } else if (rc != 0) {
        fprintf(stderr, "pkrun: %s\n", pk_strerror(rc));
    }
}

/* --verbose after the run: the containment actually used (and why it is weaker, when it is) and
 * how the run ended. */
static void report_verbose(const struct options *o, const pk_result *r, int status)
{
    fprintf(stderr, "pkrun: containment %s%s; outcome %s", pk_containment_name(r->containment),
            r->containment == PK_CONTAIN_PGROUP && o->containment == PK_CONTAIN_AUTO
                ? " (downgraded: no cgroup v2 delegated here; setsid descendants can escape)"
                : "",
            pk_outcome_kind_name(r->outcome.kind));
    if (r->outcome.kind == PK_OUTCOME_CRASHED)
        fprintf(stderr, ", NTSTATUS 0x%08X", (unsigned)r->outcome.ntstatus);
    else if (r->outcome.signo != 0)
        fprintf(stderr, ", signal %d", r->outcome.signo);
    else if (r->outcome.kind != PK_OUTCOME_SPAWN_FAILED)
        fprintf(stderr, ", exit code %d", r->outcome.code);
    fprintf(stderr, "; wall %.1f ms; exit status %d\n", (double)r->outcome.wall_ns / 1e6, status);
}

int main(int argc, char **argv)
{
    struct options o;
    pkrun_os_init();
    parse(argc, argv, &o);
    int rc = forward_signals();
    if (rc != 0) {
        fprintf(stderr, "pkrun: %s\n", pk_strerror(rc));
        return EXIT_OWN;
    }
    pk_command cmd = command_for(&o);
    if (o.verbose)
        fprintf(stderr, "pkrun: spawn mechanism %s, containment requested %s, host offers %s\n",
                pk_mechanism_name(pk_spawn_mechanism()), pk_containment_name(o.containment),
                pk_containment_name(pk_host_containment()));
    pk_result r;
    rc = pk_run(&cmd, &r);
    int status = exit_status(rc, &r);
    report_failure(&o, rc, &r);
    if (o.verbose)
        report_verbose(&o, &r, status);
    if (o.json != NULL && write_json(o.json, &o, &r, rc, status) != 0)
        status = EXIT_OWN;
    pk_result_release(&r);
    pk_cancel_free(cancel);
    return status;
}
