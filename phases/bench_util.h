/*
 * What the standalone microbenchmarks in phases/ share: the clock, summaries of samples, the
 * environment block, atomic JSON output and the programs built beside them.
 */
#ifndef PK_BENCH_UTIL_H
#define PK_BENCH_UTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

double pkbu_now_us(void);

typedef struct pkbu_summary {
    double median, min, max;
} pkbu_summary;

/* Median, min and max of n > 0 samples (not modified). */
pkbu_summary pkbu_summarize(const double *samples, int n);

/* kernel, machine, CPU model, logical CPUs, libc, spawn mechanism, containment, pinning. */
json_t *pkbu_environment(bool pinned);

/* Writes doc to path through a temporary file and rename, so no reader sees half a file, when
 * path is a regular file or new (through a symlink, its target); anything else (/dev/stdout, a
 * FIFO) in place. Returns 0, or -1 with a message on stderr naming `tool`. */
int pkbu_write_json(json_t *doc, const char *path, const char *tool);

/* results/<prefix>-<UTC time>.json, creating results/ when needed. */
void pkbu_default_path(char *buf, size_t cap, const char *prefix);

/* The path of program `name` built next to this one (this executable's directory) into path.
 * Returns 0; -1 when this executable cannot be found (path unset); -ENOENT when it has no such
 * sibling (path names where it should be). */
int pkbu_sibling(const char *name, char *path, size_t cap);

#endif /* PK_BENCH_UTIL_H */
