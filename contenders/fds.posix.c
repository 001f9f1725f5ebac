/*
 * pkb_count_fds (contender.h) where /proc exists: the entries of /proc/self/fd, less the one the
 * listing itself opens. Called by a measuring process with a fan-out's children all started
 * (never while timing: with 16,000 descriptors open the listing takes milliseconds).
 */
#define _GNU_SOURCE
#include "contenders/contender.h"

#include <dirent.h>

uint32_t pkb_count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return 0;
    uint32_t n = 0;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] >= '0' && e->d_name[0] <= '9';
    closedir(d);
    return n > 0 ? n - 1 : 0; /* the listing's own descriptor */
}
