/*
 * pkrun's command line: getopt_long over pkrun's own options and timeout(1)'s, then the operands
 * — `[DURATION] COMMAND [ARG]...`.
 *
 * Two forms are accepted, so pkrun drops in where timeout is used and old pkrun lines keep
 * working: `pkrun [OPTION]... DURATION COMMAND [ARG]...` (timeout's) and `pkrun [OPTION]...
 * [--] COMMAND [ARG]...` with --timeout (pkrun's own). Without --timeout, a first operand that
 * reads as a duration is the DURATION; one meant as one (empty, a leading space, or a sign, digit,
 * point, inf or nan at its start) that is not a duration is refused (125, as timeout does),
 * unless it names a program.
 *
 * Values are strict, so a typo never becomes a different limit: durations take no sign, space,
 * hex or nan, and nothing after the unit. Within that, they read as timeout reads them:
 * floating point, s/m/h/d, 0 and inf for none, a value past any clock saturates to "never", and
 * one too small to represent (1e-5000) is the smallest limit, not none.
 *
 * The same parser, messages and --help serve every platform; what differs (signal names, the
 * containments there are, the help's lines on them) comes from args.posix.c or args.windows.c.
 */
#define _GNU_SOURCE
#include "args.h"
#include "output.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: pkrun [OPTION]... DURATION COMMAND [ARG]...\n"
          "       pkrun [OPTION]... [--] COMMAND [ARG]...\n"
          "options: ",
          f);
    fputs(pkr_help.options, f);
}

static _Noreturn void help(void)
{
    const struct pkr_help *h = &pkr_help;
    usage(stdout);
    printf("\n%s\n", h->about);
    printf("  DURATION, --timeout S  end the tree S after the start (0 or inf: no limit)\n"
           "%s%s"
           "  --preserve-status   exit with COMMAND's status even when a limit ended it\n"
           "%s",
           h->signal, h->kill_after, h->foreground);
    printf("  --idle-timeout S    end the tree after S without output (relays the output)\n"
           "  --json FILE|-       after the run, write the outcome as JSON to FILE (through a\n"
           "                      symlink, to its target) or - (stdout); checked before the run;\n"
           "                      a FIFO's reader is awaited up to 5 s; not written: status 125\n"
           "  --max-bytes N       with --json: record at most N bytes of each stream (default 1M)\n"
           "  --max-lines N       with --json: record at most N lines of each stream\n"
           "  --keep POLICY       with --json: tail (default), the last lines; head, the first;\n"
           "                      fail: like head, and exit 125 when the output did not fit (this\n"
           "                      one works without --json too)\n"
           "%s%s"
           "  -h, --help          print this help and exit\n"
           "  --version           print the version and exit\n",
           h->containment, h->verbose);
    printf(
        "\n"
        "S, a duration: a decimal number (1, 1.5, .25, 2e-3) and an optional unit: ms, s (the\n"
        "default), m, h or d; or inf. N, a count: digits and an optional K, M or G (binary:\n"
        "1K = 1024); at most 1T. No signs, spaces or hex in either. A value follows its option as\n"
        "--timeout=5 or --timeout 5; a long option may be shortened while it stays unambiguous.\n"
        "Options end at DURATION or COMMAND, or at --: everything after is COMMAND's.\n"
        "\n%s\n%s",
        h->signals, h->exit_status);
    exit(fflush(stdout) == 0 ? 0 : PKR_EXIT_OWN);
}

/* ---- values -------------------------------------------------------------------------------- */

/* Whether a and b are the same ASCII text, letters in any case. */
static bool same_ascii_ci(const char *a, const char *b)
{
    for (; *a != '\0' && *b != '\0'; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

/* Whether v starts with prefix, letters in any case. */
static bool starts_with_ci(const char *v, const char *prefix)
{
    for (; *prefix != '\0'; v++, prefix++)
        if (tolower((unsigned char)*v) != *prefix)
            return false;
    return true;
}

const char *pkr_parse_duration(const char *v, int64_t *ns)
{
    static const struct {
        const char *unit;
        double scale;
    } units[] = {{"", 1}, {"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}};
    static const char bad[] =
        "is not a duration (examples: 10, 1.5, 250ms, 2m, inf; no spaces, signs or hex)";
    if (v[0] == '\0')
        return "is not a duration: it is empty (examples: 10, 1.5, 250ms, 2m, inf)";
    if (same_ascii_ci(v, "inf") || same_ascii_ci(v, "infinity")) {
        *ns = PKR_NEVER_NS; /* as timeout reads it: no limit */
        return NULL;
    }
    /* strtod alone would take leading spaces, signs, "nan" and hex floats. */
    if ((v[0] < '0' || v[0] > '9') && v[0] != '.')
        return bad;
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || strspn(v, "0123456789.eE+-") < (size_t)(end - v))
        return bad;
    bool underflow = errno == ERANGE && d < 1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].unit) != 0)
            continue;
        double s = d * units[i].scale;
        if (underflow || (s > 0 && s < 1e-9))
            *ns = 1; /* a limit too small for any clock: it has passed already */
        else if (s >= 4e9)
            *ns = PKR_NEVER_NS; /* past any clock (126 years), "never"; overflows saturate */
        else
            *ns = (int64_t)(s * 1e9 + 0.5);
        return NULL;
    }
    return bad;
}

/* A count with an optional binary K, M or G suffix. Strict like durations. Returns NULL, or what
 * is wrong with v. */
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

/* ---- options ------------------------------------------------------------------------------- */

/* getopt_long's codes: a character for the options with a short form, above 255 for the rest. */
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
    OPT_PRESERVE,
    OPT_FOREGROUND,
    OPT_VERSION,
    OPT_KILL_AFTER = 'k',
    OPT_SIGNAL = 's',
    OPT_VERBOSE = 'v',
    OPT_HELP = 'h',
};

static const struct option long_options[] = {
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"kill-after", required_argument, NULL, OPT_KILL_AFTER},
    {"grace", required_argument, NULL, OPT_GRACE},
    {"signal", required_argument, NULL, OPT_SIGNAL},
    {"idle-timeout", required_argument, NULL, OPT_IDLE},
    {"max-bytes", required_argument, NULL, OPT_MAX_BYTES},
    {"max-lines", required_argument, NULL, OPT_MAX_LINES},
    {"keep", required_argument, NULL, OPT_KEEP},
    {"containment", required_argument, NULL, OPT_CONTAINMENT},
    {"pdeathsig", no_argument, NULL, OPT_PDEATHSIG},
    {"json", required_argument, NULL, OPT_JSON},
    {"preserve-status", no_argument, NULL, OPT_PRESERVE},
    {"foreground", no_argument, NULL, OPT_FOREGROUND},
    {"verbose", no_argument, NULL, OPT_VERBOSE},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

/* The table entry of an option code; messages use its full name, as the user may have typed a
 * shortened one (or the short form). */
static const struct option *option_by_code(int code)
{
    for (const struct option *lo = long_options; lo->name != NULL; lo++)
        if (lo->val == code)
            return lo;
    return NULL;
}

void pkr_bad_arg(const char *fmt, ...)
{
    va_list ap;
    fputs("pkrun: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    usage(stderr);
    exit(PKR_EXIT_OWN);
}

/* Explains what getopt_long rejected (it prints nothing itself: opterr is 0). `arg` is the
 * argument it stopped at. A value given to an option that takes none is '?' to glibc and ':' to
 * mingw-w64's getopt_long: the option's table entry tells the two cases apart. */
static _Noreturn void bad_option(int c, const char *arg)
{
    const struct option *lo = option_by_code(optopt);
    bool long_form = strncmp(arg, "--", 2) == 0;
    if (c == ':' && lo != NULL && lo->has_arg != no_argument)
        pkr_bad_arg("--%s: needs a value", lo->name);
    const char *eq = strchr(arg, '=');
    if (long_form && lo != NULL)
        pkr_bad_arg("--%s: takes no value, got '%s'", lo->name, eq != NULL ? eq + 1 : arg);
    if (!long_form && optopt != 0)
        pkr_bad_arg("unknown option '-%c'", optopt);
    /* A long option: unknown, or a prefix of more than one (getopt_long says not which). */
    size_t len = strcspn(arg + 2, "=");
    char some[160] = "";
    int n = 0;
    for (lo = long_options; lo->name != NULL; lo++) {
        if (strncmp(lo->name, arg + 2, len) == 0) {
            size_t used = strlen(some);
            snprintf(some + used, sizeof some - used, "%s--%s", n++ ? ", " : "", lo->name);
        }
    }
    if (n > 1 && len > 0)
        pkr_bad_arg("ambiguous option '%.*s': %s", (int)len + 2, arg, some);
    pkr_bad_arg("unknown option '%.*s'", (int)len + 2, arg);
}

/* The values --keep accepts, in the order the help lists them (--containment's are the
 * platform's: pkr_containment_choices). */
static const struct pkr_choice keep_choices[] = {
    {"head", PK_KEEP_HEAD}, {"tail", PK_KEEP_TAIL}, {"fail", PK_KEEP_FAIL}, {NULL, 0}};

static int parse_choice(const char *opt, const char *v, const struct pkr_choice *choices)
{
    char names[64] = "";
    for (const struct pkr_choice *c = choices; c->name != NULL; c++) {
        if (strcmp(v, c->name) == 0)
            return c->value;
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", c == choices ? "" : ", ", c->name);
    }
    pkr_bad_arg("--%s: '%s' is not one of %s", opt, v, names);
}

static int64_t duration_arg(const char *opt, const char *v)
{
    int64_t ns;
    const char *why = pkr_parse_duration(v, &ns);
    if (why != NULL)
        pkr_bad_arg("--%s: '%s' %s", opt, v, why);
    return ns;
}

static size_t count_arg(const char *opt, const char *v)
{
    size_t n;
    const char *why = parse_count(v, &n);
    if (why != NULL)
        pkr_bad_arg("--%s: '%s' %s", opt, v, why);
    return n;
}

/* Applies one option getopt_long found (with its value, if it takes one). */
static void apply_option(struct pkr_options *o, int code, const char *v)
{
    const char *opt = option_by_code(code)->name;
    switch (code) {
    case OPT_TIMEOUT:
        o->timeout_ns = duration_arg(opt, v);
        o->limit_text = v;
        break;
    case OPT_KILL_AFTER:
    case OPT_GRACE:
        o->kill_after_ns = duration_arg(opt, v);
        break;
    case OPT_SIGNAL:
        o->signo = pkr_signal_arg(v);
        break;
    case OPT_IDLE:
        o->idle_ns = duration_arg(opt, v);
        break;
    case OPT_MAX_BYTES:
        o->max_bytes = count_arg(opt, v);
        o->capture = true;
        break;
    case OPT_MAX_LINES:
        o->max_lines = count_arg(opt, v);
        o->capture = true;
        break;
    case OPT_KEEP:
        o->keep = (pk_keep)parse_choice(opt, v, keep_choices);
        o->capture = true;
        break;
    case OPT_CONTAINMENT:
        o->containment = (pk_containment)parse_choice(opt, v, pkr_containment_choices);
        break;
    case OPT_JSON:
        if (v[0] == '\0')
            pkr_bad_arg("--json: needs a file name, or - for stdout");
        o->json = v;
        break;
    case OPT_PRESERVE:
        o->preserve_status = true;
        break;
    case OPT_FOREGROUND:
        o->foreground = true;
        break;
    case OPT_VERBOSE:
        o->verbose = true;
        break;
    case OPT_PDEATHSIG:
        break; /* always on */
    case OPT_VERSION:
        printf("pkrun (processkit) %s\n", pk_version());
        exit(fflush(stdout) == 0 ? 0 : PKR_EXIT_OWN);
    case OPT_HELP:
        help();
    }
}

/* Whether `name` would start a program: found in PATH (or a path that exists). */
static bool is_program(const char *name)
{
    char *path = NULL;
    int rc = pk_resolve_program(name, NULL, &path, NULL);
    free(path);
    return rc == 0 || rc == -EACCES;
}

/* Meant as a DURATION rather than a program's name: nothing at all, a leading space, or what
 * strtod would start to read (a sign, a digit, a point, inf or nan in any case). timeout calls
 * each of these that is not a duration an invalid time interval (125). */
static bool meant_as_duration(const char *v)
{
    if (v[0] == '\0' || isspace((unsigned char)v[0]))
        return true;
    if (v[0] == '-' || v[0] == '+')
        v++;
    return isdigit((unsigned char)v[0]) || v[0] == '.' || starts_with_ci(v, "inf") ||
           starts_with_ci(v, "nan");
}

/* The operands: [DURATION] COMMAND [ARG]... (see the top of this file). */
static void parse_operands(struct pkr_options *o, int argc, char **argv, bool timeout_given)
{
    int n = argc - optind;
    char **ops = argv + optind;
    if (n < 1)
        pkr_bad_arg("no COMMAND given");
    if (!timeout_given) {
        int64_t ns;
        const char *why = pkr_parse_duration(ops[0], &ns);
        if (why == NULL) {
            if (n < 2)
                pkr_bad_arg("no COMMAND after DURATION '%s'", ops[0]);
            o->timeout_ns = ns;
            o->limit_text = ops[0];
            ops++;
        } else if (n >= 2 && meant_as_duration(ops[0])) {
            /* A program may still be called so (7z): the older form runs it. Not one whose
             * name is empty, starts with a space, or is the directory '.'. */
            bool nameable =
                ops[0][0] != '\0' && !isspace((unsigned char)ops[0][0]) && strcmp(ops[0], ".") != 0;
            if (!nameable)
                pkr_bad_arg("DURATION '%s' %s", ops[0], why);
            if (!is_program(ops[0]))
                pkr_bad_arg("'%s' is neither a duration (examples: 10, 1.5, 250ms, 2m, inf) nor a "
                            "program",
                            ops[0]);
        }
    }
    o->argv = ops;
}

void pkr_parse(int argc, char **argv, struct pkr_options *o)
{
    *o = (struct pkr_options){
        .kill_after_ns = pkr_kill_after_default_ns, .signo = SIGTERM, .keep = PK_KEEP_TAIL};
    opterr = 0;
    bool timeout_given = false, max_bytes_given = false;
    /* "+": options end at the first operand (DURATION or COMMAND) or at "--", so the command's
     * own options reach it untouched; ":" tells a missing value apart from an unknown option. */
    int c;
    while ((c = getopt_long(argc, argv, "+:hk:s:v", long_options, NULL)) != -1) {
        if (c == '?' || c == ':')
            bad_option(c, argv[optind - 1]);
        timeout_given |= c == OPT_TIMEOUT;
        max_bytes_given |= c == OPT_MAX_BYTES;
        apply_option(o, c, optarg);
    }
    parse_operands(o, argc, argv, timeout_given);
    if (!max_bytes_given)
        o->max_bytes = 1 << 20;
    int rc = o->json != NULL ? pkr_output_check(o->json) : 0;
    if (rc != 0) /* checked now, so that a typo costs no run */
        pkr_bad_arg("--json: cannot write '%s': %s", o->json, pk_strerror(rc));
    pkr_check_options(o);
}

bool pkr_output_needed(const struct pkr_options *o)
{
    return o->idle_ns != 0 || o->keep == PK_KEEP_FAIL || (o->json != NULL && o->capture);
}

bool pkr_output_recorded(const struct pkr_options *o)
{
    return (o->json != NULL && o->capture) || o->keep == PK_KEEP_FAIL;
}
