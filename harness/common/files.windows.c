/*
 * files, the Windows part (files.h): the C runtime knows no symlinks and no FIFOs a path can
 * name, so a path is its own final target, and a file is read and written as it is.
 */
#include "common/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *pkb__kind_of(unsigned mode)
{
    return S_ISDIR(mode)   ? "a directory"
           : S_ISCHR(mode) ? "a character device"
                           : "not a regular file";
}

int pkb_final_path(const char *path, char *out, size_t cap)
{
    return snprintf(out, cap, "%s", path) >= (int)cap ? -ENAMETOOLONG : 0;
}

int pkb__open_read(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

long pkb__read_some(int fd, bool regular, char *buf, size_t cap, int wait_ms)
{
    (void)regular, (void)wait_ms;
    for (;;) {
        int r = read(fd, buf, cap > 1u << 30 ? 1u << 30 : (unsigned)cap);
        if (r >= 0)
            return r;
        if (errno != EINTR)
            return -errno;
    }
}

int pkb__open_in_place(const char *path, int wait_ms, int *fd)
{
    (void)wait_ms;
    *fd = open(path, O_WRONLY | O_CLOEXEC);
    return *fd < 0 ? -errno : 0;
}

int pkb__write_in_place(int fd, const char *data, size_t len, int wait_ms)
{
    (void)wait_ms;
    for (size_t done = 0; done < len;) {
        int w = write(fd, data + done, len - done > 1u << 30 ? 1u << 30 : (unsigned)(len - done));
        if (w < 0 && errno != EINTR)
            return -errno;
        if (w > 0)
            done += (size_t)w;
    }
    return 0;
}
