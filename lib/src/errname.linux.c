/*
 * errno names on Linux: glibc (2.32+) knows them all through strerrorname_np.
 */
#define _GNU_SOURCE
#include "errname.h"

#include <string.h>

const char *pk__errno_name(int e)
{
    return strerrorname_np(e);
}
