/*
 * The Windows host of the phases suite, probed once: the child (%SystemRoot%\System32\cmd.exe
 * /c exit, the seed's fixed absolute-path child), whether ntdll has NtGetNextThread (else the
 * direct walk falls back to the snapshot, and says so), whether a child can be born in a job
 * (PROC_THREAD_ATTRIBUTE_JOB_LIST), where the bare name "cmd" resolves across PATH x PATHEXT and
 * how long those lists are, the machine's live process and thread counts (the snapshot walk's
 * cost grows with them), and Wine's version when the run is under Wine.
 */
#include "phases/attribution/internal.windows.h"

#include "processkit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tlhelp32.h>

typedef const char *(__cdecl *wine_version_fn)(void);

/* The non-empty entries of a ';'-separated variable; *found_in (when not NULL) receives the
 * 1-based entry equal to `dir` (case-insensitively, without a trailing backslash), 0 for none. */
static size_t list_entries(const wchar_t *var, const wchar_t *dir, int *found_in)
{
    static wchar_t buf[32768];
    DWORD n = GetEnvironmentVariableW(var, buf, 32768);
    if (n == 0 || n >= 32768)
        return 0;
    size_t count = 0, dlen = dir != NULL ? wcslen(dir) : 0;
    for (wchar_t *p = buf; *p != L'\0';) {
        wchar_t *end = wcschr(p, L';');
        size_t len = end != NULL ? (size_t)(end - p) : wcslen(p);
        count += len > 0;
        size_t l = len > 0 && (p[len - 1] == L'\\' || p[len - 1] == L'/') ? len - 1 : len;
        if (found_in != NULL && *found_in == 0 && len > 0 && l == dlen && _wcsnicmp(p, dir, l) == 0)
            *found_in = (int)count;
        p += len + (end != NULL);
    }
    return count;
}

static void machine(pkb_phases_env *e)
{
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS | TH32CS_SNAPTHREAD, 0);
    if (snap == INVALID_HANDLE_VALUE)
        return;
    PROCESSENTRY32W pe = {.dwSize = sizeof pe};
    THREADENTRY32 te = {.dwSize = sizeof te};
    for (BOOL ok = Process32FirstW(snap, &pe); ok; ok = Process32NextW(snap, &pe))
        e->machine_processes++;
    for (BOOL ok = Thread32First(snap, &te); ok; ok = Thread32Next(snap, &te))
        e->machine_threads++;
    CloseHandle(snap);
}

static void probe_job_list(pkb_phases_env *e)
{
    char attrs[256];
    SIZE_T size = sizeof attrs;
    LPPROC_THREAD_ATTRIBUTE_LIST list = (LPPROC_THREAD_ATTRIBUTE_LIST)attrs;
    HANDLE job = CreateJobObjectW(NULL, NULL);
    e->job_list_ok = job != NULL && InitializeProcThreadAttributeList(list, 1, 0, &size) &&
                     UpdateProcThreadAttribute(list, 0, PROC_THREAD_ATTRIBUTE_JOB_LIST, &job,
                                               sizeof job, NULL, NULL);
    if (!e->job_list_ok)
        snprintf(e->job_list_why, sizeof e->job_list_why,
                 "PROC_THREAD_ATTRIBUTE_JOB_LIST is not accepted here (Windows 10 1607 and later)");
    else
        DeleteProcThreadAttributeList(list);
    if (job != NULL)
        CloseHandle(job);
}

int pkb_phases_env_open(const char *child, pkb_phases_env **out)
{
    (void)child; /* the Windows series start cmd.exe, as the seed's did */
    *out = NULL;
    pkb_phases_env *e = calloc(1, sizeof *e);
    if (e == NULL)
        return -ENOMEM;
    UINT n = GetSystemDirectoryW(e->child_app, MAX_PATH - 16);
    if (n == 0) {
        free(e);
        return -ENOENT;
    }
    wcscat(e->child_app, L"\\cmd.exe");
    wcscpy(e->child_cmdline, L"cmd /c exit");
    WideCharToMultiByte(CP_UTF8, 0, e->child_app, -1, e->child, sizeof e->child, NULL, NULL);
    HMODULE nt = GetModuleHandleW(L"ntdll.dll");
    e->next_thread = (pkb__next_thread_fn)(void (*)(void))GetProcAddress(nt, "NtGetNextThread");
    wine_version_fn wine = (wine_version_fn)(void (*)(void))GetProcAddress(nt, "wine_get_version");
    e->wine = wine != NULL ? wine() : NULL;
    probe_job_list(e);
    e->bare_name = "cmd";
    char *path = NULL;
    int rc = pk_resolve_program(e->bare_name, NULL, &path, NULL);
    e->bare_ok = rc == 0;
    if (rc == 0)
        snprintf(e->bare_path, sizeof e->bare_path, "%s", path);
    else
        snprintf(e->bare_why, sizeof e->bare_why, "\"cmd\" is not found in PATH x PATHEXT: %s",
                 pk_strerror(rc));
    free(path);
    wchar_t dir[MAX_PATH] = L"";
    MultiByteToWideChar(CP_UTF8, 0, e->bare_path, -1, dir, MAX_PATH);
    wchar_t *slash = wcsrchr(dir, L'\\');
    if (slash != NULL)
        *slash = L'\0';
    e->path_entries = list_entries(L"PATH", e->bare_ok ? dir : NULL, &e->bare_found_in);
    e->pathext_entries = list_entries(L"PATHEXT", NULL, NULL);
    machine(e);
    *out = e;
    return 0;
}

void pkb_phases_env_close(pkb_phases_env *e)
{
    free(e);
}

json_t *pkb_phases_env_json(const pkb_phases_env *e)
{
    json_t *o = json_object();
    json_object_set_new(o, "platform", json_string("windows"));
    json_object_set_new(o, "child", json_string(e->child));
    json_object_set_new(o, "child_command_line", json_string("cmd /c exit"));
    json_object_set_new(o, "direct_walk",
                        json_string(e->next_thread != NULL
                                        ? "NtGetNextThread"
                                        : "snapshot (ntdll has no NtGetNextThread)"));
    json_object_set_new(o, "job_list", json_boolean(e->job_list_ok));
    json_object_set_new(o, "bare_name", json_string(e->bare_name));
    json_object_set_new(o, "bare_name_resolved",
                        e->bare_ok ? json_string(e->bare_path) : json_null());
    json_object_set_new(o, "path_entries", json_integer((json_int_t)e->path_entries));
    json_object_set_new(o, "pathext_entries", json_integer((json_int_t)e->pathext_entries));
    json_object_set_new(o, "machine_processes", json_integer((json_int_t)e->machine_processes));
    json_object_set_new(o, "machine_threads", json_integer((json_int_t)e->machine_threads));
    json_object_set_new(o, "wine", e->wine != NULL ? json_string(e->wine) : json_null());
    return o;
}
