/*
 * pk_forward_rate — what pkrun costs on a command's output, against coreutils' timeout and the
 * command run directly.
 *
 * The command is this program itself (`--produce BYTES LINE`), writing BYTES of lines LINE bytes
 * long (0: one line with no newline) in 64 KiB writes; the benchmark reads its stdout pipe with
 * 1 MiB reads and counts the bytes. Methods, each one run of the same producer into the same
 * kind of pipe:
 *   direct        the producer alone: the pipe's ceiling;
 *   timeout       `timeout 1000 producer`, coreutils 9.1 (when installed);
 *   pkrun         `pkrun 1000 producer`: the default, the command inherits pkrun's stdout;
 *   pkrun_idle    `pkrun --idle-timeout 1000 ...`: relayed through a pipe, spliced (no copy);
 *   pkrun_json    `pkrun --json /dev/null --keep tail ...`: relayed by tee, captured.
 * Workloads: 1 GiB of 2-byte lines, and 1 GiB without a newline (--size changes it). Samples are
 * taken in interleaved rounds with a rotating order; medians are compared as time ratios against
 * timeout measured in the same run. The targets — pkrun by default equal to timeout (no copy: a
 * ratio within 1.05, or within the run's own noise, how far apart direct and timeout land), pkrun
 * with pipes within 1.2× of timeout — are stated from those numbers, never asserted. Each run's CPU
 * (the command's tree, from wait4, plus the reader's) is recorded too: on this shared 2-vCPU
 * machine it is far steadier than the wall time. The load average at the start and the end is
 * printed: a loaded run says so.
 *
 * Results go to results/forward-rate-<UTC time>.json (every sample); `--report FILE` prints the
 * table again from such a file, so every number in the report comes from a results file.
 * METHODOLOGY.md, "pkrun's forwarding cost", says how to read it.
 *
 * Exit status: 0 ok; 1 a run failed or the file could not be written/read; 2 bad arguments.
 */
#define _GNU_SOURCE
#include "bench_util.h"
#include "processkit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PK_PKRUN_PATH
#error "phases/CMakeLists.txt passes pkrun's path"
#endif

extern char **environ;

static char self_path[PATH_MAX];
static char timeout_path[PATH_MAX];

/* ---- the producer -------------------------------------------------------------------------- */

static int produce(unsigned long long bytes, unsigned long long line)
{
    static char buf[65536];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = line > 0 && i % line == line - 1 ? '\n' : 'x';
    /* 64 KiB is a multiple of 2: the 2-byte lines stay aligned from one write to the next. */
    for (unsigned long long done = 0; done < bytes;) {
        size_t n = bytes - done < sizeof buf ? (size_t)(bytes - done) : sizeof buf;
        ssize_t w = write(1, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return 1;
        done += (unsigned long long)w;
    }
    return 0;
}

/* ---- methods and workloads ----------------------------------------------------------------- */

struct method {
    const char *name;
    const char *what;
    const char *prefix[8]; /* before the producer's argv; NULL-terminated */
    bool relays;           /* pkrun with pipes: the 1.2x target */
};

static struct method methods[] = {
    {"direct", "the producer alone", {NULL}, false},
    {"timeout", "coreutils timeout 1000 producer", {timeout_path, "1000", NULL}, false},
    {"pkrun", "pkrun 1000 producer (inherited stdout)", {PK_PKRUN_PATH, "1000", NULL}, false},
    {"pkrun_idle",
     "pkrun --idle-timeout 1000 (relayed, spliced)",
     {PK_PKRUN_PATH, "--idle-timeout", "1000", "1000", NULL},
     true},
    {"pkrun_json",
     "pkrun --json /dev/null --keep tail (relayed, teed, captured)",
     {PK_PKRUN_PATH, "--json", "/dev/null", "--keep", "tail", "1000", NULL},
     true},
};
#define NMETHODS   (sizeof methods / sizeof methods[0])
#define M_DIRECT   0
#define M_TIMEOUT  1
#define M_PKRUN    2
#define NWORKLOADS 2

static const struct {
    const char *name;
    unsigned long long line;
} workloads[NWORKLOADS] = {{"short_lines_2b", 2}, {"one_long_line", 0}};

static double cpu_seconds(const struct rusage *ru)
{
    return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) +
           (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e6;
}

/* One run: seconds from the spawn to the reap, or -1; *cpu receives the CPU seconds the whole
 * pipeline used (the command's tree, from wait4, and this reader's own). */
static double
run_once(const struct method *m, unsigned long long bytes, unsigned long long line, double *cpu)
{
    char nbytes[32], nline[32];
    snprintf(nbytes, sizeof nbytes, "%llu", bytes);
    snprintf(nline, sizeof nline, "%llu", line);
    char *argv[16];
    int n = 0;
    for (int i = 0; m->prefix[i] != NULL; i++)
        argv[n++] = (char *)m->prefix[i];
    argv[n++] = self_path;
    argv[n++] = "--produce";
    argv[n++] = nbytes;
    argv[n++] = nline;
    argv[n] = NULL;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    struct rusage self0, self1, tree;
    getrusage(RUSAGE_SELF, &self0);
    double t0 = pkbu_now_us();
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (rc != 0) {
        close(p[0]);
        return -1;
    }
    static char buf[1 << 20];
    unsigned long long got = 0;
    for (;;) {
        ssize_t r = read(p[0], buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (unsigned long long)r;
    }
    close(p[0]);
    int status;
    while (wait4(pid, &status, 0, &tree) < 0 && errno == EINTR)
        ;
    double secs = (pkbu_now_us() - t0) / 1e6;
    getrusage(RUSAGE_SELF, &self1);
    *cpu = cpu_seconds(&tree) + cpu_seconds(&self1) - cpu_seconds(&self0);
    if (got != bytes || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "\npk_forward_rate: %s delivered %llu of %llu bytes, status %d\n", m->name,
                got, bytes, status);
        return -1;
    }
    return secs;
}

/* ---- the report (from the results document) ------------------------------------------------ */

static double loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "re");
    if (f != NULL) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

static const json_t *find(const json_t *results, const char *workload, const char *method)
{
    size_t i;
    const json_t *r;
    json_array_foreach(results, i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "workload")), workload) == 0 &&
            strcmp(json_string_value(json_object_get(r, "method")), method) == 0)
            return r;
    }
    return NULL;
}

static double median_of(const json_t *r)
{
    return r != NULL ? json_real_value(json_object_get(r, "median_mib_s")) : NAN;
}

static double cpu_of(const json_t *r)
{
    return r != NULL ? json_real_value(json_object_get(r, "median_cpu_s_per_gib")) : NAN;
}

/* Prints the Markdown report of a results document. Returns 0, or 1 when it is not one. */
static int report(const json_t *doc)
{
    const json_t *results = json_object_get(doc, "results");
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    if (!json_is_array(results) || schema == NULL || strcmp(schema, "processkit-forward-rate") != 0)
        return 1;
    const json_t *env = json_object_get(doc, "environment");
    double l0 = json_real_value(json_object_get(doc, "loadavg_start"));
    double l1 = json_real_value(json_object_get(doc, "loadavg_end"));
    long long cpus = json_integer_value(json_object_get(env, "logical_cpus"));
    printf("# pkrun's forwarding cost\n\n"
           "%lld interleaved rounds of %.0f MiB per workload; MiB/s, higher is better; the time "
           "ratio is the median time against timeout's in the same run (1.00 = as fast).\n"
           "Load average %.2f at the start, %.2f at the end, on %lld CPUs%s.\n\n",
           json_integer_value(json_object_get(doc, "rounds")),
           json_real_value(json_object_get(doc, "mib_per_run")), l0, l1, cpus,
           l0 > 0.5 * (double)cpus || l1 > 0.5 * (double)cpus
               ? ": measured under load, compare the ratios rather than the rates"
               : "");
    bool have_timeout = json_is_true(json_object_get(doc, "timeout_measured"));
    for (int w = 0; w < NWORKLOADS; w++) {
        printf(
            "## %s\n\n| method | what | median MiB/s | min | max | time vs timeout | time vs "
            "direct | CPU s/GiB | CPU vs timeout |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n",
            workloads[w].name);
        double t_timeout = median_of(find(results, workloads[w].name, "timeout"));
        double c_timeout = cpu_of(find(results, workloads[w].name, "timeout"));
        double t_direct = median_of(find(results, workloads[w].name, "direct"));
        for (size_t m = 0; m < NMETHODS; m++) {
            const json_t *r = find(results, workloads[w].name, methods[m].name);
            if (r == NULL)
                continue;
            double med = median_of(r), cpu = cpu_of(r);
            char vs_timeout[16] = "n/a", cpu_vs[16] = "n/a";
            if (have_timeout) {
                snprintf(vs_timeout, sizeof vs_timeout, "%.2f×", t_timeout / med);
                snprintf(cpu_vs, sizeof cpu_vs, "%.2f×", cpu / c_timeout);
            }
            printf("| %s | %s | %.1f | %.1f | %.1f | %s | %.2f× | %.3f | %s |\n", methods[m].name,
                   methods[m].what, med, json_real_value(json_object_get(r, "min_mib_s")),
                   json_real_value(json_object_get(r, "max_mib_s")), vs_timeout, t_direct / med,
                   cpu, cpu_vs);
        }
        printf("\n");
        if (!have_timeout) {
            printf("coreutils' timeout is not installed: the targets against it are not "
                   "checked.\n\n");
            continue;
        }
        /* direct and timeout move the same bytes the same way: how far apart they land is what
         * this run's noise alone does to a wall-time ratio. */
        double noise = t_direct > t_timeout ? t_direct / t_timeout : t_timeout / t_direct;
        printf("- noise: direct and timeout do the same work and differ by %.2f× here\n", noise);
        for (size_t m = M_PKRUN; m < NMETHODS; m++) {
            double ratio = t_timeout / median_of(find(results, workloads[w].name, methods[m].name));
            double cpu = cpu_of(find(results, workloads[w].name, methods[m].name)) / c_timeout;
            if (methods[m].relays)
                printf("- %s takes %.2f× timeout's time (target within 1.20×): %s; %.2f× its CPU\n",
                       methods[m].name, ratio, ratio <= 1.2 ? "met" : "NOT met", cpu);
            else
                printf("- %s takes %.2f× timeout's time and %.2f× its CPU (target equal: within "
                       "%.2f×, the larger of 1.05 and the noise): %s\n",
                       methods[m].name, ratio, cpu, noise > 1.05 ? noise : 1.05,
                       ratio <= (noise > 1.05 ? noise : 1.05) ? "met" : "NOT met");
        }
        printf("\n");
    }
    return 0;
}

/* ---- the command line and the run ---------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(
        f, "usage: pk_forward_rate [--size BYTES] [--rounds N] [--out FILE]\n"
           "       pk_forward_rate --report FILE\n"
           "\n"
           "Forwarding throughput of a command's stdout: run directly, under coreutils timeout,\n"
           "under pkrun (inherited), and under pkrun with pipes (--idle-timeout: spliced;\n"
           "--json --keep tail: teed), for BYTES of 2-byte lines and BYTES without a newline\n"
           "(default 1G; K, M, G suffixes), in N interleaved rounds (default 5). Prints a\n"
           "Markdown report and writes every sample to FILE (default\n"
           "results/forward-rate-<UTC time>.json); --report prints the report of such a file.\n"
           "Exit: 0 ok, 1 a run failed or a file could not be written or read, 2 bad arguments.\n");
}

static _Noreturn void bad(const char *fmt, const char *v)
{
    fprintf(stderr, "pk_forward_rate: ");
    fprintf(stderr, fmt, v);
    fputc('\n', stderr);
    usage(stderr);
    exit(2);
}

static unsigned long long parse_size(const char *v)
{
    char *end;
    errno = 0;
    unsigned long long n = v[0] >= '0' && v[0] <= '9' ? strtoull(v, &end, 10) : 0;
    if (v[0] < '0' || v[0] > '9')
        bad("--size: '%s' is not a size (examples: 1G, 256M)", v);
    unsigned shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
    if (shift != 0)
        end++;
    if (*end != '\0' || errno != 0 || n == 0 || n > (64ULL << 30) >> shift)
        bad("--size: '%s' is not a size between 1 and 64G (examples: 1G, 256M)", v);
    return n << shift;
}

struct options {
    unsigned long long bytes;
    int rounds;
    const char *out, *report;
};

static void parse(int argc, char **argv, struct options *o)
{
    *o = (struct options){.bytes = 1ULL << 30, .rounds = 5};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--size") == 0 && has_value) {
            o->bytes = parse_size(argv[++i]);
        } else if (strcmp(a, "--rounds") == 0 && has_value) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end != '\0' || v < 1 || v > 1000)
                bad("--rounds needs 1..1000, got '%s'", argv[i]);
            o->rounds = (int)v;
        } else if ((strcmp(a, "--out") == 0 || strcmp(a, "--report") == 0) && has_value &&
                   argv[i + 1][0] != '\0') {
            *(a[2] == 'o' ? &o->out : &o->report) = argv[++i];
        } else {
            bad("unknown or incomplete argument '%s'", a);
        }
    }
}

/* Whether the results file can be written, before anything is measured. */
static bool writable(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0)
        return !S_ISDIR(st.st_mode) && access(path, W_OK) == 0;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else
        *(slash == dir ? slash + 1 : slash) = '\0';
    return access(dir, W_OK | X_OK) == 0;
}

/* Samples in MiB/s and in CPU seconds per GiB, [workload][method][round]. */
static double *samples[NWORKLOADS][NMETHODS];
static double *cpu_samples[NWORKLOADS][NMETHODS];

static int measure(const struct options *o, bool have_timeout)
{
    bool tty = isatty(2);
    size_t npairs = NWORKLOADS * NMETHODS;
    unsigned long long warm = o->bytes < (64ULL << 20) ? o->bytes : 64ULL << 20;
    for (int r = -1; r < o->rounds; r++) {
        for (size_t k = 0; k < npairs; k++) {
            size_t idx = (k + (size_t)(r < 0 ? 0 : r)) % npairs; /* rotate the order */
            size_t w = idx / NMETHODS, m = idx % NMETHODS;
            if (m == M_TIMEOUT && !have_timeout)
                continue;
            if (tty)
                fprintf(stderr, "\rpk_forward_rate: %s %d/%d: %s %-12s",
                        r < 0 ? "warm-up" : "round", r + 1, o->rounds, workloads[w].name,
                        methods[m].name);
            unsigned long long bytes = r < 0 ? warm : o->bytes;
            double cpu, secs = run_once(&methods[m], bytes, workloads[w].line, &cpu);
            if (secs < 0)
                return 1;
            if (r >= 0) {
                samples[w][m][r] = (double)bytes / (1024.0 * 1024.0) / secs;
                cpu_samples[w][m][r] = cpu / ((double)bytes / (1024.0 * 1024.0 * 1024.0));
            }
        }
    }
    if (tty)
        fprintf(stderr, "\r%70s\r", "");
    return 0;
}

static json_t *document(const struct options *o, bool have_timeout, double l0, double l1)
{
    json_t *results = json_array();
    for (int w = 0; w < NWORKLOADS; w++) {
        for (size_t m = 0; m < NMETHODS; m++) {
            if (m == M_TIMEOUT && !have_timeout)
                continue;
            pkbu_summary sum = pkbu_summarize(samples[w][m], o->rounds);
            pkbu_summary cpu = pkbu_summarize(cpu_samples[w][m], o->rounds);
            json_t *list = json_array(), *cpus = json_array();
            for (int r = 0; r < o->rounds; r++) {
                json_array_append_new(list, json_real(samples[w][m][r]));
                json_array_append_new(cpus, json_real(cpu_samples[w][m][r]));
            }
            json_t *row =
                json_pack("{s:s, s:s, s:s, s:I, s:f, s:f, s:f, s:o}", "workload", workloads[w].name,
                          "method", methods[m].name, "what", methods[m].what, "line_bytes",
                          (json_int_t)workloads[w].line, "median_mib_s", sum.median, "min_mib_s",
                          sum.min, "max_mib_s", sum.max, "samples_mib_s", list);
            json_object_set_new(row, "median_cpu_s_per_gib", json_real(cpu.median));
            json_object_set_new(row, "samples_cpu_s_per_gib", cpus);
            json_array_append_new(results, row);
        }
    }
    return json_pack("{s:s, s:i, s:i, s:f, s:b, s:f, s:f, s:o, s:o}", "schema",
                     "processkit-forward-rate", "schema_version", 1, "rounds", o->rounds,
                     "mib_per_run", (double)o->bytes / (1024.0 * 1024.0), "timeout_measured",
                     have_timeout, "loadavg_start", l0, "loadavg_end", l1, "environment",
                     pkbu_environment(false), "results", results);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--produce") == 0)
        return produce(strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10));
    struct options o;
    parse(argc, argv, &o);
    if (o.report != NULL) {
        json_error_t err;
        json_t *doc = json_load_file(o.report, 0, &err);
        int rc = doc != NULL ? report(doc) : 1;
        if (rc != 0)
            fprintf(stderr, "pk_forward_rate: %s: %s\n", o.report,
                    doc == NULL ? err.text : "not a forward-rate results file");
        json_decref(doc);
        return rc;
    }
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (n <= 0)
        return 1;
    self_path[n] = '\0';
    char *found = NULL;
    bool have_timeout = pk_resolve_program("timeout", NULL, &found, NULL) == 0;
    if (have_timeout)
        snprintf(timeout_path, sizeof timeout_path, "%s", found);
    free(found);
    if (access(PK_PKRUN_PATH, X_OK) != 0) {
        fprintf(stderr, "pk_forward_rate: %s is missing (build the pkrun target)\n", PK_PKRUN_PATH);
        return 1;
    }
    char defpath[256];
    if (o.out == NULL) {
        pkbu_default_path(defpath, sizeof defpath, "forward-rate");
        o.out = defpath;
    }
    if (!writable(o.out)) {
        fprintf(stderr, "pk_forward_rate: cannot write %s: %s\n", o.out, strerror(errno));
        return 1;
    }
    for (int w = 0; w < NWORKLOADS; w++)
        for (size_t m = 0; m < NMETHODS; m++)
            samples[w][m] = calloc((size_t)o.rounds, sizeof(double)),
            cpu_samples[w][m] = calloc((size_t)o.rounds, sizeof(double));
    double l0 = loadavg();
    int rc = measure(&o, have_timeout);
    double l1 = loadavg();
    json_t *doc = rc == 0 ? document(&o, have_timeout, l0, l1) : NULL;
    if (doc != NULL) {
        rc = pkbu_write_json(doc, o.out, "pk_forward_rate") == 0 ? 0 : 1;
        report(doc);
        if (rc == 0)
            printf("results: %s (pk_forward_rate --report %s prints this again)\n", o.out, o.out);
        json_decref(doc);
    }
    for (int w = 0; w < NWORKLOADS; w++)
        for (size_t m = 0; m < NMETHODS; m++)
            free(samples[w][m]), free(cpu_samples[w][m]);
    return rc;
}
