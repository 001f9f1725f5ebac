/*
 * The helper programs the Windows tests start: `pk_tests --helper NAME ARGS...`. Each is small and
 * does one observable thing. Arguments are read back with CommandLineToArgvW (not the C runtime's
 * code-page argv), so what `args` prints is exactly what Windows handed the child.
 */
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

static void put_utf8(FILE *f, const wchar_t *w)
{
    char buf[4096];
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, buf, sizeof buf, NULL, NULL);
    fwrite(buf, 1, n > 0 ? (size_t)n - 1 : 0, f);
}

/* Prints every argument after "--helper args", one per line, as UTF-8. */
static int args(void)
{
    int argc;
    wchar_t **argv = CommandLineToArgvW(GetCommandLineW(), &argc);
    for (int i = 3; i < argc; i++) {
        put_utf8(stdout, argv[i]);
        fputc('\n', stdout);
    }
    LocalFree(argv);
    return 0;
}

static int cat(void)
{
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
        if (fwrite(buf, 1, n, stdout) != n)
            return 1;
    return fflush(stdout) == 0 ? 0 : 1;
}

/* Writes through one 64 KiB buffer per stream: the C runtime's own stdio writes a pipe line by
 * line, and each WriteFile under Wine is a round trip to its server. */
struct out {
    HANDLE h;
    char buf[65536];
    size_t len;
};

static void out_flush(struct out *o)
{
    DWORD w;
    if (o->len > 0)
        WriteFile(o->h, o->buf, (DWORD)o->len, &w, NULL);
    o->len = 0;
}

static void out_put(struct out *o, const char *s, size_t n)
{
    if (o->len + n > sizeof o->buf)
        out_flush(o);
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static int emit(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10;
    long n_err = argc > 2 ? atol(argv[2]) : 0;
    static struct out o, e;
    o.h = GetStdHandle(STD_OUTPUT_HANDLE);
    e.h = GetStdHandle(STD_ERROR_HANDLE);
    char line[64];
    for (long i = 1; i <= n || i <= n_err; i++) {
        if (i <= n)
            out_put(&o, line, (size_t)snprintf(line, sizeof line, "line %ld\n", i));
        if (i <= n_err)
            out_put(&e, line, (size_t)snprintf(line, sizeof line, "err %ld\n", i));
    }
    out_flush(&o);
    out_flush(&e);
    return 0;
}

static BOOL WINAPI ignore_ctrl(DWORD type)
{
    (void)type;
    return TRUE;
}

static BOOL WINAPI exit_on_ctrl(DWORD type)
{
    (void)type;
    ExitProcess(42);
}

/* Starts a grandchild (this program, sleeping), prints its pid, then sleeps or exits. */
static int grandchild(int argc, char **argv)
{
    wchar_t self[MAX_PATH], cmd[MAX_PATH * 2];
    GetModuleFileNameW(NULL, self, MAX_PATH);
    swprintf(cmd, MAX_PATH * 2, L"\"%ls\" --helper sleep 60000", self);
    STARTUPINFOW si = {.cb = sizeof si};
    PROCESS_INFORMATION pi;
    if (!CreateProcessW(self, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
        return 3;
    printf("%lu\n", pi.dwProcessId);
    fflush(stdout);
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    if (argc > 1)
        Sleep((DWORD)atol(argv[1]));
    return 0;
}

static int env(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        wchar_t name[256], value[4096];
        MultiByteToWideChar(CP_UTF8, 0, argv[i], -1, name, 256);
        if (GetEnvironmentVariableW(name, value, 4096) == 0)
            printf("%s=(unset)\n", argv[i]);
        else {
            printf("%s=", argv[i]);
            put_utf8(stdout, value);
            putchar('\n');
        }
    }
    return 0;
}

static int crash(void)
{
    /* No error dialog and no debugger: just the exception's code as the exit status. */
    SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX);
    volatile int *volatile p = NULL;
    *p = 1;
    return 0;
}

static int self_path(void)
{
    wchar_t self[MAX_PATH];
    GetModuleFileNameW(NULL, self, MAX_PATH);
    put_utf8(stdout, self);
    putchar('\n');
    return 0;
}

int pk_test_run_helper(int argc, char **argv)
{
    const char *name = argv[0];
    if (strcmp(name, "exit") == 0)
        ExitProcess(argc > 1 ? (UINT)strtoul(argv[1], NULL, 0) : 0);
    if (strcmp(name, "args") == 0)
        return args();
    if (strcmp(name, "cat") == 0)
        return cat();
    if (strcmp(name, "emit") == 0)
        return emit(argc, argv);
    if (strcmp(name, "sleep") == 0) {
        Sleep(argc > 1 ? (DWORD)atol(argv[1]) : 1000);
        return 0;
    }
    if (strcmp(name, "ignore-break") == 0) {
        SetConsoleCtrlHandler(ignore_ctrl, TRUE);
        puts("ready");
        fflush(stdout);
        Sleep(argc > 1 ? (DWORD)atol(argv[1]) : 60000);
        return 0;
    }
    if (strcmp(name, "exit-on-break") == 0) {
        SetConsoleCtrlHandler(exit_on_ctrl, TRUE);
        puts("ready");
        fflush(stdout);
        Sleep(argc > 1 ? (DWORD)atol(argv[1]) : 60000);
        return 0;
    }
    if (strcmp(name, "grandchild") == 0)
        return grandchild(argc, argv);
    if (strcmp(name, "env") == 0)
        return env(argc, argv);
    if (strcmp(name, "crash") == 0)
        return crash();
    if (strcmp(name, "self") == 0)
        return self_path();
    if (strcmp(name, "silent-then-lines") == 0) {
        Sleep(argc > 1 ? (DWORD)atol(argv[1]) : 100);
        puts("late");
        return 0;
    }
    fprintf(stderr, "pk_tests: no helper named '%s'\n", name);
    return 2;
}
