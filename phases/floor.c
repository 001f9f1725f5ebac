/*
 * pk_floor — the spawn floor: what spawn+wait costs with each mechanism, in one run, interleaved.
 *
 * Targets: the tiny static helper the build makes (no libc; `_start` exits 0), which isolates the
 * kernel's create/exec/exit/reap path, and /bin/true, a real dynamically linked program.
 * Methods: processkit (no pipes: all three streams inherited; with its default private group,
 * and uncontained, so the difference is containment's cost), raw vfork+execve, raw
 * clone3(CLONE_VM|CLONE_VFORK|CLONE_PIDFD)+execve, glibc posix_spawn, fork+execve.
 *
 * A sample is the mean of N back-to-back spawn+wait cycles of one (target, method) pair. Each
 * round takes one sample of every pair, and the order of pairs rotates from round to round, so
 * drift on this shared 2-vCPU VM spreads evenly over all pairs instead of landing on whichever
 * runs first. One discarded round warms caches first. The table reports median, min and max of
 * the samples and the ratio of medians to raw vfork+execve of the same target (METHODOLOGY.md,
 * "The spawn floor"). The same numbers go to a JSON file, written atomically.
 *
 * Exit status: 0 on success, 1 when a spawn failed or the results file could not be written,
 * 2 for bad arguments.
 */
#define _GNU_SOURCE
#include "bench_util.h"
#include "raw_clone3.h"
#include "processkit.h"

#include <errno.h>
#include <jansson.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- the methods --------------------------------------------------------------------------- */

static char *child_argv[2];

static int wait_ok(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

static int run_pk(const char *path, pk_containment containment)
{
    pk_result r;
    int rc = pk_run(&(pk_command){.program = path,
                                  .in.kind = PK_STDIO_INHERIT,
                                  .out.kind = PK_STDIO_INHERIT,
                                  .err.kind = PK_STDIO_INHERIT,
                                  .containment = containment},
                    &r);
    if (rc == 0 && (r.outcome.kind != PK_OUTCOME_EXITED || r.outcome.code != 0))
        rc = -ECHILD;
    pk_result_release(&r);
    return rc;
}

/* The library's default: a private group (a pooled cgroup leaf here), torn down at the end. */
static int m_processkit(const char *path)
{
    return run_pk(path, PK_CONTAIN_AUTO);
}

/* The same spawn without containment: the difference is what containment costs. */
static int m_processkit_uncontained(const char *path)
{
    return run_pk(path, PK_CONTAIN_NONE);
}

static int m_vfork(const char *path)
{
    pid_t pid = vfork();
    if (pid == 0) {
        execve(path, child_argv, environ);
        _exit(127);
    }
    return pid < 0 ? -errno : wait_ok(pid);
}

static int m_fork(const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        execve(path, child_argv, environ);
        _exit(127);
    }
    return pid < 0 ? -errno : wait_ok(pid);
}

static int m_posix_spawn(const char *path)
{
    pid_t pid;
    int rc = posix_spawn(&pid, path, NULL, NULL, child_argv, environ);
    return rc != 0 ? -rc : wait_ok(pid);
}

static unsigned char clone_stack[64 * 1024] __attribute__((aligned(16)));

static int clone3_child(void *path)
{
    execve(path, child_argv, environ);
    return 127;
}

static int m_clone3(const char *path)
{
    int pidfd = -1;
    struct pk_clone_args args = {
        .flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD,
        .pidfd = (uint64_t)(uintptr_t)&pidfd,
        .exit_signal = SIGCHLD,
        .stack = (uint64_t)(uintptr_t)clone_stack,
        .stack_size = sizeof clone_stack,
    };
    long pid = raw_clone3(&args, PK_CLONE_ARGS_SIZE_VER0, clone3_child, (void *)path);
    if (pid < 0)
        return (int)pid;
    siginfo_t si;
    int rc = 0;
    while (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0)
        if (errno != EINTR) {
            rc = -errno;
            break;
        }
    close(pidfd);
    if (rc == 0 && (si.si_code != CLD_EXITED || si.si_status != 0))
        rc = -ECHILD;
    return rc;
}

struct method {
    const char *name;
    int (*run)(const char *path);
};

static const struct method methods[] = {
    /* one per line; the index macros below follow this order */
    {"processkit", m_processkit},   {"processkit_uncontained", m_processkit_uncontained},
    {"vfork_execve", m_vfork},      {"clone3_pidfd_execve", m_clone3},
    {"posix_spawn", m_posix_spawn}, {"fork_execve", m_fork},
};
#define NMETHODS    (sizeof methods / sizeof methods[0])
#define UNCONTAINED 1 /* processkit_uncontained */
#define BASELINE    2 /* vfork_execve */
#define POSIX_SPAWN 4 /* posix_spawn */

/* ---- sampling ------------------------------------------------------------------------------ */

struct series {
    const char *target;
    const char *path;
    const struct method *method;
    int spawns; /* per sample */
    double *samples_us;
    int n;
    bool available;
    double median, min, max, ratio;
};

/* One sample: the mean cost of `spawns` spawn+wait cycles, or a negative error. */
static int take_sample(struct series *s, int spawns, double *us)
{
    double t0 = pkbu_now_us();
    for (int i = 0; i < spawns; i++) {
        int rc = s->method->run(s->path);
        if (rc != 0)
            return rc;
    }
    *us = (pkbu_now_us() - t0) / spawns;
    return 0;
}

/* ---- output -------------------------------------------------------------------------------- */

static int write_json(const char *path, struct series *all, int nseries, bool pinned, int rounds)
{
    json_t *root = json_object();
    json_object_set_new(root, "schema", json_string("processkit-floor"));
    json_object_set_new(root, "schema_version", json_integer(1));
    char stamp[32];
    time_t t = time(NULL);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    json_object_set_new(root, "date", json_string(stamp));
    json_object_set_new(root, "rounds", json_integer(rounds));
    json_object_set_new(root, "environment", pkbu_environment(pinned));
    json_t *arr = json_array();
    for (int i = 0; i < nseries; i++) {
        struct series *s = &all[i];
        json_t *samples = json_array();
        for (int k = 0; k < s->n; k++)
            json_array_append_new(samples, json_real(s->samples_us[k]));
        json_t *o =
            json_pack("{s:s, s:s, s:s, s:b, s:i}", "target", s->target, "path", s->path, "method",
                      s->method->name, "available", s->available, "spawns_per_sample", s->spawns);
        if (s->available) {
            json_object_set_new(o, "median_us", json_real(s->median));
            json_object_set_new(o, "min_us", json_real(s->min));
            json_object_set_new(o, "max_us", json_real(s->max));
            json_object_set_new(o, "ratio_to_vfork_execve", json_real(s->ratio));
        }
        json_object_set_new(o, "samples_us", samples);
        json_array_append_new(arr, o);
    }
    json_object_set_new(root, "results", arr);

    int rc = pkbu_write_json(root, path, "pk_floor");
    json_decref(root);
    return rc;
}

static void print_table(struct series *all, int nseries)
{
    printf("| target | method | median µs | min µs | max µs | vs vfork_execve |\n");
    printf("|---|---|---:|---:|---:|---:|\n");
    for (int i = 0; i < nseries; i++) {
        struct series *s = &all[i];
        if (!s->available) {
            printf("| %s | %s | unavailable | | | |\n", s->target, s->method->name);
            continue;
        }
        printf("| %s | %s | %.1f | %.1f | %.1f | %.2f× |\n", s->target, s->method->name, s->median,
               s->min, s->max, s->ratio);
    }
}

/* The target, stated from the numbers of this run (never asserted by a test). */
static void print_verdict(struct series *all, int ntargets)
{
    printf("\n");
    for (int t = 0; t < ntargets; t++) {
        struct series *row = &all[t * (int)NMETHODS];
        struct series *pk = &row[0], *ps = &row[POSIX_SPAWN];
        if (!pk->available || !row[BASELINE].available || !ps->available)
            continue;
        struct series *un = &row[UNCONTAINED];
        printf("%s: processkit (contained, %s) is %.2f× vfork_execve (target ≤ 1.10×: %s) and "
               "%.2f× posix_spawn (target < 1: %s); uncontained %.2f× vfork_execve; "
               "containment adds %.1f µs (target ≤ 10 µs: %s)\n",
               pk->target, pk_containment_name(pk_host_containment()), pk->ratio,
               pk->ratio <= 1.10 ? "met" : "NOT met", pk->median / ps->median,
               pk->median < ps->median ? "met" : "NOT met", un->ratio, pk->median - un->median,
               pk->median - un->median <= 10.0 ? "met" : "NOT met");
    }
}

/* ---- main ---------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f, "usage: pk_floor [--rounds N] [--spawns N] [--true-spawns N] [--pin] [--out FILE]\n"
               "\n"
               "Times spawn+wait of the tiny static helper and /bin/true with processkit, raw\n"
               "vfork+execve, raw clone3+execve, glibc posix_spawn and fork+execve, interleaved.\n"
               "  --rounds N       samples per series (default 15)\n"
               "  --spawns N       spawns per sample for the tiny helper (default 200)\n"
               "  --true-spawns N  spawns per sample for /bin/true (default 50)\n"
               "  --pin            pin this process and its children to CPU 0\n"
               "  --out FILE       results file (default results/floor-<UTC time>.json)\n"
               "Exit: 0 ok, 1 a spawn failed or the file could not be written, 2 bad arguments.\n");
}

static int parse_count(const char *opt, const char *val, int *out)
{
    char *end;
    long v = val != NULL ? strtol(val, &end, 10) : 0;
    if (val == NULL || *end != '\0' || v < 1 || v > 1000000) {
        fprintf(stderr, "pk_floor: %s needs a count from 1 to 1000000, got '%s'\n", opt,
                val ? val : "");
        usage(stderr);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    int rounds = 15, spawns = 200, true_spawns = 50;
    bool pin = false;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--rounds") == 0) {
            if (parse_count(a, i + 1 < argc ? argv[++i] : NULL, &rounds) != 0)
                return 2;
        } else if (strcmp(a, "--spawns") == 0) {
            if (parse_count(a, i + 1 < argc ? argv[++i] : NULL, &spawns) != 0)
                return 2;
        } else if (strcmp(a, "--true-spawns") == 0) {
            if (parse_count(a, i + 1 < argc ? argv[++i] : NULL, &true_spawns) != 0)
                return 2;
        } else if (strcmp(a, "--pin") == 0) {
            pin = true;
        } else if (strcmp(a, "--out") == 0 && i + 1 < argc && argv[i + 1][0] != '\0') {
            out = argv[++i];
        } else {
            fprintf(stderr, "pk_floor: unknown or incomplete argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }

    /* The tiny helper is built next to this executable. */
    static char tiny[4096];
    ssize_t n = readlink("/proc/self/exe", tiny, sizeof tiny - 16);
    if (n <= 0)
        return 1;
    tiny[n] = '\0';
    snprintf(strrchr(tiny, '/'), 16, "/pk_tiny");
    struct stat st;
    if (stat(tiny, &st) != 0) {
        fprintf(stderr, "pk_floor: the tiny helper %s is missing (build the phases target)\n",
                tiny);
        return 1;
    }
    if (pin) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(0, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) {
            fprintf(stderr, "pk_floor: --pin: sched_setaffinity: %s\n", strerror(errno));
            return 1;
        }
    }

    struct {
        const char *name, *path;
        int spawns;
    } targets[] = {{"tiny_static", tiny, spawns}, {"bin_true", "/bin/true", true_spawns}};
    const int ntargets = 2, nseries = ntargets * (int)NMETHODS;
    struct series all[2 * NMETHODS];
    for (int t = 0; t < ntargets; t++)
        for (size_t m = 0; m < NMETHODS; m++)
            all[t * (int)NMETHODS + (int)m] = (struct series){
                .target = targets[t].name,
                .path = targets[t].path,
                .method = &methods[m],
                .spawns = targets[t].spawns,
                .samples_us = calloc((size_t)rounds, sizeof(double)),
                .available = true,
            };

    bool tty = isatty(2);
    for (int r = -1; r < rounds; r++) {
        if (tty)
            fprintf(stderr, "\rpk_floor: %s %d/%d ", r < 0 ? "warm-up" : "round", r + 1, rounds);
        for (int k = 0; k < nseries; k++) {
            /* Rotate the order every round so that no series always runs first. */
            struct series *s = &all[(k + (r < 0 ? 0 : r)) % nseries];
            if (!s->available)
                continue;
            double us;
            int rc = take_sample(s, r < 0 ? s->spawns / 4 + 1 : s->spawns, &us);
            if (rc == -ENOSYS && s->method->run == m_clone3) {
                s->available = false;
                continue;
            }
            if (rc != 0) {
                fprintf(stderr, "\npk_floor: %s of %s failed: %s\n", s->method->name, s->path,
                        pk_strerror(rc));
                return 1;
            }
            if (r >= 0)
                s->samples_us[s->n++] = us;
        }
    }
    if (tty)
        fprintf(stderr, "\r%40s\r", "");

    for (int i = 0; i < nseries; i++) {
        if (all[i].available) {
            pkbu_summary sum = pkbu_summarize(all[i].samples_us, all[i].n);
            all[i].median = sum.median;
            all[i].min = sum.min;
            all[i].max = sum.max;
        }
    }
    for (int i = 0; i < nseries; i++) {
        struct series *base = &all[(i / (int)NMETHODS) * (int)NMETHODS + BASELINE];
        if (all[i].available)
            all[i].ratio = all[i].median / base->median;
    }

    printf("Spawn floor: spawn+wait in µs per child, %d interleaved rounds, %s, mechanism %s%s\n\n",
           rounds, pin ? "pinned to CPU 0" : "unpinned", pk_mechanism_name(pk_spawn_mechanism()),
           pk_spawn_clears_sighand() ? " (CLONE_CLEAR_SIGHAND)" : "");
    print_table(all, nseries);
    print_verdict(all, ntargets);

    char defpath[256];
    if (out == NULL) {
        pkbu_default_path(defpath, sizeof defpath, "floor");
        out = defpath;
    }
    int rc = write_json(out, all, nseries, pin, rounds);
    if (rc == 0)
        printf("\nresults: %s\n", out);
    for (int i = 0; i < nseries; i++)
        free(all[i].samples_us);
    return rc == 0 ? 0 : 1;
}
