/*
 * /dev/null, kept open between runs.
 *
 * stdin is /dev/null by default. Opening it in the child costs an openat (a path walk), a dup2
 * and a close on every run, while the parent waits; with a descriptor kept here the child makes
 * one dup2. There is one descriptor per access mode, so a child still cannot write to its stdin
 * nor read from its stdout: each is opened on first use, O_CLOEXEC (no child keeps it past exec,
 * and close_range would close it anyway) and numbered above 2, so it never takes the place of a
 * standard stream the host closed.
 *
 * The descriptor is the library's, but a host may close descriptors it does not own (a daemon's
 * close-everything loop) and get the number back for another file. A child must never be handed
 * that file: every use checks with fstat that the number still names the /dev/null we opened
 * (device and inode), and opens a new one otherwise (the old number is the host's now, and is
 * left alone). A spawn holds a read lock from that check until its child has its copy, so
 * pk_cleanup, which closes both, never pulls a descriptor away from under a spawn.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

struct null_slot {
    int fd; /* -1 until opened */
    dev_t dev;
    ino_t ino;
};

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static struct null_slot slots[2] = {{-1, 0, 0}, {-1, 0, 0}}; /* [0] read, [1] write */

/* A child forked while another thread held the lock would find it held forever. */
static void reinit_after_fork(void)
{
    pthread_rwlock_init(&lock, NULL);
}

static void register_atfork(void)
{
    (void)pthread_atfork(NULL, NULL, reinit_after_fork);
}

static bool slot_valid(const struct null_slot *s)
{
    struct stat st;
    return s->fd >= 0 && fstat(s->fd, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino;
}

/* Opens a fresh descriptor for the slot (write lock held). */
static int slot_open(struct null_slot *s, int flags)
{
    int fd = open("/dev/null", flags | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (fd < 3) {
        /* The host closed a standard stream: do not sit in its place. */
        int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        int err = errno;
        close(fd);
        if (high < 0)
            return -err;
        fd = high;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) {
        int err = errno != 0 ? errno : ENODEV;
        close(fd);
        return -err;
    }
    *s = (struct null_slot){fd, st.st_dev, st.st_ino};
    return 0;
}

int pk__null_lock(bool want_read, bool want_write, int fds[2])
{
    pthread_once(&atfork_once, register_atfork);
    bool want[2] = {want_read, want_write};
    for (;;) {
        pthread_rwlock_rdlock(&lock);
        bool ok = true;
        for (int i = 0; i < 2; i++)
            ok = ok && (!want[i] || slot_valid(&slots[i]));
        if (ok) {
            fds[0] = want_read ? slots[0].fd : -1;
            fds[1] = want_write ? slots[1].fd : -1;
            return 0;
        }
        pthread_rwlock_unlock(&lock);
        /* Open what is missing or stale under the write lock, then check again. */
        pthread_rwlock_wrlock(&lock);
        int rc = 0;
        for (int i = 0; i < 2 && rc == 0; i++)
            if (want[i] && !slot_valid(&slots[i]))
                rc = slot_open(&slots[i], i == 0 ? O_RDONLY : O_WRONLY);
        pthread_rwlock_unlock(&lock);
        if (rc != 0)
            return rc;
    }
}

void pk__null_unlock(void)
{
    pthread_rwlock_unlock(&lock);
}

void pk__null_close(void)
{
    pthread_rwlock_wrlock(&lock);
    for (int i = 0; i < 2; i++) {
        /* Only a descriptor that is still ours. */
        if (slot_valid(&slots[i]))
            close(slots[i].fd);
        slots[i].fd = -1;
    }
    pthread_rwlock_unlock(&lock);
}
