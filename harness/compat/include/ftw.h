/*
 * nftw for the Windows build (see pkb_compat.h): a depth-first walk, FTW_DEPTH order (children
 * before their directory), which is all the rooms use it for (removing a tree).
 */
#ifndef PKB_COMPAT_FTW_H
#define PKB_COMPAT_FTW_H

#include <sys/stat.h>

#define FTW_F     0
#define FTW_D     1
#define FTW_DP    5
#define FTW_PHYS  0x1
#define FTW_DEPTH 0x8

struct FTW {
    int base;
    int level;
};

int nftw(const char *path,
         int (*fn)(const char *, const struct stat *, int, struct FTW *),
         int fds,
         int flags);

#endif
