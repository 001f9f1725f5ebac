/* raw_clone3 where this tree has no trampoline: the floor benchmark then marks the raw clone3
 * row as unavailable instead of timing something else under its name. */
#include "raw_clone3.h"

#include <errno.h>

long raw_clone3(void *args, size_t size, int (*fn)(void *), void *arg)
{
    (void)args;
    (void)size;
    (void)fn;
    (void)arg;
    return -ENOSYS;
}
