/*
 * pkrun's platform services on Windows: WriteFile on the standard handles (bytes unchanged, no
 * text-mode translation), a console control handler standing in for signals (Ctrl+C -> SIGINT,
 * Ctrl+Break and closing the console -> SIGTERM, both through the cancel handle, so the run ends
 * the whole tree), and MoveFileExW(MOVEFILE_REPLACE_EXISTING) for the atomic JSON file.
 */
#include "os.h"

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <windows.h>

static pk_cancel *forward_to;

static BOOL WINAPI on_ctrl(DWORD type)
{
    pk_cancel_trigger_signal(forward_to, type == CTRL_C_EVENT ? 2 : 15);
    return TRUE;
}

void pkrun_os_init(void)
{
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stderr), _O_BINARY);
}

void pkrun_write(int stream, const char *p, size_t n, bool newline)
{
    HANDLE h = GetStdHandle(stream == 1 ? STD_OUTPUT_HANDLE : STD_ERROR_HANDLE);
    const char *parts[2] = {p, "\n"};
    size_t lens[2] = {n, newline ? 1 : 0};
    for (int i = 0; i < 2; i++) {
        size_t off = 0;
        while (off < lens[i]) {
            DWORD chunk = lens[i] - off > (1u << 30) ? 1u << 30 : (DWORD)(lens[i] - off), w = 0;
            if (!WriteFile(h, parts[i] + off, chunk, &w, NULL))
                return; /* our own output is gone: keep running the child, drop its output */
            off += w;
        }
    }
}

int pkrun_forward_signals(pk_cancel *cancel)
{
    forward_to = cancel;
    return SetConsoleCtrlHandler(on_ctrl, TRUE) ? 0 : -EINVAL;
}

FILE *pkrun_create_temp(const char *path, char *tmp, size_t cap)
{
    snprintf(tmp, cap, "%s.tmp.%lu", path, GetCurrentProcessId());
    return fopen(tmp, "wb");
}

int pkrun_replace(const char *tmp, const char *path)
{
    wchar_t from[MAX_PATH * 2], to[MAX_PATH * 2];
    if (MultiByteToWideChar(CP_UTF8, 0, tmp, -1, from, MAX_PATH * 2) == 0 ||
        MultiByteToWideChar(CP_UTF8, 0, path, -1, to, MAX_PATH * 2) == 0) {
        errno = EINVAL;
        return -1;
    }
    if (MoveFileExW(from, to, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
        return 0;
    errno = GetLastError() == ERROR_ACCESS_DENIED ? EACCES : EIO;
    return -1;
}
