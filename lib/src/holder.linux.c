/*
 * Leaf holders: a task that keeps a pooled cgroup leaf populated between the runs it is lent to.
 *
 * Why. A leaf that empties at the end of every run and fills at the start of the next flips its
 * "populated" state twice a run, and every flip makes the kernel notify cgroup.events
 * (cgroup_file_notify: at once, or from a timer when the last notice was under 10 ms ago, then
 * kernfs_notify's work item on a kworker). On the 2-vCPU VMs measured, that timer, work item and
 * their wake-ups cost a streaming run through `cat` ≈ 110–150 µs unpinned, 3–5% of it, and
 * most of the gap between a contained and an uncontained run
 * (reports/notes/2026-12-04-populated-flip.md). A leaf with a holder in it never empties, so
 * nothing is notified.
 *
 * What a holder is. A clone3 child (holder.<arch>.S) born in the leaf (CLONE_INTO_CGROUP) that
 * shares our memory (CLONE_VM: no page tables copied) but has its own copy of the descriptor
 * table, from which it closes everything but the read end of a pipe only this process writes to
 * (held O_CLOEXEC). It blocks every signal and sleeps in read() on that pipe, so it dies with
 * us, or when we exec, which closes the write end; SIGKILL ends it sooner. It exits with no signal
 * to us (exit_signal 0), so a host's waitpid(-1) loop, which waits only for SIGCHLD children
 * unless given __WALL, never reaps it by surprise; it is reaped here (pk__holder_end), or, if
 * someone killed it while its leaf sat in the pool, by the pool's look at its holders
 * (leaf.linux.c).
 *
 * What changes for the leaf (leaf.linux.c, cgroup.linux.c): its emptiness after a run is read from
 * cgroup.procs (the holder's pid alone means empty) instead of cgroup.events; cgroup.kill kills the
 * holder with the tree, and a killed leaf is removed, never pooled, as before. Only pooled leaves
 * lent again get one (the second run of a leaf starts it), so a one-shot process such as pkrun
 * never pays for a clone it cannot use; shared groups (pk_group_new) never have one.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The pipe every holder watches: holders keep the read end, we keep both (the read end for the
 * next holder). Made with the first holder. */
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static int watch_rd = -1, watch_wr = -1;

int pk__holder_start(int dirfd)
{
    if (!pk__spawn_into_cgroup())
        return -ENOSYS;
    pthread_mutex_lock(&watch_lock);
    int rc = 0;
    if (watch_rd < 0) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) == 0) {
            watch_rd = p[0];
            watch_wr = p[1];
        } else {
            rc = -errno;
        }
    }
    if (rc == 0) {
        struct pk__clone_args args = {
            .flags = CLONE_VM | PK__CLONE_CLEAR_SIGHAND | PK__CLONE_INTO_CGROUP,
            .exit_signal = 0,
            .cgroup = (uint64_t)dirfd,
        };
        /* Under the lock: pk__holder_release cannot close the read end under the clone. */
        long pid = pk__holder_clone(&args, sizeof args, watch_rd);
        rc = pid > 0 ? (int)pid : (int)(pid < 0 ? pid : -EIO);
    }
    pthread_mutex_unlock(&watch_lock);
    return rc;
}

void pk__holder_end(int *pid)
{
    if (*pid <= 0)
        return;
    /* Our child, not yet reaped: its pid cannot have been reused. */
    (void)kill(*pid, SIGKILL);
    while (waitpid(*pid, NULL, __WALL) < 0 && errno == EINTR)
        ;
    *pid = 0;
}

/* "<pid>\n", what cgroup.procs says when the holder is alone; its length. */
static size_t pid_line(int pid, char *buf)
{
    char digits[16];
    size_t n = 0;
    do
        digits[n++] = (char)('0' + pid % 10);
    while ((pid /= 10) > 0);
    for (size_t i = 0; i < n; i++)
        buf[i] = digits[n - 1 - i];
    buf[n] = '\n';
    return n + 1;
}

int pk__holder_populated(int procs_fd, int *holder)
{
    char buf[64], want[16];
    ssize_t n = pread(procs_fd, buf, sizeof buf, 0);
    if (n < 0)
        return -errno;
    if (n == 0) {
        /* The holder itself is gone (killed by someone): reap it; the leaf is empty. */
        pk__holder_end(holder);
        return 0;
    }
    size_t len = pid_line(*holder, want);
    return !((size_t)n == len && memcmp(buf, want, len) == 0);
}

void pk__holder_release(void)
{
    pthread_mutex_lock(&watch_lock);
    if (watch_rd >= 0) {
        close(watch_rd);
        close(watch_wr);
        watch_rd = watch_wr = -1;
    }
    pthread_mutex_unlock(&watch_lock);
}

void pk__holder_forget(void)
{
    /* Only our copies go: the parent's holders watch the parent's write end, not ours. */
    if (watch_rd >= 0) {
        close(watch_rd);
        close(watch_wr);
    }
    watch_rd = watch_wr = -1;
    pthread_mutex_init(&watch_lock, NULL);
}
