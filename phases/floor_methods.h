/*
 * pk_floor's methods (floor_methods.c): one spawn+wait of a target program each, by processkit
 * or by hand-written raw system calls. The raw ones form a ladder that adds the library's steps
 * one at a time, so the table shows what each step costs next to processkit itself (METHODOLOGY.md,
 * "The spawn floor").
 */
#ifndef PK_FLOOR_METHODS_H
#define PK_FLOOR_METHODS_H

#include <stdbool.h>
#include <stddef.h>

/* What a method needs from the host; without it the method's series is unavailable. */
#define PKF_NEED_CLONE3 0x1u /* the raw clone3 trampoline and a kernel with clone3 */
#define PKF_NEED_CGROUP 0x2u /* a cgroup v2 leaf we can make (the raw containment steps) */

typedef struct pkf_method {
    const char *name;
    const char *what; /* one line: what one call does */
    unsigned needs;   /* PKF_NEED_* */
    /* One spawn+wait of `path` (argv { path }); 0 when it exited 0, else a negative errno. */
    int (*run)(const char *path);
} pkf_method;

extern const pkf_method pkf_methods[];
extern const size_t pkf_method_count;

/* Index of a method by name, or -1. */
int pkf_method_index(const char *name);

/* Prepares what the raw methods share: the child's argv, a reused clone3 stack, a kept /dev/null
 * and a pooled cgroup leaf (made under this process's own cgroup, named "pkf-<pid>"; leaves of
 * dead earlier runs are removed). Returns the PKF_NEED_* bits this host satisfies; `why` says
 * what is missing. Call pkf_methods_close at the end. */
unsigned pkf_methods_open(char *why, size_t why_len);
void pkf_methods_close(void);

#endif /* PK_FLOOR_METHODS_H */
