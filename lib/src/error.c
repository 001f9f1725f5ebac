/*
 * Error values, stage and outcome names.
 *
 * Every fallible call returns 0 or a negative value: a negated errno, or a project code from
 * PK_ERROR_MAP (which sits below errno's range, so the two never collide). The same X-macro table
 * generates the enum in processkit.h and the two lookups here, so a code, its name and its message
 * cannot drift apart. errno names come from the platform (pk__errno_name: glibc's
 * strerrorname_np in errname.linux.c, a table in errname.windows.c).
 */
#define _GNU_SOURCE
#include "processkit.h"
#include "errname.h"

#include <stdio.h>
#include <string.h>

const char *pk_strerror(int err)
{
    switch (err) {
#define PK__ERROR_MSG(name, value, msg)                                                            \
    case value:                                                                                    \
        return msg;
        PK_ERROR_MAP(PK__ERROR_MSG)
#undef PK__ERROR_MSG
    case 0:
        return "success";
    default:
        break;
    }
    /* strerror is not thread-safe in general, but glibc's returns static strings for known
     * values; unknown values are handled before it is reached. */
    if (err < 0 && pk__errno_name(-err) != NULL)
        return strerror(-err);
    return "unknown error";
}

const char *pk_errname(int err)
{
    static _Thread_local char unknown[24];
    switch (err) {
#define PK__ERROR_NAME(name, value, msg)                                                           \
    case value:                                                                                    \
        return "PK_" #name;
        PK_ERROR_MAP(PK__ERROR_NAME)
#undef PK__ERROR_NAME
    case 0:
        return "OK";
    default:
        break;
    }
    if (err < 0) {
        const char *name = pk__errno_name(-err);
        if (name != NULL)
            return name;
    }
    snprintf(unknown, sizeof unknown, "E%d", err < 0 ? -err : err);
    return unknown;
}

const char *pk_stage_name(pk_stage stage)
{
    switch (stage) {
#define PK__STAGE_NAME(name, label)                                                                \
    case PK_STAGE_##name:                                                                          \
        return label;
        PK_STAGE_MAP(PK__STAGE_NAME)
#undef PK__STAGE_NAME
    }
    return "unknown";
}

const char *pk_outcome_kind_name(pk_outcome_kind kind)
{
    switch (kind) {
    case PK_OUTCOME_NONE:
        return "none";
    case PK_OUTCOME_EXITED:
        return "exited";
    case PK_OUTCOME_SIGNALED:
        return "signaled";
    case PK_OUTCOME_TIMED_OUT:
        return "timed_out";
    case PK_OUTCOME_IDLE_TIMED_OUT:
        return "idle_timed_out";
    case PK_OUTCOME_CANCELLED:
        return "cancelled";
    case PK_OUTCOME_SPAWN_FAILED:
        return "spawn_failed";
    case PK_OUTCOME_CRASHED:
        return "crashed";
    }
    return "unknown";
}

const char *pk_containment_name(pk_containment c)
{
    switch (c) {
    case PK_CONTAIN_AUTO:
        return "auto";
    case PK_CONTAIN_CGROUP:
        return "cgroup";
    case PK_CONTAIN_PGROUP:
        return "pgroup";
    case PK_CONTAIN_NONE:
        return "none";
    case PK_CONTAIN_JOB:
        return "job";
    }
    return "unknown";
}

const char *pk_mechanism_name(pk_mechanism mech)
{
    switch (mech) {
    case PK_MECH_CLONE3:
        return "clone3";
    case PK_MECH_CLONE:
        return "clone";
    case PK_MECH_VFORK:
        return "vfork";
    case PK_MECH_POSIX_SPAWN:
        return "posix_spawn";
    case PK_MECH_JOB_LIST:
        return "createprocess_job_list";
    case PK_MECH_SUSPENDED:
        return "createprocess_suspended";
    }
    return "unknown";
}

/* The exception codes a Windows process most often dies of. XX(value, name) */
#define PK__NTSTATUS_MAP(XX)                                                                       \
    XX(0x80000002u, "STATUS_DATATYPE_MISALIGNMENT")                                                \
    XX(0x80000003u, "STATUS_BREAKPOINT")                                                           \
    XX(0x80000004u, "STATUS_SINGLE_STEP")                                                          \
    XX(0xC0000005u, "STATUS_ACCESS_VIOLATION")                                                     \
    XX(0xC0000006u, "STATUS_IN_PAGE_ERROR")                                                        \
    XX(0xC0000017u, "STATUS_NO_MEMORY")                                                            \
    XX(0xC000001Du, "STATUS_ILLEGAL_INSTRUCTION")                                                  \
    XX(0xC0000025u, "STATUS_NONCONTINUABLE_EXCEPTION")                                             \
    XX(0xC000008Cu, "STATUS_ARRAY_BOUNDS_EXCEEDED")                                                \
    XX(0xC000008Eu, "STATUS_FLOAT_DIVIDE_BY_ZERO")                                                 \
    XX(0xC0000094u, "STATUS_INTEGER_DIVIDE_BY_ZERO")                                               \
    XX(0xC0000095u, "STATUS_INTEGER_OVERFLOW")                                                     \
    XX(0xC0000096u, "STATUS_PRIVILEGED_INSTRUCTION")                                               \
    XX(0xC00000FDu, "STATUS_STACK_OVERFLOW")                                                       \
    XX(0xC0000135u, "STATUS_DLL_NOT_FOUND")                                                        \
    XX(0xC0000139u, "STATUS_ENTRYPOINT_NOT_FOUND")                                                 \
    XX(0xC000013Au, "STATUS_CONTROL_C_EXIT")                                                       \
    XX(0xC0000142u, "STATUS_DLL_INIT_FAILED")                                                      \
    XX(0xC0000374u, "STATUS_HEAP_CORRUPTION")                                                      \
    XX(0xC0000409u, "STATUS_STACK_BUFFER_OVERRUN")                                                 \
    XX(0xC0000417u, "STATUS_INVALID_CRUNTIME_PARAMETER")                                           \
    XX(0xC0000420u, "STATUS_ASSERTION_FAILURE")

const char *pk_ntstatus_name(uint32_t status)
{
    switch (status) {
#define PK__NTSTATUS_NAME(value, name)                                                             \
    case value:                                                                                    \
        return name;
        PK__NTSTATUS_MAP(PK__NTSTATUS_NAME)
#undef PK__NTSTATUS_NAME
    default:
        return NULL;
    }
}

const char *pk_version(void)
{
    return "0.1.0";
}
