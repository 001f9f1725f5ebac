/*
 * scan.posix — whether one directory lies inside another (scan.h), by their resolved paths, so
 * "results/../site", a symlink or a trailing slash cannot hide that a site would replace its own
 * sources.
 */
#define _GNU_SOURCE
#include "publish/scan.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

bool pkb__dir_inside(const char *inner, const char *outer)
{
    char a[PATH_MAX], b[PATH_MAX];
    if (realpath(inner, a) == NULL || realpath(outer, b) == NULL)
        return false;
    size_t n = strlen(b);
    if (n == 1) /* "/" holds everything */
        return true;
    return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}
