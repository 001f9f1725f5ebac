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
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define X(name, seconds) void pk_test_##name(void);
#include "alone.h"
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

/* One test running in its own process: its output pipe, what it wrote, when it must end. */
struct running {
    const struct test_entry *t;
    size_t index; /* its place in the selection (TAP number - 1) */
    pid_t pid;
    int out_fd, lock_fd;
    char *buf;
    size_t len, cap;
    double start, deadline;
    bool eof, exited, timed_out;
    int status;
};

/* Starts one test in a child process of its own group, with default signals and its output
 * (stdout and stderr together) on a pipe. Returns 0, or -1 with r->buf holding why. */
static int start_test(struct running *r)
{
    r->cap = 4096;
    r->buf = malloc(r->cap);
    r->len = 0;
    r->buf[0] = '\0';
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        r->len = (size_t)snprintf(r->buf, r->cap, "runner: pipe2 failed\n");
        return -1;
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
    char *argv[] = {self_path, "--run", (char *)r->t->name, NULL};
    r->start = now_s();
    r->deadline = r->start + r->t->seconds * multiplier();
    int rc = posix_spawn(&r->pid, self_path, &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(p[1]);
    if (rc != 0) {
        close(p[0]);
        r->len = (size_t)snprintf(r->buf, r->cap, "runner: posix_spawn failed\n");
        return -1;
    }
    r->out_fd = p[0];
    (void)fcntl(r->out_fd, F_SETFL, O_NONBLOCK);
    return 0;
}

/* Reads what the test wrote so far (its pipe is non-blocking). */
static void take_output(struct running *r)
{
    for (;;) {
        if (r->cap - r->len < 4096)
            r->buf = realloc(r->buf, r->cap *= 2);
        ssize_t n = read(r->out_fd, r->buf + r->len, r->cap - r->len - 1);
        if (n > 0) {
            r->len += (size_t)n;
            continue;
        }
        if (n == 0)
            r->eof = true;
        if (n == 0 || errno != EINTR)
            break;
    }
    r->buf[r->len] = '\0';
}

/* A test is over when its process exited (a child it left behind may hold the pipe open, so EOF
 * alone is not the end) or its time is up. */
static bool test_over(struct running *r, double now)
{
    if (!r->exited)
        r->exited = waitpid(r->pid, &r->status, WNOHANG) == r->pid;
    if (!r->exited && now >= r->deadline)
        r->timed_out = true;
    return r->exited || r->timed_out;
}

/* Ends a test: what is still buffered is taken, whatever it left running in its group is killed,
 * and its verdict is made from how it ended; r->buf is the output, with why it failed appended. */
static enum verdict finish_test(struct running *r, double *secs)
{
    take_output(r);
    close(r->out_fd);
    kill(-r->pid, SIGKILL);
    if (!r->exited)
        while (waitpid(r->pid, &r->status, 0) < 0 && errno == EINTR)
            ;
    *secs = now_s() - r->start;
    char *msg = NULL;
    enum verdict v = FAIL;
    if (r->timed_out) {
        if (asprintf(&msg, "%stimeout: killed after %.1f s\n", r->buf, *secs) < 0)
            msg = NULL;
    } else if (WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0) {
        v = PASS;
    } else if (WIFEXITED(r->status) && WEXITSTATUS(r->status) == PK_TEST_SKIP_STATUS) {
        v = SKIP;
    } else if (WIFSIGNALED(r->status)) {
        if (asprintf(&msg, "%sdied of signal %d (%s)\n", r->buf, WTERMSIG(r->status),
                     strsignal(WTERMSIG(r->status))) < 0)
            msg = NULL;
    }
    if (msg != NULL) {
        free(r->buf);
        r->buf = msg;
    }
    return v;
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

/* Whether the machine is quiet now: fewer processes running besides this one than it has online
 * CPUs, the median of ten looks over half a second at /proc/loadavg's running count. A test that
 * demonstrates something on real measurements may skip on a busy machine (gate "quiet"); the
 * runner looks the same way (pk_test_machine_quiet). Not the 1-minute load average: it lags, and a
 * test of tests/alone.h, which runs with no other test beside it, would still see the minute of
 * tests before it. PK_TEST_LOADAVG names a file to read instead (for the runner's own test).
 * `others` gets the median count (may be NULL). */
bool pk_test_machine_quiet(double *others)
{
    const char *path = getenv("PK_TEST_LOADAVG");
    bool fake = path != NULL && path[0] != '\0';
    int seen[10], n = 0;
    for (int i = 0; i < 10; i++) {
        FILE *f = fopen(fake ? path : "/proc/loadavg", "re");
        int running = 0;
        if (f != NULL && fscanf(f, "%*f %*f %*f %d/", &running) == 1)
            seen[n++] = running - 1; /* this process is running as it reads */
        if (f != NULL)
            fclose(f);
        if (!fake)
            usleep(50 * 1000);
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (n == 0)
        return true;
    for (int i = 1; i < n; i++) /* insertion sort: ten numbers */
        for (int j = i; j > 0 && seen[j - 1] > seen[j]; j--) {
            int t = seen[j];
            seen[j] = seen[j - 1];
            seen[j - 1] = t;
        }
    double median = n % 2 ? seen[n / 2] : (seen[n / 2 - 1] + seen[n / 2]) / 2.0;
    if (others != NULL)
        *others = median;
    return median < (double)(cpus > 0 ? cpus : 1);
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
        return pk_test_machine_quiet(NULL) ? GATE_PRESENT : GATE_ABSENT;
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

/* ---- running tests side by side -------------------------------------------------------------- */

/* Tests that must have the machine's tests to themselves (tests/alone.h says why). */
static const char *const alone_names[] = {
#define X(name) #name,
    PK_TEST_ALONE(X)
#undef X
};

static bool runs_alone(const struct test_entry *t)
{
    for (size_t i = 0; i < sizeof alone_names / sizeof alone_names[0]; i++)
        if (strcmp(alone_names[i], t->name) == 0)
            return true;
    return false;
}

/*
 * One lock for every runner on the machine (the dev and the ASan suites run side by side): a test
 * holds it shared, a test that must be alone holds it exclusive. flock is per open file, so each
 * running test has its own descriptor. A turnstile in front keeps an exclusive taker from waiting
 * forever behind a stream of shared ones: it holds the turnstile while it waits, and a shared taker
 * must pass through it. Nothing here blocks: a runner that cannot take the lock keeps reading its
 * running tests' output and tries again, so two runners can never wait on each other.
 * PK_TEST_LOCK names the lock file ("none": no lock); a runner started by a test does not lock.
 */
static char lock_path[4200];
static int turn_fd = -1;

static void lock_init(void)
{
    const char *env = getenv("PK_TEST_LOCK");
    if (getenv("PK_TEST_NESTED") != NULL || (env != NULL && strcmp(env, "none") == 0))
        return;
    if (env != NULL && env[0] != '\0')
        snprintf(lock_path, sizeof lock_path, "%s", env);
    else
        snprintf(lock_path, sizeof lock_path, "/tmp/pk_tests.%d.lock", (int)getuid());
    char turn[4300];
    snprintf(turn, sizeof turn, "%s.turn", lock_path);
    turn_fd = open(turn, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (turn_fd < 0) {
        fprintf(stderr, "pk_tests: cannot open %s (%s): running without the machine lock\n", turn,
                strerror(errno));
        lock_path[0] = '\0';
    }
    /* The tests this runner starts (the runner's own tests start runners) must not lock again. */
    setenv("PK_TEST_NESTED", "1", 1);
}

/* Takes the lock for one test without blocking: its descriptor (-2 when there is no lock), or -1
 * when it is not free now. An exclusive taker keeps the turnstile until it has the lock. */
static int lock_take(bool exclusive)
{
    if (lock_path[0] == '\0')
        return -2;
    static bool holding_turn;
    if (!holding_turn && flock(turn_fd, LOCK_EX | LOCK_NB) != 0)
        return -1;
    holding_turn = true;
    int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0 && flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
        close(fd);
        fd = -1;
    }
    if (fd >= 0 || !exclusive) {
        flock(turn_fd, LOCK_UN);
        holding_turn = false;
    }
    return fd;
}

struct outcome {
    enum verdict v;
    char *out;
    double secs;
    bool done;
};

static void print_outcome(size_t i,
                          const struct test_entry *t,
                          struct outcome *o,
                          bool ci,
                          int *passed,
                          int *failed,
                          int *skipped)
{
    if (o->v == PASS) {
        printf("ok %zu - %s (%.2f s)\n", i + 1, t->name, o->secs);
        (*passed)++;
    } else if (o->v == SKIP) {
        char gate[128];
        const char *reason, *refused;
        int rlen;
        parse_skip(o->out, gate, sizeof gate, &reason, &rlen);
        if (ci && (refused = ci_refuses(gate)) != NULL) {
            printf("not ok %zu - %s (%.2f s)\n", i + 1, t->name, o->secs);
            print_diagnostics(o->out);
            printf("#   CI=true: %s (gate '%s')\n", refused, gate[0] ? gate : "none");
            (*failed)++;
        } else {
            printf("ok %zu - %s # SKIP [%s] %.*s\n", i + 1, t->name, gate[0] ? gate : "no gate",
                   rlen, reason);
            (*skipped)++;
        }
    } else {
        printf("not ok %zu - %s (%.2f s)\n", i + 1, t->name, o->secs);
        print_diagnostics(o->out);
        (*failed)++;
    }
    fflush(stdout);
    free(o->out);
    o->out = NULL;
}

/* Starts what may start now: up to `jobs` tests, a test that must be alone only when none of ours
 * runs, and nothing beside it. Returns how many run. */
static size_t start_more(const struct test_entry **sel,
                         size_t n,
                         size_t *next,
                         struct running *run,
                         size_t jobs,
                         size_t nrun,
                         struct outcome *res)
{
    while (*next < n && nrun < jobs) {
        bool alone = runs_alone(sel[*next]);
        if ((alone && nrun > 0) || (nrun > 0 && runs_alone(run[0].t)))
            break;
        int fd = lock_take(alone);
        if (fd == -1)
            break;
        struct running *r = &run[nrun];
        *r = (struct running){.t = sel[*next], .index = *next, .lock_fd = fd, .out_fd = -1};
        (*next)++;
        if (start_test(r) != 0) {
            res[r->index] = (struct outcome){FAIL, r->buf, 0, true};
            if (fd >= 0)
                close(fd);
            continue;
        }
        nrun++;
    }
    return nrun;
}

/* Waits up to 50 ms for output, then ends every test that is over; returns how many still run. */
static size_t reap_over(struct running *run, size_t nrun, struct outcome *res)
{
    struct pollfd pfd[64];
    for (size_t i = 0; i < nrun; i++)
        pfd[i] = (struct pollfd){run[i].eof ? -1 : run[i].out_fd, POLLIN, 0};
    if (poll(pfd, nrun, 50) < 0 && errno != EINTR)
        usleep(5000);
    double now = now_s();
    for (size_t i = 0; i < nrun;) {
        struct running *r = &run[i];
        if (pfd[i].revents != 0)
            take_output(r);
        if (!test_over(r, now)) {
            i++;
            continue;
        }
        struct outcome *o = &res[r->index];
        o->v = finish_test(r, &o->secs);
        o->out = r->buf;
        o->done = true;
        if (r->lock_fd >= 0)
            close(r->lock_fd);
        run[i] = run[--nrun];
        pfd[i] = pfd[nrun];
    }
    return nrun;
}

static int run_all(const struct test_entry **sel, size_t n, size_t jobs)
{
    int passed = 0, failed = 0, skipped = 0;
    bool ci = ci_mode();
    struct outcome *res = calloc(n + 1, sizeof *res);
    struct running run[64];
    size_t next = 0, nrun = 0, printed = 0;
    lock_init();
    printf("1..%zu\n", n);
    fflush(stdout);
    while (printed < n) {
        nrun = start_more(sel, n, &next, run, jobs, nrun, res);
        nrun = reap_over(run, nrun, res);
        /* TAP in the selection's order, each line as soon as everything before it is done. */
        for (; printed < n && res[printed].done; printed++)
            print_outcome(printed, sel[printed], &res[printed], ci, &passed, &failed, &skipped);
    }
    free(res);
    if (turn_fd >= 0)
        close(turn_fd);
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed == 0 ? 0 : 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: pk_tests [-j N] [NAME...] | --list | --run NAME | --helper NAME [ARGS...]\n"
               "Runs processkit's tests, each in its own process with a timeout (scaled by\n"
               "PK_TEST_TIMEOUT_MULTIPLIER), N at a time (-j, or PK_TEST_JOBS; default 1); the\n"
               "tests of tests/alone.h run with no other test of any runner on the machine\n"
               "(the lock file PK_TEST_LOCK, default /tmp/pk_tests.UID.lock; none: no lock).\n"
               "Exit: 0 all passed, 1 a test failed, 2 bad usage.\n");
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

    size_t jobs = 1;
    const char *env_jobs = getenv("PK_TEST_JOBS");
    int first = 1;
    if (argc >= 2 && strncmp(argv[1], "-j", 2) == 0) {
        env_jobs = argv[1][2] != '\0' ? argv[1] + 2 : argc >= 3 ? argv[2] : "";
        first = argv[1][2] != '\0' ? 2 : 3;
    }
    if (env_jobs != NULL && env_jobs[0] != '\0') {
        char *end;
        long j = strtol(env_jobs, &end, 10);
        if (*end != '\0' || j < 1 || j > 64) {
            fprintf(stderr, "pk_tests: -j takes a number of tests at a time, 1 to 64, not '%s'\n",
                    env_jobs);
            return 2;
        }
        jobs = (size_t)j;
    }
    const struct test_entry **sel = calloc(ntests + (size_t)argc, sizeof *sel);
    size_t nsel = 0;
    if (argc <= first) {
        for (size_t i = 0; i < ntests; i++)
            sel[nsel++] = &tests[i];
    }
    for (int i = first; i < argc; i++) {
        const struct test_entry *t = find(argv[i]);
        if (t == NULL) {
            fprintf(stderr, "pk_tests: no test named '%s' (see --list)\n", argv[i]);
            usage(stderr);
            free(sel);
            return 2;
        }
        sel[nsel++] = t;
    }
    /* The tests that must be alone run last: by then the other runners on the machine have
     * usually finished their own, so waiting for the machine to be free costs little. */
    const struct test_entry **order = calloc(nsel + 1, sizeof *order);
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < nsel; i++)
            if (runs_alone(sel[i]) == (pass == 1))
                order[k++] = sel[i];
    int rc = run_all(order, nsel, jobs);
    free(order);
    free(sel);
    return rc;
}
