/*
 * pkrun's command line: getopt_long over pkrun's own options and timeout(1)'s, then the operands
 * — `[DURATION] COMMAND [ARG]...`.
 *
 * Two forms are accepted, so pkrun drops in where timeout is used and old pkrun lines keep
 * working: `pkrun [OPTION]... DURATION COMMAND [ARG]...` (timeout's) and `pkrun [OPTION]...
 * [--] COMMAND [ARG]...` with --timeout (pkrun's own). Without --timeout, a first operand that
 * reads as a duration is the DURATION; one that starts like a number but is neither a duration
 * nor a program is refused as a bad duration (125, as timeout does).
 *
 * Values are strict, so a typo never becomes a different limit: durations take no sign, space,
 * hex, inf or nan, and nothing after the unit. Within that, they read as timeout reads them:
 * floating point, s/m/h/d, 0 for none, a value past any clock saturates to "never", and one too
 * small to represent (1e-5000) is the smallest limit, not none.
 */
#define _GNU_SOURCE
#include "pkrun.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char usage_text[] =
    "usage: pkrun [OPTION]... DURATION COMMAND [ARG]...\n"
    "       pkrun [OPTION]... [--] COMMAND [ARG]...\n"
    "options: [-s SIG] [-k S] [--preserve-status] [--foreground] [-v] [--timeout S]\n"
    "         [--idle-timeout S] [--max-bytes N] [--max-lines N] [--keep head|tail|fail]\n"
    "         [--containment auto|cgroup|pgroup] [--json FILE|-] [--pdeathsig]\n";

static void usage(FILE *f)
{
    fputs(usage_text, f);
}

static _Noreturn void help(void)
{
    usage(stdout);
    fputs(
        "\n"
        "Runs COMMAND in a private group (a cgroup v2 leaf when the host delegates one, else a\n"
        "process group), so that nothing it starts outlives it, and ends the whole tree when\n"
        "DURATION passes. A drop-in for timeout(1): its command line, signals and exit statuses.\n"
        "COMMAND inherits pkrun's stdin, stdout and stderr (its bytes never pass through pkrun)\n"
        "unless --idle-timeout, --keep fail, or --json with a capture option needs to see them;\n"
        "then pkrun relays them as they come, unchanged and in full.\n"
        "\n"
        "  DURATION, --timeout S  end the tree S after the start (0: no limit)\n"
        "  -s, --signal SIG    the signal sent at the limit: a name (TERM, SIGINT, int) or a\n"
        "                      number; default TERM; 0 sends nothing\n"
        "  -k, --kill-after S  SIGKILL the tree S after the first signal (default 2; 0: at\n"
        "                      once). Also after a signal pkrun forwards. --grace is the same\n"
        "  --preserve-status   exit with COMMAND's status even when a limit ended it\n"
        "  --foreground        COMMAND stays in pkrun's process group: it may read the terminal\n"
        "                      and gets its signals itself; without a cgroup, only COMMAND\n"
        "                      itself is then ended, not its children\n"
        "  --idle-timeout S    end the tree after S without output (relays the output)\n"
        "  --json FILE|-       write the outcome as JSON to FILE (- for stdout, after the run)\n"
        "  --max-bytes N       with --json: record at most N bytes of each stream (default 1M)\n"
        "  --max-lines N       with --json: record at most N lines of each stream\n"
        "  --keep POLICY       with --json: tail (default), the last lines; head, the first;\n"
        "                      fail: like head, and exit 125 when the output did not fit (this\n"
        "                      one works without --json too)\n"
        "  --containment M     auto (default), cgroup (fail when unavailable), pgroup\n"
        "  --pdeathsig         SIGKILL the command if pkrun dies (always on; kept for old lines)\n"
        "  -v, --verbose       say which mechanisms are in use, each signal sent, how it ended\n"
        "  -h, --help          print this help and exit\n"
        "  --version           print the version and exit\n"
        "\n"
        "S, a duration: a decimal number (1, 1.5, .25, 2e-3) and an optional unit: ms, s (the\n"
        "default), m, h or d. N, a count: digits and an optional K, M or G (binary: 1K = 1024);\n"
        "at most 1T. No signs, spaces or hex in either. A value follows its option as\n"
        "--timeout=5 or --timeout 5; a long option may be shortened while it stays unambiguous.\n"
        "Options end at DURATION or COMMAND, or at --: everything after is COMMAND's.\n"
        "\n"
        "Signals: INT, TERM, HUP, QUIT, USR1, USR2, PIPE and the other terminating signals sent\n"
        "to pkrun go to the whole tree, then SIGKILL after -k; ALRM means the time is up now.\n"
        "A signal ignored when pkrun started stays ignored (nohup). One from the terminal\n"
        "(Ctrl-C) already reached COMMAND in pkrun's process group and is not sent again.\n"
        "\n"
        "Exit status: COMMAND's own; 124 a limit ended it (137 when SIGKILL was needed;\n"
        "COMMAND's with --preserve-status); 125 pkrun failed or bad arguments; 126 COMMAND\n"
        "found but not executable; 127 not found. When COMMAND dies of a signal, pkrun ends by\n"
        "the same signal (a shell shows 128+N).\n",
        stdout);
    exit(fflush(stdout) == 0 ? 0 : PKR_EXIT_OWN);
}

/* ---- values -------------------------------------------------------------------------------- */

const char *pkr_parse_duration(const char *v, int64_t *ns)
{
    static const struct {
        const char *unit;
        double scale;
    } units[] = {{"", 1}, {"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}};
    static const char bad[] = "is not a duration (examples: 10, 1.5, 250ms, 2m)";
    /* strtod alone would take leading spaces, signs, "inf", "nan" and hex floats. */
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
            *ns = INT64_MAX / 2; /* past any clock (126 years), "never"; overflows saturate */
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

/* Signal names glibc knows but abbreviates differently, and the name of 0. */
static const struct {
    const char *name;
    int signo;
} signal_aliases[] = {{"EXIT", 0}, {"IOT", SIGABRT}, {"CLD", SIGCHLD}, {"POLL", SIGIO}};

const char *pkr_signal_name(int signo, char buf[16])
{
    const char *abbrev = signo > 0 && signo < SIGRTMIN ? sigabbrev_np(signo) : NULL;
    if (signo == 0)
        snprintf(buf, 16, "EXIT");
    else if (abbrev != NULL)
        snprintf(buf, 16, "%s", abbrev);
    else if (signo >= SIGRTMIN && signo <= SIGRTMAX)
        snprintf(buf, 16, "RTMIN+%d", signo - SIGRTMIN);
    else
        snprintf(buf, 16, "%d", signo);
    return buf;
}

/* -s's value: a number, or a name in any case with or without "SIG" (RTMIN+N, RTMAX-N too).
 * Returns the signal, or -1. */
static int parse_signal(const char *v)
{
    if (v[0] >= '0' && v[0] <= '9') {
        char *end;
        long n = strtol(v, &end, 10);
        return *end == '\0' && n <= SIGRTMAX ? (int)n : -1;
    }
    if (strncasecmp(v, "SIG", 3) == 0)
        v += 3;
    for (size_t i = 0; i < sizeof signal_aliases / sizeof signal_aliases[0]; i++)
        if (strcasecmp(v, signal_aliases[i].name) == 0)
            return signal_aliases[i].signo;
    for (int s = 1; s < SIGRTMIN; s++) {
        const char *name = sigabbrev_np(s);
        if (name != NULL && strcasecmp(v, name) == 0)
            return s;
    }
    int base = strncasecmp(v, "RTMIN", 5) == 0   ? SIGRTMIN
               : strncasecmp(v, "RTMAX", 5) == 0 ? SIGRTMAX
                                                 : 0;
    if (base == 0)
        return -1;
    if (v[5] == '\0')
        return base;
    char *end;
    long off = strtol(v + 5, &end, 10);
    int s = (int)(base + off);
    bool sign_ok = (base == SIGRTMIN && v[5] == '+') || (base == SIGRTMAX && v[5] == '-');
    return sign_ok && *end == '\0' && s >= SIGRTMIN && s <= SIGRTMAX ? s : -1;
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
    exit(PKR_EXIT_OWN);
}

/* Explains what getopt_long rejected (it prints nothing itself: opterr is 0). `arg` is the
 * argument it stopped at. */
static _Noreturn void bad_option(int c, const char *arg)
{
    const struct option *lo = option_by_code(optopt);
    bool long_form = strncmp(arg, "--", 2) == 0;
    if (c == ':' && lo != NULL)
        bad_arg("--%s: needs a value", lo->name);
    const char *eq = strchr(arg, '=');
    if (long_form && lo != NULL)
        bad_arg("--%s: takes no value, got '%s'", lo->name, eq != NULL ? eq + 1 : arg);
    if (!long_form && optopt != 0)
        bad_arg("unknown option '-%c'", optopt);
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
        bad_arg("ambiguous option '%.*s': %s", (int)len + 2, arg, some);
    bad_arg("unknown option '%.*s'", (int)len + 2, arg);
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

static int64_t duration_arg(const char *opt, const char *v)
{
    int64_t ns;
    const char *why = pkr_parse_duration(v, &ns);
    if (why != NULL)
        bad_arg("--%s: '%s' %s", opt, v, why);
    return ns;
}

static size_t count_arg(const char *opt, const char *v)
{
    size_t n;
    const char *why = parse_count(v, &n);
    if (why != NULL)
        bad_arg("--%s: '%s' %s", opt, v, why);
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
        o->signo = parse_signal(v);
        if (o->signo < 0)
            bad_arg("--signal: '%s' is not a signal (a name such as TERM, SIGINT or RTMIN+1, or "
                    "a number)",
                    v);
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
        o->containment = (pk_containment)parse_choice(opt, v, containment_choices);
        break;
    case OPT_JSON:
        if (v[0] == '\0')
            bad_arg("--json: needs a file name, or - for stdout");
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

/* Starts like a number, signed or not: meant as a DURATION rather than a program's name. */
static bool looks_numeric(const char *v)
{
    if (v[0] == '-' || v[0] == '+')
        v++;
    return isdigit((unsigned char)v[0]) || (v[0] == '.' && isdigit((unsigned char)v[1]));
}

/* The operands: [DURATION] COMMAND [ARG]... (see the top of this file). */
static void parse_operands(struct pkr_options *o, int argc, char **argv, bool timeout_given)
{
    int n = argc - optind;
    char **ops = argv + optind;
    if (n < 1)
        bad_arg("no COMMAND given");
    if (!timeout_given) {
        int64_t ns;
        if (pkr_parse_duration(ops[0], &ns) == NULL) {
            if (n < 2)
                bad_arg("no COMMAND after DURATION '%s'", ops[0]);
            o->timeout_ns = ns;
            o->limit_text = ops[0];
            ops++;
        } else if (n >= 2 && looks_numeric(ops[0]) && !is_program(ops[0])) {
            bad_arg("'%s' is neither a duration (examples: 10, 1.5, 250ms, 2m) nor a program",
                    ops[0]);
        }
    }
    o->argv = ops;
}

void pkr_parse(int argc, char **argv, struct pkr_options *o)
{
    *o = (struct pkr_options){.kill_after_ns = 2000000000, .signo = SIGTERM, .keep = PK_KEEP_TAIL};
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
        bad_arg("--json: cannot write '%s': %s", o->json, pk_strerror(rc));
    if (o->foreground && o->containment == PK_CONTAIN_PGROUP)
        bad_arg("--foreground keeps COMMAND in pkrun's process group: it cannot be combined "
                "with --containment pgroup");
}
