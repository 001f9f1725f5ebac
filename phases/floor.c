/*
 * pk_floor — the spawn floor: what spawn+wait costs with each method, in one run, interleaved.
 *
 * Targets: the tiny static helper the build makes (no libc; `_start` exits 0), which isolates the
 * kernel's create/exec/exit/reap path, and /bin/true, a real dynamically linked program. Methods
 * (floor_methods.c): processkit (streams inherited; contained, with inherit_fds, uncontained; and
 * every default, with its captures), a raw clone3 ladder that adds the library's steps one at a
 * time, raw vfork+execve (the baseline), a raw vfork+pipes+poll loop (the capture path's
 * baseline), glibc posix_spawn and fork+execve.
 *
 * A sample is the mean of N back-to-back spawn+wait cycles of one (target, method) pair. Each
 * round takes one sample of every pair, and the order of pairs rotates from round to round, so
 * drift on this shared 2-vCPU VM spreads evenly over all pairs instead of landing on whichever
 * runs first. One discarded round warms caches first. The table reports median, min and max of
 * the samples and the ratio of medians to raw vfork+execve of the same target, then states the
 * project's targets from this run's own numbers (METHODOLOGY.md, "The spawn floor").
 *
 * After the timed rounds, an untimed census counts CPU migrations per spawn for every pair with a
 * software perf counter (PERF_COUNT_SW_CPU_MIGRATIONS), once on this process alone and once
 * inherited by its children: the difference is how often a child moved to another CPU, which on
 * these VMs happens during execve (the kernel's exec balancing) and costs tens of microseconds.
 * It runs apart from the timing because an inherited counter makes every fork and exit dearer.
 *
 * Exit status: 0 on success, 1 when a spawn failed or the results file could not be written,
 * 2 for bad arguments.
 */
#define _GNU_SOURCE
#include "bench_util.h"
#include "floor_methods.h"
#include "processkit.h"

#include <errno.h>
#include <jansson.h>
#include <linux/perf_event.h>
#include <regex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- series -------------------------------------------------------------------------------- */

struct series {
    const char *target;
    const char *path;
    const pkf_method *method;
    int spawns; /* per sample */
    double *samples_us;
    double *cpu_us; /* this process's user+sys CPU per spawn, per sample */
    int n;
    bool selected, available;
    double median, min, max, ratio;
    double cpu_median;                /* of cpu_us */
    double child_moved, parent_moved; /* census: migrations per spawn, -1 when not counted */
};

struct run {
    struct series *all;
    int nseries, ntargets;
    int rounds, census;
    bool pinned;
    char affinity[64];
    char unavailable[256];
    char census_why[160];
};

static double self_cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* One sample: the mean cost of `spawns` spawn+wait cycles, and this process's CPU per spawn
 * (what the spawner itself burns, apart from the child and from waiting), or a negative error. */
static int take_sample(struct series *s, int spawns, double *us, double *cpu)
{
    double c0 = self_cpu_us(), t0 = pkbu_now_us();
    for (int i = 0; i < spawns; i++) {
        int rc = s->method->run(s->path);
        if (rc != 0)
            return rc;
    }
    *us = (pkbu_now_us() - t0) / spawns;
    *cpu = (self_cpu_us() - c0) / spawns;
    return 0;
}

static struct series *find(struct run *run, int target, const char *method)
{
    int m = pkf_method_index(method);
    if (m < 0)
        return NULL;
    struct series *s = &run->all[target * (int)pkf_method_count + m];
    return s->selected && s->available && s->n > 0 ? s : NULL;
}

/* ---- the census ---------------------------------------------------------------------------- */

static int migrations_counter(bool inherit)
{
    struct perf_event_attr a = {
        .type = PERF_TYPE_SOFTWARE,
        .size = sizeof a,
        .config = PERF_COUNT_SW_CPU_MIGRATIONS,
        .inherit = inherit,
        .exclude_kernel = 0,
    };
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static long long counter_value(int fd)
{
    long long v = 0;
    return read(fd, &v, sizeof v) == (ssize_t)sizeof v ? v : -1;
}

/* Counts migrations over `spawns` spawns of every selected pair, in rotated order too. */
static void census(struct run *run)
{
    int probe = migrations_counter(true);
    if (probe < 0) {
        snprintf(run->census_why, sizeof run->census_why,
                 "perf_event_open(PERF_COUNT_SW_CPU_MIGRATIONS): %s", strerror(errno));
        return;
    }
    close(probe);
    for (int k = 0; k < run->nseries; k++) {
        struct series *s = &run->all[k];
        if (!s->selected || !s->available)
            continue;
        int self = migrations_counter(false), all = migrations_counter(true);
        int spawns = s->spawns < run->census ? s->spawns : run->census;
        bool ok = self >= 0 && all >= 0;
        for (int i = 0; ok && i < spawns; i++)
            ok = s->method->run(s->path) == 0;
        long long a = ok ? counter_value(all) : -1, p = ok ? counter_value(self) : -1;
        if (ok && a >= 0 && p >= 0) {
            s->child_moved = (double)(a - p) / spawns;
            s->parent_moved = (double)p / spawns;
        }
        if (self >= 0)
            close(self);
        if (all >= 0)
            close(all);
    }
}

/* ---- output -------------------------------------------------------------------------------- */

struct target_check {
    const char *name, *unit;
    double value, limit;
    bool met;
};

/* The project's targets, from this run's numbers. Returns how many were filled. */
static int checks(struct run *run, int t, struct target_check *out)
{
    struct series *pk = find(run, t, "processkit"), *vf = find(run, t, "vfork_execve");
    struct series *ps = find(run, t, "posix_spawn"), *un = find(run, t, "processkit_uncontained");
    struct series *def = find(run, t, "processkit_defaults");
    struct series *raw = find(run, t, "vfork_pipes_poll");
    int n = 0;
    if (pk != NULL && vf != NULL) {
        double limit = run->pinned ? 1.05 : 1.10;
        out[n++] = (struct target_check){run->pinned ? "processkit / vfork_execve, pinned"
                                                     : "processkit / vfork_execve, unpinned",
                                         "×", pk->median / vf->median, limit,
                                         pk->median / vf->median <= limit};
    }
    if (pk != NULL && ps != NULL)
        out[n++] = (struct target_check){"processkit / posix_spawn", "×", pk->median / ps->median,
                                         1.0, pk->median <= ps->median};
    if (def != NULL && raw != NULL)
        out[n++] = (struct target_check){"processkit_defaults / vfork_pipes_poll", "×",
                                         def->median / raw->median, 1.10,
                                         def->median / raw->median <= 1.10};
    if (pk != NULL && un != NULL)
        out[n++] =
            (struct target_check){"containment: processkit − processkit_uncontained", "µs",
                                  pk->median - un->median, 10.0, pk->median - un->median <= 10.0};
    return n;
}

/* What each step of the ladder adds, from this run's medians (the difference of two series). */
static void print_steps(struct run *run, int t)
{
    static const char *const steps[][3] = {
        {"the mechanism: clone3_execve − vfork_execve", "clone3_execve", "vfork_execve"},
        {"a pidfd: clone3_pidfd_execve − clone3_execve", "clone3_pidfd_execve", "clone3_execve"},
        {"close_range: clone3_close_range_execve − clone3_execve", "clone3_close_range_execve",
         "clone3_execve"},
        {"containment: clone3_cgroup_execve − clone3_execve", "clone3_cgroup_execve",
         "clone3_execve"},
        {"an uncached cgroup.procs inode: clone3_cgroup_cold_execve − clone3_cgroup_execve",
         "clone3_cgroup_cold_execve", "clone3_cgroup_execve"},
        {"the library's own work: processkit − clone3_contained_execve", "processkit",
         "clone3_contained_execve"},
        {"5 µs more spawner work: clone3_busy5_execve − clone3_execve", "clone3_busy5_execve",
         "clone3_execve"},
        {"close_range in the library: processkit − processkit_inherit_fds", "processkit",
         "processkit_inherit_fds"},
        {"the capture path: processkit_defaults_uncontained − vfork_pipes_poll",
         "processkit_defaults_uncontained", "vfork_pipes_poll"},
        {"containment, capturing: processkit_defaults − processkit_defaults_uncontained",
         "processkit_defaults", "processkit_defaults_uncontained"},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        struct series *a = find(run, t, steps[i][1]), *b = find(run, t, steps[i][2]);
        if (a != NULL && b != NULL)
            printf("  %-80s %+7.1f µs\n", steps[i][0], a->median - b->median);
    }
}

static void print_report(struct run *run)
{
    printf("| target | method | median µs | min µs | max µs | vs vfork_execve | spawner CPU µs "
           "| child moved |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < run->nseries; i++) {
        struct series *s = &run->all[i];
        if (!s->selected)
            continue;
        if (!s->available) {
            printf("| %s | %s | unavailable | | | | | |\n", s->target, s->method->name);
            continue;
        }
        char moved[32] = "";
        if (s->child_moved >= 0)
            snprintf(moved, sizeof moved, "%.0f%%", 100 * s->child_moved);
        printf("| %s | %s | %.1f | %.1f | %.1f | %.3f× | %.1f | %s |\n", s->target, s->method->name,
               s->median, s->min, s->max, s->ratio, s->cpu_median, moved);
    }
    if (run->unavailable[0] != '\0')
        printf("\nunavailable: %s\n", run->unavailable);
    if (run->census_why[0] != '\0')
        printf("\nno migration census: %s\n", run->census_why);
    for (int t = 0; t < run->ntargets; t++) {
        struct target_check c[8];
        int n = checks(run, t, c);
        printf("\n%s (%s):\n", run->all[t * (int)pkf_method_count].target,
               run->pinned ? "pinned" : "unpinned");
        for (int i = 0; i < n; i++) {
            const char *u = strcmp(c[i].unit, "µs") == 0 ? " µs" : "×";
            printf("  %-66s %8.3f%s (target ≤ %.2f%s: %s)\n", c[i].name, c[i].value, u, c[i].limit,
                   u, c[i].met ? "met" : "NOT met");
        }
        print_steps(run, t);
    }
}

static int write_json(const char *path, struct run *run)
{
    json_t *root = json_object();
    json_object_set_new(root, "schema", json_string("processkit-floor"));
    json_object_set_new(root, "schema_version", json_integer(2));
    char stamp[32];
    time_t now = time(NULL);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    json_object_set_new(root, "date", json_string(stamp));
    json_object_set_new(root, "rounds", json_integer(run->rounds));
    json_t *env = pkbu_environment(run->pinned);
    json_object_set_new(env, "cpu_affinity", json_string(run->affinity));
    json_object_set_new(root, "environment", env);
    json_t *arr = json_array();
    for (int i = 0; i < run->nseries; i++) {
        struct series *s = &run->all[i];
        if (!s->selected)
            continue;
        json_t *samples = json_array(), *cpu = json_array();
        for (int k = 0; k < s->n; k++) {
            json_array_append_new(samples, json_real(s->samples_us[k]));
            json_array_append_new(cpu, json_real(s->cpu_us[k]));
        }
        json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:b, s:i}", "target", s->target, "path",
                              s->path, "method", s->method->name, "what", s->method->what,
                              "available", s->available, "spawns_per_sample", s->spawns);
        if (s->available) {
            json_object_set_new(o, "median_us", json_real(s->median));
            json_object_set_new(o, "min_us", json_real(s->min));
            json_object_set_new(o, "max_us", json_real(s->max));
            json_object_set_new(o, "ratio_to_vfork_execve", json_real(s->ratio));
            json_object_set_new(o, "spawner_cpu_us_median", json_real(s->cpu_median));
        }
        if (s->child_moved >= 0) {
            json_object_set_new(o, "child_migrations_per_spawn", json_real(s->child_moved));
            json_object_set_new(o, "parent_migrations_per_spawn", json_real(s->parent_moved));
        }
        json_object_set_new(o, "samples_us", samples);
        json_object_set_new(o, "spawner_cpu_us", cpu);
        json_array_append_new(arr, o);
    }
    json_object_set_new(root, "results", arr);
    json_t *targets = json_array();
    for (int t = 0; t < run->ntargets; t++) {
        struct target_check c[8];
        int n = checks(run, t, c);
        for (int i = 0; i < n; i++)
            json_array_append_new(targets,
                                  json_pack("{s:s, s:s, s:f, s:f, s:s, s:b}", "target",
                                            run->all[t * (int)pkf_method_count].target, "check",
                                            c[i].name, "value", c[i].value, "limit", c[i].limit,
                                            "unit", c[i].unit, "met", c[i].met));
    }
    json_object_set_new(root, "targets", targets);
    json_object_set_new(root, "census_spawns", json_integer(run->census));
    int rc = pkbu_write_json(root, path, "pk_floor");
    json_decref(root);
    return rc;
}

/* ---- main ---------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(
        f, "usage: pk_floor [--rounds N] [--spawns N] [--true-spawns N] [--census N]\n"
           "                [--methods REGEX] [--pin] [--out FILE]\n"
           "\n"
           "Times spawn+wait of the tiny static helper and /bin/true by processkit and by raw\n"
           "system calls (a clone3 ladder adding the library's steps one at a time, vfork+execve,\n"
           "a vfork+pipes+poll loop, glibc posix_spawn, fork+execve), interleaved, then counts\n"
           "CPU migrations per spawn in an untimed census, and states the targets from the run.\n"
           "  --rounds N       samples per series (default 15)\n"
           "  --spawns N       spawns per sample for the tiny helper (default 200)\n"
           "  --true-spawns N  spawns per sample for /bin/true (default 50)\n"
           "  --census N       spawns per series in the migration census, 0 for none "
           "(default 200)\n"
           "  --methods REGEX  only the methods whose name matches (extended regex)\n"
           "  --pin            pin this process and its children to the last CPU it may use\n"
           "                   (CPU 1 on a 2-CPU machine, as `taskset -c 1` does)\n"
           "  --out FILE       results file (default results/floor-<UTC time>.json)\n"
           "Methods:\n");
    for (size_t i = 0; i < pkf_method_count; i++)
        fprintf(f, "  %-26s %s\n", pkf_methods[i].name, pkf_methods[i].what);
    fprintf(f, "Exit: 0 ok, 1 a spawn failed or the file could not be written, 2 bad arguments.\n");
}

static int parse_count(const char *opt, const char *val, int min, int *out)
{
    char *end;
    long v = val != NULL ? strtol(val, &end, 10) : 0;
    if (val == NULL || val[0] == '\0' || *end != '\0' || v < min || v > 1000000) {
        fprintf(stderr, "pk_floor: %s needs a count from %d to 1000000, got '%s'\n", opt, min,
                val ? val : "");
        return -1;
    }
    *out = (int)v;
    return 0;
}

struct options {
    int rounds, spawns, true_spawns, census;
    bool pin;
    const char *out, *methods;
};

/* 0 to run, 1 after --help, 2 for bad arguments (the message printed). */
static int parse_args(int argc, char **argv, struct options *o)
{
    *o = (struct options){.rounds = 15, .spawns = 200, .true_spawns = 50, .census = 200};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 1;
        } else if (strcmp(a, "--rounds") == 0) {
            rc = parse_count(a, val, 1, &o->rounds), i++;
        } else if (strcmp(a, "--spawns") == 0) {
            rc = parse_count(a, val, 1, &o->spawns), i++;
        } else if (strcmp(a, "--true-spawns") == 0) {
            rc = parse_count(a, val, 1, &o->true_spawns), i++;
        } else if (strcmp(a, "--census") == 0) {
            rc = parse_count(a, val, 0, &o->census), i++;
        } else if (strcmp(a, "--pin") == 0) {
            o->pin = true;
        } else if ((strcmp(a, "--out") == 0 || strcmp(a, "--methods") == 0) && val != NULL &&
                   val[0] != '\0') {
            *(a[2] == 'o' ? &o->out : &o->methods) = val;
            i++;
        } else {
            fprintf(stderr, "pk_floor: unknown or incomplete argument '%s'\n", a);
            rc = -1;
        }
        if (rc != 0) {
            usage(stderr);
            return 2;
        }
    }
    return 0;
}

/* Records the CPUs we may run on ("1", "0-1"), pinning first when asked. */
static int affinity(struct run *run, bool pin)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -errno;
    if (pin) {
        int last = -1;
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set))
                last = c;
        CPU_ZERO(&set);
        CPU_SET(last, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0)
            return -errno;
    }
    run->pinned = CPU_COUNT(&set) == 1;
    size_t len = 0;
    run->affinity[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && len + 16 < sizeof run->affinity; c++) {
        if (!CPU_ISSET(c, &set))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set))
            e++;
        len += (size_t)snprintf(run->affinity + len, sizeof run->affinity - len, "%s%d%s%.0d",
                                len ? "," : "", c, e > c ? "-" : "", e > c ? e : 0);
        c = e;
    }
    return 0;
}

/* The rounds: a discarded warm-up, then one sample of every pair per round, rotated. */
static int sample_all(struct run *run)
{
    bool tty = isatty(2);
    for (int r = -1; r < run->rounds; r++) {
        if (tty)
            fprintf(stderr, "\rpk_floor: %s %d/%d ", r < 0 ? "warm-up" : "round", r + 1,
                    run->rounds);
        for (int k = 0; k < run->nseries; k++) {
            struct series *s = &run->all[(k + (r < 0 ? 0 : r)) % run->nseries];
            if (!s->selected || !s->available)
                continue;
            double us, cpu;
            int rc = take_sample(s, r < 0 ? s->spawns / 4 + 1 : s->spawns, &us, &cpu);
            if (rc != 0) {
                fprintf(stderr, "\npk_floor: %s of %s failed: %s\n", s->method->name, s->path,
                        pk_strerror(rc));
                return -1;
            }
            if (r >= 0) {
                s->cpu_us[s->n] = cpu;
                s->samples_us[s->n++] = us;
            }
        }
    }
    if (tty)
        fprintf(stderr, "\r%40s\r", "");
    return 0;
}

static void summarize(struct run *run)
{
    for (int i = 0; i < run->nseries; i++) {
        struct series *s = &run->all[i];
        if (s->available && s->n > 0) {
            pkbu_summary sum = pkbu_summarize(s->samples_us, s->n);
            s->median = sum.median;
            s->min = sum.min;
            s->max = sum.max;
            s->cpu_median = pkbu_summarize(s->cpu_us, s->n).median;
        }
    }
    for (int i = 0; i < run->nseries; i++) {
        struct series *s = &run->all[i];
        struct series *base = find(run, i / (int)pkf_method_count, "vfork_execve");
        if (s->available && s->n > 0 && base != NULL)
            s->ratio = s->median / base->median;
    }
}

/* The run's series: every method against both targets, selected by --methods (re, when given)
 * and available on this host (`have`). */
static void build_series(
    struct run *run, const struct options *o, const char *tiny, const regex_t *re, unsigned have)
{
    struct {
        const char *name, *path;
        int spawns;
    } targets[] = {{"tiny_static", tiny, o->spawns}, {"bin_true", "/bin/true", o->true_spawns}};
    run->nseries = run->ntargets * (int)pkf_method_count;
    run->all = calloc((size_t)run->nseries, sizeof *run->all);
    for (int t = 0; t < run->ntargets; t++)
        for (size_t m = 0; m < pkf_method_count; m++) {
            const pkf_method *pm = &pkf_methods[m];
            run->all[t * (int)pkf_method_count + (int)m] = (struct series){
                .target = targets[t].name,
                .path = targets[t].path,
                .method = pm,
                .spawns = targets[t].spawns,
                .samples_us = calloc((size_t)o->rounds, sizeof(double)),
                .cpu_us = calloc((size_t)o->rounds, sizeof(double)),
                .selected = re == NULL || regexec(re, pm->name, 0, NULL, 0) == 0,
                .available = (pm->needs & ~have) == 0,
                .child_moved = -1,
                .parent_moved = -1,
            };
        }
}

/* Samples, summarizes and reports the run, then writes its file. 0, or nonzero on failure. */
static int measure_and_report(struct run *run, const struct options *o)
{
    int rc = sample_all(run);
    if (rc != 0)
        return rc;
    summarize(run);
    if (o->census > 0)
        census(run);
    printf("Spawn floor: spawn+wait in µs per child, %d interleaved rounds, %s (CPUs %s), "
           "mechanism %s%s\n\n",
           run->rounds, run->pinned ? "pinned" : "unpinned", run->affinity,
           pk_mechanism_name(pk_spawn_mechanism()),
           pk_spawn_clears_sighand() ? " (CLONE_CLEAR_SIGHAND)" : "");
    print_report(run);
    char defpath[256];
    const char *out = o->out;
    if (out == NULL) {
        pkbu_default_path(defpath, sizeof defpath, "floor");
        out = defpath;
    }
    rc = write_json(out, run);
    if (rc == 0)
        printf("\nresults: %s\n", out);
    return rc;
}

int main(int argc, char **argv)
{
    struct options o;
    int prc = parse_args(argc, argv, &o);
    if (prc != 0)
        return prc == 1 ? 0 : 2;
    regex_t re;
    if (o.methods != NULL && regcomp(&re, o.methods, REG_EXTENDED | REG_NOSUB) != 0) {
        fprintf(stderr, "pk_floor: --methods: '%s' is not a valid extended regex\n", o.methods);
        return 2;
    }

    /* The tiny helper is built next to this executable. */
    static char tiny[4096];
    int rc = pkbu_sibling("pk_tiny", tiny, sizeof tiny);
    if (rc == -ENOENT)
        fprintf(stderr, "pk_floor: the tiny helper %s is missing (build the phases target)\n",
                tiny);
    if (rc != 0)
        return 1;
    struct run run = {.rounds = o.rounds, .census = o.census, .ntargets = 2};
    rc = affinity(&run, o.pin);
    if (rc != 0) {
        fprintf(stderr, "pk_floor: CPU affinity: %s\n", strerror(-rc));
        return 1;
    }
    unsigned have = pkf_methods_open(run.unavailable, sizeof run.unavailable);
    build_series(&run, &o, tiny, o.methods != NULL ? &re : NULL, have);
    rc = measure_and_report(&run, &o);
    pkf_methods_close();
    for (int i = 0; i < run.nseries; i++) {
        free(run.all[i].samples_us);
        free(run.all[i].cpu_us);
    }
    free(run.all);
    if (o.methods != NULL)
        regfree(&re);
    return rc == 0 ? 0 : 1;
}
