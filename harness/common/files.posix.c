/*
 * files, the POSIX part (files.h): symlinks followed by hand, so that a dangling link's target is
 * what a write creates, and the waits on a FIFO bounded. Opening a FIFO blocks until its other
 * end is opened, and reading or writing one blocks while the other end is idle; an output named
 * by the user may be a FIFO nobody opens (issue 34, item 7: `pkbench report FIFO` hung in open()),
 * so every descriptor here is opened O_NONBLOCK and waited on with poll, for at most
 * pkb_fifo_wait_ms at a time.
 */
#define _GNU_SOURCE
#include "common/files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *pkb__kind_of(unsigned mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO or pipe"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a regular file";
}

int pkb_final_path(const char *path, char *out, size_t cap)
{
    char cur[PATH_MAX], target[PATH_MAX];
    if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
        return -ENAMETOOLONG;
    for (int links = 0;; links++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            break; /* the end of the chain: a file, or nothing yet */
        if (links == 40)
            return -ELOOP;
        ssize_t n = readlink(cur, target, sizeof target - 1);
        if (n < 0)
            return -errno;
        target[n] = '\0';
        if (target[0] == '/') {
            memcpy(cur, target, (size_t)n + 1);
            continue;
        }
        /* A relative target is relative to the link's directory. */
        char *slash = strrchr(cur, '/');
        size_t keep = slash == NULL ? 0 : (size_t)(slash - cur) + 1;
        if (keep + (size_t)n + 1 > sizeof cur)
            return -ENAMETOOLONG;
        memcpy(cur + keep, target, (size_t)n + 1);
    }
    return snprintf(out, cap, "%s", cur) >= (int)cap ? -ENAMETOOLONG : 0;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until fd is ready for `events` (or hung up), at most wait_ms: 0, or -ETIMEDOUT. */
static int wait_for(int fd, short events, int wait_ms)
{
    long long end = now_ms() + wait_ms;
    for (;;) {
        long long left = end - now_ms();
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, left > 0 ? (int)left : 0);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -errno;
        if (n == 0 && left <= 0)
            return -ETIMEDOUT;
    }
}

int pkb__open_read(const char *path)
{
    /* O_NONBLOCK: opening a FIFO to read never waits for a writer. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    return fd >= 0 ? fd : -errno;
}

long pkb__read_some(int fd, bool regular, char *buf, size_t cap, int wait_ms)
{
    for (;;) {
        /* A FIFO nobody has opened to write reads as its end at once: only read once poll says
         * there is something (data, or a writer that came and went). */
        if (!regular) {
            int rc = wait_for(fd, POLLIN, wait_ms);
            if (rc != 0)
                return rc;
        }
        ssize_t r = read(fd, buf, cap);
        if (r >= 0)
            return (long)r;
        if (errno != EINTR && errno != EAGAIN)
            return -errno;
    }
}

int pkb__open_in_place(const char *path, int wait_ms, int *fd)
{
    /* A FIFO without a reader refuses a non-blocking open (ENXIO): try again until one comes. */
    long long end = now_ms() + wait_ms;
    for (;;) {
        *fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (*fd >= 0)
            return 0;
        if (errno != ENXIO && errno != EINTR)
            return -errno;
        if (now_ms() >= end)
            return -ETIMEDOUT;
        usleep(20000);
    }
}

int pkb__write_in_place(int fd, const char *data, size_t len, int wait_ms)
{
    /* A reader that goes away is an error to report (EPIPE), not a reason to die of SIGPIPE. */
    struct sigaction ignore = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &old);
    int rc = 0;
    for (size_t done = 0; rc == 0 && done < len;) {
        ssize_t w = write(fd, data + done, len - done);
        if (w > 0)
            done += (size_t)w;
        else if (w < 0 && errno == EAGAIN)
            rc = wait_for(fd, POLLOUT, wait_ms);
        else if (w < 0 && errno != EINTR)
            rc = -errno;
    }
    sigaction(SIGPIPE, &old, NULL);
    return rc;
}
