/*
 * The POSIX interfaces the harness rooms use that the Windows C runtime (mingw-w64's msvcrt)
 * lacks or spells differently. The Windows build force-includes this header into every harness,
 * contender and phases source (-include), so the rooms keep one source for both platforms; the
 * functions are implemented on Win32 in posix.windows.c, regular expressions in
 * regex.windows.cc. Only what the rooms call is here, with the semantics they rely on:
 *   open flags   O_CLOEXEC is _O_NOINHERIT (the same guarantee: no child inherits it);
 *                O_DIRECTORY/O_NOCTTY do not exist (a directory cannot be opened, so a
 *                directory fsync is skipped, as "best effort" allows)
 *   files        mkdir(path, mode) ignores the mode; fsync is _commit (a no-op on a read-only
 *                descriptor, which Windows cannot flush); rename replaces an
 *                existing file (MoveFileEx); mkostemp and mkdtemp create exclusively; nftw walks
 *                depth-first (ftw.h); every file is opened in binary mode
 *   processes    getrusage (sys/resource.h): RUSAGE_SELF from GetProcessTimes, RUSAGE_CHILDREN
 *                from a Job Object this process puts itself in at first use, whose accounting
 *                covers every descendant, minus our own times
 *   signals      sigaction over the C runtime's signal() (SIGINT and SIGTERM; the handler is
 *                reinstalled unless SA_RESETHAND)
 *   CPUs         sched_getaffinity over GetProcessAffinityMask (64 CPUs)
 */
#ifndef PKB_COMPAT_H
#define PKB_COMPAT_H

#include <direct.h>
#include <fcntl.h>
#include <io.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef O_CLOEXEC
#define O_CLOEXEC _O_NOINHERIT
#endif
/* Not a Windows flag: open() refuses it, as it refuses directories. */
#ifndef O_DIRECTORY
#define O_DIRECTORY 0x200000
#endif
#ifndef O_NOCTTY
#define O_NOCTTY 0
#endif
/* A path's directories end at '/' or '\\' (common/files.h). */
#define PKB_DIR_SEPARATORS "/\\"
#ifndef NAME_MAX
#define NAME_MAX 255
#endif
#ifndef STDOUT_FILENO
#define STDOUT_FILENO 1
#endif

#define mkdir(path, mode) _mkdir(path)
#ifndef __cplusplus /* C++ has std::remove: the C rooms only */
/* rename replaces an existing file, as POSIX's does (MoveFileEx, written through). */
#define rename(from, to) pkb_compat_rename((from), (to))
/* remove removes an empty directory too, as POSIX's does. */
#define remove(path) pkb_compat_remove(path)
int pkb_compat_remove(const char *path);
#endif
int pkb_compat_rename(const char *from, const char *to);
/* X_OK does not exist to the C runtime (an executable is a file that exists). */
#define access(path, mode) _access((path), (mode)&6)
/* fsync is _commit; a descriptor opened read-only cannot be flushed on Windows
 * (FlushFileBuffers needs write access), so there it is a no-op: every file the rooms write was
 * flushed through the descriptor that wrote it. */
#define fsync(fd) pkb_compat_fsync(fd)
int pkb_compat_fsync(int fd);
#define program_invocation_name (_pgmptr)

int mkostemp(char *tmpl, int flags);

/* The absolute path of `name` in the directory of this executable (a static buffer). At start-up
 * that directory is put first in PATH, so the programs built beside pkbench.exe (cat.exe, the
 * scenarios' passthrough, and pk_tiny.exe) are found by their bare names. */
const char *pkb_compat_sibling(const char *name);

int mkostemp(char *tmpl, int flags);

/* sysconf: only the number of CPUs online. */
#define _SC_NPROCESSORS_ONLN 84
long sysconf(int name);
char *mkdtemp(char *tmpl);

#ifndef __cplusplus
/* sigaction over signal(). */
struct sigaction {
    void (*sa_handler)(int);
    int sa_flags;
    int sa_mask;
};
#define SA_RESTART   0x1
#define SA_RESETHAND 0x2
static inline int sigemptyset(int *set)
{
    *set = 0;
    return 0;
}
int sigaction(int sig, const struct sigaction *sa, struct sigaction *old);
#endif

/* vasprintf: a malloc'd formatted string (C99 formats, as everywhere in the rooms). */
#include <stdarg.h>
#define vasprintf pkb_compat_vasprintf
int pkb_compat_vasprintf(char **out, const char *fmt, va_list ap);

/* gmtime_r is msvcrt's gmtime_s with its arguments the other way round. */
#define gmtime_r(t, tm)    (gmtime_s((tm), (t)) == 0 ? (tm) : NULL)
#define localtime_r(t, tm) (localtime_s((tm), (t)) == 0 ? (tm) : NULL)
#ifndef __cplusplus
/* strndup is POSIX 2008, not in the C runtime. */
char *strndup(const char *s, size_t n);
#endif
/* Windows files have no mode bits to set. */
static inline int fchmod(int fd, int mode)
{
    (void)fd, (void)mode;
    return 0;
}
/* Only "/proc/self/exe" exists: this executable's path (UTF-8). -1 with EINVAL otherwise. */
long readlink(const char *path, char *buf, size_t len);

/* CPU affinity. */
#define CPU_SETSIZE 64
typedef struct {
    uint64_t bits;
} cpu_set_t;
#define CPU_ZERO(s)       ((s)->bits = 0)
#define CPU_SET(cpu, s)   ((s)->bits |= (uint64_t)1 << (cpu))
#define CPU_ISSET(cpu, s) (((s)->bits >> (cpu)) & 1)
int sched_getaffinity(int pid, size_t size, cpu_set_t *set);

#ifdef __cplusplus
}
#endif

#endif /* PKB_COMPAT_H */
