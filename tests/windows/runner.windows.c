/*
 * The Windows test runner (pk_tests.exe), the counterpart of tests/runner.c: every test runs in a
 * fresh process (this program re-started with `--run NAME`) under a timeout, and the same program
 * is every helper the tests start (`--helper NAME ...`). Output is TAP, ending with
 * "N passed, N failed, N skipped"; exit status 0 when nothing failed, 1 otherwise, 2 bad usage.
 *
 * It deliberately does not use processkit: each test process is started with CreateProcessW into
 * a Job Object of the runner's own, so on timeout the whole tree goes, and after the test a
 * process still alive in that job fails the test ("left a child"). Inside the test process, a
 * handle still open after the test that was not open before (GetProcessHandleCount) fails it too.
 *
 * Timeouts come from list.windows.h, multiplied by PK_TEST_TIMEOUT_MULTIPLIER (Wine's process
 * start is slower than Windows'; ./x test sets 3).
 */
#include "test.h"

#include <fcntl.h>
#include <io.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#define X(name, seconds) void pk_test_##name(void);
#include "list.windows.h"
PK_TEST_LIST(X)
#undef X

struct test_entry {
    const char *name;
    void (*fn)(void);
    int seconds;
};

static const struct test_entry tests[] = {
#define X(name, seconds) {#name, pk_test_##name, seconds},
    PK_TEST_LIST(X)
#undef X
};
static const size_t ntests = sizeof tests / sizeof tests[0];

static char self_path[MAX_PATH * 4];
static char tmpdir[MAX_PATH * 4];

const char *pk_test_self(void)
{
    return self_path;
}

const char *pk_test_tmpdir(void)
{
    if (tmpdir[0] == '\0') {
        wchar_t base[MAX_PATH], dir[MAX_PATH];
        GetTempPathW(MAX_PATH, base);
        swprintf(dir, MAX_PATH, L"%lspk_test.%lu", base, GetCurrentProcessId());
        CreateDirectoryW(dir, NULL);
        WideCharToMultiByte(CP_UTF8, 0, dir, -1, tmpdir, sizeof tmpdir, NULL, NULL);
    }
    return tmpdir;
}

void pk_test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    exit(1);
}

void pk_test_skip(const char *fmt, ...)
{
    va_list ap;
    printf("SKIP: ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
    exit(PK_TEST_SKIP_STATUS);
}

int64_t pk_test_now_ms(void)
{
    return (int64_t)GetTickCount64();
}

static void remove_tree(const wchar_t *dir)
{
    wchar_t pattern[MAX_PATH];
    swprintf(pattern, MAX_PATH, L"%ls\\*", dir);
    WIN32_FIND_DATAW fd;
    HANDLE h = FindFirstFileW(pattern, &fd);
    if (h != INVALID_HANDLE_VALUE) {
        do {
            if (wcscmp(fd.cFileName, L".") == 0 || wcscmp(fd.cFileName, L"..") == 0)
                continue;
            wchar_t path[MAX_PATH];
            swprintf(path, MAX_PATH, L"%ls\\%ls", dir, fd.cFileName);
            if (fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
                remove_tree(path);
            else
                DeleteFileW(path);
        } while (FindNextFileW(h, &fd));
        FindClose(h);
    }
    RemoveDirectoryW(dir);
}

size_t pk_test_handles(void)
{
    /* GetProcessHandleCount says 0 under Wine 8, so the handle table is probed instead: every
     * value a handle can have below 2^16 (multiples of 4; handle values are allocated from the
     * bottom, so a leak of thousands still lands there) that GetHandleInformation accepts. */
    size_t n = 0;
    DWORD flags;
    for (uintptr_t h = 4; h < (1u << 16); h += 4)
        n += GetHandleInformation((HANDLE)h, &flags) != 0;
    return n;
}

static int run_inside(const struct test_entry *t)
{
    size_t before = pk_test_handles(), after;
    t->fn();
    pk_cleanup();
    int failed = 0;
    if (tmpdir[0] != '\0') {
        wchar_t w[MAX_PATH];
        MultiByteToWideChar(CP_UTF8, 0, tmpdir, -1, w, MAX_PATH);
        remove_tree(w);
    }
    after = pk_test_handles();
    /* The thread pool the library's exit waits use may keep a few handles of its own (its
     * threads, their events) once started; more than that is a leak. */
    if (after > before + 8) {
        fprintf(stderr, "hygiene: %zu handles open after the test, %zu before\n", after, before);
        failed = 1;
    }
    fflush(stdout);
    fflush(stderr);
    return failed;
}

/* ---- the outer runner ---------------------------------------------------------------------- */

static double multiplier(void)
{
    const char *m = getenv("PK_TEST_TIMEOUT_MULTIPLIER");
    double v = m != NULL ? atof(m) : 1.0;
    return v > 0 ? v : 1.0;
}

enum verdict { PASS, FAIL, SKIP };

struct capture {
    HANDLE rd;
    char *buf;
    size_t len, cap;
};

static DWORD WINAPI reader(void *arg)
{
    struct capture *c = arg;
    for (;;) {
        if (c->cap - c->len < 4096) {
            c->cap = c->cap ? c->cap * 2 : 65536;
            c->buf = realloc(c->buf, c->cap);
        }
        DWORD n = 0;
        if (!ReadFile(c->rd, c->buf + c->len, (DWORD)(c->cap - c->len - 1), &n, NULL) || n == 0)
            break;
        c->len += n;
    }
    c->buf[c->len] = '\0';
    return 0;
}

static enum verdict run_outside(const struct test_entry *t, char **out, double *secs)
{
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
    HANDLE rd, wr;
    CreatePipe(&rd, &wr, &sa, 65536);
    SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0);
    HANDLE job = CreateJobObjectW(NULL, NULL);
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION lim = {0};
    lim.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    SetInformationJobObject(job, JobObjectExtendedLimitInformation, &lim, sizeof lim);

    wchar_t cmd[MAX_PATH * 2], self[MAX_PATH], name[128];
    GetModuleFileNameW(NULL, self, MAX_PATH);
    MultiByteToWideChar(CP_UTF8, 0, t->name, -1, name, 128);
    swprintf(cmd, MAX_PATH * 2, L"\"%ls\" --run %ls", self, name);
    STARTUPINFOW si = {.cb = sizeof si, .dwFlags = STARTF_USESTDHANDLES};
    si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
    si.hStdOutput = si.hStdError = wr;
    PROCESS_INFORMATION pi;
    ULONGLONG start = GetTickCount64();
    if (!CreateProcessW(self, cmd, NULL, NULL, TRUE, CREATE_SUSPENDED, NULL, NULL, &si, &pi)) {
        *out = _strdup("runner: CreateProcessW failed");
        return FAIL;
    }
    AssignProcessToJobObject(job, pi.hProcess);
    ResumeThread(pi.hThread);
    CloseHandle(pi.hThread);
    CloseHandle(wr);
    struct capture c = {.rd = rd};
    HANDLE th = CreateThread(NULL, 0, reader, &c, 0, NULL);

    DWORD ms = (DWORD)(t->seconds * multiplier() * 1000);
    bool timed_out = WaitForSingleObject(pi.hProcess, ms) == WAIT_TIMEOUT;
    DWORD status = 1;
    GetExitCodeProcess(pi.hProcess, &status);
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION acc = {0};
    QueryInformationJobObject(job, JobObjectBasicAccountingInformation, &acc, sizeof acc, NULL);
    bool left_child = !timed_out && acc.ActiveProcesses > 0;
    TerminateJobObject(job, 1); /* whatever the test left behind goes now */
    WaitForSingleObject(th, 10000);
    CloseHandle(th);
    CloseHandle(rd);
    CloseHandle(pi.hProcess);
    CloseHandle(job);
    *secs = (double)(GetTickCount64() - start) / 1000.0;
    *out = c.buf != NULL ? c.buf : _strdup("");
    char extra[160] = "";
    if (timed_out)
        snprintf(extra, sizeof extra, "timeout: killed after %.1f s\n", *secs);
    else if (left_child && status == 0)
        snprintf(extra, sizeof extra, "hygiene: test left %lu process(es) running\n",
                 acc.ActiveProcesses);
    if (extra[0] != '\0') {
        size_t n = strlen(*out);
        char *m = realloc(*out, n + strlen(extra) + 1);
        if (m != NULL) {
            strcpy(m + n, extra);
            *out = m;
        }
        return FAIL;
    }
    if (status == 0)
        return PASS;
    return status == PK_TEST_SKIP_STATUS ? SKIP : FAIL;
}

static void print_diagnostics(const char *text)
{
    for (const char *p = text; *p != '\0';) {
        size_t n = strcspn(p, "\n");
        printf("#   %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
}

static int run_all(const struct test_entry **sel, size_t n)
{
    int passed = 0, failed = 0, skipped = 0;
    printf("1..%zu\n", n);
    fflush(stdout);
    for (size_t i = 0; i < n; i++) {
        char *out = NULL;
        double secs = 0;
        enum verdict v = run_outside(sel[i], &out, &secs);
        if (v == PASS) {
            printf("ok %zu - %s (%.2f s)\n", i + 1, sel[i]->name, secs);
            passed++;
        } else if (v == SKIP) {
            const char *reason = strstr(out, "SKIP: ");
            reason = reason ? reason + 6 : "no reason given";
            printf("ok %zu - %s # SKIP %.*s\n", i + 1, sel[i]->name, (int)strcspn(reason, "\r\n"),
                   reason);
            skipped++;
        } else {
            printf("not ok %zu - %s (%.2f s)\n", i + 1, sel[i]->name, secs);
            print_diagnostics(out);
            failed++;
        }
        fflush(stdout);
        free(out);
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed == 0 ? 0 : 1;
}

static const struct test_entry *find(const char *name)
{
    for (size_t i = 0; i < ntests; i++)
        if (strcmp(tests[i].name, name) == 0)
            return &tests[i];
    return NULL;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: pk_tests [NAME...] | --list | --run NAME | --helper NAME [ARGS...]\n"
               "Runs processkit's Windows tests, each in its own process with a timeout (scaled "
               "by\nPK_TEST_TIMEOUT_MULTIPLIER). Exit: 0 all passed, 1 a test failed, 2 bad "
               "usage.\n");
}

int main(int argc, char **argv)
{
    wchar_t w[MAX_PATH];
    GetModuleFileNameW(NULL, w, MAX_PATH);
    WideCharToMultiByte(CP_UTF8, 0, w, -1, self_path, sizeof self_path, NULL, NULL);
    /* Binary stdio: a helper's bytes are the bytes (no CRLF translation). */
    _setmode(_fileno(stdin), _O_BINARY);
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stderr), _O_BINARY);
    if (argc >= 3 && strcmp(argv[1], "--helper") == 0)
        return pk_test_run_helper(argc - 2, argv + 2);
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < ntests; i++)
            printf("%s\n", tests[i].name);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "--run") == 0) {
        const struct test_entry *t = find(argv[2]);
        if (t == NULL) {
            fprintf(stderr, "pk_tests: no test named '%s'\n", argv[2]);
            return 2;
        }
        return run_inside(t);
    }
    const struct test_entry **sel = calloc(ntests + (size_t)argc, sizeof *sel);
    size_t nsel = 0;
    for (size_t i = 0; argc == 1 && i < ntests; i++)
        sel[nsel++] = &tests[i];
    for (int i = 1; i < argc; i++) {
        const struct test_entry *t = find(argv[i]);
        if (t == NULL) {
            fprintf(stderr, "pk_tests: no test named '%s' (see --list)\n", argv[i]);
            usage(stderr);
            free(sel);
            return 2;
        }
        sel[nsel++] = t;
    }
    int rc = run_all(sel, nsel);
    free(sel);
    return rc;
}

/* ---- system views, independent of the library ---------------------------------------------- */

bool pk_test_pid_alive(int pid)
{
    HANDLE h = OpenProcess(SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)pid);
    if (h == NULL)
        return false;
    bool alive = WaitForSingleObject(h, 0) == WAIT_TIMEOUT;
    CloseHandle(h);
    return alive;
}

bool pk_test_wait_dead(int pid, int timeout_ms)
{
    HANDLE h = OpenProcess(SYNCHRONIZE, FALSE, (DWORD)pid);
    if (h == NULL)
        return true;
    bool dead = WaitForSingleObject(h, (DWORD)timeout_ms) == WAIT_OBJECT_0;
    CloseHandle(h);
    return dead;
}
