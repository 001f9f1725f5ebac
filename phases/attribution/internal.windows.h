/*
 * Private to the Windows series of the phases suite (series.windows.c, run.windows.c,
 * env.windows.c here): the probed host and a series being run. The Windows table reuses
 * phases.h's definitions; its step bits and walks mean Windows steps (below).
 */
#ifndef PKB_PHASES_INTERNAL_WINDOWS_H
#define PKB_PHASES_INTERNAL_WINDOWS_H

#include "phases/attribution/phases.h"

#include <stdbool.h>
#include <stddef.h>
#include <windows.h>

/* The steps a Windows phase series adds to the plain CreateProcess (its `steps` bits). */
#define PKB_WSTEP_SUSPEND  0x1u /* CREATE_SUSPENDED, then resume the primary thread */
#define PKB_WSTEP_JOB      0x2u /* a Job Object with kill-on-close, AssignProcessToJobObject */
#define PKB_WSTEP_JOB_LIST 0x4u /* a Job Object, the child born in it (JOB_LIST attribute) */
/* The walk a suspended series finds the primary thread with: PKB_WALK_DIRECT (NtGetNextThread),
 * PKB_WALK_SNAPSHOT (ToolHelp TH32CS_SNAPTHREAD), or this: the thread handle CreateProcess
 * returned, no walk at all. */
#define PKB_WALK_HANDLE ((pkb_walk)3)

typedef LONG(NTAPI *pkb__next_thread_fn)(
    HANDLE process, HANDLE thread, ACCESS_MASK access, ULONG attributes, ULONG flags, HANDLE *next);

struct pkb_phases_env {
    wchar_t child_app[MAX_PATH];     /* %SystemRoot%\System32\cmd.exe */
    wchar_t child_cmdline[64];       /* cmd /c exit */
    char child[MAX_PATH * 3];        /* the same, UTF-8, for the file */
    pkb__next_thread_fn next_thread; /* ntdll!NtGetNextThread, NULL when absent */
    bool job_list_ok;                /* PROC_THREAD_ATTRIBUTE_JOB_LIST accepted */
    char job_list_why[160];
    const char *bare_name; /* the bare-name lookup's program: "cmd" */
    char bare_path[MAX_PATH * 3];
    bool bare_ok;
    char bare_why[160];
    size_t path_entries, pathext_entries;
    int bare_found_in; /* 1-based PATH entry that held it, 0 when none */
    size_t machine_processes, machine_threads;
    const char *wine; /* Wine's version, NULL on Windows */
};

struct pkb__lock_pool;

struct pkb_phase_run {
    const pkb_phase_def *def;
    pkb_phases_env *env;
    char error[160];
    size_t threads_found;                /* what the last walk found of the target */
    size_t walk_processes, walk_threads; /* what a snapshot saw */
    struct pkb__lock_pool *lock;
};

/* The lock series' threads (series.windows.c). */
void pkb__lock_release(pkb_phase_run *run);

#endif /* PKB_PHASES_INTERNAL_WINDOWS_H */
