/*
 * scan.windows — whether one directory lies inside another (scan.h), by their full paths
 * (_fullpath), compared as Windows compares names: without case, '/' and '\' alike.
 */
#include "publish/scan.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int fold(int c)
{
    return c == '/' ? '\\' : tolower(c);
}

bool pkb__dir_inside(const char *inner, const char *outer)
{
    char a[_MAX_PATH], b[_MAX_PATH];
    if (_fullpath(a, inner, sizeof a) == NULL || _fullpath(b, outer, sizeof b) == NULL)
        return false;
    size_t n = strlen(b);
    while (n > 3 && (b[n - 1] == '\\' || b[n - 1] == '/'))
        n--; /* "C:\x\" is "C:\x"; "C:\" stays */
    for (size_t i = 0; i < n; i++)
        if (fold((unsigned char)a[i]) != fold((unsigned char)b[i]))
            return false;
    return a[n] == '\0' || a[n] == '\\' || a[n] == '/' || b[n - 1] == '\\';
}
