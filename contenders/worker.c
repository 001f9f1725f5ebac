/*
 * worker — the harness's side of the worker protocol (worker.h; the protocol itself is
 * contenders/README.md): a persistent program started with processkit, spoken to one line at a
 * time, every answer awaited with a deadline.
 *
 * Why it reads the pipes itself rather than through pk_process_read_line: a request must end at
 * its deadline whatever the worker does, and the worker's stderr must be drained while we wait
 * (a worker blocked on a full stderr pipe would look hung). So stdout and stderr are captured
 * pipes polled together here; stdout is split into protocol lines, stderr kept as a tail.
 *
 * The worker runs in a process group of its own, not a cgroup leaf: it stays in pkbench's cgroup,
 * where an in-process contender and its children run (a cgroup with a CPU controller would
 * schedule it apart), and killing the group still takes the children of a hung worker with it.
 *
 * stdin is a pipe of ours whose read end we keep open too: a pipe with a reader never raises
 * SIGPIPE, so a worker that died cannot kill pkbench with our next request; its death shows as
 * end of file on its stdout, and its exit status is read by reaping it.
 */
#define _GNU_SOURCE
#include "contenders/worker.h"

#include "processkit.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { LINE_CAP = 4096, ERR_CAP = 4096, WHAT_CAP = 200, LAST_CAP = 100, WHY_CAP = 400 };

struct pkb_worker {
    char name[64];
    pk_process *proc;
    int in, in_guard; /* our end of its stdin, and our copy of the read end (no SIGPIPE) */
    pkb_worker_hello hello;
    int64_t base_ms, per_iteration_ms;
    double slowest_ns; /* the slowest mean iteration an answer has reported */
    char line[LINE_CAP + 1];
    size_t len;            /* bytes of stdout buffered in `line` */
    bool out_eof;          /* its stdout ended */
    bool err_eof;          /* its stderr ended: no longer polled */
    char err[ERR_CAP + 1]; /* the tail of its stderr */
    size_t err_len;
    char failure[WHY_CAP]; /* set once it failed: every later call repeats it */
};

/* src into dst, cut to fit. */
static void copy_text(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- stderr, kept as a tail ---------------------------------------------------------------- */

static void keep_err(pkb_worker *w, const char *data, size_t n)
{
    if (n >= ERR_CAP) {
        data += n - ERR_CAP;
        n = ERR_CAP;
    }
    if (w->err_len + n > ERR_CAP) { /* drop the oldest bytes */
        size_t drop = w->err_len + n - ERR_CAP;
        memmove(w->err, w->err + drop, w->err_len - drop);
        w->err_len -= drop;
    }
    memcpy(w->err + w->err_len, data, n);
    w->err_len += n;
    w->err[w->err_len] = '\0';
}

static void drain_err(pkb_worker *w)
{
    int fd = pk_process_fd(w->proc, 2);
    char buf[4096];
    while (fd >= 0 && !w->err_eof) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0)
            keep_err(w, buf, (size_t)n);
        else if (n == 0 || errno != EINTR)
            w->err_eof = n == 0 || errno != EAGAIN; /* EAGAIN: drained for now */
        if (n < 0 && errno == EAGAIN)
            break;
    }
}

/* The last non-empty line of its stderr, for a reason ("" when none). */
static void last_err_line(const pkb_worker *w, char *out, size_t cap)
{
    size_t end = w->err_len;
    while (end > 0 && (w->err[end - 1] == '\n' || w->err[end - 1] == '\r'))
        end--;
    size_t start = end;
    while (start > 0 && w->err[start - 1] != '\n')
        start--;
    snprintf(out, cap, "%.*s", (int)(end - start), w->err + start);
}

/* ---- failing ------------------------------------------------------------------------------ */

/* Records the worker's failure: "<name>: <what>", plus its last word on stderr; kills it (with
 * its tree) unless `keep` (it answered `error`, and may be asked to quit). Returns rc. */
static int fail(pkb_worker *w, int rc, bool keep, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(pkb_worker *w, int rc, bool keep, const char *fmt, ...)
{
    char what[WHAT_CAP], last[LAST_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (w->proc != NULL)
        drain_err(w);
    last_err_line(w, last, sizeof last);
    snprintf(w->failure, sizeof w->failure, "%s: %s%s%s%s", w->name, what,
             last[0] != '\0' ? " (its stderr: \"" : "", last, last[0] != '\0' ? "\")" : "");
    if (!keep && w->proc != NULL) {
        pk_process_free(w->proc); /* SIGKILL to the tree, then the reap */
        w->proc = NULL;
    }
    return rc;
}

/* How the worker ended, once its stdout closed: it is reaped (killed first when it does not
 * exit within a second of closing it). */
static void describe_end(pkb_worker *w, char *out, size_t cap)
{
    size_t index;
    if (pk_wait_any(&w->proc, 1, 1000, &index) != 0) {
        snprintf(out, cap, "closed its stdout and did not exit; it was killed");
        pk_process_free(w->proc);
        w->proc = NULL;
        return;
    }
    pk_result res;
    memset(&res, 0, sizeof res);
    int rc = pk_process_wait(w->proc, &res);
    if (res.err.data != NULL)
        keep_err(w, res.err.data, res.err.len);
    if (rc != 0)
        snprintf(out, cap, "ended, and reaping it failed: %s", pk_strerror(rc));
    else if (res.outcome.kind == PK_OUTCOME_EXITED)
        snprintf(out, cap, "exited with status %d", res.outcome.code);
    else if (res.outcome.kind == PK_OUTCOME_SIGNALED)
        snprintf(out, cap, "was killed by signal %d (%s)", res.outcome.signo,
                 strsignal(res.outcome.signo));
    else
        snprintf(out, cap, "ended: %s", pk_outcome_kind_name(res.outcome.kind));
    pk_result_release(&res);
    pk_process_free(w->proc);
    w->proc = NULL;
}

/* ---- lines ------------------------------------------------------------------------------- */

/* The next stdout line (without its newline) into w->line, within `budget_ms`: the answer to
 * the request `what` ("`run 20`"), or the greeting when `what` is NULL. Returns 0, or the
 * failure's errno. */
static int read_line(pkb_worker *w, int64_t budget_ms, const char *what)
{
    int64_t deadline = now_ms() + budget_ms;
    char answer[64];
    if (what != NULL)
        snprintf(answer, sizeof answer, "the answer to %s", what);
    else
        snprintf(answer, sizeof answer, "the greeting");
    for (;;) {
        char *nl = memchr(w->line, '\n', w->len);
        if (nl != NULL) {
            *nl = '\0';
            return 0;
        }
        if (w->len >= LINE_CAP)
            return fail(w, -EBADMSG, false, "%s is a line longer than %d bytes: \"%.60s\"", answer,
                        LINE_CAP, w->line);
        if (w->out_eof) {
            char end[160];
            describe_end(w, end, sizeof end);
            return fail(w, -EPIPE, false, "the worker %s before sending %s", end, answer);
        }
        struct pollfd p[2] = {
            {.fd = pk_process_fd(w->proc, 1), .events = POLLIN},
            {.fd = w->err_eof ? -1 : pk_process_fd(w->proc, 2), .events = POLLIN}};
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return fail(w, -ETIMEDOUT, false,
                        "%s did not come within %.1f s; the worker was killed", answer,
                        (double)budget_ms / 1e3);
        int n = poll(p, 2, left > 60000 ? 60000 : (int)left);
        if (n < 0 && errno != EINTR)
            return fail(w, -errno, false, "poll: %s", strerror(errno));
        if (n <= 0)
            continue;
        if (p[1].revents != 0)
            drain_err(w);
        if (p[0].revents != 0) {
            ssize_t got = read(p[0].fd, w->line + w->len, LINE_CAP - w->len);
            if (got > 0)
                w->len += (size_t)got;
            else if (got == 0 || (errno != EAGAIN && errno != EINTR))
                w->out_eof = true;
            w->line[w->len] = '\0';
        }
    }
}

/* Drops the line just read (and its newline) from the buffer. */
static void consume_line(pkb_worker *w)
{
    size_t n = strlen(w->line) + 1;
    memmove(w->line, w->line + n, w->len - n);
    w->len -= n;
    w->line[w->len] = '\0';
}

static int send_line(pkb_worker *w, const char *text)
{
    size_t n = strlen(text), done = 0;
    while (done < n) {
        ssize_t k = write(w->in, text + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return fail(w, -errno, false, "writing to the worker's stdin: %s", strerror(errno));
        done += (size_t)k;
    }
    return 0;
}

/* One request and its one-line answer, left in w->line (consume it after use). `what` names the
 * request in reasons ("`run 20`"). */
static int request(pkb_worker *w, const char *text, int64_t deadline_ms, const char *what)
{
    if (w->failure[0] != '\0')
        return -EPIPE;
    int rc = send_line(w, text);
    return rc != 0 ? rc : read_line(w, deadline_ms, what);
}

/* ---- values ------------------------------------------------------------------------------ */

/* Percent-encodes `v` into out: bytes other than letters, digits and -._~/,:+@ become %XX, so a
 * value holds no space, '=' or newline (README.md, "Values"). */
static void encode(const char *v, char *out, size_t cap)
{
    static const char safe[] = "-._~/,:+@";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)v; *p != '\0' && o + 4 < cap; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            (*p != '\0' && strchr(safe, *p) != NULL))
            out[o++] = (char)*p;
        else
            o += (size_t)snprintf(out + o, cap - o, "%%%02X", *p);
    }
    out[o] = '\0';
}

static int hex(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* The value of `key=` among the space-separated fields of `line` (after its first `skip` words),
 * percent-decoded into out. Returns whether it was there. */
static bool field(const char *line, int skip, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    const char *p = line;
    for (int word = 0; *p != '\0'; word++) {
        while (*p == ' ')
            p++;
        const char *end = p + strcspn(p, " ");
        if (word >= skip && (size_t)(end - p) > klen && strncmp(p, key, klen) == 0 &&
            p[klen] == '=') {
            size_t o = 0;
            for (const char *q = p + klen + 1; q < end && o + 1 < cap; q++) {
                if (*q == '%' && end - q >= 3 && hex(q[1]) >= 0 && hex(q[2]) >= 0) {
                    out[o++] = (char)(hex(q[1]) * 16 + hex(q[2]));
                    q += 2;
                } else {
                    out[o++] = *q;
                }
            }
            out[o] = '\0';
            return true;
        }
        p = end;
    }
    return false;
}

/* A field that must be a decimal count: digits only, at most 2^63 - 1. */
static bool count_field(const char *line, const char *key, bool required, uint64_t *v, bool *bad)
{
    char text[32];
    *v = 0;
    if (!field(line, 2, key, text, sizeof text)) {
        *bad = *bad || required;
        return false;
    }
    char *end;
    errno = 0;
    unsigned long long x = strtoull(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0 || x > INT64_MAX) {
        *bad = true;
        return false;
    }
    *v = x;
    return true;
}

/* ---- the calls ------------------------------------------------------------------------------ */

static int64_t base_deadline(const pkb_worker_options *o)
{
    if (o->deadline_ms > 0)
        return o->deadline_ms;
    const char *env = getenv("PKBENCH_WORKER_DEADLINE_MS");
    char *end;
    long long v = env != NULL ? strtoll(env, &end, 10) : 0;
    return env != NULL && *end == '\0' && v > 0 ? v : PKB_WORKER_DEADLINE_MS;
}

static int spawn_worker(pkb_worker *w, const pkb_worker_options *o)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return fail(w, -errno, false, "pipe2: %s", strerror(errno));
    pk_result failure;
    memset(&failure, 0, sizeof failure);
    int rc = pk_spawn(&(pk_command){.argv = o->argv,
                                    .in = {.kind = PK_STDIO_FD, .fd = p[0]},
                                    .out = {.kind = PK_STDIO_CAPTURE, .raw = true},
                                    .err = {.kind = PK_STDIO_CAPTURE, .raw = true},
                                    .containment = PK_CONTAIN_PGROUP},
                      &w->proc, &failure);
    pk_result_release(&failure);
    if (rc != 0) {
        close(p[0]);
        close(p[1]);
        return fail(w, rc, false, "cannot start the worker %s: %s", o->argv[0], pk_strerror(rc));
    }
    w->in = p[1];
    w->in_guard = p[0];
    return 0;
}

/* The greeting: `pkw <version> name=... runtime=... kinds=...`. */
static int greet(pkb_worker *w)
{
    int rc = read_line(w, w->base_ms, NULL);
    if (rc != 0)
        return rc;
    pkb_worker_hello *h = &w->hello;
    int consumed = 0;
    if (sscanf(w->line, "pkw %d%n", &h->protocol, &consumed) != 1 ||
        (w->line[consumed] != ' ' && w->line[consumed] != '\0'))
        return fail(w, -EPROTO, false, "the worker's greeting is not \"pkw %d ...\": \"%.80s\"",
                    PKB_WORKER_PROTOCOL, w->line);
    if (h->protocol != PKB_WORKER_PROTOCOL)
        return fail(w, -EPROTO, false, "the worker speaks protocol %d, this pkbench %d",
                    h->protocol, PKB_WORKER_PROTOCOL);
    if (!field(w->line, 2, "name", h->name, sizeof h->name) ||
        !field(w->line, 2, "runtime", h->runtime, sizeof h->runtime) ||
        !field(w->line, 2, "kinds", h->kinds, sizeof h->kinds))
        return fail(w, -EPROTO, false,
                    "the worker's greeting lacks name=, runtime= or kinds=: \"%.80s\"", w->line);
    if (!field(w->line, 2, "contenders", h->contenders, sizeof h->contenders))
        snprintf(h->contenders, sizeof h->contenders, "%s", h->name);
    consume_line(w);
    return 0;
}

/* Whether the comma list holds `item`. */
static bool listed(const char *list, const char *item)
{
    size_t n = strlen(item);
    for (const char *p = list; *p != '\0';) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, item, n) == 0)
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

int pkb_worker_start(const pkb_worker_options *o, pkb_worker **out, char *why, size_t why_len)
{
    *out = NULL;
    pkb_worker *w = calloc(1, sizeof *w);
    if (w == NULL) {
        snprintf(why, why_len, "%s: out of memory", o->name);
        return -ENOMEM;
    }
    snprintf(w->name, sizeof w->name, "%s", o->name);
    w->in = w->in_guard = -1;
    w->base_ms = base_deadline(o);
    w->per_iteration_ms =
        o->per_iteration_ms > 0 ? o->per_iteration_ms : PKB_WORKER_PER_ITERATION_MS;
    int rc = spawn_worker(w, o);
    if (rc == 0)
        rc = greet(w);
    if (rc == 0 && !listed(w->hello.contenders, o->name))
        rc = fail(w, -EPROTO, false, "the worker says it is \"%s\" (hosting %s)", w->hello.name,
                  w->hello.contenders);
    if (rc != 0) {
        copy_text(why, why_len, w->failure);
        pkb_worker_stop(w, NULL, 0);
        return rc;
    }
    *out = w;
    return 0;
}

const pkb_worker_hello *pkb_worker_greeting(const pkb_worker *w)
{
    return &w->hello;
}

int pkb_worker_does(const pkb_worker *w, const char *kind)
{
    return listed(w->hello.kinds, kind);
}

const char *pkb_worker_failure(const pkb_worker *w)
{
    return w->failure;
}

const char *pkb_worker_stderr(pkb_worker *w)
{
    if (w->proc != NULL)
        drain_err(w);
    return w->err;
}

/* An `ok` (or `error ...`) answer to `what`. */
static int expect_ok(pkb_worker *w, const char *what)
{
    int rc = 0;
    if (strncmp(w->line, "error", 5) == 0 && (w->line[5] == ' ' || w->line[5] == '\0'))
        rc = fail(w, -EPROTO, true, "the worker failed %s: %.200s", what,
                  w->line + 5 + (w->line[5] == ' '));
    else if (strcmp(w->line, "ok") != 0)
        rc = fail(w, -EBADMSG, false, "unexpected answer to %s: \"%.80s\"", what, w->line);
    consume_line(w);
    return rc;
}

int pkb_worker_setup(pkb_worker *w, const pkb_worker_series *s, char *why, size_t why_len)
{
    char text[6 * 1024], program[1024], path[1024], input[1024];
    encode(s->program, program, sizeof program);
    encode(s->program_path, path, sizeof path);
    encode(s->input_file != NULL ? s->input_file : "-", input, sizeof input);
    snprintf(text, sizeof text,
             "setup contender=%s scenario=%s kind=%s program=%s program_path=%s children=%d "
             "input_file=%s input_bytes=%" PRIu64 " expect_bytes=%" PRIu64 " expect_lines=%" PRIu64
             "\n",
             s->contender, s->scenario, s->kind, program, path, s->children, input, s->input_bytes,
             s->expect_bytes, s->expect_lines);
    /* A fan-out's setup runs one fan-out of its own (the descriptors' count, untimed). */
    bool fans = strcmp(s->kind, "fan_out") == 0;
    int64_t deadline = w->base_ms + (fans ? (int64_t)PKB_WORKER_PER_CHILD_MS * s->children : 0),
            t0 = now_ms();
    int rc = pkb_worker_does(w, s->kind)
                 ? request(w, text, deadline, "`setup`")
                 : fail(w, -ENOTSUP, true, "the worker does not do %s (its kinds: %s)", s->kind,
                        w->hello.kinds);
    if (rc == 0)
        rc = expect_ok(w, "`setup`");
    if (rc == 0 && fans && (double)(now_ms() - t0) * 1e6 > w->slowest_ns)
        w->slowest_ns = (double)(now_ms() - t0) * 1e6; /* the next run's allowance grows with it */
    if (rc != 0)
        copy_text(why, why_len, w->failure);
    return rc;
}

/* The fields of a `done K` answer into out; K must be what was asked. */
static int parse_done(pkb_worker *w, uint32_t asked, const char *what, pkb_sample *out)
{
    unsigned long long k = 0;
    int used = 0;
    if (sscanf(w->line, "done %llu%n", &k, &used) != 1 ||
        (w->line[used] != ' ' && w->line[used] != '\0'))
        return fail(w, -EBADMSG, false, "unexpected answer to %s: \"%.80s\"", what, w->line);
    if (k != asked)
        return fail(w, -EBADMSG, false, "asked for %u iterations, the worker reports %llu", asked,
                    k);
    bool bad = false;
    uint64_t children, failures, peak_fds, idle_fds;
    count_field(w->line, "ns", true, &out->wall_ns, &bad);
    count_field(w->line, "bytes", true, &out->bytes, &bad);
    count_field(w->line, "lines", true, &out->lines, &bad);
    count_field(w->line, "children", true, &children, &bad);
    count_field(w->line, "failures", true, &failures, &bad);
    count_field(w->line, "cpu_children_ns", true, &out->child_cpu_ns, &bad);
    count_field(w->line, "cpu_self_ns", true, &out->self_cpu_ns, &bad);
    count_field(w->line, "peak_rss_kib", false, &out->peak_rss_kib, &bad);
    count_field(w->line, "peak_fds", false, &peak_fds, &bad);
    count_field(w->line, "idle_fds", false, &idle_fds, &bad);
    if (bad || out->wall_ns == 0 || children > INT32_MAX || failures > INT32_MAX ||
        peak_fds > UINT32_MAX || idle_fds > UINT32_MAX)
        return fail(w, -EBADMSG, false,
                    "the answer to %s lacks a field or has one that is not a count (ns= must be "
                    "above 0): \"%.120s\"",
                    what, w->line);
    out->children = (int)children;
    out->failures = (int)failures;
    out->peak_fds = (uint32_t)peak_fds;
    out->idle_fds = (uint32_t)idle_fds;
    out->iterations = asked;
    out->self_timed = true;
    double mean = (double)out->wall_ns / (double)asked;
    if (mean > w->slowest_ns)
        w->slowest_ns = mean;
    return 0;
}

int pkb_worker_run(pkb_worker *w, uint32_t iterations, pkb_sample *out)
{
    char text[64], what[48];
    if (iterations == 0)
        iterations = 1;
    snprintf(text, sizeof text, "run %u\n", iterations);
    snprintf(what, sizeof what, "`run %u`", iterations);
    double per = (double)w->per_iteration_ms;
    if (w->slowest_ns * 10 / 1e6 > per)
        per = w->slowest_ns * 10 / 1e6;
    int64_t deadline = w->base_ms + (int64_t)(per * iterations);
    int rc = request(w, text, deadline, what);
    if (rc == 0) {
        if (strncmp(w->line, "error", 5) == 0 && (w->line[5] == ' ' || w->line[5] == '\0'))
            rc = fail(w, -EPROTO, true, "the worker failed `run %u`: %.200s", iterations,
                      w->line + 5 + (w->line[5] == ' '));
        else
            rc = parse_done(w, iterations, what, out);
        consume_line(w);
    }
    if (rc != 0)
        copy_text(out->error, sizeof out->error, w->failure);
    return rc;
}

int pkb_worker_teardown(pkb_worker *w, char *why, size_t why_len)
{
    int rc = request(w, "teardown\n", w->base_ms, "`teardown`");
    if (rc == 0)
        rc = expect_ok(w, "`teardown`");
    if (rc != 0 && why != NULL)
        copy_text(why, why_len, w->failure);
    return rc;
}

int pkb_worker_stop(pkb_worker *w, char *why, size_t why_len)
{
    if (w == NULL)
        return 0;
    int rc = 0;
    if (w->proc != NULL) {
        if (w->in >= 0) {
            send_line(w, "quit\n");
            close(w->in);
            w->in = -1;
        }
        /* Its exit, draining its stderr meanwhile; killed with its tree past the deadline. */
        int64_t deadline = now_ms() + w->base_ms;
        size_t index;
        while (w->proc != NULL && pk_wait_any(&w->proc, 1, 50, &index) == -ETIMEDOUT) {
            drain_err(w);
            if (now_ms() > deadline) {
                rc = fail(w, -ETIMEDOUT, false, "did not exit within %.1f s of `quit`; killed",
                          (double)w->base_ms / 1e3);
                break;
            }
        }
        if (w->proc != NULL) {
            char end[160];
            describe_end(w, end, sizeof end);
            if (strcmp(end, "exited with status 0") != 0 && w->failure[0] == '\0')
                rc = fail(w, -ECHILD, false, "the worker %s after `quit`", end);
        }
    }
    if (rc != 0 && why != NULL)
        copy_text(why, why_len, w->failure);
    if (w->in >= 0)
        close(w->in);
    if (w->in_guard >= 0)
        close(w->in_guard);
    pk_process_free(w->proc);
    free(w);
    return rc;
}
