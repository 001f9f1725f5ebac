/*
 * Test utilities that look at the system directly — /proc and the cgroup filesystem — so the
 * tests check the library against the kernel's view rather than against the library's own code;
 * and the whole-file read and write, and the run of a tool with its output merged, that tests
 * of generated files share.
 */
#define _GNU_SOURCE
#include "test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

bool pk_test_pid_alive(int pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    /* A zombie or a dying task is not alive: it runs no code any more. */
    return p != NULL && p[2] != 'Z' && p[2] != 'X';
}

bool pk_test_wait_dead(int pid, int timeout_ms)
{
    for (int waited = 0; waited <= timeout_ms; waited += 2) {
        if (!pk_test_pid_alive(pid))
            return true;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    return !pk_test_pid_alive(pid);
}

const char *pk_test_cgroup_dir(void)
{
    static char dir[4096];
    if (dir[0] != '\0')
        return dir;
    char mount[1024] = "", own[2048] = "", line[4096];
    FILE *f = fopen("/proc/self/mountinfo", "re");
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strstr(line, " - cgroup2 ") == NULL)
            continue;
        char a[64], b[64], c[64], root[1024];
        if (sscanf(line, "%63s %63s %63s %1023s %1023s", a, b, c, root, mount) == 5)
            break;
    }
    if (f != NULL)
        fclose(f);
    f = fopen("/proc/self/cgroup", "re");
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "0::", 3) == 0)
            sscanf(line + 3, "%2047s", own);
    if (f != NULL)
        fclose(f);
    if (mount[0] == '\0' || own[0] == '\0')
        return NULL;
    snprintf(dir, sizeof dir, "%s%s", mount, strcmp(own, "/") == 0 ? "" : own);
    return dir;
}

int pk_test_count_leaves(const char *prefix)
{
    const char *dir = pk_test_cgroup_dir();
    DIR *d = dir != NULL ? opendir(dir) : NULL;
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            n++;
    closedir(d);
    return n;
}

long pk_test_status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, field, n) == 0 && line[n] == ':')
            v = atol(line + n + 1);
    if (f != NULL)
        fclose(f);
    return v;
}

void pk_test_need_cgroup(void)
{
    if (pk_host_containment() != PK_CONTAIN_CGROUP)
        pk_test_skip_gate(
            "cgroup", "no cgroup v2 delegated to this process (needs a writable cgroup2 mount)");
}

void pk_test_need_root(void)
{
    if (geteuid() != 0)
        pk_test_skip_gate("root", "needs root (euid 0)");
}

void pk_test_need_jsonschema(void)
{
    const char *const argv[] = {"/usr/bin/python3", "-c", "import jsonschema", NULL};
    pk_result r;
    int rc = pk_run(&(pk_command){.argv = argv, .out.kind = PK_STDIO_NULL}, &r);
    bool ok = rc == 0 && r.outcome.kind == PK_OUTCOME_EXITED && r.outcome.code == 0;
    pk_result_release(&r);
    if (!ok)
        pk_test_skip_gate("package:python3-jsonschema",
                          "/usr/bin/python3 cannot import jsonschema (./x installs "
                          "python3-jsonschema)");
}

int64_t pk_test_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool pk_test_validate_results(const char *path)
{
    const char *const argv[] = {
        "/usr/bin/python3",
        "-c",
        "import json,sys\n"
        "try:\n import jsonschema\n"
        "except ImportError:\n print('no-jsonschema'); sys.exit(0)\n"
        "jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))\n"
        "print('valid')\n",
        PK_SOURCE_DIR "/harness/results/schema.json",
        path,
        NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
    if (r.out.data != NULL && strcmp(r.out.data, "no-jsonschema\n") == 0)
        pk_test_fail(__FILE__, __LINE__,
                     "python3-jsonschema is not installed, so %s cannot be validated: a test that "
                     "validates calls pk_test_need_jsonschema before it measures",
                     path);
    if (r.outcome.code != 0 || r.out.data == NULL || strcmp(r.out.data, "valid\n") != 0)
        pk_test_fail(__FILE__, __LINE__, "%s does not validate against results.schema.json: %s",
                     path, r.err.data ? r.err.data : "");
    pk_result_release(&r);
    return true;
}

/* The cells of one line: leading spaces skipped, cells split at two or more spaces. */
static size_t split_cells(const char *line, size_t len, char cells[][256], size_t max)
{
    size_t n = 0, i = 0;
    while (i < len && line[i] == ' ')
        i++;
    while (i < len && n < max) {
        size_t start = i;
        while (i < len && !(line[i] == ' ' && (i + 1 == len || line[i + 1] == ' ')))
            i++;
        snprintf(cells[n++], 256, "%.*s", (int)(i - start), line + start);
        while (i < len && line[i] == ' ')
            i++;
    }
    return n;
}

void pk_test_expect_row(const char *text, const char *const *want, const char *file, int line)
{
    size_t nwant = 0;
    while (want[nwant] != NULL)
        nwant++;
    char cells[32][256];
    for (const char *p = text; p != NULL && *p;) {
        size_t len = strcspn(p, "\n");
        size_t n = split_cells(p, len, cells, 32);
        if (n > 0 && strcmp(cells[0], want[0]) == 0) {
            bool same = n == nwant;
            for (size_t k = 0; same && k < n; k++)
                same = strcmp(cells[k], want[k]) == 0;
            if (!same) {
                char w[1024] = "";
                for (size_t k = 0; k < nwant; k++)
                    snprintf(w + strlen(w), sizeof w - strlen(w), "%s[%s]", k ? " " : "", want[k]);
                pk_test_fail(file, line, "row %.*s\n  expected cells: %s", (int)len, p, w);
            }
            return;
        }
        p = p[len] == '\n' ? p + len + 1 : NULL;
    }
    pk_test_fail(file, line, "no row starts with \"%s\" in:\n%s", want[0], text);
}

char *pk_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        pk_test_fail(__FILE__, __LINE__, "cannot open %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    ASSERT(buf != NULL);
    for (size_t r; (r = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n == cap) {
            buf = realloc(buf, (cap *= 2) + 1);
            ASSERT(buf != NULL);
        }
    }
    bool failed = ferror(f) != 0;
    fclose(f);
    if (failed)
        pk_test_fail(__FILE__, __LINE__, "cannot read %s", path);
    buf[n] = '\0';
    if (len != NULL)
        *len = n;
    return buf;
}

void pk_test_write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        pk_test_fail(__FILE__, __LINE__, "cannot create %s: %s", path, strerror(errno));
    size_t wrote = fwrite(data, 1, len, f);
    if (fclose(f) != 0 || wrote != len)
        pk_test_fail(__FILE__, __LINE__, "cannot write %s (%zu of %zu bytes)", path, wrote, len);
}

int pk_test_run_merged(const char *const *argv, char *out, size_t cap)
{
    pk_result res;
    memset(&res, 0, sizeof res);
    int rc = pk_run(&(pk_command){.argv = argv,
                                  .out = {.kind = PK_STDIO_CAPTURE},
                                  .err = {.kind = PK_STDIO_MERGE},
                                  .timeout_ms = 60000},
                    &res);
    int code = rc == 0 && res.outcome.kind == PK_OUTCOME_EXITED ? res.outcome.code : -1;
    if (out != NULL && cap > 0)
        snprintf(out, cap, "%s", res.out.data ? res.out.data : "");
    pk_result_release(&res);
    return code;
}
