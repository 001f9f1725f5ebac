/*
 * pk__guard_clone for architectures without a guardian trampoline in this tree: it reports ENOSYS,
 * and this process's leaves go unguarded (guard.linux.c): a tree left running when the process
 * dies is killed by the next process that sweeps stale leaves, as before guardians existed.
 */
#include "internal.h"

#include <errno.h>

long pk__guard_clone(void *args, size_t size, int watch_fd, int dir_fd, void *state, unsigned gen)
{
    (void)args;
    (void)size;
    (void)watch_fd;
    (void)dir_fd;
    (void)state;
    (void)gen;
    return -ENOSYS;
}
