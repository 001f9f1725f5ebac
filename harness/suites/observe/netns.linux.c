/*
 * netns — a fresh network namespace per cell (netns.h): unshare(CLONE_NEWNET) for this thread,
 * loopback brought up with SIOCSIFFLAGS, the namespace's inode read from
 * /proc/thread-self/ns/net; setns() back to the saved namespace afterwards. The namespace dies
 * with its last socket and process, taking every TIME_WAIT entry of the cell with it.
 *
 * Unprivileged, the first call enters a user namespace that maps our uid and gid to 0 (which
 * needs a single-threaded process, as pkbench is here), where unshare(CLONE_NEWNET) is allowed;
 * later cells create their namespaces from there.
 */
#define _GNU_SOURCE
#include "suites/observe/netns.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static int in_userns; /* this process entered its own user namespace */

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, text, strlen(text));
    int rc = n == (ssize_t)strlen(text) ? 0 : n < 0 ? -errno : -EIO;
    close(fd);
    return rc;
}

static int enter_userns(char *why, size_t cap)
{
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (unshare(CLONE_NEWUSER) != 0) {
        int rc = -errno;
        snprintf(why, cap,
                 "cannot create a network namespace: not root, and no user namespace (%s)",
                 strerror(errno));
        return rc;
    }
    char map[64];
    int rc = write_file("/proc/self/setgroups", "deny");
    snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
    if (rc == 0)
        rc = write_file("/proc/self/uid_map", map);
    snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
    if (rc == 0)
        rc = write_file("/proc/self/gid_map", map);
    if (rc != 0) {
        snprintf(why, cap, "cannot map our ids in a user namespace: %s", strerror(-rc));
        return rc;
    }
    in_userns = 1;
    return 0;
}

static int loopback_up(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    int rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
    if (rc == 0) {
        ifr.ifr_flags |= IFF_UP;
        rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
    }
    rc = rc == 0 ? 0 : -errno;
    close(fd);
    return rc;
}

int pkb_netns_enter(pkb_netns *ns, char *why, size_t cap)
{
    *ns = (pkb_netns){.home = -1};
    if (!in_userns) {
        ns->home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        if (ns->home < 0) {
            int rc = -errno;
            snprintf(why, cap, "cannot open /proc/thread-self/ns/net: %s", strerror(errno));
            return rc;
        }
    }
    int rc = unshare(CLONE_NEWNET) == 0 ? 0 : -errno;
    if (rc == -EPERM && !in_userns) {
        close(ns->home);
        ns->home = -1;
        rc = enter_userns(why, cap);
        if (rc != 0)
            return rc;
        rc = unshare(CLONE_NEWNET) == 0 ? 0 : -errno;
    }
    if (rc != 0) {
        snprintf(why, cap, "unshare(CLONE_NEWNET): %s", strerror(-rc));
        pkb_netns_leave(ns);
        return rc;
    }
    ns->how = in_userns ? "user namespace" : "unshare";
    struct stat st;
    if ((rc = loopback_up()) != 0 || stat("/proc/thread-self/ns/net", &st) != 0) {
        rc = rc ? rc : -errno;
        snprintf(why, cap, "setting up the network namespace: %s", strerror(-rc));
        pkb_netns_leave(ns);
        return rc;
    }
    ns->inode = (uint32_t)st.st_ino;
    return 0;
}

void pkb_netns_leave(pkb_netns *ns)
{
    if (ns->home >= 0) {
        /* Back to where we came from; the cell's namespace goes when its last user does. */
        if (setns(ns->home, CLONE_NEWNET) != 0)
            fprintf(stderr, "pkbench: cannot return to the original network namespace: %s\n",
                    strerror(errno));
        close(ns->home);
    }
    ns->home = -1;
}
