/*
 * Shared by pk_floor and pk_stream_rate: the clock, sample summaries, the environment block,
 * atomic JSON output and the programs built beside them (see bench_util.h).
 */
#define _GNU_SOURCE
#include "bench_util.h"

#include "processkit.h"

#include <errno.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

double pkbu_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

pkbu_summary pkbu_summarize(const double *samples, int n)
{
    double *sorted = malloc((size_t)n * sizeof *sorted);
    pkbu_summary s = {0, 0, 0};
    if (sorted == NULL || n <= 0) {
        free(sorted);
        return s;
    }
    memcpy(sorted, samples, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
    s.min = sorted[0];
    s.max = sorted[n - 1];
    s.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    free(sorted);
    return s;
}

static void cpu_model(char *buf, size_t cap)
{
    snprintf(buf, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "re");
    char line[512];
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            size_t n = strnlen(colon + 2, cap - 1);
            memcpy(buf, colon + 2, n);
            buf[n] = '\0';
            buf[strcspn(buf, "\n")] = '\0';
            break;
        }
    }
    if (f != NULL)
        fclose(f);
}

json_t *pkbu_environment(bool pinned)
{
    struct utsname u;
    uname(&u);
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    json_t *env = json_pack(
        "{s:s, s:s, s:s, s:I, s:s, s:s, s:b, s:b}", "kernel", u.release, "machine", u.machine,
        "cpu_model", cpu, "logical_cpus", (json_int_t)sysconf(_SC_NPROCESSORS_ONLN), "libc",
        gnu_get_libc_version(), "spawn_mechanism", pk_mechanism_name(pk_spawn_mechanism()),
        "clear_sighand", pk_spawn_clears_sighand(), "pinned", pinned);
    json_object_set_new(env, "containment",
                        json_string(pk_containment_name(pk_host_containment())));
    return env;
}

int pkbu_write_json(json_t *doc, const char *path, const char *tool)
{
    /* Atomic only onto a regular file (or a new path): renaming over /dev/stdout, a FIFO or a
     * symlink would replace it. Anything else is written in place, as `>` would. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (json_dump_file(doc, path, JSON_INDENT(2) | JSON_SORT_KEYS) != 0) {
            fprintf(stderr, "%s: cannot write %s: %s\n", tool, path, strerror(errno));
            return -1;
        }
        return 0;
    }
    char real[4096];
    if (realpath(path, real) != NULL)
        path = real; /* through a symlink: its target is what gets replaced */
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof tmp) {
        fprintf(stderr, "%s: path too long: %s\n", tool, path);
        return -1;
    }
    if (json_dump_file(doc, tmp, JSON_INDENT(2) | JSON_SORT_KEYS) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "%s: cannot write %s: %s\n", tool, path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

void pkbu_default_path(char *buf, size_t cap, const char *prefix)
{
    char stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    mkdir("results", 0755);
    snprintf(buf, cap, "results/%s-%s.json", prefix, stamp);
}

int pkbu_sibling(const char *name, char *path, size_t cap)
{
    size_t room = strlen(name) + 2; /* '/', name, NUL */
    if (cap <= room)
        return -1;
    ssize_t n = readlink("/proc/self/exe", path, cap - room);
    if (n <= 0)
        return -1;
    path[n] = '\0';
    snprintf(strrchr(path, '/'), room, "/%s", name);
    struct stat st;
    return stat(path, &st) == 0 ? 0 : -ENOENT;
}
