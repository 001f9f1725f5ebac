/*
 * Shared by pkrun's tests (pkrun_test.h): the position-determined byte pattern, its helper
 * programs, and a pty for the terminal tests. No test lives here.
 */
#define _GNU_SOURCE
#include "pkrun_test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

char pk_pattern_byte(uint64_t pos, uint64_t line_len)
{
    if (line_len > 0 && pos % line_len == line_len - 1)
        return '\n';
    /* Eight bytes from one multiply of the block number, each mapped into '0'..'o'. */
    uint64_t w = (pos / 8 + 1) * 0x9E3779B97F4A7C15ULL;
    return (char)(((w >> (8 * (pos % 8))) & 63) + 48);
}

/* A word at a time (the tests move gigabytes through it, in a Debug build too); the same bytes as
 * pk_pattern_byte on a little-endian machine, which the first check compares. */
void pk_pattern_fill(char *buf, size_t len, uint64_t pos, uint64_t line_len)
{
    size_t i = 0;
    for (; i < len && (pos + i) % 8 != 0; i++)
        buf[i] = pk_pattern_byte(pos + i, 0);
    for (; i + 8 <= len; i += 8) {
        uint64_t w = ((pos + i) / 8 + 1) * 0x9E3779B97F4A7C15ULL;
        w = (w & 0x3f3f3f3f3f3f3f3fULL) + 0x3030303030303030ULL;
        memcpy(buf + i, &w, 8);
    }
    for (; i < len; i++)
        buf[i] = pk_pattern_byte(pos + i, 0);
    if (line_len == 0)
        return;
    uint64_t first = pos / line_len * line_len + line_len - 1;
    for (uint64_t nl = first < pos ? first + line_len : first; nl < pos + len; nl += line_len)
        buf[nl - pos] = '\n';
}

void pk_pattern_check(struct pk_pattern_check *c, const char *data, size_t len)
{
    static char want[65536];
    if (c->seen == 0 && len > 0) {
        /* The word-at-a-time fill against the byte definition, once per check. */
        char one[64];
        size_t n = len < sizeof one ? len : sizeof one;
        pk_pattern_fill(one, n, 0, c->line_len);
        for (size_t i = 0; i < n; i++)
            ASSERT_EQ(one[i], pk_pattern_byte(i, c->line_len));
    }
    for (size_t done = 0; done < len && c->first_bad < 0;) {
        size_t n = len - done < sizeof want ? len - done : sizeof want;
        pk_pattern_fill(want, n, c->seen, c->line_len);
        if (memcmp(want, data + done, n) != 0) {
            for (size_t i = 0; i < n; i++)
                if (want[i] != data[done + i]) {
                    c->first_bad = (int64_t)(c->seen + i);
                    break;
                }
        }
        c->seen += n;
        done += n;
    }
}

uint64_t pk_pattern_read_all(int fd, struct pk_pattern_check *c, int timeout_ms)
{
    static char buf[1 << 17];
    uint64_t total = 0;
    for (;;) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int r = poll(&pfd, 1, timeout_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            pk_test_fail(__FILE__, __LINE__, "no progress for %d ms after %llu bytes", timeout_ms,
                         (unsigned long long)total);
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return total;
        total += (uint64_t)n;
        pk_pattern_check(c, buf, (size_t)n);
    }
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            _exit(3);
        p += w;
        n -= (size_t)w;
    }
}

static int h_pattern(int argc, char **argv)
{
    uint64_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 0;
    uint64_t line_len = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
    static char buf[65536];
    for (uint64_t pos = 0; pos < bytes;) {
        size_t n = bytes - pos < sizeof buf ? (size_t)(bytes - pos) : sizeof buf;
        pk_pattern_fill(buf, n, pos, line_len);
        write_all(1, buf, n);
        pos += n;
    }
    return 0;
}

static volatile sig_atomic_t ints;

static void on_int(int signo)
{
    (void)signo;
    ints++;
}

static int h_count_sigint(int argc, char **argv)
{
    long ms = argc > 1 ? strtol(argv[1], NULL, 10) : 300;
    struct sigaction sa = {.sa_handler = on_int};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    /* SIGINT blocked but inside sigsuspend: one that came between the check and a pause() would
     * leave it waiting for ever. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigprocmask(SIG_BLOCK, &block, &old);
    write_all(1, "ready\n", 6);
    while (ints == 0)
        sigsuspend(&old);
    sigprocmask(SIG_SETMASK, &old, NULL);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    char line[32];
    int n = snprintf(line, sizeof line, "ints %d\n", (int)ints);
    write_all(1, line, (size_t)n);
    return 0;
}

int pk_test_pkrun_helper(int argc, char **argv)
{
    if (strcmp(argv[0], "pattern") == 0)
        return h_pattern(argc, argv);
    if (strcmp(argv[0], "count-sigint") == 0)
        return h_count_sigint(argc, argv);
    return -1;
}

pid_t pk_run_on_pty(const char *const *argv, int *master)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    ASSERT(m >= 0);
    ASSERT_EQ(grantpt(m), 0);
    ASSERT_EQ(unlockpt(m), 0);
    char name[64];
    ASSERT_EQ(ptsname_r(m, name, sizeof name), 0);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        setsid();
        int s = open(name, O_RDWR);
        if (s < 0 || ioctl(s, TIOCSCTTY, 0) != 0)
            _exit(120);
        dup2(s, 0), dup2(s, 1), dup2(s, 2);
        if (s > 2)
            close(s);
        execv(argv[0], (char *const *)argv);
        _exit(121);
    }
    *master = m;
    return pid;
}

bool pk_pty_wait_for(int master, const char *want, char *buf, size_t cap, int timeout_ms)
{
    size_t len = strlen(buf);
    int64_t end = pk_test_now_ms() + timeout_ms;
    while (strstr(buf, want) == NULL) {
        int64_t left = end - pk_test_now_ms();
        struct pollfd pfd = {master, POLLIN, 0};
        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
            return false;
        ssize_t n = read(master, buf + len, cap - 1 - len);
        if (n <= 0)
            return false; /* EIO: every slave side closed */
        len += (size_t)n;
        buf[len] = '\0';
        if (len + 1 >= cap)
            return strstr(buf, want) != NULL;
    }
    return true;
}

uint64_t pk_sigign_of(int pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return 0;
    uint64_t mask = 0;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "SigIgn:", 7) == 0)
            mask = strtoull(line + 7, NULL, 16);
    fclose(f);
    return mask;
}

void pk_kill_session(pid_t sid)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        int pid = atoi(e->d_name);
        if (pid > 0 && getsid(pid) == sid)
            kill(pid, SIGKILL);
    }
    if (d != NULL)
        closedir(d);
}
