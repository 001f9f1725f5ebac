/*
 * Helper programs: the test binary re-executed as `pk_tests --helper NAME ARGS...` becomes a
 * small child with one behaviour, so tests need no shell scripts and no extra binaries. Each
 * helper writes with write(2) directly (no stdio buffering), so ordering between stdout and
 * stderr is exactly the order of the calls.
 */
#define _GNU_SOURCE
#include "test.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            _exit(3);
        p += n;
        len -= (size_t)n;
    }
}

static void say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int fd, const char *fmt, ...)
{
    char buf[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 1)
        n = (int)sizeof buf - 1;
    write_all(fd, buf, (size_t)n);
}

static long arg(int argc, char **argv, int i, long dflt)
{
    return i < argc ? strtol(argv[i], NULL, 0) : dflt;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* exit CODE */
static int h_exit(int argc, char **argv)
{
    return (int)arg(argc, argv, 1, 0);
}

/* signal SIGNO: die of that signal */
static int h_signal(int argc, char **argv)
{
    int sig = (int)arg(argc, argv, 1, SIGTERM);
    signal(sig, SIG_DFL);
    raise(sig);
    return 99;
}

/* emit-lines N [LEN] [STREAM]: N lines of LEN bytes ('a'..'z' pattern) plus '\n' */
static int h_emit_lines(int argc, char **argv)
{
    long n = arg(argc, argv, 1, 10), len = arg(argc, argv, 2, 16);
    int fd = (int)arg(argc, argv, 3, 1);
    char *line = malloc((size_t)len + 1);
    char *chunk = malloc(65536 + (size_t)len + 1);
    size_t used = 0;
    for (long i = 0; i < n; i++) {
        for (long k = 0; k < len; k++)
            line[k] = (char)('a' + (i + k) % 26);
        line[len] = '\n';
        memcpy(chunk + used, line, (size_t)len + 1);
        used += (size_t)len + 1;
        if (used >= 65536) {
            write_all(fd, chunk, used);
            used = 0;
        }
    }
    write_all(fd, chunk, used);
    free(line);
    free(chunk);
    return 0;
}

/* echo-stdin: copy stdin to stdout until EOF */
static int h_echo_stdin(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    static char buf[65536];
    for (;;) {
        ssize_t n = read(0, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? 2 : 0;
        write_all(1, buf, (size_t)n);
    }
}

/* stdin-status: prints "eof" when stdin reads as end-of-file at once, else what it got */
static int h_stdin_status(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    char c;
    ssize_t n = read(0, &c, 1);
    if (n == 0)
        say(1, "eof\n");
    else if (n < 0)
        say(1, "error %s\n", strerrorname_np(errno));
    else
        say(1, "data\n");
    return 0;
}

/* sleep MS */
static int h_sleep(int argc, char **argv)
{
    sleep_ms(arg(argc, argv, 1, 1000));
    return 0;
}

/* interleave N: "out i" on stdout and "err i" on stderr, alternating */
static int h_interleave(int argc, char **argv)
{
    long n = arg(argc, argv, 1, 10);
    for (long i = 0; i < n; i++) {
        say(1, "out %ld\n", i);
        say(2, "err %ld\n", i);
    }
    return 0;
}

/* list-fds: the descriptors open in this process, one per line */
static int h_list_fds(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return 2;
    int fds[1024], n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 1024)
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && atoi(e->d_name) != dirfd(d))
            fds[n++] = atoi(e->d_name);
    closedir(d);
    for (int i = 1; i < n; i++) /* insertion sort: readdir order is not numeric */
        for (int k = i; k > 0 && fds[k - 1] > fds[k]; k--) {
            int t = fds[k];
            fds[k] = fds[k - 1];
            fds[k - 1] = t;
        }
    for (int i = 0; i < n; i++)
        say(1, "%d\n", fds[i]);
    return 0;
}

/* fd-table: "FDSize N" (the size of this process's descriptor table, as the clone or an unshare
 * left it: exec does not shrink it), then the descriptors open, as list-fds */
static int h_fd_table(int argc, char **argv)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "FDSize:", 7) == 0)
            say(1, "FDSize %ld\n", strtol(line + 7, NULL, 10));
    if (f != NULL)
        fclose(f);
    return h_list_fds(argc, argv);
}

/* print-exe: readlink(/proc/self/exe) */
static int h_print_exe(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        return 2;
    buf[n] = '\0';
    say(1, "%s", buf);
    return 0;
}

/* print-env: the whole environment, one entry per line */
static int h_print_env(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    for (char **e = environ; *e != NULL; e++)
        say(1, "%s\n", *e);
    return 0;
}

/* cwd: the working directory */
static int h_cwd(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    char buf[4096];
    if (getcwd(buf, sizeof buf) == NULL)
        return 2;
    say(1, "%s", buf);
    return 0;
}

/* invalid-utf8: a line with invalid UTF-8 bytes, a CRLF line, and a final unterminated line */
static int h_invalid_utf8(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    static const char bytes[] = "ok \xff\xfe bad\r\ncrlf\r\nlast";
    write_all(1, bytes, sizeof bytes - 1);
    return 0;
}

/* ignore-term MS: ignore SIGTERM, say "ready", then sleep MS */
static int h_ignore_term(int argc, char **argv)
{
    signal(SIGTERM, SIG_IGN);
    say(1, "ready\n");
    sleep_ms(arg(argc, argv, 1, 10000));
    return 0;
}

/* grandchildren N MS: fork N children that each sleep MS, print their pids, exit at once */
static int h_grandchildren(int argc, char **argv)
{
    long n = arg(argc, argv, 1, 1), ms = arg(argc, argv, 2, 10000);
    for (long i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            sleep_ms(ms);
            _exit(0);
        }
        say(1, "%d\n", (int)pid);
    }
    return 0;
}

/* args: print each argument on its own line */
static int h_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        say(1, "%s\n", argv[i]);
    return 0;
}

/* flood N: N bytes of 'x' with no newline at all */
static int h_flood(int argc, char **argv)
{
    long long n = argc > 1 ? strtoll(argv[1], NULL, 0) : 1 << 20;
    static char chunk[65536];
    memset(chunk, 'x', sizeof chunk);
    while (n > 0) {
        size_t k = n > (long long)sizeof chunk ? sizeof chunk : (size_t)n;
        write_all(1, chunk, k);
        n -= (long long)k;
    }
    return 0;
}

/* lines-and-stderr LINES BYTES: LINES numbered lines on stdout while BYTES go to stderr, in
 * alternating slices, so neither pipe may be left undrained */
static int h_lines_and_stderr(int argc, char **argv)
{
    long lines = arg(argc, argv, 1, 8000), bytes = arg(argc, argv, 2, 1 << 20);
    static char junk[4096];
    memset(junk, 'e', sizeof junk);
    long per = bytes / (lines > 0 ? lines : 1) + 1;
    for (long i = 0; i < lines || bytes > 0; i++) {
        if (i < lines)
            say(1, "line %ld\n", i);
        long k = per < bytes ? per : bytes;
        if (k > (long)sizeof junk)
            k = sizeof junk;
        if (k > 0) {
            write_all(2, junk, (size_t)k);
            bytes -= k;
        }
    }
    return 0;
}

/* daemonize MS: fork, setsid, fork again; the grandchild prints its pid and sleeps MS. Returns
 * only once the grandchild has printed: it closes its end of a pipe after printing, and the read
 * here sees end-of-file when no write end is left (a fixed sleep was a race on a loaded machine:
 * the run's teardown could kill the grandchild before it printed). */
static int h_daemonize(int argc, char **argv)
{
    long ms = arg(argc, argv, 1, 100000);
    int said[2];
    if (pipe(said) != 0)
        return 2;
    pid_t a = fork();
    if (a == 0) {
        close(said[0]);
        setsid();
        pid_t b = fork();
        if (b == 0) {
            say(1, "%d\n", (int)getpid());
            close(1);
            close(2);
            close(said[1]);
            sleep_ms(ms);
            _exit(0);
        }
        _exit(0);
    }
    close(said[1]);
    waitpid(a, NULL, 0);
    char c;
    while (read(said[0], &c, 1) < 0 && errno == EINTR)
        ;
    close(said[0]);
    return 0;
}

/* spin MS: burn CPU for MS milliseconds of wall time */
static int h_spin(int argc, char **argv)
{
    long ms = arg(argc, argv, 1, 1000);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
    (void)x; /* clang 14 calls a volatile that is only written "set but not used" */
    return 0;
}

/* spin-cpu MS: a busy loop until this process has used MS milliseconds of CPU (however long
 * a loaded machine makes that take; spin counts wall time instead) */
static int h_spin_cpu(int argc, char **argv)
{
    long ms = arg(argc, argv, 1, 1000);
    struct timespec t;
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 10000; i++)
            x += (unsigned long)i;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    } while (t.tv_sec * 1000 + t.tv_nsec / 1000000 < ms);
    (void)x;
    return 0;
}

/* drip N MS: N lines, one every MS milliseconds */
static int h_drip(int argc, char **argv)
{
    long n = arg(argc, argv, 1, 5), ms = arg(argc, argv, 2, 100);
    for (long i = 0; i < n; i++) {
        say(1, "drip %ld\n", i);
        sleep_ms(ms);
    }
    return 0;
}

/* say-then-sleep MS: one line, then silence */
static int h_say_then_sleep(int argc, char **argv)
{
    say(1, "partial output\n");
    sleep_ms(arg(argc, argv, 1, 100000));
    return 0;
}

static volatile sig_atomic_t got_term;

static void on_term(int sig)
{
    (void)sig;
    got_term = 1;
}

/* term-exits CODE: print "ready", exit with CODE as soon as SIGTERM arrives */
static int h_term_exits(int argc, char **argv)
{
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);
    say(1, "ready\n");
    while (!got_term)
        sleep_ms(5);
    return (int)arg(argc, argv, 1, 0);
}

/* pdeathsig-owner: starts a long sleep helper with PR_SET_PDEATHSIG=SIGKILL (no group, so only
 * the parent-death signal can end it), prints its pid, then waits to be killed */
static int h_pdeathsig_owner(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    pk_process *p;
    const char *const child[] = {pk_test_self(), "--helper", "sleep", "100000", NULL};
    int rc = pk_spawn(&(pk_command){.argv = child,
                                    .out.kind = PK_STDIO_NULL,
                                    .err.kind = PK_STDIO_NULL,
                                    .containment = PK_CONTAIN_NONE,
                                    .pdeathsig = SIGKILL},
                      &p, NULL);
    if (rc != 0)
        return 2;
    say(1, "%d\n", pk_process_pid(p));
    sleep_ms(100000);
    return 0;
}

/* containment-probe: what this process would get: the prediction, CGROUP, AUTO */
/* Says whether this process's group was the terminal's foreground one at its first step. */
static int h_foreground_at_start(int argc, char **argv)
{
    (void)argc, (void)argv;
    int fd = open("/dev/tty", O_RDONLY | O_NOCTTY);
    say(1, "fg=%d\n", fd >= 0 && tcgetpgrp(fd) == getpgrp());
    return 0;
}

/* On a terminal: runs foreground-at-start in a process group of its own, with take_terminal as
 * argv[1] says (1 or 0), prints what it said, takes the terminal back, then says "done". */
static int h_take_terminal(int argc, char **argv)
{
    const char *const child[] = {pk_test_self(), "--helper", "foreground-at-start", NULL};
    pk_result r;
    int rc = pk_run(&(pk_command){.argv = child,
                                  .containment = PK_CONTAIN_PGROUP,
                                  .take_terminal = argc > 1 && strcmp(argv[1], "1") == 0},
                    &r);
    say(1, "rc=%d %.*s", rc, (int)r.out.len, r.out.data != NULL ? r.out.data : "");
    pk_result_release(&r);
    sigset_t ttou, old;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    sigprocmask(SIG_BLOCK, &ttou, &old);
    tcsetpgrp(1, getpgrp());
    sigprocmask(SIG_SETMASK, &old, NULL);
    say(1, "done\n");
    return 0;
}

static int h_containment_probe(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    pk_group *g = NULL;
    int rc = pk_group_new(&(pk_group_options){.containment = PK_CONTAIN_CGROUP}, &g);
    const char *cg = rc == 0 ? pk_containment_name(pk_group_mechanism(g)) : pk_errname(rc);
    pk_group_free(g);
    g = NULL;
    rc = pk_group_new(NULL, &g);
    const char *autom = rc == 0 ? pk_containment_name(pk_group_mechanism(g)) : pk_errname(rc);
    pk_group_free(g);
    say(1, "predict=%s cgroup=%s auto=%s\n", pk_containment_name(pk_host_containment()), cg, autom);
    return 0;
}

/* own-cgroup: the path of this process's cgroup v2 (the `0::` line of /proc/self/cgroup) */
static int h_own_cgroup(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[4096];
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "0::", 3) == 0)
            say(1, "%s", line + 3);
    if (f != NULL)
        fclose(f);
    return f != NULL ? 0 : 2;
}

/* held-leaf MODE: two contained runs (the second gives the pooled leaf its holder), then the
 * holder's pid on stdout (from the leaf's cgroup.procs), then by MODE: `exit` _exits without any
 * cleanup; `exec` execs `sleep 5`; `fork` leaves a forked child sleeping 5 s and _exits; `wait`
 * says "echild" when waitpid(-1, WNOHANG) finds no child to reap, else what it found. The test
 * (test_holder.c) checks the holder ends with this process in every mode. */
static int h_held_leaf(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exit";
    for (int i = 0; i < 2; i++) {
        pk_result r;
        int rc = pk_run(&(pk_command){.program = "/bin/true"}, &r);
        bool ok =
            rc == 0 && r.containment == PK_CONTAIN_CGROUP && r.outcome.kind == PK_OUTCOME_EXITED;
        pk_result_release(&r);
        if (!ok)
            return 2;
    }
    const char *dir = pk_test_cgroup_dir();
    char prefix[32], path[4400], buf[64] = "";
    snprintf(prefix, sizeof prefix, "pk-%d-", (int)getpid());
    DIR *d = dir != NULL ? opendir(dir) : NULL;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            snprintf(path, sizeof path, "%s/%s/cgroup.procs", dir, e->d_name);
    if (d != NULL)
        closedir(d);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return 3;
    buf[n] = '\0';
    say(1, "%d\n", atoi(buf));
    if (strcmp(mode, "exec") == 0) {
        execl("/bin/sleep", "sleep", "5", (char *)NULL);
        return 4;
    }
    if (strcmp(mode, "fork") == 0) {
        if (fork() == 0) {
            sleep_ms(5000);
            _exit(0);
        }
        _exit(0);
    }
    if (strcmp(mode, "wait") == 0) {
        int st;
        pid_t w = waitpid(-1, &st, WNOHANG);
        if (w < 0 && errno == ECHILD)
            say(1, "echild\n");
        else
            say(1, "waitpid(-1) returned %d\n", (int)w);
        return 0;
    }
    _exit(0);
}

/* spawn-trace MODE: one pk_run of /bin/true between close(-12345) and close(-54321), the markers
 * test_syscalls.c traces; after two identical warm-up runs except in mode `first` (the second
 * lends the pooled leaf again, which gives it its holder: the traced run is the steady state).
 * Modes: first, contained (streams inherited, default group), uncontained, inherit_fds
 * (contained, no close_range), defaults (every default: stdin /dev/null, both outputs captured),
 * path_twice (contained, the bare name `true` looked up in a PATH that names a missing directory
 * twice before the real ones). */
static int h_spawn_trace(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "contained";
    pk_command cmd = {.program = "/bin/true",
                      .in.kind = PK_STDIO_INHERIT,
                      .out.kind = PK_STDIO_INHERIT,
                      .err.kind = PK_STDIO_INHERIT};
    if (strcmp(mode, "uncontained") == 0)
        cmd.containment = PK_CONTAIN_NONE;
    else if (strcmp(mode, "inherit_fds") == 0)
        cmd.inherit_fds = true;
    else if (strcmp(mode, "defaults") == 0)
        cmd = (pk_command){.program = "/bin/true"};
    static const char *const twice[] = {"PATH=/nonexistent-pk:/nonexistent-pk:/usr/bin:/bin", NULL};
    if (strcmp(mode, "path_twice") == 0) {
        cmd.program = "true";
        cmd.env = (pk_env){.set = twice};
    }
    if (strcmp(mode, "query") == 0) {
        /* The mechanism asked for before any spawn: the probe itself. */
        close(-12345);
        bool ok = pk_spawn_mechanism() == PK_MECH_CLONE3 && pk_spawn_clears_sighand();
        close(-54321);
        return ok ? 0 : 1;
    }
    int warm = strcmp(mode, "first") == 0 ? 0 : 2;
    for (int i = 0; i <= warm; i++) {
        pk_result r;
        if (i == warm)
            close(-12345);
        int rc = pk_run(&cmd, &r);
        if (i == warm)
            close(-54321);
        bool ok = rc == 0 && r.outcome.kind == PK_OUTCOME_EXITED && r.outcome.code == 0;
        pk_result_release(&r);
        if (!ok)
            return 1;
    }
    return 0;
}

/* alloc-count MODE: the allocations 20 warm pk_runs of /bin/true make, as counted by the
 * preloaded tests/malloc_count.c; MODE as for spawn-trace. Prints the count, or "no counter". */
static int h_alloc_count(int argc, char **argv)
{
    /* POSIX's way of turning dlsym's object pointer into a function pointer. */
    unsigned long (*get)(void) = NULL;
    void *sym = dlsym(RTLD_DEFAULT, "pk_malloc_count_get");
    memcpy(&get, &sym, sizeof get);
    if (get == NULL) {
        say(1, "no counter\n");
        return 0;
    }
    const char *mode = argc > 1 ? argv[1] : "contained";
    pk_command cmd = {.program = "/bin/true",
                      .in.kind = PK_STDIO_INHERIT,
                      .out.kind = PK_STDIO_INHERIT,
                      .err.kind = PK_STDIO_INHERIT};
    if (strcmp(mode, "defaults") == 0)
        cmd = (pk_command){.program = "/bin/true"};
    unsigned long before = 0;
    for (int i = 0; i < 22; i++) {
        if (i == 2)
            before = get(); /* two warm-up runs set up what a process keeps */
        pk_result r;
        int rc = pk_run(&cmd, &r);
        bool ok = rc == 0 && r.outcome.kind == PK_OUTCOME_EXITED && r.outcome.code == 0;
        pk_result_release(&r);
        if (!ok)
            return 1;
    }
    say(1, "%lu\n", get() - before);
    return 0;
}

/* write-hex HEX: the bytes the hex string spells, nothing else */
static int h_write_hex(int argc, char **argv)
{
    const char *h = argc > 1 ? argv[1] : "";
    size_t n = strlen(h) / 2;
    unsigned char *b = malloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(h + 2 * i, "%2x", &v);
        b[i] = (unsigned char)v;
    }
    write_all(1, b, n);
    free(b);
    return 0;
}

/* The bytes a chunk spec spells: hex pieces joined by '+', each optionally repeated: "780a+61*3"
 * is "x\naaa". Returns a malloc'd buffer and its length in *len. */
static unsigned char *spec_bytes(const char *spec, size_t *len)
{
    size_t cap = 64, n = 0;
    unsigned char *b = malloc(cap);
    for (const char *p = spec; b != NULL && *p;) {
        size_t hex = strcspn(p, "*+");
        long times = p[hex] == '*' ? strtol(p + hex + 1, NULL, 10) : 1;
        for (long t = 0; t < times; t++)
            for (size_t i = 0; i + 1 < hex; i += 2) {
                if (n == cap)
                    b = realloc(b, cap *= 2);
                unsigned v;
                sscanf(p + i, "%2x", &v);
                b[n++] = (unsigned char)v;
            }
        p += strcspn(p, "+");
        p += *p == '+';
    }
    *len = n;
    return b;
}

/* write-chunks SPEC...: each chunk (see spec_bytes) in one write, and the next only once the
 * reader has taken everything out of the pipe (FIONREAD on our end is 0), so each chunk arrives
 * in a read of its own whatever the machine's load */
static int h_write_chunks(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        size_t len;
        unsigned char *b = spec_bytes(argv[i], &len);
        if (b == NULL)
            return 2;
        write_all(1, b, len);
        free(b);
        int queued = 1;
        for (int waited = 0; queued > 0 && waited < 20000; waited++) {
            if (ioctl(1, FIONREAD, &queued) != 0)
                queued = 0;
            else if (queued > 0)
                sleep_ms(1);
        }
    }
    return 0;
}

/* fake-run ARGS...: stands in for `pkbench run` under `pkbench check` (PKBENCH_CHECK_RUNNER), so
 * check's logic runs on prepared files. Call k (1-based, counted in $PK_FAKE_RUN_DIR/calls.log,
 * where each call appends its arguments as one line) copies $PK_FAKE_RUN_DIR/run-k.json to the
 * path after --out and exits 0; when $PK_FAKE_RUN_DIR/exit-k exists it writes nothing and exits
 * with the status that file holds. */
static int h_fake_run(int argc, char **argv)
{
    const char *dir = getenv("PK_FAKE_RUN_DIR"), *out = NULL;
    if (dir == NULL)
        return 90;
    char path[4096];
    snprintf(path, sizeof path, "%s/calls.log", dir);
    int calls = 1;
    FILE *f = fopen(path, "re");
    for (int c; f != NULL && (c = fgetc(f)) != EOF;)
        calls += c == '\n';
    if (f != NULL)
        fclose(f);
    f = fopen(path, "ae");
    for (int i = 1; f != NULL && i < argc; i++) {
        fprintf(f, "%s%s", i > 1 ? " " : "", argv[i]);
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[i + 1];
    }
    if (f == NULL || fputc('\n', f) == EOF || fclose(f) != 0 || out == NULL)
        return 91;
    snprintf(path, sizeof path, "%s/exit-%d", dir, calls);
    if ((f = fopen(path, "re")) != NULL) {
        int code = 92;
        if (fscanf(f, "%d", &code) != 1)
            code = 92;
        fclose(f);
        return code;
    }
    snprintf(path, sizeof path, "%s/run-%d.json", dir, calls);
    FILE *in = fopen(path, "re"), *to = fopen(out, "we");
    if (in == NULL || to == NULL) {
        say(2, "fake-run: cannot copy %s to %s\n", path, out);
        return 93;
    }
    char buf[8192];
    for (size_t n; (n = fread(buf, 1, sizeof buf, in)) > 0;)
        fwrite(buf, 1, n, to);
    fclose(in);
    return fclose(to) == 0 ? 0 : 94;
}

struct helper {
    const char *name;
    int (*fn)(int argc, char **argv);
};

static const struct helper helpers[] = {
    {"exit", h_exit},
    {"signal", h_signal},
    {"emit-lines", h_emit_lines},
    {"echo-stdin", h_echo_stdin},
    {"stdin-status", h_stdin_status},
    {"sleep", h_sleep},
    {"interleave", h_interleave},
    {"list-fds", h_list_fds},
    {"print-exe", h_print_exe},
    {"print-env", h_print_env},
    {"cwd", h_cwd},
    {"invalid-utf8", h_invalid_utf8},
    {"ignore-term", h_ignore_term},
    {"grandchildren", h_grandchildren},
    {"args", h_args},
    {"flood", h_flood},
    {"lines-and-stderr", h_lines_and_stderr},
    {"daemonize", h_daemonize},
    {"spin", h_spin},
    {"spin-cpu", h_spin_cpu},
    {"drip", h_drip},
    {"say-then-sleep", h_say_then_sleep},
    {"term-exits", h_term_exits},
    {"pdeathsig-owner", h_pdeathsig_owner},
    {"containment-probe", h_containment_probe},
    {"foreground-at-start", h_foreground_at_start},
    {"take-terminal", h_take_terminal},
    {"write-hex", h_write_hex},
    {"own-cgroup", h_own_cgroup},
    {"spawn-trace", h_spawn_trace},
    {"held-leaf", h_held_leaf},
    {"alloc-count", h_alloc_count},
    {"fake-run", h_fake_run},
    {"write-chunks", h_write_chunks},
    {"fd-table", h_fd_table},
};

int pk_test_pkrun_helper(int argc, char **argv);     /* pkrun's, in test_pkrun_helpers.c */
int pk_test_instances_helper(int argc, char **argv); /* test_instances.c's */
int pk_test_worker_helper(int argc, char **argv);    /* the fake worker, in test_worker.c */

int pk_test_run_helper(int argc, char **argv)
{
    for (size_t i = 0; i < sizeof helpers / sizeof helpers[0]; i++)
        if (strcmp(argv[0], helpers[i].name) == 0)
            return helpers[i].fn(argc, argv);
    int rc = pk_test_pkrun_helper(argc, argv);
    if (rc >= 0)
        return rc;
    rc = pk_test_instances_helper(argc, argv);
    if (rc >= 0)
        return rc;
    rc = pk_test_worker_helper(argc, argv);
    if (rc >= 0)
        return rc;
    fprintf(stderr, "pk_tests: no helper named '%s'\n", argv[0]);
    return 2;
}
