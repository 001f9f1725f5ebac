/*
 * disturb on Windows: the machine-wide counters the Linux rule reads (/proc/stat's busy and steal
 * time, runnable tasks, the main thread's migrations) have no direct Win32 counterpart, so every
 * repetition is recorded as unknown (NaN / -1) and never marked disturbed: the reader is told it
 * was not measured, rather than given a guess. Only the start time is real.
 */
#include "run/disturb.h"

#include <math.h>
#include <windows.h>

void pkb_disturb_begin(pkb_disturb_mark *m)
{
    /* FILETIME counts 100 ns ticks since 1601; the Unix epoch is 11644473600 s later. */
    FILETIME ft;
    GetSystemTimePreciseAsFileTime(&ft);
    double ticks = (double)(((unsigned long long)ft.dwHighDateTime << 32) | ft.dwLowDateTime);
    *m = (pkb_disturb_mark){.t_ns = NAN,
                            .started = ticks / 1e7 - 11644473600.0,
                            .busy_ns = NAN,
                            .steal_ns = NAN,
                            .own_ns = NAN,
                            .nivcsw = -1,
                            .migrations = -1};
}

void pkb_disturb_end(const pkb_disturb_mark *m, pkb_disturbance *out)
{
    *out = (pkb_disturbance){.procs_running = -1,
                             .others_cpu = NAN,
                             .steal = NAN,
                             .nivcsw = -1,
                             .migrations = -1,
                             .started = m->started,
                             .disturbed = false};
}

json_t *pkb_disturb_rule_json(void)
{
    return json_pack("{s:n, s:n, s:s}", "others_cpu_above", "steal_above", "definition",
                     "not measured on Windows: no repetition is marked disturbed");
}
