/*
 * pkrun and the command's bytes. By default the command inherits pkrun's descriptors (nothing in
 * between); when an option needs the output, pkrun relays it — spliced into a pipe when nothing is
 * captured, teed into a pipe when --json records it, copied into anything else (a socket here).
 * Every way, every byte arrives,
 * unchanged, in order, as soon as written: checked byte by byte against a position-determined
 * pattern (1 GiB without a newline, a 4.3 MB single line), with 2>&1 order, a prompt without a
 * newline, write errors, a non-blocking stdout with a slow reader, a reader that goes away, a
 * reader that stops reading while a limit passes, and standard descriptors closed at start.
 */
#define _GNU_SOURCE
#include "pkrun_test.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PK_PKRUN_PATH
#error "tests/CMakeLists.txt passes the pkrun binary's path"
#endif

/* argv: pkrun, the options in opts (NULL-terminated), then the command. */
static const char **pkrun_argv(const char *const *opts, const char *const *command)
{
    static const char *argv[64];
    int n = 0;
    argv[n++] = PK_PKRUN_PATH;
    for (; opts != NULL && *opts != NULL; opts++)
        argv[n++] = *opts;
    argv[n++] = "--";
    for (; *command != NULL; command++)
        argv[n++] = *command;
    argv[n] = NULL;
    return argv;
}

#define OPTS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NO_OPTS   ((const char *const[]){NULL})

/* The four ways pkrun forwards: inherited; relayed into a pipe by splice (nothing captured) or by
 * tee (captured for --json); relayed into a socket by copying. */
struct mode {
    const char *name;
    const char *opts[4];
    bool socket;
};
static const struct mode modes[] = {
    {"inherited", {NULL}, false},
    {"spliced", {"--idle-timeout=60"}, false},
    {"teed", {"--json=/dev/null", "--keep=tail"}, false},
    {"copied", {"--json=/dev/null", "--keep=tail"}, true},
};
enum { INHERITED, SPLICED, TEED, COPIED, NMODES };

/* Starts pkrun in mode m (plus `extra` options) on cmd, its stdout a pipe or a socket whose other
 * end *reader receives; its stderr the same (merged) or captured. */
static pk_process *start_in(const struct mode *m,
                            const char *const *extra,
                            const char *const *cmd,
                            bool merged,
                            bool nonblock,
                            int *reader)
{
    int fds[2];
    if (m->socket)
        ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    else
        ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
    if (nonblock) {
        ASSERT_EQ(fcntl(fds[1], F_SETFL, O_NONBLOCK), 0);
        /* A small pipe makes the writer meet EAGAIN often. It is shrunk before the spawn:
         * once pkrun has written more than 4 KiB, F_SETPIPE_SZ fails with EBUSY. */
        if (!m->socket)
            ASSERT_GT(fcntl(fds[1], F_SETPIPE_SZ, 4096), 0);
    }
    const char *opts[12];
    int n = 0;
    for (int i = 0; m->opts[i] != NULL; i++)
        opts[n++] = m->opts[i];
    for (; extra != NULL && *extra != NULL; extra++)
        opts[n++] = *extra;
    opts[n] = NULL;
    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = pkrun_argv(opts, cmd),
                                     .out = {.kind = PK_STDIO_FD, .fd = fds[1]},
                                     .err.kind = merged ? PK_STDIO_MERGE : PK_STDIO_CAPTURE},
                       &p, NULL));
    close(fds[1]);
    *reader = fds[0];
    return p;
}

/* Runs pkrun on the pattern helper and checks its stdout byte by byte. */
static void check_pattern_through(const struct mode *m, uint64_t bytes, uint64_t line_len)
{
    char nbytes[32], nline[32];
    snprintf(nbytes, sizeof nbytes, "%llu", (unsigned long long)bytes);
    snprintf(nline, sizeof nline, "%llu", (unsigned long long)line_len);
    const char *const cmd[] = {pk_test_self(), "--helper", "pattern", nbytes, nline, NULL};
    int fd;
    pk_process *p = start_in(m, NULL, cmd, false, false, &fd);
    struct pk_pattern_check c = {.line_len = line_len, .first_bad = -1};
    uint64_t got = pk_pattern_read_all(fd, &c, 30000);
    close(fd);
    pk_result r;
    ASSERT_OK(pk_process_wait(p, &r));
    pk_process_free(p);
    if (got != bytes || c.first_bad >= 0)
        pk_test_fail(__FILE__, __LINE__, "%s: %llu of %llu bytes, first difference at %lld",
                     m->name, (unsigned long long)got, (unsigned long long)bytes,
                     (long long)c.first_bad);
    ASSERT_EXITED(r, 0);
    pk_result_release(&r);
}

TEST_IMPL(pkrun_default_passes_descriptors_through)
{
    /* The command's fd 1 and 2 are pkrun's own pipes: nothing stands in between. With
     * --idle-timeout they are pkrun's relay pipes instead. */
    const char *const cmd[] = {"sh", "-c", "readlink /proc/self/fd/1; readlink /proc/self/fd/2 >&2",
                               NULL};
    const char *const *const opts[] = {NO_OPTS, OPTS("--json=/dev/null"),
                                       OPTS("--idle-timeout=10")};
    for (int i = 0; i < 3; i++) {
        pk_process *p;
        ASSERT_OK(pk_spawn(&(pk_command){.argv = pkrun_argv(opts[i], cmd)}, &p, NULL));
        char want_out[64], want_err[64];
        struct stat st;
        ASSERT_EQ(fstat(pk_process_fd(p, 1), &st), 0);
        snprintf(want_out, sizeof want_out, "pipe:[%llu]\n", (unsigned long long)st.st_ino);
        ASSERT_EQ(fstat(pk_process_fd(p, 2), &st), 0);
        snprintf(want_err, sizeof want_err, "pipe:[%llu]\n", (unsigned long long)st.st_ino);
        pk_result r;
        ASSERT_OK(pk_process_wait(p, &r));
        ASSERT_EXITED(r, 0);
        bool direct = strcmp(r.out.data, want_out) == 0 && strcmp(r.err.data, want_err) == 0;
        if (direct != (i < 2))
            pk_test_fail(__FILE__, __LINE__,
                         "case %d: the command's stdout %s stderr %s, pkrun's %s %s", i, r.out.data,
                         r.err.data, want_out, want_err);
        pk_result_release(&r);
        pk_process_free(p);
    }
}

TEST_IMPL(pkrun_relays_1gib_without_newline_exactly)
{
    for (int m = SPLICED; m < NMODES; m++)
        check_pattern_through(&modes[m], 1ULL << 30, 0);
    check_pattern_through(&modes[INHERITED], 64ULL << 20, 0);
}

/* Into a regular file: spliced (nothing captured), copied (captured), and into a file opened
 * for appending (splice refuses O_APPEND: copied), at the file's shared offset, so what the shell
 * writes to the same file afterwards lands after it. */
TEST_IMPL(pkrun_relays_into_files_exactly)
{
    const uint64_t bytes = 64ULL << 20;
    char path[600], nbytes[32];
    snprintf(path, sizeof path, "%s/out.bin", pk_test_tmpdir());
    snprintf(nbytes, sizeof nbytes, "%llu", (unsigned long long)bytes);
    static const char *const opts[][3] = {{"--idle-timeout=60", NULL},
                                          {"--json=/dev/null", "--keep=tail", NULL}};
    for (int append = 0; append < 2; append++) {
        for (int i = 0; i < 2; i++) {
            /* sh writes the pattern through pkrun, then "end" itself, to the same description. */
            const char *argv[16] = {"sh", "-c", "\"$@\" && echo end", "sh", PK_PKRUN_PATH};
            int n = 5;
            for (int k = 0; opts[i][k] != NULL; k++)
                argv[n++] = opts[i][k];
            const char *const tail_args[] = {"--",   pk_test_self(), "--helper", "pattern",
                                             nbytes, "100",          NULL};
            for (int k = 0; tail_args[k] != NULL; k++)
                argv[n++] = tail_args[k];
            argv[n] = NULL;
            FILE *f = fopen(path, "w");
            ASSERT(f != NULL);
            fputs(append ? "before\n" : "", f);
            ASSERT_EQ(fclose(f), 0);
            pk_result r;
            ASSERT_OK(pk_run(
                &(pk_command){.argv = argv,
                              .out = {.kind = PK_STDIO_FILE, .path = path, .append = append != 0}},
                &r));
            ASSERT_EXITED(r, 0);
            pk_result_release(&r);
            FILE *in = fopen(path, "re");
            ASSERT(in != NULL);
            static char buf[1 << 16];
            size_t skip = append ? 7 : 0, got = fread(buf, 1, skip, in);
            ASSERT_EQ(got, skip);
            struct pk_pattern_check c = {.line_len = 100, .first_bad = -1};
            uint64_t total = 0;
            size_t k;
            while (total < bytes &&
                   (k = fread(buf, 1,
                              bytes - total < sizeof buf ? (size_t)(bytes - total) : sizeof buf,
                              in)) > 0) {
                pk_pattern_check(&c, buf, k);
                total += k;
            }
            char tail[16] = "";
            size_t t = fread(tail, 1, sizeof tail - 1, in);
            fclose(in);
            if (total != bytes || c.first_bad >= 0 || t != 4 || strcmp(tail, "end\n") != 0)
                pk_test_fail(__FILE__, __LINE__,
                             "%s%s: %llu bytes, first difference at %lld, then '%s'", opts[i][0],
                             append ? " (O_APPEND)" : "", (unsigned long long)total,
                             (long long)c.first_bad, tail);
        }
    }
    unlink(path);
}

/* A 4.3 MB single line (a minified JSON file, say) arrives whole; --json records it only when it
 * fits its cap, and says so. */
TEST_IMPL(pkrun_relays_4mb_line_exactly)
{
    const uint64_t bytes = 4300000;
    for (int m = 0; m < NMODES; m++)
        check_pattern_through(&modes[m], bytes, bytes);

    char path[512], opt[600];
    snprintf(path, sizeof path, "%s/out.json", pk_test_tmpdir());
    snprintf(opt, sizeof opt, "--json=%s", path);
    const char *const cmd[] = {pk_test_self(), "--helper", "pattern", "4300000", "4300000", NULL};
    const char *const *const caps[] = {OPTS(opt, "--keep=tail"), OPTS(opt, "--max-bytes=8M")};
    for (int i = 0; i < 2; i++) {
        pk_result r;
        ASSERT_OK(pk_run(&(pk_command){.argv = pkrun_argv(caps[i], cmd)}, &r));
        ASSERT_EXITED(r, 0);
        ASSERT_EQ(r.out.total_bytes, bytes);
        pk_result_release(&r);
        json_error_t err;
        json_t *j = json_load_file(path, 0, &err);
        ASSERT(j != NULL);
        json_t *o = json_object_get(json_object_get(j, "streams"), "stdout");
        ASSERT_EQ(json_integer_value(json_object_get(o, "bytes")), bytes);
        ASSERT_EQ(json_integer_value(json_object_get(o, "delivered_bytes")), bytes);
        ASSERT_EQ(json_integer_value(json_object_get(o, "lines")), 1);
        ASSERT_EQ(json_integer_value(json_object_get(o, "kept_bytes")), i == 0 ? 0 : bytes);
        ASSERT_EQ(json_is_true(json_object_get(o, "truncated")), i == 0);
        json_decref(j);
    }
}

/* Reads fd to end-of-file into buf (NUL-terminated); fails the test when it does not fit. */
static size_t read_to_eof(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    for (;;) {
        ASSERT_LT(len, cap - 1);
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    return len;
}

/* 2>&1: pkrun's stdout and stderr are one file, so the command gets one pipe for both and the
 * order is its own, every time (with two pipes it varied from run to run). */
TEST_IMPL(pkrun_merged_streams_keep_order)
{
    char want[32768] = "";
    for (int i = 0; i < 300; i++) {
        size_t used = strlen(want);
        snprintf(want + used, sizeof want - used, "out %d\nerr %d\n", i, i);
    }
    const char *const cmd[] = {pk_test_self(), "--helper", "interleave", "300", NULL};
    static char got[65536];
    /* Fewer runs under ASan, the critical path of ./x test (a run there is several times slower);
     * the Debug suite takes all twenty. */
    const int runs = PK_TEST_UNDER_ASAN ? 6 : 20;
    for (int run = 0; run < runs; run++) {
        for (int m = 0; m < NMODES; m++) {
            int fd;
            pk_process *p = start_in(&modes[m], NULL, cmd, true, false, &fd);
            read_to_eof(fd, got, sizeof got);
            close(fd);
            pk_result r;
            ASSERT_OK(pk_process_wait(p, &r));
            pk_process_free(p);
            ASSERT_EXITED(r, 0);
            pk_result_release(&r);
            if (strcmp(got, want) != 0)
                pk_test_fail(__FILE__, __LINE__, "%s, run %d: order changed", modes[m].name, run);
        }
    }
}

/* A prompt without a newline is forwarded as written, not at the next newline. */
TEST_IMPL(pkrun_prompt_without_newline_arrives_at_once)
{
    const char *const cmd[] = {"sh", "-c", "printf 'name? '; sleep 2; echo done", NULL};
    for (int m = SPLICED; m < NMODES; m++) {
        int fd;
        pk_process *p = start_in(&modes[m], NULL, cmd, false, false, &fd);
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, 1500) != 1)
            pk_test_fail(__FILE__, __LINE__, "%s: nothing after 1.5 s", modes[m].name);
        char buf[64] = "";
        ASSERT_EQ(read(fd, buf, sizeof buf - 1), 6);
        ASSERT_STR_EQ(buf, "name? ");
        read_to_eof(fd, buf, sizeof buf);
        ASSERT_STR_EQ(buf, "done\n");
        close(fd);
        pk_result r;
        ASSERT_OK(pk_process_wait(p, &r));
        ASSERT_EXITED(r, 0);
        pk_result_release(&r);
        pk_process_free(p);
    }
}

static int shell_status(const pk_result *r)
{
    return r->outcome.kind == PK_OUTCOME_SIGNALED ? 128 + r->outcome.signo : r->outcome.code;
}

/* A write error is an error. Relayed: reported, exit 125, recorded in the JSON. Inherited: the
 * command meets it itself, and pkrun's status is the command's, the same as timeout's. */
TEST_IMPL(pkrun_write_errors_reported)
{
    char path[512], opt[600];
    snprintf(path, sizeof path, "%s/out.json", pk_test_tmpdir());
    snprintf(opt, sizeof opt, "--json=%s", path);
    const char *const cmd[] = {"sh", "-c", "echo hi; echo more", NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = pkrun_argv(OPTS(opt, "--keep=tail"), cmd),
                                   .out = {.kind = PK_STDIO_FILE, .path = "/dev/full"}},
                     &r));
    ASSERT_EXITED(r, 125);
    ASSERT(strstr(r.err.data, "pkrun: writing the command's stdout: No space left on device") !=
           NULL);
    pk_result_release(&r);
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    ASSERT(j != NULL);
    json_t *o = json_object_get(json_object_get(j, "streams"), "stdout");
    ASSERT_STR_EQ(json_string_value(json_object_get(o, "write_error")), "ENOSPC");
    ASSERT_EQ(json_integer_value(json_object_get(o, "delivered_bytes")), 0);
    json_decref(j);

    const char *const pk[] = {PK_PKRUN_PATH, "10", "sh", "-c", "echo hi", NULL};
    const char *const co[] = {"timeout", "10", "sh", "-c", "echo hi", NULL};
    pk_result a, b;
    ASSERT_OK(
        pk_run(&(pk_command){.argv = pk, .out = {.kind = PK_STDIO_FILE, .path = "/dev/full"}}, &a));
    ASSERT_OK(
        pk_run(&(pk_command){.argv = co, .out = {.kind = PK_STDIO_FILE, .path = "/dev/full"}}, &b));
    ASSERT_NE(shell_status(&a), 0);
    ASSERT_EQ(shell_status(&a), shell_status(&b));
    pk_result_release(&a);
    pk_result_release(&b);
}

/* pkrun's stdout is non-blocking (a pipe, or a socket) with a reader slower than the command:
 * every byte still arrives (EAGAIN means wait, not drop). */
TEST_IMPL(pkrun_nonblocking_stdout_slow_reader_gets_everything)
{
    const char *const cmd[] = {pk_test_self(), "--helper", "pattern", "1288895", "100", NULL};
    for (int m = SPLICED; m < NMODES; m++) {
        int fd;
        pk_process *proc = start_in(&modes[m], NULL, cmd, false, true, &fd);
        struct pk_pattern_check c = {.line_len = 100, .first_bad = -1};
        static char buf[4096];
        uint64_t got = 0;
        for (;;) {
            ssize_t n = read(fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            got += (uint64_t)n;
            pk_pattern_check(&c, buf, (size_t)n);
            if (got % (64 * 1024) < 4096)
                usleep(2000); /* the slow reader */
        }
        close(fd);
        pk_result r;
        ASSERT_OK(pk_process_wait(proc, &r));
        pk_process_free(proc);
        ASSERT_EXITED(r, 0);
        pk_result_release(&r);
        if (got != 1288895 || c.first_bad >= 0)
            pk_test_fail(__FILE__, __LINE__, "%s: %llu of 1288895 bytes, first difference at %lld",
                         modes[m].name, (unsigned long long)got, (long long)c.first_bad);
    }
}

/* `pkrun ... | head -1`: the reader goes away; the command meets SIGPIPE as it would without
 * pkrun, pkrun ends by SIGPIPE too (141), and the command's background child is gone. */
TEST_IMPL(pkrun_reader_gone_leaves_no_process)
{
    const char *const cmd[] = {"sh", "-c", "sleep 300 & echo $!; exec yes", NULL};
    for (int m = 0; m < NMODES; m++) {
        int fd;
        pk_process *proc = start_in(&modes[m], NULL, cmd, false, false, &fd);
        char buf[256] = "";
        size_t len = 0;
        while (strchr(buf, '\n') == NULL) {
            ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
            ASSERT_GT(n, 0);
            len += (size_t)n;
            buf[len] = '\0';
        }
        int bg = atoi(buf);
        ASSERT_GT(bg, 0);
        close(fd); /* head -1 is done */
        pk_result r;
        ASSERT_OK(pk_process_wait(proc, &r));
        pk_process_free(proc);
        if (r.outcome.kind != PK_OUTCOME_SIGNALED || r.outcome.signo != SIGPIPE)
            pk_test_fail(__FILE__, __LINE__, "%s: pkrun ended %s %d/%d: %s", modes[m].name,
                         pk_outcome_kind_name(r.outcome.kind), r.outcome.code, r.outcome.signo,
                         r.err.data ? r.err.data : "");
        pk_result_release(&r);
        bool dead = pk_test_wait_dead(bg, 3000);
        if (!dead)
            kill(bg, SIGKILL);
        ASSERT(dead);
    }
}

/* The limit fires on time while pkrun's reader is not reading: the command dies at 1 s, and pkrun
 * ends then too, in every mode, as timeout would: relayed (spliced or copied), what the reader's
 * pipe had accepted is the reader's, and what it had not taken is dropped, pkrun saying how many
 * bytes. A signal to pkrun ends it at once the same way. */
TEST_IMPL(pkrun_limit_fires_with_blocked_reader)
{
    const char *const cmd[] = {"sh", "-c", "echo $$; exec yes", NULL};
    /* Every mode with the limit, then the relayed ones with SIGTERM to pkrun instead. */
    for (int k = 0; k < 2 * NMODES - 1; k++) {
        const struct mode *m = &modes[k < NMODES ? k : k - NMODES + 1];
        bool sigterm = k >= NMODES;
        int fd;
        int64_t t0 = pk_test_now_ms();
        pk_process *proc = start_in(m, sigterm ? NULL : (const char *const[]){"--timeout=1", NULL},
                                    cmd, false, false, &fd);
        char buf[64] = "";
        ASSERT_GT(read(fd, buf, sizeof buf - 1), 0);
        int yes = atoi(buf);
        ASSERT_GT(yes, 0);
        if (sigterm) {
            usleep(500 * 1000);
            ASSERT_OK(pk_process_signal(proc, SIGTERM));
        }
        /* The reader reads nothing more until pkrun has ended. */
        bool dead = pk_test_wait_dead(yes, 5000);
        int64_t died = pk_test_now_ms() - t0;
        if (!dead || died >= 2500 || (!sigterm && died < 900))
            pk_test_fail(__FILE__, __LINE__, "%s%s: the command %s after %lld ms", m->name,
                         sigterm ? " + SIGTERM" : "", dead ? "died" : "still ran", (long long)died);
        pk_result r;
        ASSERT_OK(pk_process_wait(proc, &r));
        ASSERT_LT(pk_test_now_ms() - t0, 3500);
        ASSERT_EQ(shell_status(&r), sigterm ? 128 + SIGTERM : 124);
        if (m != &modes[INHERITED] &&
            strstr(r.err.data ? r.err.data : "",
                   "were not delivered: the reader did not take them") == NULL)
            pk_test_fail(__FILE__, __LINE__, "%s%s: pkrun did not say what it dropped: %s", m->name,
                         sigterm ? " + SIGTERM" : "", r.err.data ? r.err.data : "");
        pk_result_release(&r);
        pk_process_free(proc);
        close(fd);
    }
}

/* Started with stdout closed: the command starts with it closed too (in both modes), and pkrun
 * neither forwards into a descriptor of its own nor spins. */
TEST_IMPL(pkrun_closed_stdout_at_start)
{
    for (int m = 0; m < 2; m++) {
        const char *const argv[] = {
            "sh",
            "-c",
            "exec \"$@\" >&-",
            "sh",
            PK_PKRUN_PATH,
            m == 0 ? "--timeout=10" : "--idle-timeout=10",
            "--",
            "sh",
            "-c",
            "if [ -e /proc/self/fd/1 ]; then echo open >&2; else echo closed >&2; fi; sleep 1",
            NULL};
        pk_result r;
        ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
        ASSERT_EXITED(r, 0);
        ASSERT_STR_EQ(r.err.data, "closed\n");
        /* pkrun's CPU over the second the command sleeps (it spun at 100% before). */
        ASSERT_LT(r.outcome.user_us + r.outcome.sys_us, 300000);
        pk_result_release(&r);
    }
}
