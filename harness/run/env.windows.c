/*
 * Environment capture on Windows (env.linux.c is the Linux one; the same fields, so the report
 * and `pkbench compare` read both; env.c fills the fields that do not depend on the platform, the
 * host's identity from the computer name and MachineGuid read here).
 *
 * A run under Wine is recorded as such: ntdll's wine_get_version exists only there, and when it
 * does, `wine` holds its version, `distribution` says "Wine <version> on <host>", and the report
 * labels the run — Wine timings are Wine's process start on Linux, not Windows timings. The
 * live process and thread counts come from one ToolHelp snapshot (the cost of the seed's
 * snapshot walk grows with them). Windows has no load average and no count of runnable tasks
 * that is cheap to read: loadavg is [-1, -1, -1], and procs_running counts the threads in the
 * Ready or Running state from NtQuerySystemInformation (-1 when that fails).
 */
#include "run/env.h"

#include "processkit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include <tlhelp32.h>

typedef const char *(__cdecl *wine_version_fn)(void);
typedef void(__cdecl *wine_host_fn)(const char **sysname, const char **release);
typedef LONG(NTAPI *rtl_version_fn)(OSVERSIONINFOW *);
typedef LONG(NTAPI *query_system_fn)(int, void *, ULONG, ULONG *);

static FARPROC ntdll(const char *name)
{
    return GetProcAddress(GetModuleHandleW(L"ntdll.dll"), name);
}

/* Wine's version, or NULL on Windows. */
static const char *wine_version(void)
{
    wine_version_fn fn = (wine_version_fn)(void (*)(void))ntdll("wine_get_version");
    return fn != NULL ? fn() : NULL;
}

static void cpu_model(char *buf, DWORD cap)
{
    DWORD size = cap;
    if (RegGetValueA(HKEY_LOCAL_MACHINE, "HARDWARE\\DESCRIPTION\\System\\CentralProcessor\\0",
                     "ProcessorNameString", RRF_RT_REG_SZ, NULL, buf, &size) != ERROR_SUCCESS)
        snprintf(buf, cap, "unknown");
}

static void counts(int *processes, int *threads)
{
    *processes = *threads = -1;
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS | TH32CS_SNAPTHREAD, 0);
    if (snap == INVALID_HANDLE_VALUE)
        return;
    PROCESSENTRY32W pe = {.dwSize = sizeof pe};
    THREADENTRY32 te = {.dwSize = sizeof te};
    *processes = *threads = 0;
    for (BOOL ok = Process32FirstW(snap, &pe); ok; ok = Process32NextW(snap, &pe))
        (*processes)++;
    for (BOOL ok = Thread32First(snap, &te); ok; ok = Thread32Next(snap, &te))
        (*threads)++;
    CloseHandle(snap);
}

int pkb_env_processes(void)
{
    int p, t;
    counts(&p, &t);
    return p;
}

int pkb_env_threads(void)
{
    int p, t;
    counts(&p, &t);
    return t;
}

/* SYSTEM_PROCESS_INFORMATION and SYSTEM_THREAD_INFORMATION, as far as this reads them. */
struct sys_thread {
    LARGE_INTEGER kernel, user, create;
    ULONG wait_time;
    PVOID start;
    struct {
        HANDLE process, thread;
    } id;
    LONG priority, base_priority;
    ULONG switches, state, wait_reason;
};

struct sys_process {
    ULONG next, nthreads;
    BYTE reserved[0xF8 - 8];
};

int pkb_env_procs_running(void)
{
    query_system_fn fn = (query_system_fn)(void (*)(void))ntdll("NtQuerySystemInformation");
    if (fn == NULL)
        return -1;
    ULONG size = 1u << 20;
    for (int attempt = 0; attempt < 4; attempt++, size *= 2) {
        unsigned char *buf = malloc(size);
        ULONG need = 0;
        LONG st = buf != NULL ? fn(5 /* SystemProcessInformation */, buf, size, &need) : -1;
        if (st == 0) {
            int running = 0;
            for (unsigned char *p = buf;;) {
                struct sys_process *sp = (struct sys_process *)p;
                struct sys_thread *t = (struct sys_thread *)(p + sizeof *sp);
                for (ULONG i = 0; i < sp->nthreads; i++)
                    running += t[i].state == 1 || t[i].state == 2; /* Ready, Running */
                if (sp->next == 0)
                    break;
                p += sp->next;
            }
            free(buf);
            return running;
        }
        free(buf);
        if (st != (LONG)0xC0000004) /* STATUS_INFO_LENGTH_MISMATCH */
            return -1;
    }
    return -1;
}

json_t *pkb_env_capture(void)
{
    char cpu[256], kernel[128], distro[256];
    cpu_model(cpu, sizeof cpu);
    OSVERSIONINFOW v = {.dwOSVersionInfoSize = sizeof v};
    rtl_version_fn rtl = (rtl_version_fn)(void (*)(void))ntdll("RtlGetVersion");
    if (rtl == NULL || rtl(&v) != 0)
        v.dwMajorVersion = v.dwMinorVersion = v.dwBuildNumber = 0;
    snprintf(kernel, sizeof kernel, "Windows NT %lu.%lu build %lu", v.dwMajorVersion,
             v.dwMinorVersion, v.dwBuildNumber);
    const char *wine = wine_version();
    wine_host_fn host = (wine_host_fn)(void (*)(void))ntdll("wine_get_host_version");
    const char *sysname = NULL, *release = NULL;
    if (host != NULL)
        host(&sysname, &release);
    if (wine != NULL)
        snprintf(distro, sizeof distro, "Wine %s on %s %s (not Windows: Wine's timings)", wine,
                 sysname ? sysname : "?", release ? release : "?");
    else
        snprintf(distro, sizeof distro, "Windows");
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    int processes, threads;
    counts(&processes, &threads);
    /* The host's name, and the id Windows setup gives an installation (Wine gives its prefix
     * one). */
    char hostname[256] = "", guid[128] = "";
    DWORD hsize = sizeof hostname, gsize = sizeof guid;
    if (!GetComputerNameExA(ComputerNameDnsHostname, hostname, &hsize))
        hostname[0] = '\0';
    if (RegGetValueA(HKEY_LOCAL_MACHINE, "SOFTWARE\\Microsoft\\Cryptography", "MachineGuid",
                     RRF_RT_REG_SZ | RRF_SUBKEY_WOW6464KEY, NULL, guid, &gsize) != ERROR_SUCCESS)
        guid[0] = '\0';
    json_t *env = json_object();
    pkb_env_host(env, hostname, guid, "MachineGuid", cpu, (long)si.dwNumberOfProcessors);
    json_object_set_new(env, "cpu_model", json_string(cpu));
    json_object_set_new(env, "logical_cpus", json_integer(si.dwNumberOfProcessors));
    json_object_set_new(env, "machine", json_string("x86_64"));
    json_object_set_new(env, "kernel", json_string(kernel));
    json_object_set_new(env, "distribution", json_string(distro));
    json_object_set_new(env, "wine", wine != NULL ? json_string(wine) : json_null());
    json_object_set_new(env, "libc", json_string("msvcrt (mingw-w64)"));
    pkb_env_build(env);
    json_object_set_new(env, "processes_start", json_integer(processes));
    json_object_set_new(env, "threads_start", json_integer(threads));
    json_object_set_new(env, "loadavg_start", json_pack("[fff]", -1.0, -1.0, -1.0));
    json_object_set_new(env, "aslr", json_string("n/a (Windows)"));
    json_object_set_new(env, "thp", json_string("n/a (Windows)"));
    json_object_set_new(env, "cpufreq_governor", json_null());
    json_object_set_new(env, "cgroup_cpu_max", json_null());
    pkb_env_library(env);
    return env;
}

void pkb_env_finish(json_t *env)
{
    int processes, threads;
    counts(&processes, &threads);
    json_object_set_new(env, "processes_end", json_integer(processes));
    json_object_set_new(env, "threads_end", json_integer(threads));
    json_object_set_new(env, "loadavg_end", json_pack("[fff]", -1.0, -1.0, -1.0));
}
