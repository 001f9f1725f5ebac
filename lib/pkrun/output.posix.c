/*
 * The one rule every file pkrun writes follows, on POSIX (output.windows.c is the same rule on
 * Windows; output.c makes what is written), and pkrun's own stdout.
 *
 * The rule: a regular file (or a path that does not exist yet) is written to a temporary file in
 * the same directory, flushed, and renamed over it, so a reader sees the old outcome or the new
 * one, never half of one. When the path is a symlink, its target is what gets replaced — or made,
 * when the link dangles: the link stays a link. Anything else a user can name as an output — a
 * terminal, a FIFO, /dev/stderr, a shell's >(...) — is opened and written in place, as the shell's
 * `>` would: renaming over it would replace a device node or a symlink with a regular file (as
 * root, /dev/stderr itself) and leave a FIFO's reader waiting forever.
 *
 * Checked before the command runs, so a typo costs nothing: the temporary file is made and removed
 * then, which is the whole test of what the write will need (the directory exists and takes a new
 * file, the file system is writable); its name, ".pkrun-XXXXXX", is as short as the target's may
 * be long. A write that fails after the run (a full disk) removes the regular file the path held:
 * an earlier run's outcome must not pass for this one's.
 *
 * Nothing waits forever. A FIFO is opened without blocking; while it has no reader the open is
 * tried again for up to PKR_OUTPUT_WAIT_MS, and a FIFO's reader that takes nothing for as long is
 * given up. pkrun's stdout waits for its reader as any program's would, with no limit. Either wait
 * ends when a signal tells pkrun to stop (pkr_output_interrupt).
 */
#define _GNU_SOURCE
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct pkr_interrupt interrupt = {.fd = -1};

void pkr_output_interrupt(const struct pkr_interrupt *in)
{
    interrupt = *in;
}

/* Waits up to ms (-1: no limit) for `events` on fd, or for nothing but the time when fd is -1.
 * 0 when they came (or the time ran out with fd -1), -ETIMEDOUT, or -EINTR when pkrun has been
 * told to stop, before the wait or during it: an output that is ready at once is still written
 * (the JSON after a forwarded Ctrl-C), one that would keep pkrun waiting is given up. */
static int wait_for(int fd, short events, int ms)
{
    for (;;) {
        struct pollfd pfd[2] = {{fd, events, 0}, {interrupt.fd, POLLIN, 0}};
        if (fd >= 0 && poll(pfd, 1, 0) > 0)
            return 0;
        if (interrupt.stop != NULL && interrupt.stop(interrupt.user))
            return -EINTR;
        int n = poll(fd >= 0 ? pfd : pfd + 1, fd >= 0 ? 2 : 1, ms);
        if (n < 0 && errno != EINTR)
            return -errno;
        if (n == 0)
            return fd >= 0 ? -ETIMEDOUT : 0;
        /* ready, or a signal arrived: the next round says which */
    }
}

/* Writes all of data to fd, whatever its O_NONBLOCK, waiting for room while it is full: up to
 * stall_ms without progress (-1: no limit). Into a pipe, a write poll says it has room for never
 * blocks when it is at most PIPE_BUF bytes. */
static int write_all(int fd, const char *data, size_t len, uint64_t *done, int stall_ms)
{
    struct stat st;
    bool pipe = fstat(fd, &st) != 0 || !S_ISREG(st.st_mode);
    for (size_t off = 0; off < len;) {
        if (pipe) {
            int rc = wait_for(fd, POLLOUT, stall_ms);
            if (rc != 0)
                return rc;
        }
        size_t n = len - off;
        ssize_t w = write(fd, data + off, pipe && n > PIPE_BUF ? PIPE_BUF : n);
        if (w < 0 && errno != EINTR && errno != EAGAIN)
            return -errno;
        if (w > 0) {
            off += (size_t)w;
            *done += (uint64_t)w;
        }
    }
    return 0;
}

int pkr_write_std(int stream, const char *data, size_t len, uint64_t *done)
{
    return write_all(stream, data, len, done, -1);
}

/* The directory part of path (or "."), into dir. */
static void dir_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(dir, cap, ".");
    else if (slash == path)
        snprintf(dir, cap, "/");
    else
        snprintf(dir, cap, "%.*s", (int)(slash - path), path);
}

/* What path names once its symlinks are followed, into real: the path of a file that exists, or
 * of the one a dangling link points to. 0 or -errno (-ELOOP after 40 links, as the kernel). */
static int follow_links(const char *path, char *real, size_t cap)
{
    if (snprintf(real, cap, "%s", path) >= (int)cap)
        return -ENAMETOOLONG;
    for (int hops = 0; hops < 40; hops++) {
        struct stat st;
        if (lstat(real, &st) != 0)
            return errno == ENOENT ? 0 : -errno;
        if (!S_ISLNK(st.st_mode))
            return 0;
        char to[PATH_MAX], dir[PATH_MAX];
        ssize_t n = readlink(real, to, sizeof to - 1);
        if (n < 0)
            return -errno;
        to[n] = '\0';
        dir_of(real, dir, sizeof dir);
        int len =
            to[0] == '/' ? snprintf(real, cap, "%s", to) : snprintf(real, cap, "%s/%s", dir, to);
        if (len < 0 || (size_t)len >= cap)
            return -ENAMETOOLONG;
    }
    return -ELOOP;
}

/* What a path names, for the rule. */
enum target_kind {
    TARGET_FILE,  /* a regular file, or nothing yet: replaced (made) atomically */
    TARGET_OTHER, /* a FIFO, a terminal, a device: written in place */
};

/* The kind of what path names and, for a file, the path replaced (its links followed). */
static int find_target(const char *path, enum target_kind *kind, char *real, size_t cap)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return -EISDIR;
        *kind = S_ISREG(st.st_mode) ? TARGET_FILE : TARGET_OTHER;
        if (*kind == TARGET_OTHER)
            return access(path, W_OK) == 0 ? 0 : -errno;
    } else if (errno != ENOENT) {
        return -errno;
    } else {
        *kind = TARGET_FILE;
    }
    return follow_links(path, real, cap);
}

/* The temporary file beside real, open for writing; its name into tmp. */
static int make_temp(const char *real, char *tmp, size_t cap)
{
    char dir[PATH_MAX];
    dir_of(real, dir, sizeof dir);
    if (snprintf(tmp, cap, "%s/.pkrun-XXXXXX", dir) >= (int)cap)
        return -ENAMETOOLONG;
    int fd = mkostemp(tmp, O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

int pkr_file_check(const char *path)
{
    enum target_kind kind;
    char real[PATH_MAX], tmp[PATH_MAX];
    int rc = find_target(path, &kind, real, sizeof real);
    if (rc != 0 || kind == TARGET_OTHER)
        return rc;
    int fd = make_temp(real, tmp, sizeof tmp);
    if (fd < 0)
        return fd;
    close(fd);
    unlink(tmp);
    if (access(real, F_OK) == 0 && access(real, W_OK) != 0)
        return -errno; /* replaceable, but it says it does not want to be */
    return 0;
}

/* A FIFO (or a terminal, a device): opened without blocking, a FIFO's reader awaited. */
static int write_in_place(const char *path, const char *data, size_t len)
{
    int fd, rc = 0;
    int64_t waited = 0;
    while ((fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)) < 0) {
        if (errno != ENXIO) /* ENXIO: a FIFO nobody reads yet */
            return -errno;
        if (waited >= PKR_OUTPUT_WAIT_MS)
            return -ENXIO;
        if ((rc = wait_for(-1, 0, 20)) != 0)
            return rc;
        waited += 20;
    }
    uint64_t done = 0;
    rc = write_all(fd, data, len, &done, PKR_OUTPUT_WAIT_MS);
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

static int write_atomic(const char *real, const char *data, size_t len)
{
    char tmp[PATH_MAX];
    int fd = make_temp(real, tmp, sizeof tmp);
    if (fd < 0)
        return fd;
    uint64_t done = 0;
    int rc = write_all(fd, data, len, &done, -1);
    /* mkostemp makes 0600; the outcome is as readable as any file the user's umask allows. */
    mode_t mask = umask(0);
    umask(mask);
    if (rc == 0 && fchmod(fd, 0666 & ~mask) != 0)
        rc = -errno;
    if (rc == 0 && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, real) != 0)
        rc = -errno;
    if (rc == 0)
        return 0;
    unlink(tmp);
    struct stat st;
    if (lstat(real, &st) == 0 && S_ISREG(st.st_mode) && unlink(real) == 0)
        fprintf(stderr,
                "pkrun: --json: removed '%s', an earlier outcome that would pass for this "
                "run's: the new one cannot be written\n",
                real);
    return rc;
}

int pkr_file_write(const char *path, const char *data, size_t len)
{
    enum target_kind kind;
    char real[PATH_MAX];
    int rc = find_target(path, &kind, real, sizeof real);
    if (rc != 0)
        return rc;
    return kind == TARGET_OTHER ? write_in_place(path, data, len) : write_atomic(real, data, len);
}
