/*
 * ballast — resident anonymous memory on demand, for the forkathon suite's RSS ladder: map a
 * region, advise it (transparent huge pages off or on), touch every page so it is really
 * resident, and later unmap it so the process's RSS falls back. Also the process's own view of
 * its memory (/proc/self/status, /proc/self/smaps_rollup), which is how the suite and the tests
 * check that a step's memory was released before the next.
 */
#ifndef PKB_BALLAST_H
#define PKB_BALLAST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct pkb_ballast {
    void *map;      /* the mapping (NULL: none) */
    size_t map_len; /* its length: len plus up to 2 MiB so the touched range is 2 MiB aligned */
    void *base;     /* the touched range [base, base + len) */
    size_t len;
    bool huge;        /* advised MADV_HUGEPAGE (else MADV_NOHUGEPAGE) */
    double touch_s;   /* how long touching took */
    int advise_error; /* errno of madvise, 0 when the advice was accepted */
} pkb_ballast;

/* Maps `bytes` (0: nothing, *b zeroed) of private anonymous memory starting on a 2 MiB boundary,
 * advises it MADV_HUGEPAGE (`huge`) or MADV_NOHUGEPAGE, and writes one byte in every 4 KiB page
 * so all of it is resident before the call returns. A rejected madvise is not an error (the
 * kernel may lack THP): it is recorded in b->advise_error. Returns 0, or -ENOMEM / -errno of mmap
 * with nothing mapped. */
int pkb_ballast_alloc(pkb_ballast *b, size_t bytes, bool huge);

/* Unmaps the whole region and zeroes *b. Safe on a zeroed ballast. */
void pkb_ballast_free(pkb_ballast *b);

/* This process's VmRSS, in KiB (/proc/self/status); -1 when it cannot be read. */
long pkb_self_rss_kib(void);

/* This process's AnonHugePages, in KiB (/proc/self/smaps_rollup): how much of it transparent
 * huge pages back; -1 when it cannot be read. */
long pkb_self_anon_huge_kib(void);

/* The bracketed choice of a /sys/kernel/mm/transparent_hugepage file ("enabled", "defrag"):
 * "always", "madvise", "never", ...; "unavailable" when the file cannot be read. */
void pkb_thp_mode(const char *file, char *out, size_t cap);

#endif /* PKB_BALLAST_H */
