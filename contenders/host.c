/*
 * host — the C measuring worker: `pkbench worker` runs the C contenders of registry.c in a
 * process of their own, driven by pkbench over stdin and stdout with the worker protocol
 * (contenders/README.md, "The worker protocol"; version 1). The fan-out at scale runs every
 * series this way (harness/suites/scenarios/measure.c): each (contender, N) in a fresh process,
 * so that its peak resident memory and its descriptors are its own, its descriptor table and
 * RLIMIT_NOFILE are not shared with the other contenders (processkit's pooled cgroup leaves, for
 * one, would otherwise sit in every peer's table and be copied by every fork), and what one
 * series leaves behind (leaves, holders, threads) cannot slow another.
 *
 *   pkw 1 name=pkbench runtime=c17-processkit-<version> kinds=... contenders=<registry>
 *   setup contender=... scenario=... kind=... program=... program_path=... children=N
 *         input_file=... input_bytes=... expect_bytes=... expect_lines=...   -> ok | error ...
 *   run K        -> done K ns=... bytes=... lines=... children=... failures=...
 *                   cpu_children_ns=... cpu_self_ns=... [peak_rss_kib=... idle_fds=...
 * peak_fds=...] teardown     -> ok quit (or end of file) -> exit 0
 *
 * At start the soft RLIMIT_NOFILE is raised to the hard limit (thousands of children in flight
 * need tens of thousands of descriptors), and, unless stdin is a terminal, SIGINT is ignored: a
 * terminal's Ctrl-C reaching the worker's process group is pkbench's to handle, which then tells
 * its workers to quit.
 * A fan-out's setup counts, untimed, the descriptors open before it and with all of one
 * iteration's children started (the contender counts them: contender.h's count_fds). Each `run`
 * of a fan-out resets VmHWM (writing 5 to /proc/self/clear_refs) and reports it after the batch.
 * Each iteration is timed with CLOCK_MONOTONIC around exactly the contender's `run`; the CPU is
 * getrusage's over the batch.
 */
#define _GNU_SOURCE
#include "contenders/host.h"

#include "contenders/registry.h"
#include "processkit.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* The one series a worker serves at a time. */
struct series {
    const pkb_contender *c;
    void *state;
    pkb_workload w;
    unsigned char *input;
    bool set_up;
    uint32_t idle_fds, peak_fds;
};

/* ---- lines --------------------------------------------------------------------------------- */

/* Writes the whole line (a newline added) to stdout; false when stdout is gone. */
static bool say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool say(const char *fmt, ...)
{
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return false;
    size_t len = (size_t)n < sizeof line - 1 ? (size_t)n : sizeof line - 2;
    for (size_t i = 0; i < len; i++)
        if (line[i] == '\n' || line[i] == '\r')
            line[i] = ' '; /* one line, whatever a message held */
    line[len++] = '\n';
    for (size_t off = 0; off < len;) {
        ssize_t w = write(STDOUT_FILENO, line + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        off += (size_t)w;
    }
    return true;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Decodes %XX in place; false on a malformed escape or an encoded NUL. */
static bool percent_decode(char *s)
{
    char *o = s;
    for (const char *p = s; *p != '\0'; p++) {
        if (*p != '%') {
            *o++ = *p;
            continue;
        }
        int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
        if (lo < 0 || (hi == 0 && lo == 0))
            return false;
        *o++ = (char)(hi * 16 + lo);
        p += 2;
    }
    *o = '\0';
    return true;
}

/* The value of `key` among the words of a request (decoded), or NULL. Modifies nothing. */
static const char *value_of(char *const *words, int n, const char *key)
{
    size_t k = strlen(key);
    for (int i = 1; i < n; i++)
        if (strncmp(words[i], key, k) == 0 && words[i][k] == '=')
            return words[i] + k + 1;
    return NULL;
}

/* A count: decimal, no sign, at most `max`. */
static bool count_of(const char *v, unsigned long long max, unsigned long long *out)
{
    if (v == NULL || *v < '0' || *v > '9')
        return false;
    unsigned long long n = 0;
    for (const char *p = v; *p != '\0'; p++) {
        if (*p < '0' || *p > '9' || n > (max - (unsigned long long)(*p - '0')) / 10)
            return false;
        n = n * 10 + (unsigned long long)(*p - '0');
    }
    *out = n;
    return true;
}

/* ---- measuring ----------------------------------------------------------------------------- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(int who)
{
    struct rusage ru;
    if (getrusage(who, &ru) != 0)
        return 0;
    return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
           ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

/* VmHWM (peak resident set) or VmRSS from /proc/self/status, in KiB; 0 when unreadable. */
static uint64_t status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (f == NULL)
        return 0;
    char line[256];
    uint64_t kib = 0;
    size_t k = strlen(field);
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, field, k) == 0 && line[k] == ':') {
            kib = strtoull(line + k + 1, NULL, 10);
            break;
        }
    fclose(f);
    return kib;
}

/* Resets VmHWM to the current VmRSS (Linux 4.0): the next read is this batch's peak. */
static void reset_peak(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = write(fd, "5", 1);
    (void)n;
    close(fd);
}

static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* ---- requests ------------------------------------------------------------------------------ */

static const pkb_contender *find_contender(const char *name)
{
    for (size_t k = 0; k < pkb_contender_count; k++)
        if (strcmp(pkb_contenders[k]->name, name) == 0)
            return pkb_contenders[k];
    return NULL;
}

static void series_end(struct series *s)
{
    if (s->set_up && s->c->teardown != NULL)
        s->c->teardown(s->state);
    free(s->input);
    *s = (struct series){0};
}

/* The input file's bytes into s->input (read during setup, untimed). */
static bool read_input(struct series *s, const char *path, unsigned long long bytes)
{
    if (strcmp(path, "-") == 0)
        return bytes == 0;
    s->input = malloc(bytes > 0 ? (size_t)bytes : 1);
    FILE *f = s->input != NULL ? fopen(path, "rbe") : NULL;
    bool ok = f != NULL && fread(s->input, 1, (size_t)bytes, f) == (size_t)bytes;
    if (f != NULL)
        fclose(f);
    return ok;
}

/* The workload a setup line describes; a one-line reason in why when it is not one we serve. */
static bool parse_setup(char *const *words, int n, struct series *s, char *why, size_t len)
{
    const char *cn = value_of(words, n, "contender"), *sn = value_of(words, n, "scenario");
    const char *kind = value_of(words, n, "kind"), *in = value_of(words, n, "input_file");
    unsigned long long children, in_bytes, eb, el;
    int fixed = 0;
    s->c = cn != NULL ? find_contender(cn) : NULL;
    int sc = sn != NULL ? pkb_scenario_parse(sn, &fixed) : -1;
    if (s->c == NULL) {
        snprintf(why, len, "no contender '%s' here", cn != NULL ? cn : "");
        return false;
    }
    if (sc < 0 || !(s->c->scenarios & PKB_SCENARIO_BIT(sc))) {
        snprintf(why, len, "%s does not run scenario '%s'", s->c->name, sn != NULL ? sn : "");
        return false;
    }
    bool fans = pkb_scenario_fans_out((pkb_scenario)sc);
    if (kind == NULL || strcmp(kind, fans                            ? "fan_out"
                                     : sc == PKB_STREAM_LARGE_STDOUT ? "stream"
                                     : sc == PKB_SPAWN_ONLY          ? "spawn_only"
                                                                     : "capture") != 0) {
        snprintf(why, len, "kind '%s' is not scenario %s's", kind != NULL ? kind : "", sn);
        return false;
    }
    if (!count_of(value_of(words, n, "children"), PKB_FAN_OUT_MAX, &children) || children < 1 ||
        !count_of(value_of(words, n, "input_bytes"), 1u << 30, &in_bytes) ||
        !count_of(value_of(words, n, "expect_bytes"), 1ull << 40, &eb) ||
        !count_of(value_of(words, n, "expect_lines"), 1ull << 40, &el) || in == NULL ||
        value_of(words, n, "program") == NULL || value_of(words, n, "program_path") == NULL) {
        snprintf(why, len, "setup lacks a field or has a malformed count");
        return false;
    }
    if (!read_input(s, in, in_bytes)) {
        snprintf(why, len, "cannot read %llu bytes of input from '%s'", in_bytes, in);
        return false;
    }
    s->w = (pkb_workload){
        .scenario = (pkb_scenario)sc,
        .program = value_of(words, n, "program"),
        .program_path = value_of(words, n, "program_path"),
        .input = s->input,
        .input_len = (size_t)in_bytes,
        .expect_bytes = (size_t)eb,
        .expect_lines = (size_t)el,
        .children = (int)children,
    };
    return true;
}

/* `setup`: the contender set up and, for a fan-out, its descriptors counted in one untimed
 * iteration. The words stay alive (the workload points into them) until the next request: the
 * caller keeps them. */
static void do_setup(char *const *words, int n, struct series *s)
{
    char why[256];
    if (!parse_setup(words, n, s, why, sizeof why)) {
        series_end(s);
        say("error %s", why);
        return;
    }
    s->idle_fds = pkb_count_fds();
    int rc = s->c->setup != NULL ? s->c->setup(&s->state, &s->w) : 0;
    if (rc != 0) {
        say("error %s: set-up failed: %s", s->c->name, strerror(rc < 0 ? -rc : rc));
        s->c = NULL;
        series_end(s);
        return;
    }
    s->set_up = true;
    if (pkb_scenario_fans_out(s->w.scenario)) {
        pkb_sample out;
        memset(&out, 0, sizeof out);
        s->w.count_fds = true;
        rc = s->c->run(s->state, &s->w, &out);
        s->w.count_fds = false;
        if (rc != 0) {
            say("error %s: the counting iteration failed: %s", s->c->name,
                out.error[0] ? out.error : strerror(rc < 0 ? -rc : rc));
            series_end(s);
            return;
        }
        s->peak_fds = out.peak_fds;
    }
    say("ok");
}

/* `run K`: K timed iterations, their sums. */
static void do_run(char *const *words, int n, struct series *s)
{
    unsigned long long k;
    if (n != 2 || !count_of(words[1], 1u << 30, &k) || k < 1) {
        say("error run needs a count of iterations");
        return;
    }
    if (!s->set_up) {
        say("error run before setup");
        return;
    }
    bool fans = pkb_scenario_fans_out(s->w.scenario);
    if (fans)
        reset_peak();
    pkb_sample sum;
    memset(&sum, 0, sizeof sum);
    uint64_t wall = 0, child0 = cpu_ns(RUSAGE_CHILDREN), self0 = cpu_ns(RUSAGE_SELF);
    for (unsigned long long i = 0; i < k; i++) {
        pkb_sample out;
        memset(&out, 0, sizeof out);
        uint64_t t0 = now_ns();
        int rc = s->c->run(s->state, &s->w, &out);
        wall += now_ns() - t0;
        if (rc != 0) {
            say("error %s: %s", s->c->name, out.error[0] ? out.error : strerror(rc < 0 ? -rc : rc));
            return;
        }
        sum.bytes += out.bytes;
        sum.lines += out.lines;
        sum.children += out.children;
        sum.failures += out.failures;
    }
    uint64_t child = cpu_ns(RUSAGE_CHILDREN) - child0, self = cpu_ns(RUSAGE_SELF) - self0;
    char peaks[128] = "";
    if (fans)
        snprintf(peaks, sizeof peaks, " peak_rss_kib=%llu idle_fds=%u peak_fds=%u",
                 (unsigned long long)status_kib("VmHWM"), s->idle_fds, s->peak_fds);
    say("done %llu ns=%llu bytes=%llu lines=%llu children=%d failures=%d cpu_children_ns=%llu "
        "cpu_self_ns=%llu%s",
        k, (unsigned long long)wall, (unsigned long long)sum.bytes, (unsigned long long)sum.lines,
        sum.children, sum.failures, (unsigned long long)child, (unsigned long long)self, peaks);
}

/* Splits a line into words at single spaces, each decoded. 0 words when one is malformed. */
static int split(char *line, char **words, int cap)
{
    int n = 0;
    for (char *p = strtok(line, " "); p != NULL && n < cap; p = strtok(NULL, " ")) {
        if (!percent_decode(p))
            return 0;
        words[n++] = p;
    }
    return n;
}

static const char usage[] =
    "usage: pkbench worker\n"
    "The C measuring worker: serves the scenarios suite's C contenders over the worker protocol\n"
    "(contenders/README.md), one request per line on stdin, one answer per line on stdout.\n"
    "pkbench starts it for every series of the fan-out at scale; end it with quit or end of "
    "file.\n";

int pkb_host_main(int argc, char **argv)
{
    if (argc > 1) {
        bool help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
        if (!help)
            fprintf(stderr, "pkbench: worker: unexpected argument '%s'\n", argv[1]);
        fputs(usage, help ? stdout : stderr);
        return help ? 0 : 1;
    }
    /* Driven through pipes, a terminal's Ctrl-C is pkbench's to handle (it then says quit); typed
     * at a terminal, Ctrl-C ends the worker as it ends any tool. */
    if (!isatty(STDIN_FILENO))
        signal(SIGINT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    raise_nofile();
    char names[1024] = "";
    for (size_t k = 0; k < pkb_contender_count; k++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? "," : "",
                 pkb_contenders[k]->name);
    if (!say("pkw 1 name=pkbench runtime=c17-processkit-%s kinds=capture,stream,fan_out,"
             "spawn_only contenders=%s",
             pk_version(), names))
        return 1;
    struct series s = {0};
    char *line = NULL, *held = NULL; /* held: the setup line the workload points into */
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) > 0) {
        if (line[len - 1] == '\n')
            line[--len] = '\0';
        char *words[32];
        int n = split(line, words, 32);
        if (n == 0) {
            say("error a request that is not one (empty, or a malformed %%-escape)");
        } else if (strcmp(words[0], "setup") == 0) {
            series_end(&s); /* before the words its workload points into go */
            free(held);
            held = line;
            line = NULL;
            cap = 0;
            do_setup(words, n, &s);
        } else if (strcmp(words[0], "run") == 0) {
            do_run(words, n, &s);
        } else if (strcmp(words[0], "teardown") == 0) {
            series_end(&s);
            say("ok");
        } else if (strcmp(words[0], "quit") == 0) {
            break;
        } else {
            say("error unknown request '%s'", words[0]);
        }
    }
    series_end(&s);
    free(held);
    free(line);
    pk_cleanup();
    return 0;
}
