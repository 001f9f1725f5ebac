/*
 * Making the child on Windows: CreateProcessW with an extended STARTUPINFO, and what it needs.
 * The start itself — validating, the run's port and job, arming the engine — is
 * process.windows.c's, which calls the steps here in order.
 *
 * In order: resolve the program ourselves (resolve.windows.c) so the path started is the
 * path pk_resolve_program reports; build the command line (cmdline.windows.c; a .bat/.cmd goes
 * through cmd.exe with arguments it cannot misread, or is refused); build the environment block
 * only when it changes; make the standard handles — a named pipe per captured or fed stream
 * (our end overlapped, so its I/O completes on the run's completion port; the child's end
 * synchronous, as programs expect), NUL, a file, or a duplicate of one of ours; make the run's
 * Job Object (kill-on-close); then one CreateProcessW.
 *
 * Only the intended handles are inherited: PROC_THREAD_ATTRIBUTE_HANDLE_LIST names the child's
 * three, so nothing else this process holds — another run's pipe, a caller's file — leaks into
 * it, whatever other threads are doing. The child is born in its job with
 * PROC_THREAD_ATTRIBUTE_JOB_LIST (Windows 10 1607 and later, probed once); elsewhere it is
 * created suspended, assigned to the job, and resumed through the thread handle CreateProcess
 * returned — no thread enumeration at all (the seed's 74 ms snapshot is never taken).
 * PK_SPAWN_MECHANISM=createprocess_suspended forces that path.
 *
 * Children get a process group of their own (CREATE_NEW_PROCESS_GROUP), so a graceful stop can
 * send them Ctrl+Break without reaching us; it also means the console's Ctrl+C does not reach them
 * directly (pkrun forwards it).
 */
#include "command.h"
#include "internal.h"

#include <errno.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define PIPE_BUFFER 65536

static INIT_ONCE probe_once = INIT_ONCE_STATIC_INIT;
static pk_mechanism mechanism = PK_MECH_SUSPENDED;
static volatile LONG pipe_serial;

/* Whether UpdateProcThreadAttribute accepts a job list (the probe creates nothing visible). */
static BOOL CALLBACK probe(PINIT_ONCE once, PVOID param, PVOID *ctx)
{
    (void)once, (void)param, (void)ctx;
    const char *want = getenv("PK_SPAWN_MECHANISM");
    if (want != NULL && strcmp(want, pk_mechanism_name(PK_MECH_SUSPENDED)) == 0)
        return TRUE;
    SIZE_T size = 0;
    InitializeProcThreadAttributeList(NULL, 1, 0, &size);
    LPPROC_THREAD_ATTRIBUTE_LIST list = malloc(size);
    HANDLE job = CreateJobObjectW(NULL, NULL);
    if (list != NULL && job != NULL && InitializeProcThreadAttributeList(list, 1, 0, &size)) {
        if (UpdateProcThreadAttribute(list, 0, PROC_THREAD_ATTRIBUTE_JOB_LIST, &job, sizeof job,
                                      NULL, NULL))
            mechanism = PK_MECH_JOB_LIST;
        DeleteProcThreadAttributeList(list);
    }
    if (job != NULL)
        CloseHandle(job);
    free(list);
    return TRUE;
}

pk_mechanism pk_spawn_mechanism(void)
{
    InitOnceExecuteOnce(&probe_once, probe, NULL, NULL);
    return mechanism;
}

bool pk_spawn_clears_sighand(void)
{
    return false; /* no signal handlers to clear on Windows */
}

/* ---- standard handles ---------------------------------------------------------------------- */

/* A pipe for one stream: *ours overlapped (reads for outputs, writes for stdin), *theirs
 * synchronous and inheritable. */
static int make_pipe(bool child_reads, HANDLE *ours, HANDLE *theirs)
{
    wchar_t name[64];
    swprintf(name, 64, L"\\\\.\\pipe\\pk-%lu-%ld", GetCurrentProcessId(),
             InterlockedIncrement(&pipe_serial));
    DWORD open = (child_reads ? PIPE_ACCESS_OUTBOUND : PIPE_ACCESS_INBOUND) | FILE_FLAG_OVERLAPPED |
                 FILE_FLAG_FIRST_PIPE_INSTANCE;
    *ours = CreateNamedPipeW(name, open, PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT, 1,
                             PIPE_BUFFER, PIPE_BUFFER, 0, NULL);
    if (*ours == INVALID_HANDLE_VALUE) {
        *ours = NULL;
        return pk__win_error(GetLastError());
    }
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
    *theirs = CreateFileW(name, child_reads ? GENERIC_READ : GENERIC_WRITE, 0, &sa, OPEN_EXISTING,
                          0, NULL);
    if (*theirs == INVALID_HANDLE_VALUE) {
        int rc = pk__win_error(GetLastError());
        *theirs = NULL;
        pk__close_handle(ours);
        return rc;
    }
    return 0;
}

/* An inheritable duplicate of h (one of ours, which stays ours). */
static int dup_inheritable(HANDLE h, HANDLE *out)
{
    *out = NULL;
    if (h == NULL || h == INVALID_HANDLE_VALUE)
        return 0; /* we have none: neither will the child */
    HANDLE self = GetCurrentProcess();
    if (!DuplicateHandle(self, h, self, out, 0, TRUE, DUPLICATE_SAME_ACCESS))
        return pk__win_error(GetLastError());
    return 0;
}

static int open_file(const char *path, int stream, bool append, HANDLE *out)
{
    wchar_t *w;
    int rc = pk__utf16(path, &w);
    if (rc != 0)
        return rc;
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
    DWORD share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
    if (stream == 0)
        *out = CreateFileW(w, GENERIC_READ, share, &sa, OPEN_EXISTING, 0, NULL);
    else
        *out = CreateFileW(w, append ? FILE_APPEND_DATA | SYNCHRONIZE : GENERIC_WRITE, share, &sa,
                           append ? OPEN_ALWAYS : CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
    free(w);
    if (*out == INVALID_HANDLE_VALUE) {
        *out = NULL;
        return pk__win_error(GetLastError());
    }
    return 0;
}

/* The child's handle for one stream, and our pipe end when there is one. */
static int plan_stream(const pk_stdio *s, int stream, HANDLE *ours, HANDLE *theirs, HANDLE out1)
{
    static const DWORD std_ids[3] = {STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE};
    switch (pk__stdio_kind(s, stream)) {
    case PK_STDIO_NULL:
        return open_file("NUL", stream, false, theirs);
    case PK_STDIO_INHERIT:
        return dup_inheritable(GetStdHandle(std_ids[stream]), theirs);
    case PK_STDIO_FILE:
        return open_file(s->path, stream, s->append, theirs);
    case PK_STDIO_FD: {
        intptr_t h = _get_osfhandle(s->fd);
        return h == -1 ? -EBADF : dup_inheritable((HANDLE)h, theirs);
    }
    case PK_STDIO_MERGE:
        return dup_inheritable(out1, theirs);
    case PK_STDIO_CAPTURE:
    case PK_STDIO_BYTES:
        return make_pipe(stream == 0, ours, theirs);
    case PK_STDIO_DEFAULT:
        break;
    }
    return -EINVAL;
}

/* ---- the start ----------------------------------------------------------------------------- */

void pk__spawn_release(struct pk__start *st)
{
    free(st->app);
    free(st->cmdline);
    free(st->env);
    free(st->cwd);
    for (int i = 0; i < 3; i++)
        pk__close_handle(&st->theirs[i]);
}

int pk__spawn_text(const pk_command *cmd,
                   const char *program,
                   struct pk__start *st,
                   pk_result *failure,
                   pk_stage *stage)
{
    *stage = PK_STAGE_RESOLVE;
    int rc = pk__resolve_w(program, &cmd->env, &st->app);
    if (rc == PK_ENOTFOUND && failure != NULL) {
        char *found = NULL;
        (void)pk_resolve_program(program, &cmd->env, &found, &failure->searched);
        free(found);
    }
    if (rc != 0)
        return rc;
    *stage = PK_STAGE_VALIDATE;
    const char *default_argv[2] = {program, NULL};
    const char *const *argv = cmd->argv != NULL ? cmd->argv : default_argv;
    if (pk__is_batch(st->app)) {
        wchar_t *script = st->app;
        rc = pk__cmdline_batch(script, argv, &st->app, &st->cmdline);
        free(script);
    } else {
        rc = pk__cmdline(argv, &st->cmdline);
    }
    if (rc == 0)
        rc = pk__env_block(&cmd->env, &st->env);
    if (rc == 0 && cmd->cwd != NULL)
        rc = pk__utf16(cmd->cwd, &st->cwd);
    if (rc != 0)
        return rc;
    if (st->cwd != NULL) {
        /* CreateProcess would say only "invalid directory": name the stage, as on POSIX. */
        *stage = PK_STAGE_CHDIR;
        DWORD a = GetFileAttributesW(st->cwd);
        if (a == INVALID_FILE_ATTRIBUTES)
            return pk__win_error(GetLastError());
        if (!(a & FILE_ATTRIBUTE_DIRECTORY))
            return -ENOTDIR;
    }
    return 0;
}

int pk__spawn_stdio(const pk_command *cmd, struct pk_process *p, struct pk__start *st)
{
    const pk_stdio *streams[3] = {&cmd->in, &cmd->out, &cmd->err};
    int rc = 0;
    for (int i = 0; i < 3 && rc == 0; i++)
        rc = plan_stream(streams[i], i, i == 0 ? &p->in : &p->pipe[i], &st->theirs[i],
                         st->theirs[1]);
    for (int i = 1; i < 3; i++)
        pk__stream_init(&p->streams[i], i, streams[i], cmd->on_line != NULL);
    return rc;
}

/* The handle list without NULLs and duplicates (CreateProcess rejects both). */
static DWORD handle_list(const struct pk__start *st, HANDLE list[3])
{
    DWORD n = 0;
    for (int i = 0; i < 3; i++) {
        bool seen = st->theirs[i] == NULL;
        for (DWORD k = 0; k < n && !seen; k++)
            seen = list[k] == st->theirs[i];
        if (!seen)
            list[n++] = st->theirs[i];
    }
    return n;
}

int pk__spawn_create(struct pk_process *p, struct pk__start *st, pk_stage *stage)
{
    HANDLE job = p->group != NULL ? p->group->job : NULL;
    bool born_in_job = job != NULL && pk_spawn_mechanism() == PK_MECH_JOB_LIST;
    HANDLE list[3];
    DWORD nlist = handle_list(st, list);
    SIZE_T size = 0;
    InitializeProcThreadAttributeList(NULL, 2, 0, &size);
    LPPROC_THREAD_ATTRIBUTE_LIST attrs = malloc(size);
    *stage = PK_STAGE_PREPARE;
    if (attrs == NULL || !InitializeProcThreadAttributeList(attrs, 2, 0, &size)) {
        free(attrs);
        return -ENOMEM;
    }
    bool ok = nlist == 0 || UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
                                                      list, nlist * sizeof *list, NULL, NULL);
    if (ok && born_in_job)
        ok = UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_JOB_LIST, &job, sizeof job,
                                       NULL, NULL);
    STARTUPINFOEXW si = {.StartupInfo = {.cb = sizeof si, .dwFlags = STARTF_USESTDHANDLES}};
    si.StartupInfo.hStdInput = st->theirs[0];
    si.StartupInfo.hStdOutput = st->theirs[1];
    si.StartupInfo.hStdError = st->theirs[2];
    si.lpAttributeList = attrs;
    DWORD flags = CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT |
                  CREATE_NEW_PROCESS_GROUP | (job != NULL && !born_in_job ? CREATE_SUSPENDED : 0);
    PROCESS_INFORMATION pi = {0};
    int rc = ok ? 0 : pk__win_error(GetLastError());
    *stage = PK_STAGE_EXEC;
    for (int attempt = 0; rc == 0; attempt++) {
        if (CreateProcessW(st->app, st->cmdline, NULL, NULL, nlist > 0, flags, st->env, st->cwd,
                           &si.StartupInfo, &pi))
            break;
        /* Wine 8 fails a start now and then with ERROR_INTERNAL_ERROR when many come at once
         * (seen in 16-way fan-outs, raw CreateProcessW included); nothing was created, so the
         * call is made once more. Windows does not fail this way. */
        if (GetLastError() != ERROR_INTERNAL_ERROR || attempt > 0)
            rc = pk__win_error(GetLastError());
    }
    DeleteProcThreadAttributeList(attrs);
    free(attrs);
    if (rc != 0)
        return rc;
    if (flags & CREATE_SUSPENDED) {
        *stage = PK_STAGE_CONTAIN;
        if (!AssignProcessToJobObject(job, pi.hProcess)) {
            rc = pk__win_error(GetLastError());
            TerminateProcess(pi.hProcess, PK__KILL_CODE);
            WaitForSingleObject(pi.hProcess, INFINITE);
        } else {
            ResumeThread(pi.hThread);
        }
    }
    CloseHandle(pi.hThread);
    if (rc != 0) {
        CloseHandle(pi.hProcess);
        return rc;
    }
    p->process = pi.hProcess;
    p->pid = (int)pi.dwProcessId;
    return 0;
}
