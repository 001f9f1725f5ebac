/*
 * The Windows table of the phases suite: where a Windows start goes, the seed's series ("Where a
 * Windows start goes") and two more.
 *
 * Every phase series starts the same child, %SystemRoot%\System32\cmd.exe /c exit, named by its
 * absolute path (no series pays for a lookup), with no handle inherited, and waits for it.
 *   os_spawn_plain                      CreateProcessW + wait: the floor
 *   os_spawn_suspended_resume_snapshot  CREATE_SUSPENDED, the primary thread found in a ToolHelp
 *                                       TH32CS_SNAPTHREAD snapshot (system-wide), resumed
 *   os_spawn_suspended_resume_direct    ... found by NtGetNextThread on the process handle
 *   os_spawn_suspended_resume_handle    ... resumed through the thread handle CreateProcess
 *                                       returned: no walk at all (what processkit does)
 *   containment_sequence_snapshot/direct  a Job Object (kill-on-close) made, the child created
 *                                       suspended, assigned, its thread found, resumed; the job
 *                                       closed after the wait
 *   containment_job_list                a Job Object, the child born in it
 *                                       (PROC_THREAD_ATTRIBUTE_JOB_LIST): no suspension at all
 *   processkit                          the library: pk_run of the same child, stdio inherited
 * Primitives, with no child: job_object_create, direct_thread_walk (our own process), the
 * thread_snapshot_walk, program_lookup_absolute_path / _bare_name (pk_resolve_program: cmd.exe's
 * path, and "cmd" across PATH x PATHEXT). Lock: 16 threads each starting one child at once,
 * without and with one process-global lock around CreateProcessW.
 *
 * The walks, used here only: the direct walk asks the kernel for the target's threads one at a
 * time (ntdll's NtGetNextThread, resolved at run time; undocumented but stable since Vista); the
 * first one a suspended child has is its primary thread. The snapshot is the documented way:
 * ToolHelp's TH32CS_SNAPTHREAD, which ignores its process-id argument and materialises every
 * thread on the machine, so its cost grows with the machine (the report records how many it
 * saw). Without NtGetNextThread the direct walk falls back to the snapshot, and the host record
 * says so.
 */
#include "phases/attribution/internal.windows.h"

#include "processkit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tlhelp32.h>

/* ---- the walks ----------------------------------------------------------------------------- */

/* Finds the target's first thread. Direct: NtGetNextThread on the process handle (the snapshot
 * when ntdll has no such entry point); snapshot: every thread on the machine. *thread receives
 * an opened handle (THREAD_SUSPEND_RESUME) or NULL; the counts say what was seen. 0 or -errno. */
static int walk_snapshot(pkb_phase_run *run, DWORD pid, HANDLE *thread)
{
    *thread = NULL;
    run->threads_found = run->walk_processes = run->walk_threads = 0;
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
    if (snap == INVALID_HANDLE_VALUE) {
        snprintf(run->error, sizeof run->error, "CreateToolhelp32Snapshot failed: %lu",
                 GetLastError());
        return -EIO;
    }
    THREADENTRY32 te = {.dwSize = sizeof te};
    DWORD last_owner = (DWORD)-1;
    for (BOOL ok = Thread32First(snap, &te); ok; ok = Thread32Next(snap, &te)) {
        run->walk_threads++;
        if (te.th32OwnerProcessID != last_owner)
            run->walk_processes++, last_owner = te.th32OwnerProcessID;
        if (te.th32OwnerProcessID == pid && *thread == NULL) {
            run->threads_found++;
            *thread = OpenThread(THREAD_SUSPEND_RESUME, FALSE, te.th32ThreadID);
        }
    }
    CloseHandle(snap);
    return 0;
}

static int walk_direct(pkb_phase_run *run, HANDLE process, HANDLE *thread)
{
    *thread = NULL;
    if (run->env->next_thread == NULL)
        return walk_snapshot(run, GetProcessId(process), thread);
    run->threads_found = 0;
    LONG st = run->env->next_thread(process, NULL, THREAD_SUSPEND_RESUME, 0, 0, thread);
    if (st < 0) {
        *thread = NULL;
        snprintf(run->error, sizeof run->error, "NtGetNextThread: NTSTATUS 0x%08lX",
                 (unsigned long)st);
        return -EIO;
    }
    run->threads_found = 1;
    return 0;
}

/* ---- the series ---------------------------------------------------------------------------- */

static int win_fail(pkb_phase_run *run, const char *what)
{
    snprintf(run->error, sizeof run->error, "%s failed: Win32 error %lu", what, GetLastError());
    return -EIO;
}

static int wait_child(pkb_phase_run *run, PROCESS_INFORMATION *pi)
{
    WaitForSingleObject(pi->hProcess, INFINITE);
    DWORD code = 1;
    GetExitCodeProcess(pi->hProcess, &code);
    CloseHandle(pi->hProcess);
    if (code != 0) {
        snprintf(run->error, sizeof run->error, "the child exited %lu", code);
        return -ECHILD;
    }
    return 0;
}

/* The child, created with `flags`, optionally born in `job`. */
static int create(pkb_phase_run *run, DWORD flags, HANDLE job, PROCESS_INFORMATION *pi)
{
    pkb_phases_env *e = run->env;
    STARTUPINFOEXW si = {.StartupInfo = {.cb = sizeof si}};
    char attrs[256];
    if (job != NULL) {
        SIZE_T size = sizeof attrs;
        si.lpAttributeList = (LPPROC_THREAD_ATTRIBUTE_LIST)attrs;
        if (!InitializeProcThreadAttributeList(si.lpAttributeList, 1, 0, &size) ||
            !UpdateProcThreadAttribute(si.lpAttributeList, 0, PROC_THREAD_ATTRIBUTE_JOB_LIST, &job,
                                       sizeof job, NULL, NULL))
            return win_fail(run, "the job-list attribute");
        flags |= EXTENDED_STARTUPINFO_PRESENT;
    }
    wchar_t cmdline[64];
    wcscpy(cmdline, e->child_cmdline);
    BOOL ok = CreateProcessW(e->child_app, cmdline, NULL, NULL, FALSE, flags, NULL, NULL,
                             &si.StartupInfo, pi);
    if (job != NULL)
        DeleteProcThreadAttributeList(si.lpAttributeList);
    return ok ? 0 : win_fail(run, "CreateProcessW");
}

static HANDLE job_new(void)
{
    HANDLE job = CreateJobObjectW(NULL, NULL);
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION lim = {0};
    lim.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    if (job != NULL &&
        !SetInformationJobObject(job, JobObjectExtendedLimitInformation, &lim, sizeof lim)) {
        CloseHandle(job);
        job = NULL;
    }
    return job;
}

/* ---- phase series -------------------------------------------------------------------------- */

static int run_plain(pkb_phase_run *run)
{
    PROCESS_INFORMATION pi;
    int rc = create(run, 0, NULL, &pi);
    if (rc != 0)
        return rc;
    CloseHandle(pi.hThread);
    return wait_child(run, &pi);
}

/* The suspended sequences: [job,] suspended child, [assign,] find the thread, resume. */
static int run_sequence(pkb_phase_run *run)
{
    const pkb_phase_def *d = run->def;
    HANDLE job = NULL;
    if ((d->steps & (PKB_WSTEP_JOB | PKB_WSTEP_JOB_LIST)) && (job = job_new()) == NULL)
        return win_fail(run, "CreateJobObjectW");
    PROCESS_INFORMATION pi = {0};
    bool suspend = d->steps & PKB_WSTEP_SUSPEND;
    int rc = create(run, suspend ? CREATE_SUSPENDED : 0, d->steps & PKB_WSTEP_JOB_LIST ? job : NULL,
                    &pi);
    if (rc == 0 && (d->steps & PKB_WSTEP_JOB) && !AssignProcessToJobObject(job, pi.hProcess))
        rc = win_fail(run, "AssignProcessToJobObject");
    HANDLE thread = NULL;
    if (rc == 0 && suspend && d->walk == PKB_WALK_DIRECT)
        rc = walk_direct(run, pi.hProcess, &thread);
    else if (rc == 0 && suspend && d->walk == PKB_WALK_SNAPSHOT)
        rc = walk_snapshot(run, pi.dwProcessId, &thread);
    if (rc == 0 && suspend) {
        HANDLE t = d->walk == PKB_WALK_HANDLE ? pi.hThread : thread;
        if (t == NULL || ResumeThread(t) == (DWORD)-1)
            rc = t == NULL ? -ESRCH : win_fail(run, "ResumeThread");
        if (rc == -ESRCH)
            snprintf(run->error, sizeof run->error, "the walk did not find the child's thread");
    }
    if (thread != NULL)
        CloseHandle(thread);
    if (pi.hThread != NULL)
        CloseHandle(pi.hThread);
    if (rc == 0) {
        rc = wait_child(run, &pi);
    } else if (pi.hProcess != NULL) {
        /* Created but not released: it never ran a line; end it. */
        TerminateProcess(pi.hProcess, 1);
        WaitForSingleObject(pi.hProcess, INFINITE);
        CloseHandle(pi.hProcess);
    }
    if (job != NULL)
        CloseHandle(job);
    return rc;
}

static int run_processkit(pkb_phase_run *run)
{
    const char *argv[] = {run->env->child, "/c", "exit", NULL};
    pk_result r;
    int rc = pk_run(&(pk_command){.argv = argv,
                                  .in.kind = PK_STDIO_INHERIT,
                                  .out.kind = PK_STDIO_INHERIT,
                                  .err.kind = PK_STDIO_INHERIT},
                    &r);
    if (rc == 0 && (r.outcome.kind != PK_OUTCOME_EXITED || r.outcome.code != 0))
        rc = -ECHILD;
    if (rc != 0)
        snprintf(run->error, sizeof run->error, "pk_run: %s (%s)", pk_strerror(rc),
                 pk_outcome_kind_name(r.outcome.kind));
    pk_result_release(&r);
    return rc;
}

/* ---- primitives ---------------------------------------------------------------------------- */

static int prim_job(pkb_phase_run *run)
{
    HANDLE job = job_new();
    if (job == NULL)
        return win_fail(run, "CreateJobObjectW");
    CloseHandle(job);
    return 0;
}

static int prim_direct(pkb_phase_run *run)
{
    HANDLE thread = NULL;
    int rc = walk_direct(run, GetCurrentProcess(), &thread);
    if (thread != NULL)
        CloseHandle(thread);
    return rc;
}

static int prim_snapshot(pkb_phase_run *run)
{
    HANDLE thread = NULL;
    int rc = walk_snapshot(run, GetCurrentProcessId(), &thread);
    if (thread != NULL)
        CloseHandle(thread);
    return rc;
}

static int lookup(pkb_phase_run *run, const char *program)
{
    char *path = NULL;
    int rc = pk_resolve_program(program, NULL, &path, NULL);
    free(path);
    if (rc != 0)
        snprintf(run->error, sizeof run->error, "pk_resolve_program(%s): %s", program,
                 pk_strerror(rc));
    return rc;
}

static int prim_absolute(pkb_phase_run *run)
{
    return lookup(run, run->env->child);
}

static int prim_bare(pkb_phase_run *run)
{
    return lookup(run, run->env->bare_name);
}

/* ---- the spawn lock ------------------------------------------------------------------------ */

static SRWLOCK spawn_lock = SRWLOCK_INIT;

struct lock_child {
    pkb_phase_run *run;
    int rc;
};

static DWORD WINAPI lock_thread(void *arg)
{
    struct lock_child *c = arg;
    PROCESS_INFORMATION pi;
    bool locked = c->run->def->locked;
    if (locked)
        AcquireSRWLockExclusive(&spawn_lock);
    c->rc = create(c->run, 0, NULL, &pi);
    if (locked)
        ReleaseSRWLockExclusive(&spawn_lock);
    if (c->rc == 0) {
        CloseHandle(pi.hThread);
        c->rc = wait_child(c->run, &pi);
    }
    return 0;
}

static int run_lock(pkb_phase_run *run)
{
    struct lock_child c[16];
    HANDLE th[16];
    int n = run->def->children, rc = 0;
    for (int i = 0; i < n; i++) {
        c[i] = (struct lock_child){run, 0};
        th[i] = CreateThread(NULL, 0, lock_thread, &c[i], 0, NULL);
        if (th[i] == NULL)
            lock_thread(&c[i]);
    }
    for (int i = 0; i < n; i++) {
        if (th[i] != NULL) {
            WaitForSingleObject(th[i], INFINITE);
            CloseHandle(th[i]);
        }
        if (rc == 0)
            rc = c[i].rc;
    }
    return rc;
}

void pkb__lock_release(pkb_phase_run *run)
{
    (void)run; /* the threads live for one iteration each */
}

/* ---- the table ----------------------------------------------------------------------------- */

#define PARTS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NO_PARTS   ((const char *const[]){NULL})
#define PHASE(n, st, w)                                                                            \
    .group = "phase", .name = n, .kind = PKB_KIND_PHASE, .steps = (st), .walk = (w),               \
    .children = 1, .run = run_sequence

const pkb_phase_def pkb_phase_defs[] = {
    {.group = "phase",
     .name = "os_spawn_plain",
     .kind = PKB_KIND_PHASE,
     .baseline = true,
     .description = "CreateProcessW + wait: the floor",
     .children = 1,
     .records = PKB_RECORD_PROGRAM,
     .run = run_plain},
    {PHASE("os_spawn_suspended_resume_handle", PKB_WSTEP_SUSPEND, PKB_WALK_HANDLE),
     .description = "CREATE_SUSPENDED, resumed through the thread handle CreateProcess returned",
     .composition = NO_PARTS},
    {PHASE("os_spawn_suspended_resume_direct", PKB_WSTEP_SUSPEND, PKB_WALK_DIRECT),
     .description = "CREATE_SUSPENDED, the primary thread found by NtGetNextThread, resumed",
     .composition = PARTS("direct_thread_walk"), .records = PKB_RECORD_THREADS},
    {PHASE("os_spawn_suspended_resume_snapshot", PKB_WSTEP_SUSPEND, PKB_WALK_SNAPSHOT),
     .description = "CREATE_SUSPENDED, the primary thread found in a ToolHelp thread snapshot",
     .composition = PARTS("thread_snapshot_walk"), .records = PKB_RECORD_MACHINE},
    {PHASE("containment_job_list", PKB_WSTEP_JOB_LIST, PKB_WALK_NONE),
     .description = "a Job Object (kill-on-close), the child born in it: no suspension",
     .composition = PARTS("job_object_create")},
    {PHASE("containment_sequence_direct", PKB_WSTEP_SUSPEND | PKB_WSTEP_JOB, PKB_WALK_DIRECT),
     .description = "a Job Object, CREATE_SUSPENDED, assigned, NtGetNextThread, resumed",
     .composition = PARTS("job_object_create", "direct_thread_walk"),
     .records = PKB_RECORD_THREADS},
    {PHASE("containment_sequence_snapshot", PKB_WSTEP_SUSPEND | PKB_WSTEP_JOB, PKB_WALK_SNAPSHOT),
     .description = "a Job Object, CREATE_SUSPENDED, assigned, a ToolHelp snapshot, resumed",
     .composition = PARTS("job_object_create", "thread_snapshot_walk"),
     .records = PKB_RECORD_MACHINE},
    {.group = "phase",
     .name = "processkit",
     .kind = PKB_KIND_PHASE,
     .description = "the library: pk_run of the same child by absolute path, stdio inherited, "
                    "its private job",
     .composition = PARTS("job_object_create", "program_lookup_absolute_path"),
     .records = PKB_RECORD_CONTAINMENT,
     .children = 1,
     .run = run_processkit},

    {.group = "primitive",
     .name = "job_object_create",
     .kind = PKB_KIND_PRIMITIVE,
     .description = "CreateJobObjectW + kill-on-close limit + CloseHandle",
     .calls = 16,
     .run = prim_job},
    {.group = "primitive",
     .name = "direct_thread_walk",
     .kind = PKB_KIND_PRIMITIVE,
     .description = "NtGetNextThread on our own process handle: its first thread, opened",
     .calls = 16,
     .records = PKB_RECORD_THREADS,
     .run = prim_direct},
    {.group = "primitive",
     .name = "thread_snapshot_walk",
     .kind = PKB_KIND_PRIMITIVE,
     .description = "CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD), every thread read, ours opened",
     .records = PKB_RECORD_MACHINE,
     .run = prim_snapshot},
    {.group = "primitive",
     .name = "program_lookup_absolute_path",
     .kind = PKB_KIND_PRIMITIVE,
     .description = "pk_resolve_program of cmd.exe's absolute path",
     .calls = 16,
     .records = PKB_RECORD_PROGRAM,
     .run = prim_absolute},
    {.group = "primitive",
     .name = "program_lookup_bare_name",
     .kind = PKB_KIND_PRIMITIVE,
     .description = "pk_resolve_program(\"cmd\"): PATH x PATHEXT",
     .needs = PKB_NEED_BARE_NAME,
     .records = PKB_RECORD_PATH,
     .run = prim_bare},

    {.group = "spawn_lock",
     .name = "parallel16_unlocked",
     .kind = PKB_KIND_LOCK,
     .description = "16 threads, each CreateProcessW + wait at once",
     .children = 16,
     .run = run_lock},
    {.group = "spawn_lock",
     .name = "parallel16_locked",
     .kind = PKB_KIND_LOCK,
     .description = "the same with one process-global lock around each CreateProcessW",
     .children = 16,
     .locked = true,
     .run = run_lock},
};

const size_t pkb_phase_def_count = sizeof pkb_phase_defs / sizeof pkb_phase_defs[0];
