/*
 * Environment capture on Linux: what a reader needs to judge whether two results files are
 * comparable, read from the running system at the start and end of a run (env.c fills the fields
 * that do not depend on the platform: the host's identity from the name and machine id read here,
 * the build, git, the library's mechanisms).
 *
 * Live process and thread counts matter for spawn costs (the seed's Windows thread snapshot grew
 * with them; on Linux a fork's page-table copy grows with the parent, and scheduling noise with
 * the load). The thread count is the system's number of scheduling entities from /proc/loadavg;
 * processes are the numeric entries of /proc. procs_running (/proc/stat) is sampled per
 * repetition by the runner to flag repetitions that shared the CPUs with other work.
 */
#define _GNU_SOURCE
#include "run/env.h"

#include "processkit.h"

#include <dirent.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* Copies src into dst (cap bytes), truncating; always NUL-terminates. */
static void copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* The first line of a small file, without its newline, into buf; false when unreadable. */
static bool read_line_of(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return false;
    bool ok = fgets(buf, (int)cap, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

static json_t *string_or_null(const char *path)
{
    char buf[512];
    return read_line_of(path, buf, sizeof buf) ? json_string(buf) : json_null();
}

static void cpu_model(char *buf, size_t cap)
{
    snprintf(buf, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "re");
    char line[512];
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            copy_str(buf, cap, colon + 2);
            buf[strcspn(buf, "\n")] = '\0';
            break;
        }
    }
    if (f != NULL)
        fclose(f);
}

static void distribution(char *buf, size_t cap)
{
    snprintf(buf, cap, "unknown");
    FILE *f = fopen("/etc/os-release", "re");
    char line[512];
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "PRETTY_NAME=", 12) == 0) {
            char *v = line + 12;
            v[strcspn(v, "\n")] = '\0';
            if (*v == '"') {
                v++;
                v[strcspn(v, "\"")] = '\0';
            }
            copy_str(buf, cap, v);
            break;
        }
    }
    if (f != NULL)
        fclose(f);
}

/* The bracketed choice of a sysfs multiple-choice file: "always [madvise] never" -> madvise. */
static json_t *bracketed(const char *path)
{
    char buf[256];
    if (!read_line_of(path, buf, sizeof buf))
        return json_null();
    char *open = strchr(buf, '['), *close = open ? strchr(open, ']') : NULL;
    if (open == NULL || close == NULL)
        return json_string(buf);
    *close = '\0';
    return json_string(open + 1);
}

int pkb_env_processes(void)
{
    DIR *d = opendir("/proc");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] >= '1' && e->d_name[0] <= '9';
    closedir(d);
    return n;
}

int pkb_env_threads(void)
{
    char buf[128];
    if (!read_line_of("/proc/loadavg", buf, sizeof buf))
        return -1;
    /* "0.10 0.20 0.30 2/345 6789": the fourth field is running/total scheduling entities */
    const char *slash = strchr(buf, '/');
    return slash != NULL ? atoi(slash + 1) : -1;
}

int pkb_env_procs_running(void)
{
    FILE *f = fopen("/proc/stat", "re");
    char line[256];
    int n = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "procs_running ", 14) == 0) {
            n = atoi(line + 14);
            break;
        }
    if (f != NULL)
        fclose(f);
    return n;
}

static json_t *loadavg(void)
{
    char buf[128];
    double a = 0, b = 0, c = 0;
    if (!read_line_of("/proc/loadavg", buf, sizeof buf) ||
        sscanf(buf, "%lf %lf %lf", &a, &b, &c) != 3)
        return json_pack("[fff]", -1.0, -1.0, -1.0);
    return json_pack("[fff]", a, b, c);
}

/* The CPU limit of our cgroup: cpu.max on v2, cfs quota/period on v1; null when unlimited or
 * unreadable. */
static json_t *cgroup_cpu_max(void)
{
    char own[1024] = "", line[1100], path[2048], buf[128];
    FILE *f = fopen("/proc/self/cgroup", "re");
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "0::", 3) == 0) {
            snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpu.max", line + 3);
            if (read_line_of(path, buf, sizeof buf) && strncmp(buf, "max", 3) != 0) {
                fclose(f);
                return json_string(buf);
            }
        }
        char *cpu = strstr(line, ":cpu:");
        if (cpu == NULL)
            cpu = strstr(line, ":cpu,cpuacct:");
        if (cpu != NULL)
            copy_str(own, sizeof own, strchr(cpu + 1, ':') + 1);
    }
    if (f != NULL)
        fclose(f);
    if (own[0] != '\0') {
        char quota[64], period[64];
        snprintf(path, sizeof path, "/sys/fs/cgroup/cpu%s/cpu.cfs_quota_us", own);
        if (read_line_of(path, quota, sizeof quota) && atol(quota) > 0) {
            snprintf(path, sizeof path, "/sys/fs/cgroup/cpu%s/cpu.cfs_period_us", own);
            if (read_line_of(path, period, sizeof period)) {
                snprintf(buf, sizeof buf, "%s %s", quota, period);
                return json_string(buf);
            }
        }
    }
    return json_null();
}

json_t *pkb_env_capture(void)
{
    struct utsname u;
    uname(&u);
    char cpu[256], distro[256], kernel[512], aslr[64] = "unknown";
    cpu_model(cpu, sizeof cpu);
    distribution(distro, sizeof distro);
    snprintf(kernel, sizeof kernel, "%s %s", u.release, u.version);
    if (read_line_of("/proc/sys/kernel/randomize_va_space", aslr, sizeof aslr)) {
        static const char *const names[] = {"0 (off)", "1 (partial)", "2 (full)"};
        int v = atoi(aslr);
        if (v >= 0 && v <= 2)
            copy_str(aslr, sizeof aslr, names[v]);
    }
    /* systemd's machine id, else D-Bus's (the same id where both exist). */
    char machine_id[128] = "";
    const char *id_source = "machine-id";
    if (!read_line_of("/etc/machine-id", machine_id, sizeof machine_id) &&
        read_line_of("/var/lib/dbus/machine-id", machine_id, sizeof machine_id))
        id_source = "dbus machine-id";
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    json_t *env = json_object();
    pkb_env_host(env, u.nodename, machine_id, id_source, cpu, cpus);
    json_object_set_new(env, "cpu_model", json_string(cpu));
    json_object_set_new(env, "logical_cpus", json_integer(cpus));
    json_object_set_new(env, "machine", json_string(u.machine));
    json_object_set_new(env, "kernel", json_string(kernel));
    json_object_set_new(env, "distribution", json_string(distro));
    json_object_set_new(env, "libc", json_sprintf("glibc %s", gnu_get_libc_version()));
    pkb_env_build(env);
    json_object_set_new(env, "processes_start", json_integer(pkb_env_processes()));
    json_object_set_new(env, "threads_start", json_integer(pkb_env_threads()));
    json_object_set_new(env, "loadavg_start", loadavg());
    json_object_set_new(env, "aslr", json_string(aslr));
    json_object_set_new(env, "thp", bracketed("/sys/kernel/mm/transparent_hugepage/enabled"));
    json_object_set_new(env, "cpufreq_governor",
                        string_or_null("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"));
    json_object_set_new(env, "cgroup_cpu_max", cgroup_cpu_max());
    pkb_env_library(env);
    return env;
}

void pkb_env_finish(json_t *env)
{
    json_object_set_new(env, "processes_end", json_integer(pkb_env_processes()));
    json_object_set_new(env, "threads_end", json_integer(pkb_env_threads()));
    json_object_set_new(env, "loadavg_end", loadavg());
}
