/*
 * createprocess — the Windows baseline: CreateProcessW as a standard library uses it (Rust's
 * std::process, CPython's subprocess), with none of processkit's guarantees.
 *
 *   - The program is the bare name on the command line with lpApplicationName NULL, so Windows
 *     itself searches (the application's directory, the current one, the system directories,
 *     then PATH) and appends ".exe": what `Command::new("cat")` does.
 *   - Anonymous pipes (CreatePipe) for stdin and stdout, made inheritable and passed with
 *     bInheritHandles TRUE; every inheritable handle of the process goes to the child, so the
 *     pipes are made, the child created and our copies of its ends closed under one process-wide
 *     lock — the lock a standard library takes, without which a concurrent spawn's child could
 *     inherit this child's stdin and keep it open.
 *   - One thread per pipe: a thread writes stdin and closes it while this thread reads stdout to
 *     the end (ReadFile, counting newlines with memchr; no line API), then waits for the process.
 *   - No job, no containment: a grandchild would outlive the run.
 *
 *   spawn_capture_small, stream_large_stdout  one child as above
 *   concurrent_fan_out   16 threads, each one child as above (one thread per child)
 *   spawn_only           CreateProcessW of the tiny helper, standard handles inherited, no pipes
 */
#include "contenders/contender.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

static SRWLOCK spawn_lock = SRWLOCK_INIT;

struct feed {
    HANDLE pipe;
    const unsigned char *data;
    size_t len;
};

static DWORD WINAPI writer(void *arg)
{
    struct feed *f = arg;
    for (size_t off = 0; off < f->len;) {
        DWORD n = f->len - off > 65536 ? 65536 : (DWORD)(f->len - off), w = 0;
        if (!WriteFile(f->pipe, f->data + off, n, &w, NULL))
            break; /* the child closed its stdin */
        off += w;
    }
    CloseHandle(f->pipe);
    return 0;
}

static int fail(pkb_sample *out, const char *what)
{
    snprintf(out->error, sizeof out->error, "%s failed: Win32 error %lu", what, GetLastError());
    return -EIO;
}

/* One child: "<program>" with stdin and stdout piped (or, without input, all inherited). */
static int one_child(const pkb_workload *w, bool pipes, pkb_sample *out)
{
    wchar_t cmd[1024];
    if (MultiByteToWideChar(CP_UTF8, 0, w->program, -1, cmd, 1024) == 0)
        return fail(out, "MultiByteToWideChar");
    STARTUPINFOW si = {.cb = sizeof si};
    PROCESS_INFORMATION pi;
    HANDLE in_rd = NULL, in_wr = NULL, out_rd = NULL, out_wr = NULL;
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
    AcquireSRWLockExclusive(&spawn_lock);
    BOOL ok = TRUE;
    if (pipes) {
        ok = CreatePipe(&in_rd, &in_wr, &sa, 0) && CreatePipe(&out_rd, &out_wr, &sa, 0) &&
             SetHandleInformation(in_wr, HANDLE_FLAG_INHERIT, 0) &&
             SetHandleInformation(out_rd, HANDLE_FLAG_INHERIT, 0);
        si.dwFlags = STARTF_USESTDHANDLES;
        si.hStdInput = in_rd;
        si.hStdOutput = out_wr;
        si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
    }
    ok = ok && CreateProcessW(NULL, cmd, NULL, NULL, pipes, 0, NULL, NULL, &si, &pi);
    DWORD err = GetLastError();
    if (in_rd != NULL)
        CloseHandle(in_rd);
    if (out_wr != NULL)
        CloseHandle(out_wr);
    ReleaseSRWLockExclusive(&spawn_lock);
    if (!ok) {
        if (in_wr != NULL)
            CloseHandle(in_wr);
        if (out_rd != NULL)
            CloseHandle(out_rd);
        SetLastError(err);
        return fail(out, "CreateProcessW");
    }
    CloseHandle(pi.hThread);
    if (pipes) {
        struct feed f = {in_wr, w->input, w->input_len};
        HANDLE th = CreateThread(NULL, 0, writer, &f, 0, NULL);
        if (th == NULL)
            writer(&f);
        char buf[65536];
        DWORD n;
        while (ReadFile(out_rd, buf, sizeof buf, &n, NULL) && n > 0) {
            out->bytes += n;
            for (const char *p = buf, *end = buf + n; (p = memchr(p, '\n', (size_t)(end - p)));)
                p++, out->lines++;
        }
        CloseHandle(out_rd);
        if (th != NULL) {
            WaitForSingleObject(th, INFINITE);
            CloseHandle(th);
        }
    }
    WaitForSingleObject(pi.hProcess, INFINITE);
    DWORD code = 1;
    GetExitCodeProcess(pi.hProcess, &code);
    CloseHandle(pi.hProcess);
    out->children++;
    out->failures += code != 0;
    return 0;
}

struct fan {
    const pkb_workload *w;
    pkb_sample sample;
    int rc;
};

static DWORD WINAPI fan_child(void *arg)
{
    struct fan *f = arg;
    f->rc = one_child(f->w, true, &f->sample);
    return 0;
}

static int fan_out(const pkb_workload *w, pkb_sample *out)
{
    struct fan f[64];
    HANDLE th[64];
    int n = w->children < 64 ? w->children : 64, rc = 0;
    for (int i = 0; i < n; i++) {
        f[i] = (struct fan){.w = w};
        th[i] = CreateThread(NULL, 0, fan_child, &f[i], 0, NULL);
        if (th[i] == NULL)
            fan_child(&f[i]);
    }
    for (int i = 0; i < n; i++) {
        if (th[i] != NULL) {
            WaitForSingleObject(th[i], INFINITE);
            CloseHandle(th[i]);
        }
        out->bytes += f[i].sample.bytes;
        out->lines += f[i].sample.lines;
        out->children += f[i].sample.children;
        out->failures += f[i].sample.failures;
        if (f[i].rc != 0 && rc == 0) {
            rc = f[i].rc;
            memcpy(out->error, f[i].sample.error, sizeof out->error);
        }
    }
    return rc;
}

static int run(void *state, const pkb_workload *w, pkb_sample *out)
{
    (void)state;
    switch (w->scenario) {
    case PKB_SPAWN_CAPTURE_SMALL:
    case PKB_STREAM_LARGE_STDOUT:
        return one_child(w, true, out);
    case PKB_CONCURRENT_FAN_OUT:
        return fan_out(w, out);
    case PKB_SPAWN_ONLY:
        return one_child(w, false, out);
    case PKB_FAN_OUT_SCALE: /* not declared: the fan-out at scale needs a measuring process */
    case PKB_SCENARIO_COUNT:
        break;
    }
    snprintf(out->error, sizeof out->error, "unsupported scenario");
    return -EINVAL;
}

const pkb_contender pkb_contender_createprocess = {
    .name = "createprocess",
    .description = "CreateProcessW as a standard library uses it: bare name searched by Windows, "
                   "anonymous pipes, one thread per pipe, one thread per child; no job",
    .scenarios = PKB_SCENARIO_BIT(PKB_SPAWN_CAPTURE_SMALL) |
                 PKB_SCENARIO_BIT(PKB_STREAM_LARGE_STDOUT) |
                 PKB_SCENARIO_BIT(PKB_CONCURRENT_FAN_OUT) | PKB_SCENARIO_BIT(PKB_SPAWN_ONLY),
    .baseline = true,
    .control = true, /* no processkit code: it moves only with the machine */
    .run = run,
};
