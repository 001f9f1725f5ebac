/*
 * tables — where the pollers read sockets from (poll.h):
 *
 *   /proc/thread-self/net/tcp{,6}   the seed's poller: text, one row per socket, parsed with
 *                                   sscanf. The kernel walks its whole established hash for it
 *                                   (sized by RAM and shared by every namespace), so a read
 *                                   has a floor of milliseconds even with no socket.
 *   NETLINK_SOCK_DIAG               inet_diag dumps (inet_diag_req_v2, every state): binary,
 *                                   and the kernel walks only this namespace's sockets.
 *   /proc/<pid>/fd                  the seed's owner walk: readlink of every descriptor of
 *                                   every process, "socket:[INODE]" -> pid.
 *
 * All three run in the calling thread's network namespace (the cell's): the proc files through
 * thread-self, the netlink socket because it is created there.
 */
#define _GNU_SOURCE
#include "suites/observe/observers/tables.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int failed(char *why, size_t cap, int rc, const char *what)
{
    snprintf(why, cap, "%s: %s", what, strerror(-rc));
    return rc;
}

/* ---- /proc/net/tcp ------------------------------------------------------------------------- */

/* "  12: 0100007F:A3B2 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0
 * 123456 1 ..." — the state is the 4th field (hex), the inode the 10th. */
static int parse_line(const char *line, pkb_row_fn fn, void *ctx)
{
    unsigned state;
    unsigned long long inode;
    if (sscanf(line, "%*s %*s %*s %x %*s %*s %*s %*s %*s %llu", &state, &inode) != 2)
        return 0; /* the header */
    return fn(ctx, state, inode);
}

static int read_table(const char *path, pkb_row_fn fn, void *ctx, char *why, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : failed(why, cap, -errno, path); /* no IPv6: no tcp6 */
    static char buf[65536];
    size_t have = 0;
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = failed(why, cap, -errno, path);
            break;
        }
        if (n == 0)
            break;
        have += (size_t)n;
        buf[have] = '\0';
        char *line = buf, *nl;
        while (rc == 0 && (nl = memchr(line, '\n', have - (size_t)(line - buf))) != NULL) {
            *nl = '\0';
            rc = parse_line(line, fn, ctx);
            line = nl + 1;
        }
        have -= (size_t)(line - buf);
        memmove(buf, line, have);
        if (rc != 0)
            break;
    }
    close(fd);
    return rc;
}

int pkb__table_proc(pkb_row_fn fn, void *ctx, char *why, size_t cap)
{
    int rc = read_table("/proc/thread-self/net/tcp", fn, ctx, why, cap);
    return rc != 0 ? rc : read_table("/proc/thread-self/net/tcp6", fn, ctx, why, cap);
}

int pkb__table_proc_probe(char *why, size_t cap)
{
    int fd = open("/proc/thread-self/net/tcp", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, cap, "cannot read /proc/thread-self/net/tcp: %s", strerror(errno));
        return -errno;
    }
    close(fd);
    return 0;
}

/* ---- sock_diag ----------------------------------------------------------------------------- */

int pkb__table_diag_open(int *fd, char *why, size_t cap)
{
    *fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    return *fd < 0 ? failed(why, cap, -errno, "socket(AF_NETLINK, NETLINK_SOCK_DIAG)") : 0;
}

static int dump_family(int fd, int family, pkb_row_fn fn, void *ctx, char *why, size_t cap)
{
    struct {
        struct nlmsghdr nlh;
        struct inet_diag_req_v2 req;
    } msg = {
        .nlh = {.nlmsg_len = sizeof msg,
                .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
        .req = {.sdiag_family = (unsigned char)family,
                .sdiag_protocol = IPPROTO_TCP,
                .idiag_states = ~0u},
    };
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    if (sendto(fd, &msg, sizeof msg, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0)
        return failed(why, cap, -errno, "sock_diag request");
    static long buf[8192]; /* 64 KiB, aligned for nlmsghdr */
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return failed(why, cap, -errno, "sock_diag dump");
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
             h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_type == NLMSG_DONE)
                return 0;
            if (h->nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *e = NLMSG_DATA(h);
                return failed(why, cap, e->error ? e->error : -EIO, "sock_diag dump");
            }
            const struct inet_diag_msg *m = NLMSG_DATA(h);
            int rc = fn(ctx, m->idiag_state, m->idiag_inode);
            if (rc != 0)
                return rc;
        }
    }
}

int pkb__table_diag(int fd, pkb_row_fn fn, void *ctx, char *why, size_t cap)
{
    int rc = dump_family(fd, AF_INET, fn, ctx, why, cap);
    return rc != 0 ? rc : dump_family(fd, AF_INET6, fn, ctx, why, cap);
}

/* ---- /proc/<pid>/fd ------------------------------------------------------------------------ */

static int walk_process(int proc, const char *pid, pkb_obsmap *owners)
{
    char path[300]; /* a d_name (up to 255 bytes) and "/fd" */
    snprintf(path, sizeof path, "%s/fd", pid);
    int dfd = openat(proc, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return 0; /* gone, or not ours to read */
    DIR *d = fdopendir(dfd);
    if (d == NULL) {
        close(dfd);
        return 0;
    }
    uint32_t p = (uint32_t)strtoul(pid, NULL, 10);
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        char link[64];
        ssize_t n = readlinkat(dfd, e->d_name, link, sizeof link - 1);
        if (n < 9 || memcmp(link, "socket:[", 8) != 0)
            continue;
        link[n] = '\0';
        rc = pkb_obsmap_note(owners, strtoull(link + 8, NULL, 10), p);
    }
    closedir(d);
    return rc;
}

int pkb__fdwalk(pkb_obsmap *owners, char *why, size_t cap)
{
    pkb_obsmap_clear(owners);
    int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = proc >= 0 ? fdopendir(fcntl(proc, F_DUPFD_CLOEXEC, 0)) : NULL;
    if (d == NULL) {
        int rc = failed(why, cap, -errno, "/proc");
        if (proc >= 0)
            close(proc);
        return rc;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL)
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
            rc = walk_process(proc, e->d_name, owners);
    closedir(d);
    close(proc);
    return rc == 0 ? 0 : failed(why, cap, rc, "the /proc fd walk");
}
