/*
 * getrusage for the Windows build (see pkb_compat.h): RUSAGE_SELF and RUSAGE_CHILDREN, user and
 * system CPU only.
 */
#ifndef PKB_COMPAT_SYS_RESOURCE_H
#define PKB_COMPAT_SYS_RESOURCE_H

#include <sys/time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RUSAGE_SELF     0
#define RUSAGE_CHILDREN (-1)

struct rusage {
    struct timeval ru_utime;
    struct timeval ru_stime;
    long ru_maxrss;
};

int getrusage(int who, struct rusage *usage);

#ifdef __cplusplus
}
#endif

#endif
