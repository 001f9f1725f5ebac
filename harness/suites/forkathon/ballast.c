/*
 * ballast — resident anonymous memory for the RSS ladder (see ballast.h).
 *
 * The region is mmap'ed 2 MiB larger than asked and the touched range starts on the first 2 MiB
 * boundary inside it, so with MADV_HUGEPAGE every 2 MiB of it can be one transparent huge page;
 * the untouched head and tail are never resident. Touching writes one byte per 4 KiB page: a
 * write fault allocates a real page (a read would map the shared zero page, which a fork copies
 * no differently but RSS does not count). munmap returns the pages at once, so VmRSS falls back
 * as soon as pkb_ballast_free returns; the suite checks it from /proc/self/status.
 */
#define _GNU_SOURCE
#include "suites/forkathon/ballast.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define HUGE_ALIGN ((size_t)2 << 20)
#define PAGE       ((size_t)4096)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int pkb_ballast_alloc(pkb_ballast *b, size_t bytes, bool huge)
{
    memset(b, 0, sizeof *b);
    b->huge = huge;
    if (bytes == 0)
        return 0;
    if (bytes > SIZE_MAX - HUGE_ALIGN)
        return -ENOMEM;
    size_t map_len = bytes + HUGE_ALIGN;
    void *map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return -errno;
    uintptr_t start = ((uintptr_t)map + HUGE_ALIGN - 1) & ~(uintptr_t)(HUGE_ALIGN - 1);
    b->map = map;
    b->map_len = map_len;
    b->base = (void *)start;
    b->len = bytes;
    if (madvise(b->base, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0)
        b->advise_error = errno;
    double t0 = now_s();
    volatile unsigned char *p = b->base;
    for (size_t off = 0; off < bytes; off += PAGE)
        p[off] = 1;
    b->touch_s = now_s() - t0;
    return 0;
}

void pkb_ballast_free(pkb_ballast *b)
{
    if (b->map != NULL)
        munmap(b->map, b->map_len);
    memset(b, 0, sizeof *b);
}

/* The value of "Field:   123 kB" in a /proc file, -1 when absent. */
static long proc_kib(const char *path, const char *field)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    char line[256];
    size_t flen = strlen(field);
    long v = -1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, field, flen) == 0 && line[flen] == ':') {
            if (sscanf(line + flen + 1, "%ld", &v) != 1)
                v = -1;
            break;
        }
    }
    fclose(f);
    return v;
}

long pkb_self_rss_kib(void)
{
    return proc_kib("/proc/self/status", "VmRSS");
}

long pkb_self_anon_huge_kib(void)
{
    return proc_kib("/proc/self/smaps_rollup", "AnonHugePages");
}

void pkb_thp_mode(const char *file, char *out, size_t cap)
{
    char path[256], line[256];
    snprintf(out, cap, "unavailable");
    if (snprintf(path, sizeof path, "/sys/kernel/mm/transparent_hugepage/%s", file) >=
        (int)sizeof path)
        return;
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return;
    if (fgets(line, sizeof line, f) != NULL) {
        char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
        if (open != NULL && close != NULL)
            snprintf(out, cap, "%.*s", (int)(close - open - 1), open + 1);
    }
    fclose(f);
}
