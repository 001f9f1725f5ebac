/*
 * Text and errors at the Win32 boundary.
 *
 * The public API speaks UTF-8; Windows' wide functions take UTF-16. Conversion is strict on the
 * way in (invalid UTF-8 in an argument, a path or an environment entry is an error the caller
 * hears about, -EILSEQ, rather than a silently different string) and lossy on the way out
 * (an unpaired surrogate in a name Windows gives back becomes U+FFFD). Win32 error codes become
 * negative errno values, the library's one error currency; the few with no errno equivalent
 * become -EIO. The clock is QueryPerformanceCounter, monotonic like CLOCK_MONOTONIC.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

int pk__utf16(const char *s, wchar_t **out)
{
    *out = NULL;
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
    if (n <= 0)
        return GetLastError() == ERROR_NO_UNICODE_TRANSLATION ? -EILSEQ : -EINVAL;
    wchar_t *w = malloc((size_t)n * sizeof *w);
    if (w == NULL)
        return -ENOMEM;
    MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n);
    *out = w;
    return 0;
}

int pk__utf8(const wchar_t *s, char **out)
{
    *out = NULL;
    int n = WideCharToMultiByte(CP_UTF8, 0, s, -1, NULL, 0, NULL, NULL);
    if (n <= 0)
        return -EINVAL;
    char *u = malloc((size_t)n);
    if (u == NULL)
        return -ENOMEM;
    WideCharToMultiByte(CP_UTF8, 0, s, -1, u, n, NULL, NULL);
    *out = u;
    return 0;
}

int pk__win_error(DWORD err)
{
    switch (err) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE:
    case ERROR_BAD_NETPATH:
    case ERROR_BAD_NET_NAME:
    case ERROR_MOD_NOT_FOUND:
        return -ENOENT;
    case ERROR_ACCESS_DENIED:
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION:
    case 740: /* ERROR_ELEVATION_REQUIRED */
        return -EACCES;
    case ERROR_DIRECTORY:
        return -ENOTDIR;
    case ERROR_BAD_EXE_FORMAT:
    case ERROR_EXE_MACHINE_TYPE_MISMATCH:
    case ERROR_BAD_FORMAT:
        return -ENOEXEC;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
    case ERROR_COMMITMENT_LIMIT:
        return -ENOMEM;
    case ERROR_TOO_MANY_OPEN_FILES:
    case ERROR_NO_SYSTEM_RESOURCES:
        return -EMFILE;
    case ERROR_INVALID_PARAMETER:
    case ERROR_INVALID_NAME:
    case ERROR_BAD_PATHNAME:
        return -EINVAL;
    case ERROR_FILENAME_EXCED_RANGE:
        return -ENAMETOOLONG;
    case ERROR_BROKEN_PIPE:
    case ERROR_NO_DATA:
    case ERROR_PIPE_NOT_CONNECTED:
        return -EPIPE;
    case ERROR_INVALID_HANDLE:
        return -EBADF;
    case ERROR_NOT_SUPPORTED:
    case ERROR_CALL_NOT_IMPLEMENTED:
        return -ENOSYS;
    case ERROR_OPERATION_ABORTED:
        return -ECANCELED;
    case WAIT_TIMEOUT:
        return -ETIMEDOUT;
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS:
        return -EEXIST;
    case ERROR_DIR_NOT_EMPTY:
        return -ENOTEMPTY;
    default:
        return -EIO;
    }
}

int64_t pk__now_ns(void)
{
    static LARGE_INTEGER freq;
    LARGE_INTEGER now;
    if (freq.QuadPart == 0)
        QueryPerformanceFrequency(&freq); /* constant since boot: a benign race */
    QueryPerformanceCounter(&now);
    return (int64_t)(now.QuadPart / freq.QuadPart * 1000000000 +
                     now.QuadPart % freq.QuadPart * 1000000000 / freq.QuadPart);
}
