/*
 * pk__clone3_raw for architectures without a trampoline in this tree: it reports ENOSYS, and the
 * mechanism probe falls back to clone(CLONE_VM|CLONE_VFORK|CLONE_PIDFD) through glibc's wrapper.
 */
#include "internal.h"

#include <errno.h>

long pk__clone3_raw(void *args, size_t size, int (*fn)(void *), void *arg)
{
    (void)args;
    (void)size;
    (void)fn;
    (void)arg;
    return -ENOSYS;
}
