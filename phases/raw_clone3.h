/*
 * raw_clone3 — clone3 with a caller's stack and no libc wrapper, for the benchmarks that must time
 * the system call itself (the floor's raw row, the phases suite's sequence series, the
 * forkathon's clone3 mechanism). Defined by raw_clone3.<arch>.S; raw_clone3.generic.c returns
 * -ENOSYS where no trampoline exists, so a caller marks its series unavailable instead of timing
 * something else under its name. Not the library's spawn: processkit has its own (lib/src).
 */
#ifndef PK_PHASES_RAW_CLONE3_H
#define PK_PHASES_RAW_CLONE3_H

#include <stddef.h>
#include <stdint.h>

/* The kernel's struct clone_args up to version 2 (with .cgroup); a caller passes the size of the
 * version it fills (64 bytes for version 0, 88 for version 2). */
struct pk_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
        set_tid_size, cgroup;
};

#define PK_CLONE_ARGS_SIZE_VER0 64
#define PK_CLONE_ARGS_SIZE_VER2 88
#define PK_CLONE_CLEAR_SIGHAND  0x100000000ULL
#define PK_CLONE_INTO_CGROUP    0x200000000ULL

/* clone3 onto args->stack: the child calls fn(arg) and exits with its result; the parent gets
 * the child's pid or -errno (-ENOSYS where this tree has no trampoline). */
long raw_clone3(void *args, size_t size, int (*fn)(void *), void *arg);

#endif /* PK_PHASES_RAW_CLONE3_H */
