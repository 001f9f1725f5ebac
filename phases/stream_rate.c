/*
 * pk_stream_rate — what line streaming costs against reading the same pipe raw.
 *
 * The child is pk_emit (a prebuilt block of 128-byte lines written again and again), so the
 * reader is what is measured. Methods, on the same kind of pipe (64 KiB, the kernel default):
 *   raw_read          read(2) into a 64 KiB buffer until EOF, counting bytes: the pipe's ceiling;
 *   raw_read_memchr   the same plus counting lines with memchr: the seed's raw baseline;
 *   processkit_pull   pk_spawn + pk_process_read_line for every line (text mode: UTF-8 checked),
 *                     nothing kept (PK_KEEP_NONE), the library's default private group;
 *   processkit_callback  pk_run with an on_line callback per line, nothing kept.
 * Workloads: the seed's 1,032,000 bytes (8,000 lines) and 256 MiB (2,080,893 lines). Samples are
 * taken in rounds, each round one sample of every pair in a rotated order (METHODOLOGY.md, "Line
 * streaming throughput"). The targets — the seed workload within 5% of raw_read_memchr, 256 MiB at
 * no less than 80% of raw_read's throughput — are stated from the numbers, never asserted.
 *
 * Exit status: 0 ok; 1 a run failed or the file could not be written; 2 bad arguments.
 */
#define _GNU_SOURCE
#include "bench_util.h"
#include "processkit.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char emit_path[4096];

struct workload {
    const char *name;
    long long lines;
    int samples_per_round; /* runs averaged into one sample */
    char lines_arg[32];
};

static struct workload workloads[] = {
    {"seed_1032000_bytes", 8000, 10, ""},
    {"stream_256mib", 2080893, 1, ""},
};
#define LINE_LEN 128

/* One run: returns the number of lines seen (bytes via *bytes), or -1. */
typedef long long (*method_fn)(const struct workload *w, long long *bytes);

static pid_t spawn_emit(const struct workload *w, int *rfd)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    char len[16];
    snprintf(len, sizeof len, "%d", LINE_LEN);
    char *argv[] = {emit_path, (char *)w->lines_arg, len, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, emit_path, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (rc != 0) {
        close(p[0]);
        return -1;
    }
    *rfd = p[0];
    return pid;
}

static long long raw(const struct workload *w, long long *bytes, bool count_lines)
{
    int fd;
    pid_t pid = spawn_emit(w, &fd);
    if (pid < 0)
        return -1;
    static char buf[65536];
    long long lines = 0;
    *bytes = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        *bytes += n;
        if (count_lines) {
            const char *p = buf, *end = buf + n;
            while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
                lines++;
                p++;
            }
        }
    }
    close(fd);
    int status;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return count_lines ? lines : *bytes / (LINE_LEN + 1);
}

static long long m_raw_read(const struct workload *w, long long *bytes)
{
    return raw(w, bytes, false);
}

static long long m_raw_memchr(const struct workload *w, long long *bytes)
{
    return raw(w, bytes, true);
}

static pk_command emit_command(const struct workload *w, const char *const *argv)
{
    return (pk_command){
        .argv = argv,
        .err.kind = PK_STDIO_INHERIT,
        .out = {.kind = PK_STDIO_CAPTURE, .capture.keep = PK_KEEP_NONE},
    };
    (void)w;
}

static long long m_pk_pull(const struct workload *w, long long *bytes)
{
    char len[16];
    snprintf(len, sizeof len, "%d", LINE_LEN);
    const char *const argv[] = {emit_path, w->lines_arg, len, NULL};
    pk_command cmd = emit_command(w, argv);
    pk_process *p;
    if (pk_spawn(&cmd, &p, NULL) != 0)
        return -1;
    pk_line line;
    long long lines = 0;
    int rc;
    while ((rc = pk_process_read_line(p, &line)) == 0)
        lines++;
    pk_result r;
    int wrc = pk_process_wait(p, &r);
    *bytes = (long long)r.out.total_bytes;
    bool ok =
        rc == PK_EOF && wrc == 0 && r.outcome.kind == PK_OUTCOME_EXITED && r.outcome.code == 0;
    pk_result_release(&r);
    pk_process_free(p);
    return ok ? lines : -1;
}

static int count_line(void *user, const pk_line *line)
{
    (void)line;
    ++*(long long *)user;
    return 0;
}

static long long m_pk_callback(const struct workload *w, long long *bytes)
{
    char len[16];
    snprintf(len, sizeof len, "%d", LINE_LEN);
    const char *const argv[] = {emit_path, w->lines_arg, len, NULL};
    long long lines = 0;
    pk_command cmd = emit_command(w, argv);
    cmd.on_line = count_line;
    cmd.line_user = &lines;
    pk_result r;
    int rc = pk_run(&cmd, &r);
    *bytes = (long long)r.out.total_bytes;
    bool ok = rc == 0 && r.outcome.kind == PK_OUTCOME_EXITED && r.outcome.code == 0;
    pk_result_release(&r);
    return ok ? lines : -1;
}

static const struct {
    const char *name;
    method_fn fn;
} methods[] = {
    {"raw_read", m_raw_read},
    {"raw_read_memchr", m_raw_memchr},
    {"processkit_pull", m_pk_pull},
    {"processkit_callback", m_pk_callback},
};
#define NMETHODS   (sizeof methods / sizeof methods[0])
#define NWORKLOADS (sizeof workloads / sizeof workloads[0])
#define RAW_READ   0
#define RAW_MEMCHR 1

struct series {
    double *mib_s; /* one per round */
    int n;
    pkbu_summary sum;
};

static void usage(FILE *f)
{
    fprintf(f, "usage: pk_stream_rate [--rounds N] [--out FILE]\n"
               "\n"
               "Line streaming throughput: pk_emit's 128-byte lines read raw (read only; read +\n"
               "memchr) and through processkit (pull API; callback), for the seed's 1,032,000\n"
               "bytes and for 256 MiB, in interleaved rounds (default 7).\n"
               "Exit: 0 ok, 1 a run failed or the file could not be written, 2 bad arguments.\n");
}

/* The command line into *rounds and *out. Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, int *rounds, const char **out)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end != '\0' || v < 1 || v > 1000) {
                fprintf(stderr, "pk_stream_rate: --rounds needs 1..1000, got '%s'\n", argv[i]);
                usage(stderr);
                return 2;
            }
            *rounds = (int)v;
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc && argv[i + 1][0] != '\0') {
            *out = argv[++i];
        } else {
            fprintf(stderr, "pk_stream_rate: unknown or incomplete argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    return -1;
}

/* pk_emit beside this program, and the workloads' line counts as its argument. 0, or 1 after a
 * message. */
static int find_emit(void)
{
    int rc = pkbu_sibling("pk_emit", emit_path, sizeof emit_path);
    if (rc == -ENOENT)
        fprintf(stderr, "pk_stream_rate: %s is missing (build the phases target)\n", emit_path);
    if (rc != 0)
        return 1;
    for (size_t w = 0; w < NWORKLOADS; w++)
        snprintf(workloads[w].lines_arg, sizeof workloads[w].lines_arg, "%lld", workloads[w].lines);
    return 0;
}

/* A warm-up round, then `rounds` rounds of one sample of every pair, the order rotated. 0, or 1
 * when a run saw the wrong lines or bytes. */
static int measure(struct series all[NWORKLOADS][NMETHODS], int rounds)
{
    bool tty = isatty(2);
    const size_t npairs = NWORKLOADS * NMETHODS;
    for (int r = -1; r < rounds; r++) {
        if (tty)
            fprintf(stderr, "\rpk_stream_rate: %s %d/%d ", r < 0 ? "warm-up" : "round", r + 1,
                    rounds);
        for (size_t k = 0; k < npairs; k++) {
            size_t idx = (k + (size_t)(r < 0 ? 0 : r)) % npairs; /* rotate the order */
            size_t w = idx / NMETHODS, m = idx % NMETHODS;
            const struct workload *wl = &workloads[w];
            int runs = r < 0 ? 1 : wl->samples_per_round;
            double t0 = pkbu_now_us();
            long long bytes = 0;
            for (int i = 0; i < runs; i++) {
                long long lines = methods[m].fn(wl, &bytes);
                if (lines != wl->lines || bytes != wl->lines * (LINE_LEN + 1)) {
                    fprintf(stderr, "\npk_stream_rate: %s on %s saw %lld lines / %lld bytes\n",
                            methods[m].name, wl->name, lines, bytes);
                    return 1;
                }
            }
            double secs = (pkbu_now_us() - t0) / 1e6 / runs;
            if (r >= 0)
                all[w][m].mib_s[all[w][m].n++] = (double)bytes / (1024.0 * 1024.0) / secs;
        }
    }
    if (tty)
        fprintf(stderr, "\r%40s\r", "");
    return 0;
}

/* The table on stdout and the results' rows, per workload and method. */
static json_t *report(struct series all[NWORKLOADS][NMETHODS], int rounds)
{
    printf("Line streaming throughput, MiB/s (higher is better), %d interleaved rounds, "
           "containment %s\n\n",
           rounds, pk_containment_name(pk_host_containment()));
    printf("| workload | method | median MiB/s | min | max | vs raw_read | vs raw_read_memchr |\n");
    printf("|---|---|---:|---:|---:|---:|---:|\n");
    json_t *results = json_array();
    for (size_t w = 0; w < NWORKLOADS; w++) {
        for (size_t m = 0; m < NMETHODS; m++)
            all[w][m].sum = pkbu_summarize(all[w][m].mib_s, all[w][m].n);
        for (size_t m = 0; m < NMETHODS; m++) {
            struct series *s = &all[w][m];
            double vs_read = s->sum.median / all[w][RAW_READ].sum.median;
            double vs_memchr = s->sum.median / all[w][RAW_MEMCHR].sum.median;
            printf("| %s | %s | %.1f | %.1f | %.1f | %.1f%% | %.1f%% |\n", workloads[w].name,
                   methods[m].name, s->sum.median, s->sum.min, s->sum.max, vs_read * 100,
                   vs_memchr * 100);
            json_t *samples = json_array();
            for (int i = 0; i < s->n; i++)
                json_array_append_new(samples, json_real(s->mib_s[i]));
            json_array_append_new(
                results, json_pack("{s:s, s:s, s:I, s:i, s:f, s:f, s:f, s:f, s:f, s:o}", "workload",
                                   workloads[w].name, "method", methods[m].name, "lines",
                                   (json_int_t)workloads[w].lines, "line_bytes", LINE_LEN + 1,
                                   "median_mib_s", s->sum.median, "min_mib_s", s->sum.min,
                                   "max_mib_s", s->sum.max, "vs_raw_read", vs_read,
                                   "vs_raw_read_memchr", vs_memchr, "samples_mib_s", samples));
        }
    }
    /* The targets, from this run's numbers. */
    double seed = all[0][2].sum.median / all[0][RAW_MEMCHR].sum.median;
    double big = all[1][2].sum.median / all[1][RAW_READ].sum.median;
    double extra = 1 / seed - 1; /* time ratio minus one */
    printf("\nseed workload: processkit_pull takes %.1f%% %s time than raw_read_memchr "
           "(target ≤ +5%%: %s)\n",
           fabs(extra) * 100, extra >= 0 ? "more" : "less", extra <= 0.05 ? "met" : "NOT met");
    printf("256 MiB: processkit_pull streams lines at %.1f%% of raw_read's throughput "
           "(target ≥ 80%%: %s)\n",
           big * 100, big >= 0.80 ? "met" : "NOT met");
    return results;
}

int main(int argc, char **argv)
{
    int rounds = 7;
    const char *out = NULL;
    int rc = parse_args(argc, argv, &rounds, &out);
    if (rc >= 0)
        return rc;
    if (find_emit() != 0)
        return 1;
    struct series all[NWORKLOADS][NMETHODS];
    for (size_t w = 0; w < NWORKLOADS; w++)
        for (size_t m = 0; m < NMETHODS; m++)
            all[w][m] = (struct series){.mib_s = calloc((size_t)rounds, sizeof(double))};
    if (measure(all, rounds) != 0)
        return 1;
    json_t *results = report(all, rounds);
    json_t *doc =
        json_pack("{s:s, s:i, s:i, s:o, s:o}", "schema", "processkit-stream-rate", "schema_version",
                  1, "rounds", rounds, "environment", pkbu_environment(false), "results", results);
    char defpath[256];
    if (out == NULL) {
        pkbu_default_path(defpath, sizeof defpath, "stream-rate");
        out = defpath;
    }
    rc = pkbu_write_json(doc, out, "pk_stream_rate");
    json_decref(doc);
    if (rc == 0)
        printf("\nresults: %s\n", out);
    for (size_t w = 0; w < NWORKLOADS; w++)
        for (size_t m = 0; m < NMETHODS; m++)
            free(all[w][m].mib_s);
    pk_cleanup();
    return rc == 0 ? 0 : 1;
}
