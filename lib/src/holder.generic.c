/*
 * pk__holder_clone for architectures without a holder trampoline in this tree: it reports ENOSYS,
 * and pooled leaves go without a holder (holder.linux.c), flipping between populated and empty on
 * every run as they did before holders existed.
 */
#include "internal.h"

#include <errno.h>

long pk__holder_clone(void *args, size_t size, int keep_fd)
{
    (void)args;
    (void)size;
    (void)keep_fd;
    return -ENOSYS;
}
