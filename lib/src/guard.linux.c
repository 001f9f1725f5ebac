/*
 * The guardian: a task that kills this process's trees when this process dies without cleaning up.
 *
 * Why. A run's tree lives in a cgroup leaf of ours (leaf.linux.c). When we exit normally the
 * leaves are emptied and removed (atexit, pk_cleanup); PR_SET_PDEATHSIG reaches only a direct
 * child. So a process killed with SIGKILL (or one that execs) used to leave its trees running
 * until some later process swept the leaf: `pkrun 10 sh -c 'sleep 4 & sleep 4'`, then `kill -9`
 * of pkrun, left both sleeps behind. The guardian ends them at once.
 *
 * What it is. One per process, started with its first leaf: a clone3 child (guard.<arch>.S) that
 * shares our memory (CLONE_VM: no page tables copied) but has its own copy of the descriptor
 * table, from which it keeps only the read end of a pipe only we write to (held O_CLOEXEC) and
 * the directory our leaves are in. It blocks every signal it can and sleeps in read(). It lives
 * in our cgroup, not in a leaf. It exits with no signal to us (exit_signal 0), so a host's
 * waitpid(-1) never reaps it; pk_cleanup reaps it, and after our death init does.
 *
 * What it knows. The table below, in our memory, lists the leaves we made: for each, the
 * relative path of its cgroup.kill. We write a slot's path first and mark it in use last, so the
 * table is whole at any instant we could die at. When the pipe reads end-of-file, either we let
 * it go (`released` reaches its generation: it exits), or we are gone: it writes "1" to every
 * listed cgroup.kill, removes the leaves as they empty, and exits.
 *
 * Limits. A process with more than GUARD_SLOTS leaves at once leaves the rest unguarded (they are
 * still swept later). A host that closes descriptors it did not open (the pipe's write end)
 * breaks it, as it breaks the pool. A forked child that never execs keeps a copy of the write end
 * only until its atfork handler drops it (pk__guard_forget). Where the build has no trampoline
 * (only x86-64 has one), there is no guardian.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define GUARD_SLOTS 1024
#define KILL_FILE   "/cgroup.kill"

struct guard_slot {
    _Atomic uint32_t state; /* 1: in use */
    uint32_t name_len;      /* where the leaf's name ends in path */
    char path[56];          /* "<leaf name>/cgroup.kill" */
};

struct guard_state {
    _Atomic uint32_t released; /* the newest generation let go */
    uint32_t used;             /* slots [0, used) may be in use */
    struct guard_slot slots[GUARD_SLOTS];
};

/* The layout guard.<arch>.S reads. */
_Static_assert(offsetof(struct guard_state, released) == 0, "guardian layout");
_Static_assert(offsetof(struct guard_state, used) == 4, "guardian layout");
_Static_assert(offsetof(struct guard_state, slots) == 8, "guardian layout");
_Static_assert(sizeof(struct guard_slot) == 64, "guardian layout");
_Static_assert(offsetof(struct guard_slot, name_len) == 4, "guardian layout");
_Static_assert(offsetof(struct guard_slot, path) == 8, "guardian layout");

/* All under the caller's lock (leaf.linux.c's pool lock). */
static struct guard_state guard;
static int guard_pid;      /* 0: none running */
static int guard_wr = -1;  /* the pipe's write end */
static uint32_t guard_gen; /* the running guardian's generation */
static size_t guard_in_use;

static int start(int dir_fd)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -errno;
    /* A new generation: a guardian let go earlier that has not yet looked at `released` still
     * sees it at or above its own and exits quietly. */
    uint32_t gen = guard_gen + 1;
    struct pk__clone_args args = {
        .flags = CLONE_VM | PK__CLONE_CLEAR_SIGHAND,
        .exit_signal = 0,
    };
    long pid = pk__guard_clone(&args, sizeof args, p[0], dir_fd, &guard, gen);
    close(p[0]);
    if (pid <= 0) {
        close(p[1]);
        return pid < 0 ? (int)pid : -EIO;
    }
    guard_gen = gen;
    guard_pid = (int)pid;
    guard_wr = p[1];
    return 0;
}

/* Whether the guardian died (SIGKILL reaches it: `kill -9 0` from a command in our process group,
 * say): then it is reaped and forgotten, and the next leaf starts another, which reads the same
 * table. One waitid per leaf made, beside its mkdir. */
static void reap_if_dead(void)
{
    siginfo_t si = {0};
    if (guard_pid == 0 || waitid(P_PID, (id_t)guard_pid, &si, WEXITED | WNOHANG | __WALL) != 0 ||
        si.si_pid == 0)
        return;
    close(guard_wr);
    guard_wr = -1;
    guard_pid = 0;
}

int pk__guard_add(int dir_fd, const char *name)
{
    size_t len = strlen(name);
    if (len + sizeof KILL_FILE > sizeof guard.slots[0].path)
        return -ENAMETOOLONG;
    reap_if_dead();
    if (guard_pid == 0) {
        int rc = start(dir_fd);
        if (rc != 0)
            return rc;
    }
    struct guard_slot *s = NULL;
    for (uint32_t i = 0; i < guard.used && s == NULL; i++)
        if (atomic_load_explicit(&guard.slots[i].state, memory_order_relaxed) == 0)
            s = &guard.slots[i];
    if (s == NULL) {
        if (guard.used == GUARD_SLOTS)
            return -ENOSPC;
        s = &guard.slots[guard.used++];
    }
    memcpy(s->path, name, len);
    memcpy(s->path + len, KILL_FILE, sizeof KILL_FILE);
    s->name_len = (uint32_t)len;
    /* In use last: a slot we die half-way through writing is not looked at. */
    atomic_store_explicit(&s->state, 1, memory_order_release);
    guard_in_use++;
    return 0;
}

void pk__guard_remove(const char *name)
{
    size_t len = strlen(name);
    for (uint32_t i = 0; i < guard.used; i++) {
        struct guard_slot *s = &guard.slots[i];
        if (atomic_load_explicit(&s->state, memory_order_relaxed) == 1 && s->name_len == len &&
            memcmp(s->path, name, len) == 0) {
            atomic_store_explicit(&s->state, 0, memory_order_release);
            guard_in_use--;
            while (guard.used > 0 && atomic_load_explicit(&guard.slots[guard.used - 1].state,
                                                          memory_order_relaxed) == 0)
                guard.used--;
            return;
        }
    }
}

void pk__guard_release(bool force, bool wait)
{
    if (guard_pid == 0 || (!force && guard_in_use > 0))
        return;
    /* Released first: a guardian woken by the close, or by anything else, then does nothing.
     * Killed too, so it never lingers (a traced one would stop at its next call). Our child,
     * unreaped: its pid cannot have been reused. */
    atomic_store_explicit(&guard.released, guard_gen, memory_order_release);
    close(guard_wr);
    (void)kill(guard_pid, SIGKILL);
    if (wait)
        while (waitpid(guard_pid, NULL, __WALL) < 0 && errno == EINTR)
            ;
    guard_pid = 0;
    guard_wr = -1;
}

void pk__guard_forget(void)
{
    /* Our copy of the parent's memory: its slots name the parent's leaves, which are not ours to
     * kill; its guardian watches the parent's write end, whose copy we drop. */
    for (uint32_t i = 0; i < guard.used; i++)
        atomic_store_explicit(&guard.slots[i].state, 0, memory_order_relaxed);
    guard.used = 0;
    guard_in_use = 0;
    if (guard_wr >= 0)
        close(guard_wr);
    guard_wr = -1;
    guard_pid = 0;
}
