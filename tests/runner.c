/*
 * The test runner, in the libuv style: a process library's tests must own their signal mask,
 * SIGCHLD disposition and children, so every test runs in a fresh process (this binary re-executed
 * with `--run NAME`) under a timeout, and the same binary doubles as the helper programs the tests
 * spawn (`--helper NAME ...`).
 *
 *   pk_tests                 run every test, print TAP, end with "N passed, N failed, N skipped"
 *   pk_tests NAME...         run the named tests the same way (one ctest entry per name)
 *   pk_tests --list          print the test names
 *   pk_tests --run NAME      run one test in this process (what the runner executes)
 *   pk_tests --helper NAME   be a helper program
 *
 * After a test function returns, `--run` fails the test when it leaked a file descriptor (any
 * descriptor open now that was not open before) or left a child (running, or a zombie). The outer
 * runner deliberately does not use processkit: it starts each test with posix_spawn in a process
 * group of its own, and on timeout kills the whole group.
 *
 * The timeout of a test comes from tests/list.h, multiplied by PK_TEST_TIMEOUT_MULTIPLIER (set
 * for sanitizer runs). Exit status: 0 when nothing failed, 1 otherwise, 2 for bad usage.
 *
 * Skips name a gate (pk_test_skip_gate: root, cgroup, btf, package:NAME, quiet, build). With
 * CI=true a skip must be a fact: the runner probes the gate itself (euid, a mkdir in its own
 * cgroup, the BTF file, dpkg-query, the load average) and counts the test as failed when the
 * machine has what the test said it lacked, when the skip names no gate, or when the gate is
 * unknown. A "build" gate (an option, an architecture, a sanitizer) is the build's, never the
 * machine's, and stays a skip.
 */
#define _GNU_SOURCE
#include "test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define X(name, seconds) void pk_test_##name(void);
#include "list.h"
PK_TEST_LIST(X)
#undef X

struct test_entry {
    const char *name;
    void (*fn)(void);
    int seconds;
};

static const struct test_entry tests[] = {
#define X(name, seconds) {#name, pk_test_##name, seconds},
    PK_TEST_LIST(X)
#undef X
};
static const size_t ntests = sizeof tests / sizeof tests[0];

/* Fixtures: deliberately broken tests, never run by default. The runner's own tests run them to
 * prove that the hygiene checks and the timeout really fail a test. */
static void fixture_leak_fd(void)
{
    (void)dup(1);
}

static void fixture_leave_child(void)
{
    if (fork() == 0) {
        pause();
        _exit(0);
    }
}

static void fixture_leave_zombie(void)
{
    if (fork() == 0)
        _exit(0);
    usleep(100 * 1000);
}

static void *volatile fixture_sink;

static void fixture_leak_memory(void)
{
    fixture_sink = malloc(4096);
    fixture_sink = NULL;
}

static void fixture_hang(void)
{
    for (;;)
        pause();
}

/* Skips, one per kind of gate, for the CI rule (runner_ci_refuses_skips_the_machine_could_run). */
static void fixture_skip_root(void)
{
    pk_test_skip_gate("root", "fixture: pretends to need root");
}

static void fixture_skip_absent(void)
{
    printf("output before the skip may say SKIP: too\n"); /* the runner reads the last one */
    pk_test_skip_gate("package:pk-no-such-package", "fixture: needs a package no archive has");
}

static void fixture_skip_package(void)
{
    pk_test_skip_gate("package:cmake", "fixture: pretends cmake is missing");
}

static void fixture_skip_cgroup(void)
{
    pk_test_skip_gate("cgroup", "fixture: pretends no cgroup is delegated");
}

static void fixture_skip_build(void)
{
    pk_test_skip_gate("build", "fixture: needs an option this build left off");
}

/* Fails unless the test process starts with SIGINT, SIGQUIT and SIGTERM at their defaults and
 * unblocked (runner_tests_start_with_default_signals runs it under a shell that ignores them). */
static void fixture_default_signals(void)
{
    static const int sigs[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
    sigset_t blocked;
    ASSERT_EQ(sigprocmask(SIG_BLOCK, NULL, &blocked), 0);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        ASSERT_EQ(sigaction(sigs[i], NULL, &sa), 0);
        if (sa.sa_handler != SIG_DFL || sigismember(&blocked, sigs[i]))
            pk_test_fail(__FILE__, __LINE__, "signal %d: %s%s", sigs[i],
                         sa.sa_handler == SIG_IGN ? "ignored" : "handled",
                         sigismember(&blocked, sigs[i]) ? ", blocked" : "");
    }
}

static void fixture_skip_quiet(void)
{
    pk_test_skip_gate("quiet", "fixture: pretends the machine is too busy");
}

static void fixture_skip_unnamed(void)
{
    pk_test_skip("fixture: names no gate");
}

static void fixture_skip_unknown(void)
{
    pk_test_skip_gate("moon-phase", "fixture: names a gate nobody can check");
}

static const struct test_entry fixtures[] = {
    {"fixture_skip_root", fixture_skip_root, 5},
    {"fixture_skip_absent", fixture_skip_absent, 5},
    {"fixture_skip_package", fixture_skip_package, 5},
    {"fixture_skip_cgroup", fixture_skip_cgroup, 5},
    {"fixture_skip_build", fixture_skip_build, 5},
    {"fixture_skip_unnamed", fixture_skip_unnamed, 5},
    {"fixture_skip_unknown", fixture_skip_unknown, 5},
    {"fixture_skip_quiet", fixture_skip_quiet, 5},
    {"fixture_default_signals", fixture_default_signals, 5},
    {"fixture_leak_fd", fixture_leak_fd, 5},
    {"fixture_leave_child", fixture_leave_child, 5},
    {"fixture_leave_zombie", fixture_leave_zombie, 5},
    {"fixture_hang", fixture_hang, 1},
    {"fixture_leak_memory", fixture_leak_memory, 5},
};

/* ---- inside a test process ----------------------------------------------------------------- */

static char self_path[4096];
static char tmpdir[256];

const char *pk_test_self(void)
{
    return self_path;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_tmpdir(void)
{
    if (tmpdir[0] != '\0')
        nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *pk_test_tmpdir(void)
{
    if (tmpdir[0] == '\0') {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/pk_test.XXXXXX");
        if (mkdtemp(tmpdir) == NULL)
            pk_test_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
        atexit(remove_tmpdir);
    }
    return tmpdir;
}

void pk_test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    exit(1);
}

/* "SKIP[gate]: reason" (or "SKIP: reason" without a gate): what the outer runner parses. */
static _Noreturn void skip_v(const char *gate, const char *fmt, va_list ap)
{
    if (gate != NULL)
        printf("SKIP[%s]: ", gate);
    else
        printf("SKIP: ");
    vprintf(fmt, ap);
    putchar('\n');
    fflush(stdout);
    exit(PK_TEST_SKIP_STATUS);
}

void pk_test_skip_gate(const char *gate, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    skip_v(gate, fmt, ap);
}

void pk_test_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    skip_v(NULL, fmt, ap);
}

#define MAX_FDS 4096

/* Marks every open descriptor except the one used for the listing itself. */
static void open_fds(unsigned char *set)
{
    memset(set, 0, MAX_FDS);
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && fd != dirfd(d) && fd < MAX_FDS)
            set[fd] = 1;
    }
    closedir(d);
}

static int run_inside(const struct test_entry *t)
{
    static unsigned char before[MAX_FDS], after[MAX_FDS];
    open_fds(before);
    t->fn();
    /* What the library keeps between calls on purpose (its cgroup leaf pool) is released first;
     * any descriptor still open after that is a leak. */
    pk_cleanup();

    int failed = 0;
    open_fds(after);
    for (int fd = 0; fd < MAX_FDS; fd++) {
        if (after[fd] && !before[fd]) {
            char link[64], target[256] = "?";
            snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
            ssize_t n = readlink(link, target, sizeof target - 1);
            target[n > 0 ? n : 1] = '\0';
            fprintf(stderr, "hygiene: test leaked file descriptor %d -> %s\n", fd, target);
            failed = 1;
        }
    }
    siginfo_t si = {0};
    if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0) {
        if (si.si_pid != 0)
            fprintf(stderr, "hygiene: test left an unreaped child (zombie pid %d)\n", si.si_pid);
        else
            fprintf(stderr, "hygiene: test left a running child\n");
        failed = 1;
    }
    fflush(stdout);
    fflush(stderr);
    return failed;
}

/* ---- the outer runner ---------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double multiplier(void)
{
    const char *m = getenv("PK_TEST_TIMEOUT_MULTIPLIER");
    double v = m != NULL ? atof(m) : 1.0;
    return v > 0 ? v : 1.0;
}

enum verdict { PASS, FAIL, SKIP };

/* Runs one test in a child process; its combined output is returned in *out (malloc'd). */
static enum verdict run_outside(const struct test_entry *t, char **out, double *secs)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        *out = strdup("runner: pipe2 failed");
        return FAIL;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_adddup2(&fa, p[1], 2);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setpgroup(&attr, 0);
    /* Every test starts with default signal dispositions and nothing blocked, whoever started
     * the runner: a shell's `pk_tests &` ignores SIGINT and SIGQUIT, and an ignored signal
     * survives exec into every child a test starts, so a test that interrupts its child would
     * see it shrug the signal off. */
    sigset_t all, none;
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                        POSIX_SPAWN_SETSIGMASK);
    char *argv[] = {self_path, "--run", (char *)t->name, NULL};
    pid_t pid;
    double start = now_s();
    int rc = posix_spawn(&pid, self_path, &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(p[1]);
    if (rc != 0) {
        close(p[0]);
        *out = strdup("runner: posix_spawn failed");
        return FAIL;
    }

    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    double deadline = start + t->seconds * multiplier();
    bool timed_out = false, exited = false, eof = false;
    int status = 0;
    /* Read until the test process exits (a child it left behind may hold the pipe open, so EOF
     * alone is not the end), then take what is still buffered. */
    while (!exited) {
        double left = deadline - now_s();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd pfd = {p[0], POLLIN, 0};
        int n = eof ? 0 : poll(&pfd, 1, left < 0.05 ? (int)(left * 1000) + 1 : 50);
        if (n > 0) {
            if (cap - len < 4096)
                buf = realloc(buf, cap *= 2);
            ssize_t r = read(p[0], buf + len, cap - len - 1);
            if (r > 0)
                len += (size_t)r;
            else
                eof = true;
        } else if (eof) {
            usleep(5000);
        }
        exited = waitpid(pid, &status, WNOHANG) == pid;
    }
    if (exited && !eof) {
        (void)fcntl(p[0], F_SETFL, O_NONBLOCK);
        for (;;) {
            if (cap - len < 4096)
                buf = realloc(buf, cap *= 2);
            ssize_t r = read(p[0], buf + len, cap - len - 1);
            if (r <= 0)
                break;
            len += (size_t)r;
        }
    }
    close(p[0]);
    /* Whatever the test left running in its group goes now. */
    kill(-pid, SIGKILL);
    if (!exited)
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    *secs = now_s() - start;
    buf[len] = '\0';
    *out = buf;
    if (timed_out) {
        char *msg;
        if (asprintf(&msg, "%stimeout: killed after %.1f s\n", buf, *secs) >= 0) {
            free(buf);
            *out = msg;
        }
        return FAIL;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return PASS;
    if (WIFEXITED(status) && WEXITSTATUS(status) == PK_TEST_SKIP_STATUS)
        return SKIP;
    if (WIFSIGNALED(status)) {
        char *msg;
        if (asprintf(&msg, "%sdied of signal %d (%s)\n", buf, WTERMSIG(status),
                     strsignal(WTERMSIG(status))) >= 0) {
            free(buf);
            *out = msg;
        }
    }
    return FAIL;
}

static void print_diagnostics(const char *text)
{
    const char *p = text;
    while (*p != '\0') {
        const char *nl = strchrnul(p, '\n');
        printf("#   %.*s\n", (int)(nl - p), p);
        p = *nl ? nl + 1 : nl;
    }
}

/* ---- CI: a skip must be a fact about the machine -------------------------------------------- */

static bool ci_mode(void)
{
    const char *ci = getenv("CI");
    return ci != NULL && ci[0] != '\0' && strcmp(ci, "0") != 0 && strcmp(ci, "false") != 0;
}

/* dpkg's word on one package (the runner's own look, not the test's). */
static bool package_installed(const char *name)
{
    if (name[0] == '\0' || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789+-.") != strlen(name))
        return false;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return false;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char *argv[] = {"dpkg-query", "-W", "-f=${Status}", (char *)name, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "dpkg-query", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    char buf[256];
    size_t len = 0;
    ssize_t n;
    while (rc == 0 && len < sizeof buf - 1 &&
           ((n = read(p[0], buf + len, sizeof buf - 1 - len)) > 0 || (n < 0 && errno == EINTR)))
        len += n > 0 ? (size_t)n : 0;
    buf[len] = '\0';
    close(p[0]);
    if (rc == 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    return rc == 0 && strstr(buf, "install ok installed") != NULL;
}

/* The real check the library's AUTO makes: may this process create a directory in its cgroup? */
static bool cgroup_writable(void)
{
    const char *dir = pk_test_cgroup_dir();
    char probe[4200];
    if (dir == NULL ||
        snprintf(probe, sizeof probe, "%s/pktest-gate-%d", dir, (int)getpid()) >= (int)sizeof probe)
        return false;
    if (mkdir(probe, 0755) != 0)
        return false;
    rmdir(probe);
    return true;
}

/* Whether the machine is quiet: its 1-minute load average below its online CPUs. A test that
 * demonstrates something on real measurements may skip on a busy machine (gate "quiet"); the load
 * average is the runner's own look at that, and two CPU hogs beside a 2-CPU run make it >= 2.
 * PK_TEST_LOADAVG names a file to read instead of /proc/loadavg (for the runner's own test). */
static bool machine_quiet(void)
{
    const char *path = getenv("PK_TEST_LOADAVG");
    FILE *f = fopen(path != NULL && path[0] != '\0' ? path : "/proc/loadavg", "r");
    double load = 0;
    bool read = f != NULL && fscanf(f, "%lf", &load) == 1;
    if (f != NULL)
        fclose(f);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return !read || load < (double)(cpus > 0 ? cpus : 1);
}

enum gate_state { GATE_ABSENT, GATE_PRESENT, GATE_BUILD, GATE_UNNAMED, GATE_UNKNOWN };

/* Whether this machine has what a skip's gate names (see pk_test_skip_gate). */
static enum gate_state gate_state(const char *gate)
{
    if (gate == NULL)
        return GATE_UNNAMED;
    if (strcmp(gate, "build") == 0)
        return GATE_BUILD;
    if (strcmp(gate, "root") == 0)
        return geteuid() == 0 ? GATE_PRESENT : GATE_ABSENT;
    if (strcmp(gate, "cgroup") == 0)
        return cgroup_writable() ? GATE_PRESENT : GATE_ABSENT;
    if (strcmp(gate, "btf") == 0)
        return access("/sys/kernel/btf/vmlinux", R_OK) == 0 ? GATE_PRESENT : GATE_ABSENT;
    if (strcmp(gate, "quiet") == 0)
        return machine_quiet() ? GATE_PRESENT : GATE_ABSENT;
    if (strncmp(gate, "package:", 8) == 0 && gate[8] != '\0')
        return package_installed(gate + 8) ? GATE_PRESENT : GATE_ABSENT;
    return GATE_UNKNOWN;
}

/* A skip's gate and reason from its output: the last "SKIP[gate]: reason" or "SKIP: reason" in
 * it (the skip is the test's last word; whatever it printed before may mention a skip too). */
static void parse_skip(const char *out, char *gate, size_t gcap, const char **reason, int *rlen)
{
    const char *line = NULL;
    for (const char *p = out; (p = strstr(p, "SKIP")) != NULL; p += 4)
        if (p[4] == '[' || strncmp(p + 4, ": ", 2) == 0)
            line = p;
    gate[0] = '\0';
    *reason = "no reason given";
    if (line != NULL && line[4] == '[') {
        size_t n = strcspn(line + 5, "]\n");
        snprintf(gate, gcap, "%.*s", (int)n, line + 5);
        if (strncmp(line + 5 + n, "]: ", 3) == 0)
            *reason = line + 5 + n + 3;
    } else if (line != NULL) {
        *reason = line + 6;
    }
    *rlen = (int)strcspn(*reason, "\n");
}

/* Under CI, why a skip is a failure; NULL when it is a fact about the machine or the build. */
static const char *ci_refuses(const char *gate)
{
    switch (gate_state(gate[0] != '\0' ? gate : NULL)) {
    case GATE_PRESENT:
        return "skipped, but this machine has what its gate names";
    case GATE_UNNAMED:
        return "skipped without naming its gate (pk_test_skip_gate), so CI cannot check it";
    case GATE_UNKNOWN:
        return "skipped with a gate the runner does not know";
    case GATE_ABSENT:
    case GATE_BUILD:
        break;
    }
    return NULL;
}

static const struct test_entry *find(const char *name)
{
    for (size_t i = 0; i < ntests; i++)
        if (strcmp(tests[i].name, name) == 0)
            return &tests[i];
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++)
        if (strcmp(fixtures[i].name, name) == 0)
            return &fixtures[i];
    return NULL;
}

static int run_all(const struct test_entry **sel, size_t n)
{
    int passed = 0, failed = 0, skipped = 0;
    bool ci = ci_mode();
    printf("1..%zu\n", n);
    fflush(stdout);
    for (size_t i = 0; i < n; i++) {
        char *out = NULL;
        double secs = 0;
        enum verdict v = run_outside(sel[i], &out, &secs);
        if (v == PASS) {
            printf("ok %zu - %s (%.2f s)\n", i + 1, sel[i]->name, secs);
            passed++;
        } else if (v == SKIP) {
            char gate[128];
            const char *reason, *refused;
            int rlen;
            parse_skip(out, gate, sizeof gate, &reason, &rlen);
            if (ci && (refused = ci_refuses(gate)) != NULL) {
                printf("not ok %zu - %s (%.2f s)\n", i + 1, sel[i]->name, secs);
                print_diagnostics(out);
                printf("#   CI=true: %s (gate '%s')\n", refused, gate[0] ? gate : "none");
                failed++;
            } else {
                printf("ok %zu - %s # SKIP [%s] %.*s\n", i + 1, sel[i]->name,
                       gate[0] ? gate : "no gate", rlen, reason);
                skipped++;
            }
        } else {
            printf("not ok %zu - %s (%.2f s)\n", i + 1, sel[i]->name, secs);
            print_diagnostics(out);
            failed++;
        }
        fflush(stdout);
        free(out);
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed == 0 ? 0 : 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: pk_tests [NAME...] | --list | --run NAME | --helper NAME [ARGS...]\n"
               "Runs processkit's tests, each in its own process with a timeout (scaled by\n"
               "PK_TEST_TIMEOUT_MULTIPLIER). Exit: 0 all passed, 1 a test failed, 2 bad usage.\n");
}

int main(int argc, char **argv)
{
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (n <= 0) {
        fprintf(stderr, "pk_tests: cannot read /proc/self/exe\n");
        return 2;
    }
    self_path[n] = '\0';

    if (argc >= 3 && strcmp(argv[1], "--helper") == 0)
        return pk_test_run_helper(argc - 2, argv + 2);
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < ntests; i++)
            printf("%s\n", tests[i].name);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "--run") == 0) {
        const struct test_entry *t = find(argv[2]);
        if (t == NULL) {
            fprintf(stderr, "pk_tests: no test named '%s'\n", argv[2]);
            return 2;
        }
        return run_inside(t);
    }

    const struct test_entry **sel = calloc(ntests + (size_t)argc, sizeof *sel);
    size_t nsel = 0;
    if (argc == 1) {
        for (size_t i = 0; i < ntests; i++)
            sel[nsel++] = &tests[i];
    }
    for (int i = 1; i < argc; i++) {
        const struct test_entry *t = find(argv[i]);
        if (t == NULL) {
            fprintf(stderr, "pk_tests: no test named '%s' (see --list)\n", argv[i]);
            usage(stderr);
            free(sel);
            return 2;
        }
        sel[nsel++] = t;
    }
    int rc = run_all(sel, nsel);
    free(sel);
    return rc;
}
