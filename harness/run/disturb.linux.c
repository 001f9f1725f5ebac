/*
 * disturb (Linux) — the disturbance of one stretch of a run from the kernel's counters (see
 * disturb.h for what is read and the rule). Everything here is read outside the timed
 * iterations: two small /proc reads and two getrusage calls per repetition.
 */
#define _GNU_SOURCE
#include "run/disturb.h"

#include "run/env.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double tv_ns(struct timeval tv)
{
    return (double)tv.tv_sec * 1e9 + (double)tv.tv_usec * 1e3;
}

/* Busy and steal time of all CPUs together, from the "cpu" line of /proc/stat. */
static void cpu_times(double *busy_ns, double *steal_ns)
{
    *busy_ns = *steal_ns = NAN;
    FILE *f = fopen("/proc/stat", "re");
    if (f == NULL)
        return;
    unsigned long long user, nice, system, idle, iowait, irq, softirq, steal;
    char line[512];
    if (fgets(line, sizeof line, f) != NULL &&
        sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system, &idle,
               &iowait, &irq, &softirq, &steal) == 8) {
        double tick_ns = 1e9 / (double)sysconf(_SC_CLK_TCK);
        *busy_ns = (double)(user + nice + system + irq + softirq) * tick_ns;
        *steal_ns = (double)steal * tick_ns;
    }
    fclose(f);
}

/* Migrations of this process's main thread (CONFIG_SCHED_DEBUG), or -1. */
static long long migrations(void)
{
    FILE *f = fopen("/proc/self/sched", "re");
    if (f == NULL)
        return -1;
    char line[256];
    long long n = -1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "se.nr_migrations", 16) == 0) {
            const char *colon = strchr(line, ':');
            if (colon != NULL)
                n = atoll(colon + 1);
            break;
        }
    }
    fclose(f);
    return n;
}

static void own_usage(double *cpu_ns, long *nivcsw)
{
    struct rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    *cpu_ns = tv_ns(self.ru_utime) + tv_ns(self.ru_stime) + tv_ns(children.ru_utime) +
              tv_ns(children.ru_stime);
    *nivcsw = self.ru_nivcsw + children.ru_nivcsw;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

void pkb_disturb_begin(pkb_disturb_mark *m)
{
    m->migrations = migrations();
    cpu_times(&m->busy_ns, &m->steal_ns);
    own_usage(&m->own_ns, &m->nivcsw);
    m->worker_ns = 0;
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    m->started = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9;
    m->t_ns = now_ns();
}

void pkb_disturb_end(const pkb_disturb_mark *m, pkb_disturbance *out)
{
    double t = now_ns(), own, busy, steal;
    long nivcsw;
    own_usage(&own, &nivcsw);
    cpu_times(&busy, &steal);
    long long moved = migrations();
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    double capacity = (t - m->t_ns) * (double)(cpus > 0 ? cpus : 1);
    *out = (pkb_disturbance){
        .procs_running = pkb_env_procs_running(),
        .others_cpu = NAN,
        .steal = NAN,
        .nivcsw = nivcsw - m->nivcsw,
        .migrations = moved >= 0 && m->migrations >= 0 ? moved - m->migrations : -1,
        .started = m->started,
    };
    if (capacity > 0 && isfinite(busy) && isfinite(m->busy_ns)) {
        double others = (busy - m->busy_ns) - (own - m->own_ns) - m->worker_ns;
        out->others_cpu = fmin(1, fmax(0, others / capacity));
        out->steal = fmin(1, fmax(0, (steal - m->steal_ns) / capacity));
    }
    out->disturbed = out->others_cpu > PKB_DISTURB_OTHERS || out->steal > PKB_DISTURB_STEAL;
}

json_t *pkb_disturb_rule_json(void)
{
    return json_pack(
        "{s:f, s:f, s:s}", "others_cpu_above", PKB_DISTURB_OTHERS, "steal_above", PKB_DISTURB_STEAL,
        "definition",
        "a repetition is disturbed when other processes used more than others_cpu_above of the "
        "machine's CPU capacity (wall time x logical CPUs) while it ran (/proc/stat busy time of "
        "all CPUs minus pkbench's and its reaped children's CPU, in 10 ms clock ticks), or the "
        "hypervisor stole more than steal_above of it; procs_running, nivcsw and migrations are "
        "recorded but do not mark");
}
