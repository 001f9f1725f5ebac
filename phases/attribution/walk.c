/*
 * The walks of phases_walk.h. getdents64 on a directory descriptor, entries counted in place; a
 * name starting with '.' is "." or ".." (procfs and cgroupfs have no other dot names).
 */
#define _GNU_SOURCE
#include "phases/attribution/walk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel's struct linux_dirent64. */
struct dirent64_raw {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[];
};

/* Counts the entries of an open directory (without . and ..). Returns the count or -errno. */
static long count_entries(int dirfd)
{
    char buf[4096] __attribute__((aligned(8)));
    long n = 0;
    for (;;) {
        long got = syscall(SYS_getdents64, dirfd, buf, sizeof buf);
        if (got < 0)
            return -errno;
        if (got == 0)
            return n;
        for (long off = 0; off < got;) {
            const struct dirent64_raw *e = (const struct dirent64_raw *)(buf + off);
            n += e->name[0] != '.';
            off += e->reclen;
        }
    }
}

int pkb_walk_direct(int pid, pkb_walk_counts *out)
{
    memset(out, 0, sizeof *out);
    char path[48];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    long n = count_entries(fd);
    close(fd);
    if (n < 0)
        return (int)n;
    out->processes = 1;
    out->threads = out->target_threads = (size_t)n;
    return 0;
}

static bool all_digits(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

int pkb_walk_snapshot(int pid, pkb_walk_counts *out)
{
    memset(out, 0, sizeof *out);
    int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (proc < 0)
        return -errno;
    char target[24];
    snprintf(target, sizeof target, "%d", pid);
    char buf[16384] __attribute__((aligned(8)));
    int rc = 0;
    for (;;) {
        long got = syscall(SYS_getdents64, proc, buf, sizeof buf);
        if (got <= 0) {
            rc = got < 0 ? -errno : 0;
            break;
        }
        for (long off = 0; off < got;) {
            const struct dirent64_raw *e = (const struct dirent64_raw *)(buf + off);
            off += e->reclen;
            if (!all_digits(e->name))
                continue;
            char task[48];
            snprintf(task, sizeof task, "%s/task", e->name);
            int fd = openat(proc, task, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (fd < 0)
                continue; /* exited since the listing */
            long n = count_entries(fd);
            close(fd);
            if (n < 0)
                continue;
            out->processes++;
            out->threads += (size_t)n;
            if (strcmp(e->name, target) == 0)
                out->target_threads = (size_t)n;
        }
    }
    close(proc);
    return rc;
}

int pkb_walk_cgroup(int cgroup_dirfd, size_t *members)
{
    *members = 0;
    int fd = openat(cgroup_dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    char buf[4096];
    int rc = 0;
    for (;;) {
        ssize_t got = read(fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            rc = got < 0 ? -errno : 0;
            break;
        }
        for (ssize_t i = 0; i < got; i++)
            *members += buf[i] == '\n';
    }
    close(fd);
    return rc;
}
