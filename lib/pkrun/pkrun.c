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
#include "processkit.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define EXIT_TIMEOUT  124
#define EXIT_OWN      125
#define EXIT_NOEXEC   126
#define EXIT_NOTFOUND 127

static const char usage_text[] =
    "usage: pkrun [--timeout S] [--grace S] [--idle-timeout S] [--max-bytes N] [--max-lines N]\n"
    "             [--keep head|tail|fail] [--containment auto|cgroup|pgroup] [--pdeathsig]\n"
    "             [--json FILE|-] [--verbose] -- PROGRAM [ARGS...]\n";

static void usage(FILE *f)
{
    fputs(usage_text, f);
}

static void help(void)
{
    usage(stdout);
    fputs("\n"
          "Runs PROGRAM in a private group (a cgroup v2 leaf when the host delegates one, else a\n"
          "process group) so that nothing it starts outlives it, forwarding its stdout and stderr\n"
          "line by line.\n"
          "\n"
          "  --timeout S        end the tree S seconds after the start (fractions allowed)\n"
          "  --idle-timeout S   end it after S seconds without any output\n"
          "  --grace S          after a limit: SIGTERM, then SIGKILL S seconds later (default 2;\n"
          "                     0 kills at once). Also used for forwarded signals.\n"
          "  --max-bytes N      keep at most N bytes of each stream (K, M, G suffixes; default\n"
          "                     1M when no cap is given)\n"
          "  --max-lines N      keep at most N lines of each stream\n"
          "  --keep POLICY      tail (default): the last lines; head: the first lines; fail: like\n"
          "                     head, and exit 125 when the output did not fit\n"
          "  --containment M    auto (default), cgroup (fail when unavailable), pgroup\n"
          "  --pdeathsig        SIGKILL the child if pkrun itself dies\n"
          "  --json FILE|-      write the outcome as JSON to FILE (- for stdout, after the run)\n"
          "  --verbose          say on stderr which mechanisms are in use and how the run ended\n"
          "\n"
          "Exit status: the child's code; 124 time limit; 125 pkrun failed; 126 not executable;\n"
          "127 not found; 128+N the child died of signal N.\n",
          stdout);
}

/* ---- arguments ----------------------------------------------------------------------------- */

struct options {
    double timeout, grace, idle;
    bool grace_set;
    size_t max_bytes, max_lines;
    pk_keep keep;
    pk_containment containment;
    bool pdeathsig, verbose;
    const char *json;
    char **argv;
};

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

static double parse_seconds(const char *opt, const char *v)
{
    char *end;
    errno = 0;
    double d = v != NULL ? strtod(v, &end) : NAN;
    if (v == NULL || *v == '\0' || *end != '\0' || errno != 0 || !isfinite(d) || d < 0 || d > 1e9)
        bad_arg("%s needs a number of seconds >= 0, got '%s'", opt, v ? v : "");
    return d;
}

static size_t parse_size(const char *opt, const char *v)
{
    char *end;
    errno = 0;
    unsigned long long n = v != NULL && v[0] != '-' ? strtoull(v, &end, 10) : 0;
    if (v == NULL || v[0] == '-' || end == v || errno != 0)
        bad_arg("%s needs a count (with an optional K, M or G suffix), got '%s'", opt, v ? v : "");
    unsigned long long mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = 1ULL << 10, end++;
    else if (*end == 'M' || *end == 'm')
        mult = 1ULL << 20, end++;
    else if (*end == 'G' || *end == 'g')
        mult = 1ULL << 30, end++;
    if (*end != '\0' || n > (1ULL << 40) / mult)
        bad_arg("%s needs a count (with an optional K, M or G suffix), got '%s'", opt, v);
    return (size_t)(n * mult);
}

static void parse(int argc, char **argv, struct options *o)
{
    *o = (struct options){.grace = 2.0, .keep = PK_KEEP_TAIL};
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            help();
            exit(0);
        } else if (strcmp(a, "--timeout") == 0) {
            o->timeout = parse_seconds(a, v), i++;
        } else if (strcmp(a, "--grace") == 0) {
            o->grace = parse_seconds(a, v), i++;
        } else if (strcmp(a, "--idle-timeout") == 0) {
            o->idle = parse_seconds(a, v), i++;
        } else if (strcmp(a, "--max-bytes") == 0) {
            o->max_bytes = parse_size(a, v), i++;
        } else if (strcmp(a, "--max-lines") == 0) {
            o->max_lines = parse_size(a, v), i++;
        } else if (strcmp(a, "--keep") == 0) {
            if (v != NULL && strcmp(v, "head") == 0)
                o->keep = PK_KEEP_HEAD;
            else if (v != NULL && strcmp(v, "tail") == 0)
                o->keep = PK_KEEP_TAIL;
            else if (v != NULL && strcmp(v, "fail") == 0)
                o->keep = PK_KEEP_FAIL;
            else
                bad_arg("--keep needs head, tail or fail, got '%s'", v ? v : "");
            i++;
        } else if (strcmp(a, "--containment") == 0) {
            if (v != NULL && strcmp(v, "auto") == 0)
                o->containment = PK_CONTAIN_AUTO;
            else if (v != NULL && strcmp(v, "cgroup") == 0)
                o->containment = PK_CONTAIN_CGROUP;
            else if (v != NULL && strcmp(v, "pgroup") == 0)
                o->containment = PK_CONTAIN_PGROUP;
            else
                bad_arg("--containment needs auto, cgroup or pgroup, got '%s'", v ? v : "");
            i++;
        } else if (strcmp(a, "--pdeathsig") == 0) {
            o->pdeathsig = true;
        } else if (strcmp(a, "--verbose") == 0) {
            o->verbose = true;
        } else if (strcmp(a, "--json") == 0) {
            if (v == NULL || v[0] == '\0')
                bad_arg("--json needs a file name or -");
            o->json = v, i++;
        } else if (a[0] == '-') {
            bad_arg("unknown option '%s'", a);
        } else {
            break; /* the program, without a "--" before it */
        }
    }
    if (i >= argc)
        bad_arg("no PROGRAM given");
    o->argv = argv + i;
    if (o->max_bytes == 0 && o->max_lines == 0)
        o->max_bytes = 1 << 20;
}

/* ---- forwarding and signals ---------------------------------------------------------------- */

static pk_cancel *cancel;

static void on_signal(int sig)
{
    pk_cancel_trigger_signal(cancel, sig); /* async-signal-safe */
}

/* Writes the line and, when it had one, its newline, in one call. */
static void write_line(int fd, const char *p, size_t n, bool newline)
{
    struct iovec iov[2] = {{(void *)p, n}, {"\n", newline ? 1 : 0}};
    int cnt = 2;
    struct iovec *v = iov;
    while (cnt > 0) {
        ssize_t k = writev(fd, v, cnt);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return; /* our own output is gone: keep running the child, drop its output */
        while (cnt > 0 && (size_t)k >= v->iov_len) {
            k -= (ssize_t)v->iov_len;
            v++, cnt--;
        }
        if (cnt > 0) {
            v->iov_base = (char *)v->iov_base + k;
            v->iov_len -= (size_t)k;
        }
    }
}

static int forward(void *user, const pk_line *line)
{
    (void)user;
    /* Raw mode: the line is the child's bytes, unchanged. */
    write_line(line->stream == 1 ? 1 : 2, line->data, line->len, line->newline);
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

static int
write_json(const char *path, const struct options *o, const pk_result *r, int rc, int status)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : NULL;
    char tmp[4096];
    if (f == NULL) {
        /* Atomic: a reader never sees half a file. */
        snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
        f = fopen(tmp, "we");
        if (f == NULL) {
            fprintf(stderr, "pkrun: cannot write %s: %s\n", tmp, strerror(errno));
            return -1;
        }
    }
    const pk_outcome *oc = &r->outcome;
    bool downgraded = r->containment != PK_CONTAIN_CGROUP && o->containment == PK_CONTAIN_AUTO;
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
    fprintf(f, "  \"outcome\": \"%s\",\n", pk_outcome_kind_name(oc->kind));
    if (oc->kind == PK_OUTCOME_SPAWN_FAILED)
        fprintf(f, "  \"stage\": \"%s\",\n  \"error\": \"%s\",\n", pk_stage_name(oc->stage),
                pk_errname(oc->error));
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
    fputs("  \"streams\": {\n", f);
    json_stream(f, "stdout", &r->out, o->keep);
    fputs(",\n", f);
    json_stream(f, "stderr", &r->err, o->keep);
    fputs("\n  }\n}\n", f);
    if (f == stdout)
        return fflush(f) == 0 ? 0 : -1;
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "pkrun: cannot write %s: %s\n", path, strerror(errno));
        unlink(tmp);
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
    case PK_OUTCOME_NONE:
        break;
    }
    return EXIT_OWN;
}

int main(int argc, char **argv)
{
    struct options o;
    parse(argc, argv, &o);

    int rc = pk_cancel_new(&cancel);
    if (rc != 0) {
        fprintf(stderr, "pkrun: %s\n", pk_strerror(rc));
        return EXIT_OWN;
    }
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    pk_stdio out = {
        .kind = PK_STDIO_CAPTURE,
        .raw = true,
        .capture = {.keep = o.keep, .max_bytes = o.max_bytes, .max_lines = o.max_lines},
    };
    pk_stdio err = out;
    pk_command cmd = {
        .argv = (const char *const *)o.argv,
        .in.kind = PK_STDIO_INHERIT,
        .out = out,
        .err = err,
        .containment = o.containment,
        .pdeathsig = o.pdeathsig ? SIGKILL : 0,
        .timeout_ms = (int64_t)(o.timeout * 1000 + 0.5),
        .idle_timeout_ms = (int64_t)(o.idle * 1000 + 0.5),
        .grace_ms = (int64_t)(o.grace * 1000 + 0.5),
        .cancel = cancel,
        .on_line = forward,
    };
    if (o.timeout > 0 && cmd.timeout_ms == 0)
        cmd.timeout_ms = 1;
    if (o.idle > 0 && cmd.idle_timeout_ms == 0)
        cmd.idle_timeout_ms = 1;

    if (o.verbose)
        fprintf(stderr, "pkrun: spawn mechanism %s, containment requested %s, host offers %s\n",
                pk_mechanism_name(pk_spawn_mechanism()), pk_containment_name(o.containment),
                pk_containment_name(pk_host_containment()));
    pk_result r;
    rc = pk_run(&cmd, &r);
    int status = exit_status(rc, &r);

    if (r.outcome.kind == PK_OUTCOME_SPAWN_FAILED) {
        if (rc == PK_ENOTFOUND)
            fprintf(stderr, "pkrun: %s: not found in PATH (searched %s)\n", o.argv[0],
                    r.searched ? r.searched : "");
        else if (rc == PK_ENOCONTAIN)
            fprintf(stderr, "pkrun: --containment %s: %s\n", pk_containment_name(o.containment),
                    pk_strerror(rc));
        else
            fprintf(stderr, "pkrun: %s: %s (stage %s)\n", o.argv[0], pk_strerror(rc),
                    pk_stage_name(r.outcome.stage));
    } else if (rc == PK_ETOOLARGE) {
        fprintf(stderr,
                "pkrun: output over the --keep fail cap: stdout %llu bytes / %llu lines, "
                "stderr %llu bytes / %llu lines\n",
                (unsigned long long)r.out.total_bytes, (unsigned long long)r.out.total_lines,
                (unsigned long long)r.err.total_bytes, (unsigned long long)r.err.total_lines);
    } else if (rc != 0) {
        fprintf(stderr, "pkrun: %s\n", pk_strerror(rc));
    }
    if (o.verbose) {
        fprintf(stderr, "pkrun: containment %s%s; outcome %s", pk_containment_name(r.containment),
                r.containment != PK_CONTAIN_CGROUP && o.containment == PK_CONTAIN_AUTO
                    ? " (downgraded: no cgroup v2 delegated here; setsid descendants can escape)"
                    : "",
                pk_outcome_kind_name(r.outcome.kind));
        if (r.outcome.signo != 0)
            fprintf(stderr, ", signal %d", r.outcome.signo);
        else if (r.outcome.kind != PK_OUTCOME_SPAWN_FAILED)
            fprintf(stderr, ", exit code %d", r.outcome.code);
        fprintf(stderr, "; wall %.1f ms; exit status %d\n", (double)r.outcome.wall_ns / 1e6,
                status);
    }
    if (o.json != NULL && write_json(o.json, &o, &r, rc, status) != 0)
        status = EXIT_OWN;
    pk_result_release(&r);
    pk_cancel_free(cancel);
    return status;
}
