/*
 * The POSIX functions pkb_compat.h declares, on Win32 (see that header for what each promises).
 * Also, at start-up, binary mode for every file the C runtime opens and for the standard streams:
 * a results file, a report or a line of output is the bytes the rooms wrote, with no CR added.
 */
#include "pkb_compat.h"

#include <errno.h>
#include <stdbool.h>
#include <ftw.h>
#include <io.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <windows.h>

static char exe_dir[MAX_PATH * 3];

/* Binary mode, and this executable's directory first in PATH (see pkb_compat_sibling). */
__attribute__((constructor)) static void start_up(void)
{
    _fmode = _O_BINARY;
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stderr), _O_BINARY);
    wchar_t self[MAX_PATH];
    DWORD n = GetModuleFileNameW(NULL, self, MAX_PATH);
    wchar_t *slash = n > 0 ? wcsrchr(self, L'\\') : NULL;
    if (slash == NULL)
        return;
    *slash = L'\0';
    WideCharToMultiByte(CP_UTF8, 0, self, -1, exe_dir, sizeof exe_dir, NULL, NULL);
    DWORD old = GetEnvironmentVariableW(L"PATH", NULL, 0);
    size_t len = wcslen(self) + 1 + old + 1;
    wchar_t *path = malloc(len * sizeof *path);
    if (path == NULL)
        return;
    wcscpy(path, self);
    if (old > 0) {
        wcscat(path, L";");
        GetEnvironmentVariableW(L"PATH", path + wcslen(path), old);
    }
    SetEnvironmentVariableW(L"PATH", path);
    free(path);
}

const char *pkb_compat_sibling(const char *name)
{
    static char path[MAX_PATH * 3 + 64];
    snprintf(path, sizeof path, "%s\\%s", exe_dir, name);
    return path;
}

/* ---- temporary files ----------------------------------------------------------------------- */

/* Replaces the trailing XXXXXX with fresh characters; -1 (EINVAL) when there is none. */
static int fill_template(char *tmpl)
{
    size_t n = strlen(tmpl);
    if (n < 6 || strcmp(tmpl + n - 6, "XXXXXX") != 0) {
        errno = EINVAL;
        return -1;
    }
    static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    static volatile LONG counter;
    unsigned long long x = GetTickCount64() * 2654435761u ^
                           (unsigned long long)GetCurrentProcessId() << 20 ^
                           (unsigned long long)InterlockedIncrement(&counter) * 40503u;
    for (size_t i = n - 6; i < n; i++, x /= 36)
        tmpl[i] = chars[x % 36];
    return 0;
}

int mkostemp(char *tmpl, int flags)
{
    char keep[MAX_PATH];
    snprintf(keep, sizeof keep, "%s", tmpl);
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(tmpl, strlen(keep) + 1, "%s", keep);
        if (fill_template(tmpl) != 0)
            return -1;
        int fd =
            _open(tmpl, _O_RDWR | _O_CREAT | _O_EXCL | _O_BINARY | flags, _S_IREAD | _S_IWRITE);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

char *mkdtemp(char *tmpl)
{
    char keep[MAX_PATH];
    snprintf(keep, sizeof keep, "%s", tmpl);
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(tmpl, strlen(keep) + 1, "%s", keep);
        if (fill_template(tmpl) != 0)
            return NULL;
        if (_mkdir(tmpl) == 0)
            return tmpl;
        if (errno != EEXIST)
            return NULL;
    }
    return NULL;
}

/* ---- nftw ---------------------------------------------------------------------------------- */

static int
walk(const char *path, int level, int (*fn)(const char *, const struct stat *, int, struct FTW *))
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    const char *slash = strrchr(path, '/'), *bslash = strrchr(path, '\\');
    const char *base = slash > bslash ? slash : bslash;
    struct FTW ftw = {base != NULL ? (int)(base - path) + 1 : 0, level};
    if (!S_ISDIR(st.st_mode))
        return fn(path, &st, FTW_F, &ftw);
    char pattern[MAX_PATH * 2];
    snprintf(pattern, sizeof pattern, "%s\\*", path);
    struct _finddata_t fd;
    intptr_t h = _findfirst(pattern, &fd);
    int rc = 0;
    if (h != -1) {
        do {
            if (strcmp(fd.name, ".") == 0 || strcmp(fd.name, "..") == 0)
                continue;
            char child[MAX_PATH * 2];
            snprintf(child, sizeof child, "%s\\%s", path, fd.name);
            rc = walk(child, level + 1, fn);
        } while (rc == 0 && _findnext(h, &fd) == 0);
        _findclose(h);
    }
    return rc != 0 ? rc : fn(path, &st, FTW_DP, &ftw);
}

int nftw(const char *path,
         int (*fn)(const char *, const struct stat *, int, struct FTW *),
         int fds,
         int flags)
{
    (void)fds, (void)flags; /* always depth-first, never following links: what the rooms ask */
    return walk(path, 0, fn);
}

/* ---- getrusage ----------------------------------------------------------------------------- */

static struct timeval to_tv(FILETIME ft)
{
    unsigned long long t = ((unsigned long long)ft.dwHighDateTime << 32 | ft.dwLowDateTime) / 10;
    return (struct timeval){(long)(t / 1000000), (long)(t % 1000000)};
}

static struct timeval li_tv(LARGE_INTEGER li)
{
    unsigned long long t = (unsigned long long)li.QuadPart / 10;
    return (struct timeval){(long)(t / 1000000), (long)(t % 1000000)};
}

static long long tv_us(struct timeval tv)
{
    return (long long)tv.tv_sec * 1000000 + tv.tv_usec;
}

/* A job holding this process and so, from then on, every process it starts: its accounting is
 * the CPU of the whole family. NULL when this process cannot join one. */
static HANDLE family_job(void)
{
    static INIT_ONCE once = INIT_ONCE_STATIC_INIT;
    static HANDLE job;
    BOOL pending;
    if (InitOnceBeginInitialize(&once, 0, &pending, NULL) && pending) {
        job = CreateJobObjectW(NULL, NULL);
        if (job != NULL && !AssignProcessToJobObject(job, GetCurrentProcess())) {
            CloseHandle(job);
            job = NULL;
        }
        InitOnceComplete(&once, 0, NULL);
    }
    return job;
}

int getrusage(int who, struct rusage *u)
{
    memset(u, 0, sizeof *u);
    FILETIME c, e, k, usr;
    if (!GetProcessTimes(GetCurrentProcess(), &c, &e, &k, &usr)) {
        errno = EINVAL;
        return -1;
    }
    if (who == RUSAGE_SELF) {
        u->ru_utime = to_tv(usr);
        u->ru_stime = to_tv(k);
        return 0;
    }
    HANDLE job = family_job();
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION acc;
    if (job == NULL || !QueryInformationJobObject(job, JobObjectBasicAccountingInformation, &acc,
                                                  sizeof acc, NULL)) {
        errno = ENOSYS; /* the fields stay 0: no child CPU can be known */
        return -1;
    }
    long long cu = tv_us(li_tv(acc.TotalUserTime)) - tv_us(to_tv(usr));
    long long cs = tv_us(li_tv(acc.TotalKernelTime)) - tv_us(to_tv(k));
    u->ru_utime =
        (struct timeval){(long)(cu > 0 ? cu / 1000000 : 0), (long)(cu > 0 ? cu % 1000000 : 0)};
    u->ru_stime =
        (struct timeval){(long)(cs > 0 ? cs / 1000000 : 0), (long)(cs > 0 ? cs % 1000000 : 0)};
    return 0;
}

/* ---- signals and CPUs ---------------------------------------------------------------------- */

static void (*handlers[NSIG])(int);
static int handler_flags[NSIG];

static void trampoline(int sig)
{
    /* The C runtime resets the disposition before calling: reinstall unless asked not to. */
    if (!(handler_flags[sig] & SA_RESETHAND))
        signal(sig, trampoline);
    if (handlers[sig] != NULL)
        handlers[sig](sig);
}

int sigaction(int sig, const struct sigaction *sa, struct sigaction *old)
{
    if (sig <= 0 || sig >= NSIG) {
        errno = EINVAL;
        return -1;
    }
    if (old != NULL)
        *old = (struct sigaction){handlers[sig], handler_flags[sig], 0};
    if (sa == NULL)
        return 0;
    handlers[sig] = sa->sa_handler;
    handler_flags[sig] = sa->sa_flags;
    bool special = sa->sa_handler == SIG_DFL || sa->sa_handler == SIG_IGN;
    return signal(sig, special ? sa->sa_handler : trampoline) == SIG_ERR ? -1 : 0;
}

long sysconf(int name)
{
    if (name != _SC_NPROCESSORS_ONLN) {
        errno = EINVAL;
        return -1;
    }
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return (long)si.dwNumberOfProcessors;
}

int pkb_compat_vasprintf(char **out, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    *out = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (*out == NULL) {
        va_end(again);
        return -1;
    }
    vsnprintf(*out, (size_t)n + 1, fmt, again);
    va_end(again);
    return n;
}

char *strndup(const char *s, size_t n)
{
    size_t len = 0;
    while (len < n && s[len] != '\0')
        len++;
    char *copy = malloc(len + 1);
    if (copy != NULL) {
        memcpy(copy, s, len);
        copy[len] = '\0';
    }
    return copy;
}

int pkb_compat_remove(const char *path)
{
    if (DeleteFileA(path) || RemoveDirectoryA(path))
        return 0;
    errno = GetLastError() == ERROR_DIR_NOT_EMPTY ? ENOTEMPTY : ENOENT;
    return -1;
}

int pkb_compat_fsync(int fd)
{
    if (_commit(fd) == 0)
        return 0;
    return errno == EBADF || errno == EACCES ? 0 : -1;
}

int pkb_compat_rename(const char *from, const char *to)
{
    if (MoveFileExA(from, to, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
        return 0;
    DWORD e = GetLastError();
    errno = e == ERROR_ACCESS_DENIED ? EACCES : e == ERROR_FILE_NOT_FOUND ? ENOENT : EIO;
    return -1;
}

long readlink(const char *path, char *buf, size_t len)
{
    if (strcmp(path, "/proc/self/exe") != 0) {
        errno = EINVAL;
        return -1;
    }
    wchar_t self[MAX_PATH];
    DWORD n = GetModuleFileNameW(NULL, self, MAX_PATH);
    int k = n > 0 ? WideCharToMultiByte(CP_UTF8, 0, self, -1, buf, (int)len, NULL, NULL) : 0;
    if (k <= 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return k - 1; /* like readlink: no terminating NUL counted */
}

int sched_getaffinity(int pid, size_t size, cpu_set_t *set)
{
    (void)pid, (void)size;
    DWORD_PTR mine, system;
    if (!GetProcessAffinityMask(GetCurrentProcess(), &mine, &system)) {
        errno = EINVAL;
        return -1;
    }
    set->bits = (uint64_t)mine;
    return 0;
}
