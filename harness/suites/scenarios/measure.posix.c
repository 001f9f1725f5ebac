/*
 * A series of the fan-out at scale in a measuring process of its own (measure.h): the client side
 * of the worker protocol (contenders/README.md), for the C measuring worker `pkbench worker`.
 *
 * The worker is started with processkit: its stdin and stdout are pipes of ours, its stderr is
 * pkbench's (its messages reach the log as they are written), it leads a process group of its own
 * (a terminal's Ctrl-C reaches pkbench, which stops the run and then tells it to quit) and gets
 * SIGKILL if pkbench dies. Each request waits for its one-line answer under a deadline:
 * PKBENCH_WORKER_DEADLINE_MS (30 s by default) for the greeting, `teardown` and the exit; a
 * `setup`, which runs one untimed fan-out to count descriptors, that plus PKB_WORKER_PER_CHILD_MS
 * per child (contenders/worker.h); a `run`, that plus ten times the slowest iteration seen, the
 * setup's fan-out counted as the first (without it the check's first `run 1` of 4096 children got
 * 30 s, and a loaded machine missed it: reports/notes/2026-12-05-fan-out-at-scale.md). A worker
 * that misses a deadline is killed with its group; one that dies, answers `error ...`, or anything
 * else, fails the request with a reason naming the contender, and every later request fails with
 * the same reason.
 */
#define _GNU_SOURCE
#include "suites/scenarios/measure.h"

#include "contenders/worker.h"
#include "processkit.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES 4096

struct pkb__measure {
    const char *name; /* the contender */
    int children;
    pk_process *proc;
    int to, from; /* the worker's stdin (we write), its stdout (we read) */
    char buf[LINE_MAX_BYTES + 1];
    size_t have;
    char failed[256]; /* the first failure; every later request repeats it */
    int64_t base_ms, slowest_ns;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Records the first failure ("<contender>: <what>") and returns -EIO. */
static int fail(pkb__measure *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(pkb__measure *m, const char *fmt, ...)
{
    if (m->failed[0] != '\0')
        return -EIO;
    int k = snprintf(m->failed, sizeof m->failed, "%s: ", m->name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->failed + k, sizeof m->failed - (size_t)k, fmt, ap);
    va_end(ap);
    return -EIO;
}

/* How the worker ended, once its stdout closed: "exited 3", "killed by SIGSEGV". */
static void ended(pkb__measure *m, char *what, size_t cap)
{
    size_t idx;
    snprintf(what, cap, "closed its stdout");
    if (pk_wait_any(&m->proc, 1, 2000, &idx) != 0)
        return;
    pk_result res;
    if (pk_process_wait(m->proc, &res) == 0) {
        if (res.outcome.kind == PK_OUTCOME_EXITED)
            snprintf(what, cap, "exited %d", res.outcome.code);
        else if (res.outcome.kind == PK_OUTCOME_SIGNALED)
            snprintf(what, cap, "was killed by signal %d", res.outcome.signo);
    }
    pk_result_release(&res);
}

/* Sends one request line (a newline added). */
static int send_line(pkb__measure *m, const char *line)
{
    if (m->failed[0] != '\0')
        return -EIO;
    size_t len = strlen(line);
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return fail(m, "out of memory");
    memcpy(copy, line, len);
    copy[len] = '\n';
    int rc = 0;
    for (size_t off = 0; off <= len && rc == 0;) {
        ssize_t w = write(m->to, copy + off, len + 1 - off);
        if (w > 0)
            off += (size_t)w;
        else if (w < 0 && errno != EINTR)
            rc = fail(m, "the worker does not read its requests: %s", strerror(errno));
    }
    free(copy);
    return rc;
}

/* Reads the next answer line into m->buf (NUL-terminated, newline dropped) within deadline_ms;
 * returns its length or -EIO. The line stays in the buffer until the next call. */
static int read_line(pkb__measure *m, int64_t deadline_ms, const char *request)
{
    if (m->failed[0] != '\0')
        return -EIO;
    int64_t end = now_ms() + deadline_ms;
    for (;;) {
        char *nl = memchr(m->buf, '\n', m->have);
        if (nl != NULL) {
            *nl = '\0';
            return (int)(nl - m->buf);
        }
        if (m->have == LINE_MAX_BYTES)
            return fail(m, "answered %s with a line longer than %d bytes", request, LINE_MAX_BYTES);
        int64_t left = end - now_ms();
        if (left <= 0) {
            pk_process_signal_tree(m->proc, SIGKILL);
            return fail(m, "no answer to %s within %lld ms: killed", request,
                        (long long)deadline_ms);
        }
        struct pollfd p = {m->from, POLLIN, 0};
        int r = poll(&p, 1, left > 1000 ? 1000 : (int)left);
        if (r < 0 && errno != EINTR)
            return fail(m, "poll: %s", strerror(errno));
        if (r <= 0)
            continue;
        ssize_t n = read(m->from, m->buf + m->have, LINE_MAX_BYTES - m->have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            char what[64];
            ended(m, what, sizeof what);
            return fail(m, "the worker %s before it answered %s", what, request);
        }
        m->have += (size_t)n;
    }
}

/* Drops the line read_line returned from the buffer. */
static void consume(pkb__measure *m, int len)
{
    size_t used = (size_t)len + 1;
    memmove(m->buf, m->buf + used, m->have - used);
    m->have -= used;
}

/* A request and its answer, which must be `ok`. */
static int ask_ok(pkb__measure *m, const char *request, const char *what, int64_t deadline_ms)
{
    int rc = send_line(m, request);
    int len = rc == 0 ? read_line(m, deadline_ms, what) : rc;
    if (len < 0)
        return len;
    rc = strcmp(m->buf, "ok") == 0 ? 0 : fail(m, "%s: %s", what, m->buf);
    consume(m, len);
    return rc;
}

/* "key=value" with value percent-encoded (the protocol's rule), appended to line. */
static void put_value(char *line, size_t cap, const char *key, const char *value)
{
    size_t k = strlen(line);
    k += (size_t)snprintf(line + k, cap - k, " %s=", key);
    for (const unsigned char *p = (const unsigned char *)value; *p != '\0' && k + 4 < cap; p++) {
        bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                     (*p >= '0' && *p <= '9') || strchr("-._~/,:+@", *p) != NULL;
        k += (size_t)(plain ? snprintf(line + k, cap - k, "%c", *p)
                            : snprintf(line + k, cap - k, "%%%02X", *p));
    }
}

/* The value of `key=` in an answer line, or NULL. */
static const char *field(const char *line, const char *key)
{
    size_t k = strlen(key);
    for (const char *p = line; (p = strstr(p, key)) != NULL; p += k)
        if ((p == line || p[-1] == ' ') && p[k] == '=')
            return p + k + 1;
    return NULL;
}

static bool number(const char *line, const char *key, uint64_t *out)
{
    const char *v = field(line, key);
    if (v == NULL || *v < '0' || *v > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno != 0 || (*end != ' ' && *end != '\0'))
        return false;
    *out = n;
    return true;
}

static int64_t base_deadline_ms(void)
{
    const char *v = getenv("PKBENCH_WORKER_DEADLINE_MS");
    long ms = v != NULL ? strtol(v, NULL, 10) : 0;
    return ms > 0 ? ms : 30000;
}

/* The greeting: `pkw 1 ...` hosting our contender. */
static int greeting(pkb__measure *m)
{
    int len = read_line(m, m->base_ms, "the greeting");
    if (len < 0)
        return len;
    int rc = 0;
    const char *hosts = field(m->buf, "contenders");
    size_t k = strlen(m->name);
    bool hosted = false;
    for (const char *p = hosts; p != NULL && *p != '\0' && !hosted; p = strchr(p, ',')) {
        p += *p == ',';
        hosted = strncmp(p, m->name, k) == 0 && (p[k] == ',' || p[k] == ' ' || p[k] == '\0');
    }
    if (strncmp(m->buf, "pkw 1 ", 6) != 0)
        rc = fail(m, "the worker's greeting is not protocol 1: '%.80s'", m->buf);
    else if (!hosted)
        rc = fail(m, "the worker does not host this contender");
    consume(m, len);
    return rc;
}

/* `setup`: the workload's input goes through a private file, removed once answered. */
static int setup(pkb__measure *m, const pkb_contender *c, const pkb_workload *w)
{
    char dir[] = "/tmp/pkbench-measure-XXXXXX", path[64] = "-";
    if (w->input_len > 0) {
        if (mkdtemp(dir) == NULL)
            return fail(m, "a private directory for the input: %s", strerror(errno));
        snprintf(path, sizeof path, "%s/input", dir);
        FILE *f = fopen(path, "wbe");
        bool ok = f != NULL && fwrite(w->input, 1, w->input_len, f) == w->input_len;
        if (f != NULL && fclose(f) != 0)
            ok = false;
        if (!ok) {
            unlink(path);
            rmdir(dir);
            return fail(m, "cannot write the input file %s", path);
        }
    }
    char line[2048] = "setup", num[32], scen[64];
    if (w->scenario == PKB_FAN_OUT_SCALE)
        pkb_scenario_fan_out_name(w->children, scen, sizeof scen);
    else
        snprintf(scen, sizeof scen, "%s", pkb_scenario_name(w->scenario));
    put_value(line, sizeof line, "contender", c->name);
    put_value(line, sizeof line, "scenario", scen);
    put_value(line, sizeof line, "kind",
              pkb_scenario_fans_out(w->scenario)       ? "fan_out"
              : w->scenario == PKB_STREAM_LARGE_STDOUT ? "stream"
              : w->scenario == PKB_SPAWN_ONLY          ? "spawn_only"
                                                       : "capture");
    put_value(line, sizeof line, "program", w->program);
    put_value(line, sizeof line, "program_path", w->program_path);
    snprintf(num, sizeof num, "%d", w->children);
    put_value(line, sizeof line, "children", num);
    put_value(line, sizeof line, "input_file", path);
    snprintf(num, sizeof num, "%zu", w->input_len);
    put_value(line, sizeof line, "input_bytes", num);
    snprintf(num, sizeof num, "%zu", w->expect_bytes);
    put_value(line, sizeof line, "expect_bytes", num);
    snprintf(num, sizeof num, "%zu", w->expect_lines);
    put_value(line, sizeof line, "expect_lines", num);
    int64_t t0 = now_ms();
    int rc = ask_ok(m, line, "setup", m->base_ms + PKB_WORKER_PER_CHILD_MS * (int64_t)w->children);
    if (rc == 0) /* its fan-out is the first iteration seen: the check's `run 1` gets 10 times it */
        m->slowest_ns = (now_ms() - t0) * 1000000;
    if (w->input_len > 0) {
        unlink(path);
        rmdir(dir);
    }
    return rc;
}

static int spawn_worker(pkb__measure *m, const char *exe)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0)
        return fail(m, "pipe: %s", strerror(errno));
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(in[0]);
        close(in[1]);
        return fail(m, "pipe: %s", strerror(errno));
    }
    const char *argv[] = {exe, "worker", NULL};
    pk_result res;
    int rc = pk_spawn(
        &(pk_command){
            .argv = argv,
            .in = {.kind = PK_STDIO_FD, .fd = in[0]},
            .out = {.kind = PK_STDIO_FD, .fd = out[1]},
            .err = {.kind = PK_STDIO_INHERIT},
            .containment = PK_CONTAIN_PGROUP,
            .pdeathsig = SIGKILL,
        },
        &m->proc, &res);
    close(in[0]);
    close(out[1]);
    m->to = in[1];
    m->from = out[0];
    if (rc != 0)
        rc = fail(m, "cannot start '%s worker': %s", exe, pk_strerror(rc));
    pk_result_release(&res);
    return rc;
}

int pkb__measure_start(const char *exe,
                       const pkb_contender *c,
                       const pkb_workload *w,
                       pkb__measure **out,
                       char *why,
                       size_t why_len)
{
    *out = NULL;
    pkb__measure *m = calloc(1, sizeof *m);
    if (m == NULL) {
        snprintf(why, why_len, "%s: out of memory", c->name);
        return -ENOMEM;
    }
    *m = (pkb__measure){.name = c->name,
                        .children = w->children,
                        .to = -1,
                        .from = -1,
                        .base_ms = base_deadline_ms()};
    int rc = spawn_worker(m, exe);
    if (rc == 0)
        rc = greeting(m);
    if (rc == 0)
        rc = setup(m, c, w);
    if (rc != 0) {
        snprintf(why, why_len, "%s", m->failed);
        pkb__measure_stop(m);
        return rc;
    }
    *out = m;
    return 0;
}

/* The `done` line of a `run 1` into out. */
static int parse_done(pkb__measure *m, const char *line, pkb_sample *out)
{
    uint64_t v[7], rss = 0, idle = 0, peak = 0;
    static const char *const keys[7] = {"ns",       "bytes",           "lines",      "children",
                                        "failures", "cpu_children_ns", "cpu_self_ns"};
    if (strncmp(line, "done 1 ", 7) != 0)
        return fail(m, "answered run 1 with '%.100s'", line);
    for (int i = 0; i < 7; i++)
        if (!number(line, keys[i], &v[i]))
            return fail(m, "its done line lacks %s: '%.100s'", keys[i], line);
    (void)number(line, "peak_rss_kib", &rss);
    (void)number(line, "idle_fds", &idle);
    (void)number(line, "peak_fds", &peak);
    *out = (pkb_sample){.bytes = v[1],
                        .lines = v[2],
                        .children = (int)v[3],
                        .failures = (int)v[4],
                        .self_timed = true,
                        .wall_ns = v[0],
                        .child_cpu_ns = v[5],
                        .self_cpu_ns = v[6],
                        .peak_rss_kib = rss,
                        .idle_fds = (uint32_t)idle,
                        .peak_fds = (uint32_t)peak};
    if ((int64_t)v[0] > m->slowest_ns)
        m->slowest_ns = (int64_t)v[0];
    return 0;
}

int pkb__measure_run(pkb__measure *m, pkb_sample *out)
{
    int64_t deadline = m->base_ms + 10 * m->slowest_ns / 1000000;
    int rc = send_line(m, "run 1");
    int len = rc == 0 ? read_line(m, deadline, "run 1") : rc;
    if (len >= 0) {
        rc = strncmp(m->buf, "error ", 6) == 0 ? fail(m, "%s", m->buf + 6)
                                               : parse_done(m, m->buf, out);
        consume(m, len);
    } else {
        rc = len;
    }
    if (rc != 0)
        snprintf(out->error, sizeof out->error, "%.159s", m->failed);
    return rc;
}

void pkb__measure_stop(pkb__measure *m)
{
    if (m == NULL)
        return;
    if (m->failed[0] == '\0' && m->proc != NULL) {
        (void)ask_ok(m, "teardown", "teardown", m->base_ms);
        (void)send_line(m, "quit");
    }
    if (m->to >= 0)
        close(m->to); /* end of file: a worker that did not get `quit` leaves too */
    if (m->proc != NULL) {
        size_t idx;
        if (m->failed[0] != '\0' || pk_wait_any(&m->proc, 1, (int)m->base_ms, &idx) != 0)
            pk_process_signal_tree(m->proc, SIGKILL);
        pk_process_free(m->proc); /* reaps it (kill-on-close for one still running) */
    }
    if (m->from >= 0)
        close(m->from);
    free(m);
}
