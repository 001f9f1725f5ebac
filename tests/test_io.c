/*
 * Standard streams: closed stdin by default, exact bytes in, full-duplex capture that cannot
 * deadlock, merged stderr in order, files, caller descriptors, and a child that sees nothing but
 * 0, 1 and 2.
 */
#define _GNU_SOURCE
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rbe");
    if (f == NULL)
        return NULL;
    char *buf = malloc(1 << 20);
    *len = fread(buf, 1, (1 << 20) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

TEST_IMPL(stdin_closed_by_default)
{
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("stdin-status")}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "eof\n");
    pk_result_release(&r);
    /* `cat` with the default stdin exits at once with nothing to say. */
    ASSERT_OK(pk_run(&(pk_command){.program = "cat"}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT_EQ(r.out.len, 0);
    ASSERT(r.out.data == NULL);
    pk_result_release(&r);
}

TEST_IMPL(stdin_bytes_exact)
{
    /* Binary bytes, NULs included, both below and above the one-write fast path. */
    size_t sizes[] = {1, 32, 4096, 4097, 300000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        unsigned char *in = malloc(n);
        for (size_t i = 0; i < n; i++)
            in[i] = (unsigned char)(i * 7 + 3);
        pk_result r;
        ASSERT_OK(pk_run(
            &(pk_command){.program = "cat", .in = {.kind = PK_STDIO_BYTES, .data = in, .len = n}},
            &r));
        ASSERT_EXITED(r, 0);
        ASSERT_EQ(r.out.len, n);
        ASSERT_EQ(r.out.total_bytes, n);
        ASSERT(memcmp(r.out.data, in, n) == 0);
        pk_result_release(&r);
        free(in);
    }
}

TEST_IMPL(duplex_64mib_through_cat)
{
    size_t n = 64u << 20;
    unsigned char *in = malloc(n);
    for (size_t i = 0; i < n; i++)
        in[i] = (unsigned char)(i ^ (i >> 9));
    pk_result r;
    ASSERT_OK(pk_run(
        &(pk_command){.program = "cat", .in = {.kind = PK_STDIO_BYTES, .data = in, .len = n}}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT_EQ(r.out.len, n);
    ASSERT(memcmp(r.out.data, in, n) == 0);
    pk_result_release(&r);
    free(in);
}

TEST_IMPL(stdin_reader_gone_early)
{
    /* The child exits without reading 1 MiB of stdin: the write hits EPIPE, the library takes
     * the SIGPIPE back, and this process (default SIGPIPE disposition) survives. */
    size_t n = 1u << 20;
    char *in = calloc(1, n);
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("exit", "3"),
                                   .in = {.kind = PK_STDIO_BYTES, .data = in, .len = n}},
                     &r));
    ASSERT_EXITED(r, 3);
    pk_result_release(&r);
    free(in);
}

static volatile sig_atomic_t sigpipes;

static void count_sigpipe(int signo)
{
    (void)signo;
    sigpipes++;
}

static void loop_done(void *user, int rc, pk_result *res)
{
    pk_outcome *o = user;
    *o = rc == 0 ? res->outcome : (pk_outcome){.kind = PK_OUTCOME_NONE};
    pk_result_release(res);
}

TEST_IMPL(stdin_feed_never_raises_sigpipe)
{
    /* Children that exit without reading their stdin, fed by every driver: pk_run with and
     * without output pipes, the pull API, the loop, and a payload small enough for the one
     * blocking write. No SIGPIPE may reach this process: the
     * library keeps a reader on the pipe while it writes, so the kernel never raises one (and a
     * library that raised one and took it back would still show here, in the handler). */
    struct sigaction sa = {.sa_handler = count_sigpipe}, old;
    sigemptyset(&sa.sa_mask);
    ASSERT_EQ(sigaction(SIGPIPE, &sa, &old), 0);
    sigpipes = 0;
    size_t n = 1u << 20;
    char *in = calloc(1, n);
    for (int rep = 0; rep < 5; rep++) {
        pk_command cmd = {.argv = HELPER("exit", "3"),
                          .in = {.kind = PK_STDIO_BYTES, .data = in, .len = n}};
        pk_result r;
        ASSERT_OK(pk_run(&cmd, &r));
        ASSERT_EXITED(r, 3);
        pk_result_release(&r);

        cmd.out.kind = PK_STDIO_NULL;
        cmd.err.kind = PK_STDIO_NULL;
        ASSERT_OK(pk_run(&cmd, &r));
        ASSERT_EXITED(r, 3);
        pk_result_release(&r);

        cmd.in.len = 16;
        ASSERT_OK(pk_run(&cmd, &r));
        ASSERT_EXITED(r, 3);
        pk_result_release(&r);

        cmd = (pk_command){.argv = HELPER("exit", "3"),
                           .in = {.kind = PK_STDIO_BYTES, .data = in, .len = n}};
        pk_process *proc;
        ASSERT_OK(pk_spawn(&cmd, &proc, NULL));
        pk_line line;
        ASSERT_EQ(pk_process_read_line(proc, &line), PK_EOF);
        ASSERT_OK(pk_process_wait(proc, &r));
        ASSERT_EXITED(r, 3);
        pk_result_release(&r);
        pk_process_free(proc);

        pk_loop *loop;
        ASSERT_OK(pk_loop_new(&loop));
        pk_outcome o = {0};
        ASSERT_OK(pk_loop_start(loop, &cmd, loop_done, &o, NULL));
        ASSERT_OK(pk_loop_run(loop));
        ASSERT_EQ(o.kind, PK_OUTCOME_EXITED);
        ASSERT_EQ(o.code, 3);
        pk_loop_free(loop);
    }
    sigset_t pending;
    ASSERT_EQ(sigpending(&pending), 0);
    ASSERT(!sigismember(&pending, SIGPIPE));
    ASSERT_EQ(sigpipes, 0);
    ASSERT_EQ(sigaction(SIGPIPE, &old, NULL), 0);
    free(in);
}

/* The quickest child there is: the tiny static helper (phases/, x86_64), else `true`. Both exit at
 * once without reading stdin. */
#ifdef PK_TINY_PATH
static const char *const quick_child = PK_TINY_PATH;
#else
static const char *const quick_child = "true";
#endif

/* Wall time of one pk_run of the quick child, stdin fed `n` bytes (0: /dev/null), in µs. */
static int64_t unread_run_us(const char *in, size_t n)
{
    pk_command cmd = {.program = quick_child};
    if (n > 0)
        cmd.in = (pk_stdio){.kind = PK_STDIO_BYTES, .data = in, .len = n};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pk_result r;
    if (pk_run(&cmd, &r) != 0 || r.outcome.kind != PK_OUTCOME_EXITED)
        pk_test_fail(__FILE__, __LINE__, "a run of %s did not exit cleanly", quick_child);
    pk_result_release(&r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

TEST_IMPL(stdin_unread_does_not_delay_the_end)
{
    /* A child that exits without reading 1 MiB of stdin leaves the pipe full (the library holds
     * a reader on it), so the end of its output pipes cannot end the run: its exit must, at once.
     * 21 runs fed against 21 without stdin, alternating, medians compared: a run that waited for
     * the lazy pidfd (10 ms after the start) would take about 10 ms instead of under 1; the bound
     * allows 5 ms. Where the child itself takes 10 ms the test loses its power, never its
     * verdict, and a stall of the machine moves a median little. */
    enum { RUNS = 21 };
    size_t n = 1u << 20;
    char *in = calloc(1, n);
    int64_t fed[RUNS], control[RUNS];
    for (int i = 0; i < RUNS; i++) {
        fed[i] = unread_run_us(in, n);
        control[i] = unread_run_us(NULL, 0);
    }
    free(in);
    qsort(fed, RUNS, sizeof fed[0], cmp_i64);
    qsort(control, RUNS, sizeof control[0], cmp_i64);
    if (fed[RUNS / 2] > control[RUNS / 2] + 5000)
        pk_test_fail(__FILE__, __LINE__,
                     "a run with unread stdin took %lld µs (median), without %lld µs",
                     (long long)fed[RUNS / 2], (long long)control[RUNS / 2]);
}

TEST_IMPL(stderr_merged_in_order)
{
    pk_result r;
    ASSERT_OK(
        pk_run(&(pk_command){.argv = HELPER("interleave", "200"), .err.kind = PK_STDIO_MERGE}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT(r.err.data == NULL);
    char *expect = malloc(8192);
    size_t len = 0;
    for (int i = 0; i < 200; i++)
        len += (size_t)sprintf(expect + len, "out %d\nerr %d\n", i, i);
    ASSERT_STR_EQ(r.out.data, expect);
    free(expect);
    pk_result_release(&r);
}

TEST_IMPL(stdout_and_stderr_separate)
{
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("interleave", "3")}, &r));
    ASSERT_STR_EQ(r.out.data, "out 0\nout 1\nout 2\n");
    ASSERT_STR_EQ(r.err.data, "err 0\nerr 1\nerr 2\n");
    pk_result_release(&r);
    ASSERT_OK(
        pk_run(&(pk_command){.argv = HELPER("interleave", "3"), .out.kind = PK_STDIO_NULL}, &r));
    ASSERT(r.out.data == NULL);
    ASSERT_STR_EQ(r.err.data, "err 0\nerr 1\nerr 2\n");
    pk_result_release(&r);
}

TEST_IMPL(files_in_out_append)
{
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/in.txt", pk_test_tmpdir());
    snprintf(out, sizeof out, "%s/out.txt", pk_test_tmpdir());
    FILE *f = fopen(in, "we");
    fputs("from a file\n", f);
    fclose(f);
    pk_result r;
    for (int i = 0; i < 2; i++) {
        ASSERT_OK(pk_run(&(pk_command){.program = "cat",
                                       .in = {.kind = PK_STDIO_FILE, .path = in},
                                       .out = {.kind = PK_STDIO_FILE, .path = out, .append = i}},
                         &r));
        ASSERT_EXITED(r, 0);
        pk_result_release(&r);
    }
    size_t len;
    char *got = read_file(out, &len);
    ASSERT_STR_EQ(got, "from a file\nfrom a file\n");
    free(got);
    /* Without append the file is truncated. */
    ASSERT_OK(pk_run(&(pk_command){.program = "cat",
                                   .in = {.kind = PK_STDIO_FILE, .path = in},
                                   .out = {.kind = PK_STDIO_FILE, .path = out}},
                     &r));
    pk_result_release(&r);
    got = read_file(out, &len);
    ASSERT_STR_EQ(got, "from a file\n");
    free(got);
    /* A missing input file fails at stage stdio with ENOENT. */
    ASSERT_EQ(pk_run(&(pk_command){.program = "cat",
                                   .in = {.kind = PK_STDIO_FILE, .path = "/nonexistent/in"}},
                     &r),
              -ENOENT);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_STDIO);
    pk_result_release(&r);
}

TEST_IMPL(caller_fd_and_inherit)
{
    int p[2];
    ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
    pk_result r;
    ASSERT_OK(pk_run(
        &(pk_command){.argv = HELPER("args", "via-fd"), .out = {.kind = PK_STDIO_FD, .fd = p[1]}},
        &r));
    ASSERT_EXITED(r, 0);
    pk_result_release(&r);
    close(p[1]);
    char buf[64] = {0};
    ASSERT_EQ(read(p[0], buf, sizeof buf - 1), 7);
    ASSERT_STR_EQ(buf, "via-fd\n");
    close(p[0]);
    /* Inherit: the child writes to our own stdout (the runner's pipe); nothing is captured. */
    ASSERT_OK(pk_run(
        &(pk_command){.argv = HELPER("args", "inherited"), .out.kind = PK_STDIO_INHERIT}, &r));
    ASSERT(r.out.data == NULL);
    pk_result_release(&r);
}

TEST_IMPL(child_sees_only_fds_0_1_2)
{
    /* A descriptor this process leaks without O_CLOEXEC must not reach the child. */
    int leaked = open("/dev/null", O_RDONLY);
    ASSERT_GE(leaked, 3);
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("list-fds")}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "0\n1\n2\n");
    pk_result_release(&r);
    close(leaked);
}

TEST_IMPL(child_sharing_our_table_sees_only_0_1_2)
{
    /* Streams inherited or opened by path: the child is cloned sharing this process's descriptor
     * table and unshares it keeping 0..2. It must see nothing else, and our table must come out
     * untouched (the leaked descriptor still ours, the standard ones where they were). */
    int leaked = open("/dev/null", O_RDONLY);
    ASSERT_GE(leaked, 3);
    char listing[512];
    snprintf(listing, sizeof listing, "%s/fds", pk_test_tmpdir());
    struct stat before[3], after[3], leaked_st, leaked_after;
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(fstat(i, &before[i]), 0);
    ASSERT_EQ(fstat(leaked, &leaked_st), 0);
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("list-fds"),
                                   .in.kind = PK_STDIO_INHERIT,
                                   .out = {.kind = PK_STDIO_FILE, .path = listing},
                                   .err.kind = PK_STDIO_INHERIT},
                     &r));
    ASSERT_EXITED(r, 0);
    pk_result_release(&r);
    char buf[64] = "";
    FILE *f = fopen(listing, "re");
    ASSERT(f != NULL);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    ASSERT_STR_EQ(buf, "0\n1\n2\n");
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(fstat(i, &after[i]), 0);
        ASSERT_EQ(after[i].st_ino, before[i].st_ino);
        ASSERT_EQ(after[i].st_dev, before[i].st_dev);
    }
    ASSERT_EQ(fstat(leaked, &leaked_after), 0);
    ASSERT_EQ(leaked_after.st_ino, leaked_st.st_ino);
    close(leaked);
    unlink(listing);
}

TEST_IMPL(inherit_fds_skips_only_the_close)
{
    /* The opt-out: a descriptor without O_CLOEXEC reaches the child, one with it still does not,
     * and the standard streams are planned as usual. */
    int leaked = open("/dev/null", O_RDONLY);
    int cloexec = open("/dev/null", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(leaked, 3);
    ASSERT_GE(cloexec, 3);
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("list-fds"), .inherit_fds = true}, &r));
    ASSERT_EXITED(r, 0);
    /* Whatever else this process inherited without O_CLOEXEC is listed too: look for ours. */
    char a[32], b[32];
    snprintf(a, sizeof a, "\n%d\n", leaked);
    snprintf(b, sizeof b, "\n%d\n", cloexec);
    ASSERT(strncmp(r.out.data, "0\n1\n2\n", 6) == 0);
    ASSERT(strstr(r.out.data, a) != NULL);
    ASSERT(strstr(r.out.data, b) == NULL);
    pk_result_release(&r);
    close(leaked);
    close(cloexec);
}

TEST_IMPL(standard_fds_closed_in_parent)
{
    /* With the parent's 0-2 closed, pipe ends land on 0-2; the child still gets them right. */
    int saved[3];
    for (int i = 0; i < 3; i++)
        saved[i] = fcntl(i, F_DUPFD_CLOEXEC, 10);
    close(0);
    close(1);
    close(2);
    pk_result r;
    int rc = pk_run(&(pk_command){.argv = HELPER("interleave", "2"),
                                  .in = {.kind = PK_STDIO_BYTES, .data = "x", .len = 1}},
                    &r);
    for (int i = 0; i < 3; i++) {
        dup2(saved[i], i);
        close(saved[i]);
    }
    ASSERT_OK(rc);
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "out 0\nout 1\n");
    ASSERT_STR_EQ(r.err.data, "err 0\nerr 1\n");
    pk_result_release(&r);
}

TEST_IMPL(process_fd_read_by_caller)
{
    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = HELPER("args", "hello")}, &p, NULL));
    int fd = pk_process_fd(p, 1);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(pk_process_fd(p, 0), -1);
    /* The documented contract: a handle's captured streams are non-blocking (pk_run's own pipes
     * are not, and never leave the engine). */
    ASSERT_NE(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    ASSERT_NE(fcntl(pk_process_fd(p, 2), F_GETFL) & O_NONBLOCK, 0);
    char buf[3];
    struct pollfd pfd = {fd, POLLIN, 0};
    ASSERT_EQ(poll(&pfd, 1, 5000), 1); /* the parent's ends are non-blocking */
    ASSERT_EQ(read(fd, buf, 3), 3);
    pk_result r;
    ASSERT_OK(pk_process_wait(p, &r));
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "lo\n"); /* wait drains what the caller left */
    pk_result_release(&r);
    ASSERT_EQ(pk_process_wait(p, &r), -ECHILD);
    pk_process_free(p);
}
