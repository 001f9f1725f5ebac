/*
 * The one rule every file pkrun writes follows (output.posix.c states it), on Windows, and
 * pkrun's own stdout and stderr. output.c makes what is written.
 *
 * A regular file, or a path that does not exist yet, is written to a temporary file next to it
 * (the same directory, so the same volume), flushed to disk (FlushFileBuffers) and moved over it
 * with MoveFileExW(MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH), so a reader sees the old
 * outcome or the new one, never half of one; when the path is a symbolic link, its target (the
 * opened file's final path) is what gets replaced and the link stays. Anything else a user can
 * name as an output (NUL, CON, CONOUT$, a named pipe under \\.\) is opened and written in place,
 * as cmd.exe's `>` would: a file moved over it would fail, or stand where the device was meant.
 * The path is checked before the command runs: a directory, a read-only file, or a directory
 * that refuses a new file (a temporary one is created and deleted at once) is refused then. A
 * write that fails after the run (a full disk) deletes the file the path held: an earlier run's
 * outcome must not pass for this one's.
 *
 * Every write is WriteFile on a handle: the bytes unchanged, no text-mode translation.
 */
#include "output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>
#include <windows.h>

/* The errno closest to a Windows error, for messages and the JSON. */
static int errno_of(DWORD e)
{
    switch (e) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE:
    case ERROR_BAD_NETPATH:
        return ENOENT;
    case ERROR_ACCESS_DENIED:
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION:
    case ERROR_WRITE_PROTECT:
        return EACCES;
    case ERROR_NO_DATA: /* a pipe whose reader closed it */
    case ERROR_BROKEN_PIPE:
        return EPIPE;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL:
        return ENOSPC;
    case ERROR_FILENAME_EXCED_RANGE:
        return ENAMETOOLONG;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
        return ENOMEM;
    case ERROR_INVALID_NAME:
        return EINVAL;
    case ERROR_DIRECTORY:
        return ENOTDIR;
    }
    return EIO;
}

/* path in UTF-16, malloc'd; NULL when it is not UTF-8 (or memory ran out). */
static wchar_t *wide(const char *path)
{
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
    wchar_t *w = n > 0 ? malloc((size_t)n * sizeof *w) : NULL;
    if (w != NULL && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, n) != n) {
        free(w);
        w = NULL;
    }
    return w;
}

static int write_handle(HANDLE h, const char *data, size_t len, uint64_t *done)
{
    while (len > 0) {
        DWORD chunk = len > (1u << 30) ? 1u << 30 : (DWORD)len, wrote = 0;
        if (!WriteFile(h, data, chunk, &wrote, NULL))
            return -errno_of(GetLastError());
        if (wrote == 0)
            return -EIO;
        data += wrote;
        len -= wrote;
        *done += wrote;
    }
    return 0;
}

int pkr_write_std(int stream, const char *data, size_t len, uint64_t *done)
{
    HANDLE h = GetStdHandle(stream == 1 ? STD_OUTPUT_HANDLE : STD_ERROR_HANDLE);
    if (h == NULL || h == INVALID_HANDLE_VALUE)
        return -EBADF;
    return write_handle(h, data, len, done);
}

/* ---- what a path names --------------------------------------------------------------------- */

enum target_kind {
    TARGET_NEW,     /* nothing there yet: replaced atomically */
    TARGET_REGULAR, /* a file on disk (a link's target): replaced atomically */
    TARGET_OTHER,   /* a device or a pipe: written in place */
};

struct target {
    enum target_kind kind;
    wchar_t *path; /* what is replaced or written: the final path of a regular file */
    bool read_only;
};

/* What `path` names (see the top of this file). 0 or -errno; release t->path with free. */
static int find_target(const char *path, struct target *t)
{
    *t = (struct target){.kind = TARGET_NEW, .path = wide(path)};
    if (t->path == NULL)
        return -EILSEQ;
    DWORD attrs = GetFileAttributesW(t->path);
    DWORD e = attrs == INVALID_FILE_ATTRIBUTES ? GetLastError() : 0;
    if (e == ERROR_FILE_NOT_FOUND)
        return 0;
    if (e == ERROR_PATH_NOT_FOUND)
        return -ENOENT;
    if (e == 0 && (attrs & FILE_ATTRIBUTE_DIRECTORY))
        return -EISDIR;
    t->read_only = e == 0 && (attrs & FILE_ATTRIBUTE_READONLY);
    if (wcsncmp(t->path, L"\\\\.\\", 4) == 0) {
        t->kind = TARGET_OTHER; /* a device or a pipe: opening it to look would connect to it */
        return 0;
    }
    HANDLE h = CreateFileW(t->path, FILE_READ_ATTRIBUTES,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, 0, NULL);
    if (h == INVALID_HANDLE_VALUE)
        return GetLastError() == ERROR_FILE_NOT_FOUND ? 0 : -errno_of(GetLastError());
    int rc = 0;
    t->kind = GetFileType(h) == FILE_TYPE_DISK ? TARGET_REGULAR : TARGET_OTHER;
    if (t->kind == TARGET_REGULAR) {
        DWORD n = GetFinalPathNameByHandleW(h, NULL, 0, FILE_NAME_NORMALIZED);
        wchar_t *real = n > 0 ? malloc(n * sizeof *real) : NULL;
        if (real != NULL && GetFinalPathNameByHandleW(h, real, n, FILE_NAME_NORMALIZED) < n) {
            free(t->path);
            t->path = real;
        } else {
            free(real);
            rc = n > 0 ? -ENOMEM : -errno_of(GetLastError());
        }
    }
    CloseHandle(h);
    return rc;
}

/* A temporary file next to `target` (".pkrun-<pid>" in its directory: as short as the target's
 * name may be long), created (emptied) for writing; *tmp receives its name. */
static HANDLE create_temp(const wchar_t *target, DWORD flags, wchar_t **tmp)
{
    size_t n = wcslen(target) + 32;
    *tmp = malloc(n * sizeof **tmp);
    if (*tmp == NULL)
        return INVALID_HANDLE_VALUE;
    const wchar_t *slash = wcsrchr(target, L'\\'), *fwd = wcsrchr(target, L'/');
    if (fwd != NULL && (slash == NULL || fwd > slash))
        slash = fwd;
    int dir = slash != NULL ? (int)(slash - target) + 1 : 0;
    swprintf(*tmp, n, L"%.*ls.pkrun-%lu", dir, target, (unsigned long)GetCurrentProcessId());
    return CreateFileW(*tmp, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL | flags,
                       NULL);
}

/* ---- the rule ------------------------------------------------------------------------------ */

int pkr_file_check(const char *path)
{
    struct target t;
    int rc = find_target(path, &t);
    if (rc == 0 && t.kind == TARGET_REGULAR && t.read_only)
        rc = -EACCES;
    if (rc == 0 && t.kind != TARGET_OTHER) {
        /* Its directory must take a new file: the temporary one, deleted as it is closed. */
        wchar_t *tmp;
        HANDLE h = create_temp(t.path, FILE_FLAG_DELETE_ON_CLOSE, &tmp);
        if (h == INVALID_HANDLE_VALUE)
            rc = tmp == NULL ? -ENOMEM : -errno_of(GetLastError());
        else
            CloseHandle(h);
        free(tmp);
    }
    free(t.path);
    return rc;
}

static int write_in_place(const wchar_t *path, const char *data, size_t len)
{
    HANDLE h = CreateFileW(path, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                           OPEN_EXISTING, 0, NULL);
    if (h == INVALID_HANDLE_VALUE)
        return -errno_of(GetLastError());
    uint64_t done = 0;
    int rc = write_handle(h, data, len, &done);
    CloseHandle(h);
    return rc;
}

static int write_atomic(const wchar_t *target, const char *data, size_t len)
{
    wchar_t *tmp;
    HANDLE h = create_temp(target, 0, &tmp);
    if (h == INVALID_HANDLE_VALUE) {
        int rc = tmp == NULL ? -ENOMEM : -errno_of(GetLastError());
        free(tmp);
        return rc;
    }
    uint64_t done = 0;
    int rc = write_handle(h, data, len, &done);
    if (rc == 0 && !FlushFileBuffers(h))
        rc = -errno_of(GetLastError());
    CloseHandle(h);
    if (rc == 0 && !MoveFileExW(tmp, target, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
        rc = -errno_of(GetLastError());
    if (rc != 0) {
        DeleteFileW(tmp);
        /* An earlier outcome must not pass for this run's. */
        if (DeleteFileW(target))
            fprintf(stderr,
                    "pkrun: --json: removed '%ls', an earlier outcome that would pass for "
                    "this run's: the new one cannot be written\n",
                    target);
    }
    free(tmp);
    return rc;
}

int pkr_file_write(const char *path, const char *data, size_t len)
{
    struct target t;
    int rc = find_target(path, &t);
    if (rc == 0)
        rc = t.kind == TARGET_OTHER ? write_in_place(t.path, data, len)
                                    : write_atomic(t.path, data, len);
    free(t.path);
    return rc;
}
