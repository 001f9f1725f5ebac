/*
 * The one rule every file pkrun writes follows, on POSIX (output.windows.c is the same rule on
 * Windows; output.c makes what is written), and pkrun's own stdout.
 *
 * The rule: a regular file (or a path that does not exist yet) is written to a temporary file in
 * the same directory, flushed, and renamed over it, so a reader sees the old outcome or the new
 * one, never half of one; when the path is a symlink, its target is what gets replaced. Anything
 * else a user can name as an output — a terminal, a FIFO, /dev/stderr, a shell's >(...) — is
 * opened and written in place, as the shell's `>` would: renaming over it would replace a device
 * node or a symlink with a regular file (as root, /dev/stderr itself) and leave a FIFO's reader
 * waiting forever. The path is checked before the command runs, so a typo costs nothing.
 */
#define _GNU_SOURCE
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_all(int fd, const char *data, size_t len, uint64_t *done)
{
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno != EINTR)
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
    return write_all(stream, data, len, done);
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

int pkr_file_check(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return -EISDIR;
        if (access(path, W_OK) != 0)
            return -errno;
        if (!S_ISREG(st.st_mode))
            return 0;
        /* Replaced by a rename: its directory (the symlink target's) must take a new file. */
        char real[PATH_MAX], dir[PATH_MAX];
        if (realpath(path, real) == NULL)
            return -errno;
        dir_of(real, dir, sizeof dir);
        return access(dir, W_OK | X_OK) == 0 ? 0 : -errno;
    }
    if (errno != ENOENT)
        return -errno;
    char dir[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    return access(dir, W_OK | X_OK) == 0 ? 0 : -errno;
}

static int write_in_place(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    uint64_t done = 0;
    int rc = write_all(fd, data, len, &done);
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

static int write_atomic(const char *path, const char *data, size_t len)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp)
        return -ENAMETOOLONG;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return -errno;
    uint64_t done = 0;
    int rc = write_all(fd, data, len, &done);
    /* mkostemp makes 0600; the outcome is as readable as any file the user's umask allows. */
    mode_t mask = umask(0);
    umask(mask);
    if (rc == 0 && fchmod(fd, 0666 & ~mask) != 0)
        rc = -errno;
    if (rc == 0 && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc != 0)
        unlink(tmp);
    return rc;
}

int pkr_file_write(const char *path, const char *data, size_t len)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errno == ENOENT ? write_atomic(path, data, len) : -errno;
    if (S_ISDIR(st.st_mode))
        return -EISDIR;
    if (!S_ISREG(st.st_mode))
        return write_in_place(path, data, len);
    char real[PATH_MAX];
    if (realpath(path, real) == NULL)
        return -errno;
    return write_atomic(real, data, len);
}
