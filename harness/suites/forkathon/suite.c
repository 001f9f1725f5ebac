/*
 * The forkathon suite: the fork/vfork study (METHODOLOGY.md, "fork vs vfork").
 *
 * Part 1, Wemm's experiment (freebsd-current, Nov 2003): pk_forkathon_static and
 * pk_forkathon_dynamic (phases/forkathon.c, one source linked both ways) run `fork N` and
 * `vfork N` — N times fork or vfork, the child _exit(0)s, the parent waitpid()s — each as one
 * child of pkbench started by pk_run with PK_CONTAIN_NONE (like a shell's `time ./forkathon`: no
 * group of its own), stdout captured for its one-line tally. What time(1) prints comes from the
 * reaped child: user and sys CPU from the kernel's rusage (the forkathon process plus every child
 * it waited for), wall from the spawn to the reap, %CPU = (user + sys) / wall. A run that did not
 * reap exactly the N children it started, or left one, fails the series. The four combinations
 * are interleaved: each round runs all four in an order rotated by one per round, after one
 * untimed warm-up run of each (also the correctness check).
 *
 * Part 2, the RSS ladder, in this process: for each step (0, 64, 256, 1024, 4096 MiB; quick: up
 * to 256), with THP off (MADV_NOHUGEPAGE) and then on (MADV_HUGEPAGE), map and touch
 * that much anonymous memory (ballast.h), then time spawn+exec+wait of the tiny static helper
 * with fork+execve, vfork+execve, raw clone3(VM|VFORK|PIDFD)+execve, posix_spawn and processkit's
 * pk_run (default containment, and uncontained), interleaved in rotating rounds; then unmap it and
 * check from /proc/self/status that VmRSS fell back (within 8 MiB of where the step started).
 * Why in pkbench itself rather than a dedicated child: the spawning process is the one whose
 * memory grows, as in an application with a large heap, and every mechanism — processkit's
 * pk_run included — runs exactly as it does for any caller. A sample is the mean of `cycles`
 * spawns: 40 (quick: 20) for every mechanism at step 0 and for the flat ones everywhere;
 * fork+execve, whose cost grows ≈28 µs per MiB, takes 512 / step cycles, at least 1 (64 MiB: 8,
 * 256 MiB: 2, 1 and 4 GiB: 1), so a fork sample at 4 GiB is one ~110 ms spawn.
 *
 * The runner does not time these series (Google Benchmark's repetitions cannot interleave runs
 * of 20 s with spawns of 100 µs): the suite measures them and hands them to pkb_run_series
 * already settled, which writes the results file (schema v1) with the suite's `forkathon`
 * section — configuration, the ladder's memory at every step, and the summary (forkathon.h).
 */
#define _GNU_SOURCE
#include "suites/own.h"

#include "phases/raw_clone3.h"
#include "processkit.h"
#include "run/disturb.h"
#include "suites/forkathon/ballast.h"
#include "suites/forkathon/forkathon.h"
#include "suites/forkathon/view.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PKB_FORKATHON_STATIC
#define PKB_FORKATHON_STATIC ""
#endif
#ifndef PKB_FORKATHON_DYNAMIC
#define PKB_FORKATHON_DYNAMIC ""
#endif

#define RELEASE_TOLERANCE_KIB (8L * 1024)

/* Under AddressSanitizer (a test build, never a measurement) the mmap and munmap interceptors
 * clear the shadow of the range, and one byte in eight of a range never mapped before stays
 * resident: a released 64 MiB step reads as 8 MiB still held. That much is allowed on top. */
#if defined(__SANITIZE_ADDRESS__)
#define ASAN_SHADOW_KIB(kib) ((kib) / 8)
#else
#define ASAN_SHADOW_KIB(kib) 0L
#endif

extern char **environ;

/* ---- configuration ------------------------------------------------------------------------- */

struct config {
    long iterations;       /* Wemm's loop count */
    int wemm_rounds;       /* runs per Wemm series */
    int ladder_rounds;     /* samples per ladder series */
    int flat_cycles;       /* spawns per sample, except fork+execve above step 0 */
    const unsigned *steps; /* MiB */
    size_t nsteps;
};

static const unsigned full_steps[] = {0, 64, 256, 1024, 4096};
static const unsigned quick_steps[] = {0, 64, 256};

static const struct config full_config = {100000, 5, 15, 40, full_steps, 5};
static const struct config quick_config = {10000, 3, 7, 20, quick_steps, 3};

/* What the runner records as settings: repetitions = the Wemm rounds (the ladder's are in the
 * forkathon section); nothing is warmed up or primed by the runner. */
static const pkb_profile fk_full = {"full", 5, 0.0, 0.0, 0.0, 0.0};
static const pkb_profile fk_quick = {"quick", 3, 0.0, 0.0, 0.0, 0.0};

static int fork_cycles(const struct config *c, unsigned step)
{
    return step == 0 ? c->flat_cycles : step >= 512 ? 1 : (int)(512 / step);
}

/* ---- the ladder's mechanisms --------------------------------------------------------------- */

static char *tiny_argv[2];

static int wait_ok(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

/* fork or vfork, then exec the tiny helper. The vfork child borrows this frame until its execve
 * and never returns from it, which is why both calls stand here rather than behind a pointer. */
static int fork_exec(bool use_vfork)
{
    pid_t pid = use_vfork ? vfork() : fork();
    if (pid == 0) {
        execve(tiny_argv[0], tiny_argv, environ);
        _exit(127);
    }
    return pid < 0 ? -errno : wait_ok(pid);
}

static int m_fork(void)
{
    return fork_exec(false);
}

static int m_vfork(void)
{
    return fork_exec(true);
}

static unsigned char clone_stack[64 * 1024] __attribute__((aligned(16)));

/* Runs on clone_stack, which the sanitizers' runtime does not know: no instrumentation. */
__attribute__((no_sanitize("address", "undefined"))) static int clone3_child(void *arg)
{
    (void)arg;
    execve(tiny_argv[0], tiny_argv, environ);
    return 127;
}

static int m_clone3(void)
{
    int pidfd = -1;
    struct pk_clone_args args = {
        .flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD,
        .pidfd = (uint64_t)(uintptr_t)&pidfd,
        .exit_signal = SIGCHLD,
        .stack = (uint64_t)(uintptr_t)clone_stack,
        .stack_size = sizeof clone_stack,
    };
    long pid = raw_clone3(&args, PK_CLONE_ARGS_SIZE_VER0, clone3_child, NULL);
    if (pid < 0)
        return (int)pid;
    siginfo_t si;
    int rc = 0;
    while (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0) {
        if (errno != EINTR) {
            rc = -errno;
            break;
        }
    }
    close(pidfd);
    if (rc == 0 && (si.si_code != CLD_EXITED || si.si_status != 0))
        rc = -ECHILD;
    return rc;
}

static int m_posix_spawn(void)
{
    pid_t pid;
    int rc = posix_spawn(&pid, tiny_argv[0], NULL, NULL, tiny_argv, environ);
    return rc != 0 ? -rc : wait_ok(pid);
}

static int run_pk(pk_containment containment)
{
    pk_result r;
    int rc = pk_run(&(pk_command){.program = tiny_argv[0],
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

static int m_pk(void)
{
    return run_pk(PK_CONTAIN_AUTO);
}

static int m_pk_uncontained(void)
{
    return run_pk(PK_CONTAIN_NONE);
}

/* In forkathon.h's PKB_FK_MECHANISMS order. */
static int (*const mechanism_fn[])(void) = {m_fork,        m_vfork, m_clone3,
                                            m_posix_spawn, m_pk,    m_pk_uncontained};
#define NMECH  (sizeof mechanism_fn / sizeof mechanism_fn[0])
#define M_FORK 0

/* ---- series bookkeeping -------------------------------------------------------------------- */

enum { WEMM, RSS };

struct item {
    pkb_series *s;
    int study;
    int linkage, loop; /* WEMM: 0 static / 1 dynamic, 0 fork / 1 vfork */
    int mech, thp;     /* RSS */
    size_t step;       /* RSS: index into config steps */
    int cycles;        /* RSS: spawns per sample */
    json_t *fk;        /* the series' "forkathon" object (borrowed from s->extra) */
};

static const char *const linkage_names[] = {"static", "dynamic"};
static const char *const loop_names[] = {"fork", "vfork"};
static const char *const thp_names[] = {"off", "on"};

static const char *const wemm_descriptions[2][2] = {
    {"Wemm's forkathon.static: fork N times, the child _exit(0)s, waitpid (statically linked)",
     "Wemm's vforkathon.static: vfork N times, the child _exit(0)s, waitpid (statically linked)"},
    {"Wemm's forkathon.dynamic: fork N times, the child _exit(0)s, waitpid (dynamically linked)",
     "Wemm's vforkathon.dynamic: vfork N times, the child _exit(0)s, waitpid (dynamically "
     "linked)"},
};

/* One sample, with what disturbed it since `mark` (run/disturb.h). */
static void record(pkb_series *s,
                   double ns,
                   double child_ns,
                   double parent_ns,
                   long long iters,
                   const pkb_disturb_mark *mark)
{
    size_t k = s->nreps++;
    s->samples_ns[k] = ns;
    s->child_cpu_ns[k] = child_ns;
    s->parent_cpu_ns[k] = parent_ns;
    s->iterations[k] = iters;
    pkb_disturb_end(mark, &s->disturb[k]);
}

static void settle(pkb_series *s, pkb_series_status status, const char *what, const char *why)
{
    s->status = status;
    if (snprintf(s->reason, sizeof s->reason, "%s%s", what, why) >= (int)sizeof s->reason)
        memcpy(s->reason + sizeof s->reason - 4, "...", 4); /* cut, and says so */
    fprintf(stderr, "pkbench: %s %s: %s\n",
            status == PKB_SERIES_REFUSED ? "refusing to time" : "failed:", s->name, s->reason);
}

static double tv_ns(struct timeval tv)
{
    return (double)tv.tv_sec * 1e9 + (double)tv.tv_usec * 1e3;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- part 1: Wemm's loop ------------------------------------------------------------------- */

struct wemm_run {
    double user_s, sys_s, wall_s, loop_s, self_cpu_s;
    long reaped;
    pkb_disturb_mark mark; /* taken before the run */
};

/* Runs `path loop n` once. Returns 0, or -1 with `why` set. */
static int
wemm_once(const char *path, const char *loop, long n, struct wemm_run *out, char *why, size_t cap)
{
    char count[32];
    snprintf(count, sizeof count, "%ld", n);
    const char *const argv[] = {path, loop, count, NULL};
    struct rusage p0, p1;
    pkb_disturb_begin(&out->mark);
    getrusage(RUSAGE_SELF, &p0);
    pk_result r;
    int rc = pk_run(&(pk_command){.argv = argv,
                                  .out.kind = PK_STDIO_CAPTURE,
                                  .err.kind = PK_STDIO_INHERIT,
                                  .containment = PK_CONTAIN_NONE},
                    &r);
    getrusage(RUSAGE_SELF, &p1);
    long started = -1, reaped = -1, iterations = -1;
    int left = -1;
    long long loop_ns = -1;
    const char *tally = r.out.data ? strstr(r.out.data, "iterations=") : NULL;
    if (tally != NULL)
        sscanf(tally, "iterations=%ld started=%ld reaped=%ld left=%d loop_ns=%lld", &iterations,
               &started, &reaped, &left, &loop_ns);
    int fail = 0;
    if (rc != 0) {
        snprintf(why, cap, "could not start %s: %s", path, pk_strerror(rc));
        fail = -1;
    } else if (r.outcome.kind != PK_OUTCOME_EXITED || r.outcome.code != 0) {
        snprintf(why, cap, "%s %s %ld ended %s (code %d, signal %d): %.120s", path, loop, n,
                 pk_outcome_kind_name(r.outcome.kind), r.outcome.code, r.outcome.signo,
                 r.out.data ? r.out.data : "no output");
        fail = -1;
    } else if (iterations != n || started != n || reaped != n || left != 0 || loop_ns < 0) {
        snprintf(why, cap, "%s %s %ld: started %ld, reaped %ld, left %d (expected %ld, %ld, 0)",
                 path, loop, n, started, reaped, left, n, n);
        fail = -1;
    } else {
        out->user_s = (double)r.outcome.user_us / 1e6;
        out->sys_s = (double)r.outcome.sys_us / 1e6;
        out->wall_s = (double)r.outcome.wall_ns / 1e9;
        out->loop_s = (double)loop_ns / 1e9;
        out->reaped = reaped;
        out->self_cpu_s =
            (tv_ns(p1.ru_utime) - tv_ns(p0.ru_utime) + tv_ns(p1.ru_stime) - tv_ns(p0.ru_stime)) /
            1e9;
    }
    pk_result_release(&r);
    return fail;
}

static void wemm_record(struct item *it, long n, const struct wemm_run *w)
{
    record(it->s, w->wall_s * 1e9 / (double)n, (w->user_s + w->sys_s) * 1e9 / (double)n,
           w->self_cpu_s * 1e9 / (double)n, n, &w->mark);
    json_array_append_new(json_object_get(it->fk, "user_s"), json_real(w->user_s));
    json_array_append_new(json_object_get(it->fk, "sys_s"), json_real(w->sys_s));
    json_array_append_new(json_object_get(it->fk, "wall_s"), json_real(w->wall_s));
    json_array_append_new(json_object_get(it->fk, "loop_s"), json_real(w->loop_s));
    json_array_append_new(json_object_get(it->fk, "reaped"), json_integer(w->reaped));
}

static void
run_wemm(struct item *items, size_t nitems, const struct config *c, const char *const paths[2])
{
    struct item *w[4];
    size_t nw = 0;
    for (size_t i = 0; i < nitems; i++)
        if (items[i].study == WEMM)
            w[nw++] = &items[i];
    if (nw == 0)
        return;
    char why[256];
    long warm = c->iterations < 1000 ? c->iterations : 1000;
    for (size_t k = 0; k < nw && !pkb_interrupted; k++) {
        struct wemm_run run;
        if (wemm_once(paths[w[k]->linkage], loop_names[w[k]->loop], warm, &run, why, sizeof why) !=
                0 &&
            !pkb_interrupted)
            settle(w[k]->s, PKB_SERIES_REFUSED, "the warm-up check failed: ", why);
    }
    for (int r = 0; r < c->wemm_rounds && !pkb_interrupted; r++) {
        for (size_t k = 0; k < nw && !pkb_interrupted; k++) {
            struct item *it = w[(k + (size_t)r) % nw];
            if (it->s->status != PKB_SERIES_PENDING)
                continue;
            struct wemm_run run;
            if (wemm_once(paths[it->linkage], loop_names[it->loop], c->iterations, &run, why,
                          sizeof why) != 0) {
                if (!pkb_interrupted)
                    settle(it->s, PKB_SERIES_FAILED, "", why);
                continue;
            }
            wemm_record(it, c->iterations, &run);
            fprintf(stderr,
                    "pkbench: forkathon round %d/%d  %-20s %.3fu %.3fs %.2f wall  %.1f%%  "
                    "%.1f µs/fork\n",
                    r + 1, c->wemm_rounds, it->s->contender, run.user_s, run.sys_s, run.wall_s,
                    run.wall_s > 0 ? (run.user_s + run.sys_s) / run.wall_s * 100 : 0,
                    run.wall_s * 1e6 / (double)c->iterations);
        }
    }
}

/* ---- part 2: the RSS ladder ---------------------------------------------------------------- */

static int ladder_sample(struct item *it)
{
    struct rusage c0, c1, p0, p1;
    pkb_disturb_mark mark;
    pkb_disturb_begin(&mark);
    getrusage(RUSAGE_CHILDREN, &c0);
    getrusage(RUSAGE_SELF, &p0);
    double t0 = now_ns();
    for (int i = 0; i < it->cycles; i++) {
        int rc = mechanism_fn[it->mech]();
        if (rc != 0)
            return rc;
    }
    double t1 = now_ns();
    getrusage(RUSAGE_SELF, &p1);
    getrusage(RUSAGE_CHILDREN, &c1);
    double k = (double)it->cycles;
    record(it->s, (t1 - t0) / k,
           (tv_ns(c1.ru_utime) - tv_ns(c0.ru_utime) + tv_ns(c1.ru_stime) - tv_ns(c0.ru_stime)) / k,
           (tv_ns(p1.ru_utime) - tv_ns(p0.ru_utime) + tv_ns(p1.ru_stime) - tv_ns(p0.ru_stime)) / k,
           it->cycles, &mark);
    return 0;
}

/* One step of the ladder: the ballast, the interleaved rounds over `step` (its items), the
 * release check. Returns the step's memory record (NULL when nothing of it was selected). */
static json_t *
ladder_step(struct item **step, size_t n, const struct config *c, int thp, unsigned mib)
{
    if (n == 0 || pkb_interrupted)
        return NULL;
    long before = pkb_self_rss_kib();
    pkb_ballast b;
    int rc = pkb_ballast_alloc(&b, (size_t)mib << 20, thp == 1);
    if (rc != 0) {
        for (size_t k = 0; k < n; k++)
            settle(step[k]->s, PKB_SERIES_FAILED, "cannot map the ballast: ", strerror(-rc));
        return NULL;
    }
    long rss = pkb_self_rss_kib(), huge = pkb_self_anon_huge_kib();
    fprintf(stderr,
            "pkbench: forkathon RSS %u MiB, THP %s: VmRSS %ld MiB (%ld MiB in huge pages), "
            "touched in %.2f s\n",
            mib, thp_names[thp], rss / 1024, huge / 1024, b.touch_s);
    for (size_t k = 0; k < n; k++) {
        json_object_set_new(step[k]->fk, "rss_kib", json_integer(rss));
        json_object_set_new(step[k]->fk, "anon_huge_kib", json_integer(huge));
        /* One untimed spawn each: the correctness check, and warm caches. */
        rc = mechanism_fn[step[k]->mech]();
        if (rc != 0 && !pkb_interrupted)
            settle(step[k]->s, PKB_SERIES_REFUSED, "the warm-up spawn failed: ", strerror(-rc));
    }
    for (int r = 0; r < c->ladder_rounds && !pkb_interrupted; r++) {
        for (size_t k = 0; k < n && !pkb_interrupted; k++) {
            struct item *it = step[(k + (size_t)r) % n];
            if (it->s->status != PKB_SERIES_PENDING)
                continue;
            rc = ladder_sample(it);
            if (rc != 0 && !pkb_interrupted)
                settle(it->s, PKB_SERIES_FAILED, "spawn failed: ", strerror(-rc));
        }
    }
    long rss_end = pkb_self_rss_kib();
    double touch_s = b.touch_s;
    int advise_error = b.advise_error;
    pkb_ballast_free(&b);
    long after = pkb_self_rss_kib();
    long tolerance = RELEASE_TOLERANCE_KIB + ASAN_SHADOW_KIB((long)mib * 1024);
    bool released = before >= 0 && after >= 0 && after <= before + tolerance;
    if (!released)
        fprintf(stderr,
                "pkbench: warning: RSS %u MiB, THP %s: VmRSS %ld KiB after unmapping, "
                "%ld KiB before the step: the memory was not released\n",
                mib, thp_names[thp], after, before);
    return json_pack("{s:s, s:i, s:I, s:I, s:I, s:I, s:I, s:b, s:I, s:f, s:s?}", "thp",
                     thp_names[thp], "step_mib", (int)mib, "rss_before_kib", (json_int_t)before,
                     "rss_kib", (json_int_t)rss, "anon_huge_kib", (json_int_t)huge, "rss_end_kib",
                     (json_int_t)rss_end, "rss_after_free_kib", (json_int_t)after, "released",
                     released, "release_tolerance_kib", (json_int_t)tolerance, "touch_s", touch_s,
                     "advise_error", advise_error ? strerror(advise_error) : NULL);
}

static json_t *run_ladder(struct item *items, size_t nitems, const struct config *c)
{
    json_t *points = json_array();
    struct item **step = calloc(NMECH, sizeof *step);
    for (size_t si = 0; si < c->nsteps && step != NULL; si++) {
        for (int thp = 0; thp < 2; thp++) {
            size_t n = 0;
            for (size_t i = 0; i < nitems; i++)
                if (items[i].study == RSS && items[i].thp == thp && items[i].step == si &&
                    items[i].s->status == PKB_SERIES_PENDING)
                    step[n++] = &items[i];
            json_t *p = ladder_step(step, n, c, thp, c->steps[si]);
            if (p != NULL)
                json_array_append_new(points, p);
        }
    }
    free(step);
    return points;
}

/* ---- series set-up and the results --------------------------------------------------------- */

static json_t *wemm_extra(int linkage, int loop, long n)
{
    return json_pack("{s:{s:s, s:s, s:s, s:I, s:[], s:[], s:[], s:[], s:[]}}", "forkathon", "study",
                     "wemm", "mechanism", loop_names[loop], "linkage", linkage_names[linkage],
                     "iterations", (json_int_t)n, "user_s", "sys_s", "wall_s", "loop_s", "reaped");
}

static json_t *rss_extra(int mech, int thp, unsigned mib, int cycles)
{
    return json_pack("{s:{s:s, s:s, s:s, s:i, s:i}}", "forkathon", "study", "rss", "mechanism",
                     pkb_fk_mechanism_names[mech], "thp", thp_names[thp], "step_mib", (int)mib,
                     "cycles", cycles);
}

/* Every series the configuration defines, those matching the filter marked selected. */
static size_t
build_items(const struct config *c, const regex_t *re, pkb_series *series, struct item *items)
{
    size_t n = 0;
    for (int l = 0; l < 2; l++) {
        for (int m = 0; m < 2; m++) {
            pkb_series *s = &series[n];
            snprintf(s->scenario, sizeof s->scenario, "wemm");
            snprintf(s->contender, sizeof s->contender, "%s_%s", loop_names[m], linkage_names[l]);
            snprintf(s->name, sizeof s->name, "wemm/%s", s->contender);
            if (re != NULL && regexec(re, s->name, 0, NULL, 0) != 0) {
                memset(s, 0, sizeof *s);
                continue;
            }
            s->description = wemm_descriptions[l][m];
            s->unit = "forks/s";
            s->work_per_iteration = 1;
            s->extra = wemm_extra(l, m, c->iterations);
            items[n] = (struct item){.s = s, .study = WEMM, .linkage = l, .loop = m};
            n++;
        }
    }
    for (int thp = 0; thp < 2; thp++) {
        for (size_t si = 0; si < c->nsteps; si++) {
            for (size_t m = 0; m < NMECH; m++) {
                pkb_series *s = &series[n];
                snprintf(s->scenario, sizeof s->scenario, "rss_%uMiB_thp_%s", c->steps[si],
                         thp_names[thp]);
                snprintf(s->contender, sizeof s->contender, "%s", pkb_fk_mechanism_names[m]);
                snprintf(s->name, sizeof s->name, "%s/%s", s->scenario, s->contender);
                if (re != NULL && regexec(re, s->name, 0, NULL, 0) != 0) {
                    memset(s, 0, sizeof *s);
                    continue;
                }
                s->description = pkb_fk_mechanism_descriptions[m];
                s->unit = "spawns/s";
                s->work_per_iteration = 1;
                s->baseline = strcmp(pkb_fk_mechanism_names[m], "vfork_execve") == 0;
                int cycles = m == M_FORK ? fork_cycles(c, c->steps[si]) : c->flat_cycles;
                s->extra = rss_extra((int)m, thp, c->steps[si], cycles);
                items[n] = (struct item){
                    .s = s, .study = RSS, .mech = (int)m, .thp = thp, .step = si, .cycles = cycles};
                n++;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        items[i].fk = json_object_get(items[i].s->extra, "forkathon");
    return n;
}

/* The series as the results file holds them (the runner's own conversion), for the summary. */
static json_t *series_view(pkb_series *series, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < n; i++)
        json_array_append_new(a, pkb_series_json(&series[i]));
    return a;
}

static json_t *section(const struct config *c,
                       const char *const paths[2],
                       const char *tiny,
                       json_t *points,
                       json_t *summary)
{
    char thp[32], defrag[32];
    pkb_thp_mode("enabled", thp, sizeof thp);
    pkb_thp_mode("defrag", defrag, sizeof defrag);
    json_t *steps = json_array(), *fork_cycles_a = json_array();
    for (size_t i = 0; i < c->nsteps; i++) {
        json_array_append_new(steps, json_integer(c->steps[i]));
        json_array_append_new(fork_cycles_a, json_integer(fork_cycles(c, c->steps[i])));
    }
    return json_pack("{s:I, s:i, s:i, s:o, s:i, s:o, s:I, s:{s:s, s:s}, s:s, s:s, s:s, s:s, "
                     "s:o, s:o}",
                     "iterations", (json_int_t)c->iterations, "wemm_rounds", c->wemm_rounds,
                     "ladder_rounds", c->ladder_rounds, "ladder_steps_mib", steps,
                     "flat_cycles_per_sample", c->flat_cycles, "fork_cycles_per_sample",
                     fork_cycles_a, "release_tolerance_kib", (json_int_t)RELEASE_TOLERANCE_KIB,
                     "binaries", "static", paths[0], "dynamic", paths[1], "tiny", tiny,
                     "wemm_containment", "none", "thp_enabled", thp, "thp_defrag", defrag, "ladder",
                     points, "summary", summary);
}

static const char *binary(const char *env, const char *built)
{
    const char *p = getenv(env);
    return p != NULL && p[0] != '\0' ? p : built;
}

/* The binaries and the filter, checked before anything runs. Returns 0 or 1 (message printed). */
static int check_binaries(const char *const paths[2])
{
    for (int l = 0; l < 2; l++) {
        if (access(paths[l], X_OK) != 0) {
            fprintf(stderr,
                    "pkbench: the forkathon binary '%s' is missing (build the phases target, or "
                    "set PKBENCH_FORKATHON_%s)\n",
                    paths[l], l == 0 ? "STATIC" : "DYNAMIC");
            return 1;
        }
    }
    return 0;
}

/* Settles every series: measured when it has samples; interrupted ones without any are left out
 * of the file (the runner marks it incomplete). Returns how many are kept, packed at the front. */
static size_t settle_all(pkb_series *series, size_t n)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        pkb_series *s = &series[i];
        if (s->status == PKB_SERIES_PENDING && s->nreps > 0)
            s->status = PKB_SERIES_MEASURED;
        if (s->status == PKB_SERIES_PENDING)
            continue;
        if (kept != i) {
            series[kept] = *s;
            memset(s, 0, sizeof *s);
        }
        kept++;
    }
    return kept;
}

/* Measures both parts, then hands the settled series and the suite's section to the runner,
 * which writes the file. Returns pkbench's exit status. */
static int measure_and_write(pkb_series *series,
                             struct item *items,
                             size_t n,
                             const struct config *c,
                             const char *const paths[2],
                             const pkb_cli *cli,
                             pkb_suite_options *opts)
{
    for (size_t i = 0; i < n; i++) {
        size_t need = items[i].study == WEMM ? (size_t)c->wemm_rounds : (size_t)c->ladder_rounds;
        if (pkb_own_alloc_samples(items[i].s, need) != 0) {
            fprintf(stderr, "pkbench: out of memory\n");
            return 1;
        }
    }
    run_wemm(items, n, c, paths);
    json_t *points = run_ladder(items, n, c);
    size_t kept = settle_all(series, n);
    json_t *view = series_view(series, kept);
    json_t *summary = pkb_forkathon_summarize(view);
    json_decref(view);
    return pkb_suite_run(
        series, kept, opts,
        section(c, paths, cli->tiny_path, points, summary != NULL ? summary : json_object()));
}

static int run(const pkb_cli *cli, pkb_suite_options *opts)
{
    bool quick = strcmp(opts->profile->name, "quick") == 0;
    struct config c = quick ? quick_config : full_config;
    if (cli->iterations > 0)
        c.iterations = cli->iterations;
    opts->profile = quick ? &fk_quick : &fk_full;
    opts->interleave = true; /* its own rounds, rotated (the top of this file) */
    const char *paths[2] = {binary("PKBENCH_FORKATHON_STATIC", PKB_FORKATHON_STATIC),
                            binary("PKBENCH_FORKATHON_DYNAMIC", PKB_FORKATHON_DYNAMIC)};
    if (check_binaries(paths) != 0)
        return 1;
    tiny_argv[0] = (char *)cli->tiny_path;
    pkb_own_run o;
    if (pkb_own_begin(&o, cli, opts, 4 + 2 * c.nsteps * NMECH, sizeof(struct item)) != 0)
        return 1;
    size_t n = build_items(&c, o.filter, o.series, o.items);
    int rc = pkb_own_selected(cli, n);
    if (rc == 0)
        rc = measure_and_write(o.series, o.items, n, &c, paths, cli, opts);
    pkb_own_end(&o, cli, opts);
    return rc;
}

const pkb_suite pkb_suite_forkathon = {
    .name = "forkathon",
    .description = "the fork/vfork study: Wemm's fork and vfork loops, static and dynamic, then "
                   "spawn cost against the parent's RSS",
    .takes_iterations = true,
    .run = run,
    .report = {.markdown = pkb__forkathon_markdown,
               .figures = pkb__forkathon_figures,
               .terminal = pkb__forkathon_terminal},
};
