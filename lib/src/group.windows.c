/*
 * Groups on Windows: a Job Object with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE. Every process started
 * into it, and everything those start, belongs to the job (breakaway is not allowed), so closing
 * the last handle — pk_group_free, or this process dying — ends the whole tree. The API maps:
 *   kill       TerminateJobObject, then wait until the job counts no active process
 *   signal     SIGKILL: TerminateJobObject; SIGTERM/SIGINT: Ctrl+Break to each member's group
 *   suspend    NtSuspendProcess on each member (ntdll, resolved at run time); resume likewise
 *   members    JobObjectBasicProcessIdList
 *   stats      JobObjectBasicAccountingInformation (CPU of members past and present, active
 *              count) and the members' working sets
 * Windows has neither cgroups nor process groups to contain with: asking for them is
 * PK_ENOCONTAIN, and AUTO means a job. The public calls themselves are shared with POSIX
 * (group.c).
 */
#include "internal.h"

#include <errno.h>
#include <psapi.h>
#include <stdlib.h>
#include <string.h>

typedef LONG(NTAPI *nt_process_fn)(HANDLE);

pk_containment pk_host_containment(void)
{
    return PK_CONTAIN_JOB;
}

int pk__group_init(struct pk_group *g, pk_containment want, bool private_run)
{
    (void)private_run; /* a job is never pooled */
    memset(g, 0, sizeof *g);
    if (want == PK_CONTAIN_CGROUP || want == PK_CONTAIN_PGROUP)
        return PK_ENOCONTAIN;
    if (want != PK_CONTAIN_AUTO && want != PK_CONTAIN_JOB)
        return -EINVAL;
    g->job = CreateJobObjectW(NULL, NULL);
    if (g->job == NULL)
        return pk__win_error(GetLastError());
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION lim = {0};
    lim.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    if (!SetInformationJobObject(g->job, JobObjectExtendedLimitInformation, &lim, sizeof lim)) {
        int rc = pk__win_error(GetLastError());
        CloseHandle(g->job);
        g->job = NULL;
        return rc;
    }
    g->mech = PK_CONTAIN_JOB;
    return 0;
}

static int active(struct pk_group *g, DWORD *n)
{
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION acc;
    if (!QueryInformationJobObject(g->job, JobObjectBasicAccountingInformation, &acc, sizeof acc,
                                   NULL))
        return pk__win_error(GetLastError());
    *n = acc.ActiveProcesses;
    return 0;
}

int pk__group_wait_empty(struct pk_group *g, int64_t timeout_ms)
{
    int64_t deadline = pk__now_ns() + timeout_ms * 1000000;
    for (DWORD ms = 1;; ms = ms < 16 ? ms * 2 : 16) {
        DWORD n = 0;
        int rc = active(g, &n);
        if (rc != 0 || n == 0)
            return rc;
        if (pk__now_ns() >= deadline)
            return -ETIMEDOUT;
        Sleep(ms);
    }
}

int pk__group_terminate(struct pk_group *g)
{
    return TerminateJobObject(g->job, PK__KILL_CODE) ? 0 : pk__win_error(GetLastError());
}

void pk__group_teardown(struct pk_group *g)
{
    if (g->job == NULL)
        return;
    if (pk__group_terminate(g) == 0)
        (void)pk__group_wait_empty(g, 5000);
    CloseHandle(g->job);
    g->job = NULL;
}

void pk__group_close(struct pk_group *g)
{
    pk__group_teardown(g); /* the job is all a group holds */
}

int pk__group_kill_wait(struct pk_group *g, int64_t timeout_ms)
{
    int rc = pk__group_terminate(g);
    return rc != 0 ? rc : pk__group_wait_empty(g, timeout_ms);
}

/* A job's members never change under a call: there is nothing to hold. */
void pk__group_lock(struct pk_group *g)
{
    (void)g;
}

void pk__group_unlock(struct pk_group *g)
{
    (void)g;
}

/* The ids of the members, malloc'd; *count of them. */
static int member_ids(struct pk_group *g, ULONG_PTR **ids, size_t *count)
{
    for (size_t cap = 64;; cap *= 4) {
        size_t size = sizeof(JOBOBJECT_BASIC_PROCESS_ID_LIST) + cap * sizeof(ULONG_PTR);
        JOBOBJECT_BASIC_PROCESS_ID_LIST *l = malloc(size);
        if (l == NULL)
            return -ENOMEM;
        if (QueryInformationJobObject(g->job, JobObjectBasicProcessIdList, l, (DWORD)size, NULL) ||
            GetLastError() == ERROR_MORE_DATA) {
            if (l->NumberOfAssignedProcesses > l->NumberOfProcessIdsInList && cap < (1u << 20)) {
                free(l);
                continue;
            }
            *count = l->NumberOfProcessIdsInList;
            *ids = malloc((*count + 1) * sizeof **ids);
            if (*ids != NULL)
                memcpy(*ids, l->ProcessIdList, *count * sizeof **ids);
            free(l);
            return *ids != NULL ? 0 : -ENOMEM;
        }
        int rc = pk__win_error(GetLastError());
        free(l);
        return rc;
    }
}

int pk__group_signal(struct pk_group *g, int signo)
{
    if (signo == PK__SIGKILL)
        return pk__group_terminate(g);
    if (signo != 0 && signo != PK__SIGTERM && signo != PK__SIGINT)
        return -EINVAL;
    if (signo == 0)
        return 0;
    ULONG_PTR *ids;
    size_t n;
    int rc = member_ids(g, &ids, &n);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < n; i++)
        (void)GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, (DWORD)ids[i]);
    free(ids);
    return 0;
}

/* ---- the work behind the public API (group.c) ------------------------------------------- */

/* NtSuspendProcess or NtResumeProcess on every member. */
static int each_member(struct pk_group *g, const char *fn_name)
{
    nt_process_fn fn =
        (nt_process_fn)(void (*)(void))GetProcAddress(GetModuleHandleW(L"ntdll.dll"), fn_name);
    if (fn == NULL)
        return -ENOSYS;
    ULONG_PTR *ids;
    size_t n;
    int rc = member_ids(g, &ids, &n);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        HANDLE h = OpenProcess(PROCESS_SUSPEND_RESUME, FALSE, (DWORD)ids[i]);
        if (h == NULL)
            continue; /* exited meanwhile */
        if (fn(h) < 0 && rc == 0)
            rc = -EPERM;
        CloseHandle(h);
    }
    free(ids);
    return rc;
}

int pk__group_freeze(struct pk_group *g, bool frozen)
{
    return each_member(g, frozen ? "NtSuspendProcess" : "NtResumeProcess");
}

int pk__group_members(struct pk_group *g, int *pids, size_t cap, size_t *count)
{
    ULONG_PTR *ids;
    size_t n;
    int rc = member_ids(g, &ids, &n);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < n && i < cap; i++)
        pids[i] = (int)ids[i];
    *count = n;
    free(ids);
    return 0;
}

int pk__group_stats(struct pk_group *g, pk_group_stats *st)
{
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION acc;
    if (!QueryInformationJobObject(g->job, JobObjectBasicAccountingInformation, &acc, sizeof acc,
                                   NULL))
        return pk__win_error(GetLastError());
    st->processes = acc.ActiveProcesses;
    st->cpu_user_us = acc.TotalUserTime.QuadPart / 10;
    st->cpu_sys_us = acc.TotalKernelTime.QuadPart / 10;
    ULONG_PTR *ids;
    size_t n;
    if (member_ids(g, &ids, &n) != 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)ids[i]);
        PROCESS_MEMORY_COUNTERS pmc = {.cb = sizeof pmc};
        if (h != NULL && GetProcessMemoryInfo(h, &pmc, sizeof pmc))
            st->memory_bytes += (int64_t)pmc.WorkingSetSize;
        if (h != NULL)
            CloseHandle(h);
    }
    free(ids);
    return 0;
}
