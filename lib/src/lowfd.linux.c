/*
 * Low descriptors for a pk_loop's children: what keeps a spawn's cost from growing with the
 * number of descriptors the process holds.
 *
 * Why. A child that needs descriptors of ours above 2 (its pipes) could not share our table: it
 * was cloned with a copy of the whole table (the kernel takes a reference on every open file)
 * and closed every copy before exec (close_range flushes each and drops the reference) — work in
 * proportion to every descriptor we hold. A loop holds four or five per run in flight (a pipe, a
 * pidfd, its cgroup leaf's), so at 4096 children in flight each spawn copied and closed about
 * 16,000 descriptors, and the time per child grew with N; the copy also stayed allocated for the
 * child's life, a table sized for all of ours (reports/notes/2026-12-05-fan-out-at-scale.md).
 *
 * How. The child is cloned sharing our table (CLONE_FILES) and takes a private copy of its low
 * part only: close_range(top + 1, ~0, CLOSE_RANGE_UNSHARE) copies the descriptors below top + 1
 * and no other (child.linux.c); then it moves its pipes onto 0..2 and closes the rest of that
 * copy. That is cheap when the descriptors it needs are low — but a new pipe gets the lowest free
 * numbers, which in a busy loop lie above every run's. So the loop keeps three slots: descriptor
 * numbers taken at its first run, when its table is at its smallest, each holding a copy of a
 * private pipe's read end (the anchor) between spawns. A spawn whose child needs a descriptor at
 * PK__LOW_TOP or above duplicates it onto a slot (dup3: atomic, the number never free), the child
 * copies the table up to the slots, and after the clone each slot gets the anchor back, so the
 * pipe end the child took lives on in the child only. Per spawn: a fstat per slot used (that the
 * number is still ours: a host that closed it and reused the number keeps its file, and the loop
 * stops using the slots) and two dup3 per slot, against a copy and a close of every descriptor.
 *
 * Only pk_loop uses them: its spawns come from one thread at a time, and its descriptors are what
 * grows. pk_run and pk_spawn copy the table as before.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* The slots' descriptors: a copy of the anchor each, the anchor's pipe identifying them. */
static bool slot_ours(const struct pk__low_fds *low, int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_dev == low->dev && st.st_ino == low->ino;
}

void pk__low_open(struct pk__low_fds *low)
{
    low->anchor = low->slot[0] = low->slot[1] = low->slot[2] = -1;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return; /* no slots: spawns copy the table, as pk_run's do */
    struct stat st;
    if (fstat(p[0], &st) != 0) {
        close(p[0]);
        close(p[1]);
        return;
    }
    /* Both ends are the one pipe inode: the write end is a slot too. */
    low->anchor = p[0];
    low->slot[0] = p[1];
    low->dev = st.st_dev;
    low->ino = st.st_ino;
    for (int i = 1; i < 3; i++) {
        low->slot[i] = fcntl(p[0], F_DUPFD_CLOEXEC, 3);
        if (low->slot[i] < 0) {
            pk__low_close(low);
            return;
        }
    }
}

void pk__low_close(struct pk__low_fds *low)
{
    for (int i = 0; i < 3; i++)
        if (low->slot[i] >= 0 && slot_ours(low, low->slot[i]))
            close(low->slot[i]);
    pk__close_fd(&low->anchor);
    low->slot[0] = low->slot[1] = low->slot[2] = -1;
}

/* The highest descriptor above 2 the child duplicates onto its standard ones; 2 when none. */
static int top_needed(const struct pk__child_plan *plan)
{
    int top = 2;
    for (int t = 0; t < 3; t++)
        if (plan->io[t].action == PK__IO_DUP && plan->io[t].fd > top)
            top = plan->io[t].fd;
    return top;
}

void pk__low_place(struct pk__child_plan *plan, int moved[3])
{
    moved[0] = moved[1] = moved[2] = -1;
    struct pk__low_fds *low = plan->low;
    if (low == NULL || plan->share_files || plan->inherit_fds)
        return;
    int top = top_needed(plan);
    if (top < PK__LOW_TOP) {
        plan->share_files = true;
        plan->unshare_from = (unsigned)top + 1;
        return;
    }
    if (low->anchor < 0)
        return;
    int used = 0, slot_top = 2;
    for (int t = 0; t < 3; t++) {
        struct pk__io_plan *io = &plan->io[t];
        if (io->action != PK__IO_DUP || io->fd < 3)
            continue;
        int slot = low->slot[used];
        if (!slot_ours(low, slot) || dup3(io->fd, slot, O_CLOEXEC) < 0) {
            /* Not ours any more (or the dup failed): put back what was placed and stop using
             * the slots; this spawn copies the table. */
            pk__low_unplace(plan, moved);
            pk__low_close(low);
            return;
        }
        moved[t] = io->fd;
        io->fd = slot;
        slot_top = slot > slot_top ? slot : slot_top;
        used++;
    }
    plan->share_files = true;
    plan->unshare_from = (unsigned)slot_top + 1;
}

void pk__low_unplace(struct pk__child_plan *plan, const int moved[3])
{
    for (int t = 0; t < 3; t++) {
        if (moved[t] < 0)
            continue;
        /* The anchor again: the child's end is closed in our table, kept in the child's. */
        (void)dup3(plan->low->anchor, plan->io[t].fd, O_CLOEXEC);
        plan->io[t].fd = moved[t];
    }
}
