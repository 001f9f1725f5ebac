/*
 * pk_contender_host — the C contenders of the registry (contenders/registry.c) in a process of
 * their own, driven by pkbench over a pipe with the worker protocol (contenders/README.md, "The
 * worker protocol"): pkbench's measuring worker. `pkbench ab` builds this program once per
 * revision of the library (cmake/ab/), so that two builds of the library are measured in one
 * interleaved run: the contenders' code, the children and the settings are the same on both
 * sides, only the libprocesskit linked in differs.
 *
 *   pk_contender_host            speak the protocol on stdin/stdout, for any contender it hosts
 *   pk_contender_host --list     the contenders it hosts, one a line
 *
 * The greeting names the host and lists the contenders (`contenders=`); each `setup` names the
 * contender and scenario of its series (`contender=`, `scenario=`). Every iteration is timed
 * here with CLOCK_MONOTONIC around exactly the contender's `run` (start, feed, consume, reap), as
 * the in-process runner times it; the children's CPU is the RUSAGE_CHILDREN delta across the whole
 * request, this process's own RUSAGE_SELF.
 *
 * The protocol's pipes are moved above the standard descriptors (close-on-exec) and 0 and 1
 * become /dev/null before anything runs, so no child ever inherits them: spawn_only's contenders
 * hand their children this process's 0, 1 and 2, as they hand them pkbench's in a run. stderr
 * stays pkbench's (its log).
 */
#define _GNU_SOURCE
#include "contenders/contender.h"
#include "contenders/registry.h"
#include "processkit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES 8192
#define INPUT_MAX      (256L * 1024 * 1024) /* a payload file: far above any workload's */

struct host {
    const pkb_contender *c; /* the series' contender, from its setup */
    FILE *in, *out;
    bool set_up;
    void *state;
    pkb_workload w;
    char scenario[64], program[PATH_MAX], program_path[PATH_MAX];
    unsigned char *input;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t tv_ns(struct timeval tv)
{
    return (int64_t)tv.tv_sec * 1000000000 + (int64_t)tv.tv_usec * 1000;
}

/* A reply line, flushed: pkbench waits for it. */
static void reply(struct host *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void reply(struct host *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(h->out, fmt, ap);
    va_end(ap);
    fputc('\n', h->out);
    fflush(h->out);
}

/* "%41" -> 'A' in place; false when an escape is malformed. */
static bool percent_decode(char *s)
{
    char *w = s;
    for (const char *r = s; *r; r++) {
        if (*r != '%') {
            *w++ = *r;
            continue;
        }
        unsigned v;
        if (sscanf(r + 1, "%2x", &v) != 1 || r[1] == '\0' || r[2] == '\0')
            return false;
        *w++ = (char)v;
        r += 2;
    }
    *w = '\0';
    return true;
}

/* The value of key=... among the space-separated words of `args` (decoded into buf), or NULL. */
static const char *arg(const char *args, const char *key, char *buf, size_t cap)
{
    size_t klen = strlen(key);
    for (const char *p = args; p != NULL && *p;) {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, " ");
        if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
            size_t vlen = len - klen - 1;
            if (vlen >= cap)
                return NULL;
            memcpy(buf, p + klen + 1, vlen);
            buf[vlen] = '\0';
            return percent_decode(buf) ? buf : NULL;
        }
        p += len;
    }
    return NULL;
}

static bool arg_count(const char *args, const char *key, long long max, long long *out)
{
    char buf[32], *end;
    if (arg(args, key, buf, sizeof buf) == NULL || buf[0] < '0' || buf[0] > '9')
        return false;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno != 0 || *end != '\0' || v > max)
        return false;
    *out = v;
    return true;
}

/* The registry's C contenders, which run in this process; a worker (another language's
 * contender, with a runtime of its own) is not hosted here. */
static bool hosted(const pkb_contender *c)
{
    return c->runtime == NULL;
}

static const pkb_contender *find(const char *name)
{
    for (size_t i = 0; i < pkb_contender_count; i++)
        if (hosted(pkb_contenders[i]) && strcmp(pkb_contenders[i]->name, name) == 0)
            return pkb_contenders[i];
    return NULL;
}

static void teardown(struct host *h)
{
    if (h->set_up && h->c->teardown != NULL)
        h->c->teardown(h->state);
    h->set_up = false;
    h->state = NULL;
    free(h->input);
    h->input = NULL;
}

/* The payload file, read whole. Returns 0 or a negative errno. */
static int read_input(const char *path, unsigned char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    if (path == NULL || path[0] == '\0' || strcmp(path, "-") == 0)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size > INPUT_MAX) {
        int e = fd < 0 ? errno : EFBIG;
        if (fd >= 0)
            close(fd);
        return -e;
    }
    unsigned char *buf = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (buf != NULL && got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (buf == NULL || got != (size_t)st.st_size) {
        free(buf);
        return buf == NULL ? -ENOMEM : -EIO;
    }
    *data = buf;
    *len = got;
    return 0;
}

static void do_setup(struct host *h, const char *args)
{
    teardown(h);
    char input_file[PATH_MAX], name[64];
    long long children = 0, bytes = 0, lines = 0;
    if (arg(args, "contender", name, sizeof name) == NULL || (h->c = find(name)) == NULL) {
        reply(h, "error setup needs contender= naming one of the contenders this host lists");
        return;
    }
    if (arg(args, "scenario", h->scenario, sizeof h->scenario) == NULL ||
        arg(args, "program", h->program, sizeof h->program) == NULL ||
        arg(args, "program_path", h->program_path, sizeof h->program_path) == NULL ||
        !arg_count(args, "children", 4096, &children) ||
        !arg_count(args, "expect_bytes", INPUT_MAX, &bytes) ||
        !arg_count(args, "expect_lines", INPUT_MAX, &lines)) {
        reply(h, "error setup needs scenario, program, program_path, children, expect_bytes and "
                 "expect_lines");
        return;
    }
    int s = pkb_scenario_from_name(h->scenario);
    if (s < 0 || !(h->c->scenarios & PKB_SCENARIO_BIT(s))) {
        reply(h, "error %s does not run scenario %s", h->c->name, h->scenario);
        return;
    }
    size_t len = 0;
    const char *file = arg(args, "input_file", input_file, sizeof input_file);
    int rc = read_input(file, &h->input, &len);
    if (rc != 0) {
        reply(h, "error cannot read input_file %s: %s", file, strerror(-rc));
        return;
    }
    h->w = (pkb_workload){.scenario = (pkb_scenario)s,
                          .program = h->program,
                          .program_path = h->program_path,
                          .input = len > 0 ? h->input : NULL,
                          .input_len = len,
                          .expect_bytes = (size_t)bytes,
                          .expect_lines = (size_t)lines,
                          .children = (int)children};
    rc = h->c->setup != NULL ? h->c->setup(&h->state, &h->w) : 0;
    if (rc != 0) {
        reply(h, "error %s: set-up failed: %s", h->c->name, strerror(rc < 0 ? -rc : rc));
        free(h->input);
        h->input = NULL;
        return;
    }
    h->set_up = true;
    reply(h, "ok");
}

static void do_run(struct host *h, const char *args)
{
    char *end;
    errno = 0;
    long long n = strtoll(args, &end, 10);
    if (errno != 0 || end == args || *end != '\0' || n < 1 || n > 100000000) {
        reply(h, "error run needs an iteration count from 1 to 100000000");
        return;
    }
    if (!h->set_up) {
        reply(h, "error run before setup");
        return;
    }
    struct rusage r0, r1, s0, s1;
    getrusage(RUSAGE_CHILDREN, &r0);
    getrusage(RUSAGE_SELF, &s0);
    int64_t sum = 0;
    unsigned long long bytes = 0, lines = 0, children = 0, failures = 0;
    for (long long i = 0; i < n; i++) {
        pkb_sample s;
        memset(&s, 0, sizeof s);
        int64_t t0 = now_ns();
        int rc = h->c->run(h->state, &h->w, &s);
        int64_t dt = now_ns() - t0;
        if (rc != 0) {
            reply(h, "error iteration %lld: %s", i + 1,
                  s.error[0] ? s.error : strerror(rc < 0 ? -rc : rc));
            return;
        }
        sum += dt;
        bytes += s.bytes;
        lines += s.lines;
        children += (unsigned long long)s.children;
        failures += (unsigned long long)s.failures;
    }
    getrusage(RUSAGE_SELF, &s1);
    getrusage(RUSAGE_CHILDREN, &r1);
    int64_t cpu_children =
        tv_ns(r1.ru_utime) - tv_ns(r0.ru_utime) + tv_ns(r1.ru_stime) - tv_ns(r0.ru_stime);
    int64_t cpu_self =
        tv_ns(s1.ru_utime) - tv_ns(s0.ru_utime) + tv_ns(s1.ru_stime) - tv_ns(s0.ru_stime);
    reply(h,
          "done %lld ns=%lld bytes=%llu lines=%llu children=%llu failures=%llu "
          "cpu_children_ns=%lld cpu_self_ns=%lld",
          n, (long long)(sum > 0 ? sum : 1), bytes, lines, children, failures,
          (long long)(cpu_children > 0 ? cpu_children : 0),
          (long long)(cpu_self > 0 ? cpu_self : 0));
}

/* The protocol's pipes out of the way of children: above 2, close-on-exec; 0 and 1 /dev/null. */
static int protect_pipes(struct host *h)
{
    int in = fcntl(0, F_DUPFD_CLOEXEC, 3), out = fcntl(1, F_DUPFD_CLOEXEC, 3);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (in < 0 || out < 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0)
        return -errno;
    close(null);
    h->in = fdopen(in, "r");
    h->out = fdopen(out, "w");
    return h->in != NULL && h->out != NULL ? 0 : -ENOMEM;
}

static int serve(struct host *h)
{
    char kinds[128] = "", list[512] = "";
    for (int s = 0; s < PKB_SCENARIO_COUNT; s++) /* every kind some contender does */
        snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s", s ? "," : "",
                 pkb_scenario_kind((pkb_scenario)s));
    for (size_t i = 0; i < pkb_contender_count; i++)
        if (hosted(pkb_contenders[i]))
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? "," : "",
                     pkb_contenders[i]->name);
    reply(h, "pkw 1 name=pk_contender_host runtime=processkit-%s kinds=%s contenders=%s",
          pk_version(), kinds, list);
    char line[LINE_MAX_BYTES];
    while (fgets(line, sizeof line, h->in) != NULL) {
        size_t len = strcspn(line, "\n");
        if (line[len] != '\n' && !feof(h->in)) {
            reply(h, "error line longer than %d bytes", LINE_MAX_BYTES - 1);
            int ch;
            while ((ch = fgetc(h->in)) != EOF && ch != '\n')
                ;
            continue;
        }
        line[len] = '\0';
        char *sp = strchr(line, ' ');
        const char *rest = sp != NULL ? sp + 1 : "";
        if (sp != NULL)
            *sp = '\0';
        if (strcmp(line, "setup") == 0)
            do_setup(h, rest);
        else if (strcmp(line, "run") == 0)
            do_run(h, rest);
        else if (strcmp(line, "teardown") == 0) {
            teardown(h);
            reply(h, "ok");
        } else if (strcmp(line, "quit") == 0)
            break;
        else
            reply(h, "error unknown request '%.60s'", line);
    }
    teardown(h);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < pkb_contender_count; i++)
            if (hosted(pkb_contenders[i]))
                printf("%s\n", pkb_contenders[i]->name);
        return 0;
    }
    if (argc != 1) {
        bool help = argc == 2 && strcmp(argv[1], "--help") == 0;
        fprintf(help ? stdout : stderr,
                "usage: pk_contender_host          the worker protocol on stdin and stdout\n"
                "       pk_contender_host --list   the contenders it hosts\n");
        return help ? 0 : 2;
    }
    struct host h = {0};
    int rc = protect_pipes(&h);
    if (rc != 0) {
        fprintf(stderr, "pk_contender_host: cannot set up its pipes: %s\n", strerror(-rc));
        return 1;
    }
    rc = serve(&h);
    pk_cleanup();
    return rc;
}
