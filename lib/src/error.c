/*
 * Error values, stage and outcome names.
 *
 * Every fallible call returns 0 or a negative value: a negated errno, or a project code from
 * PK_ERROR_MAP (which sits below errno's range, so the two never collide). The same X-macro table
 * generates the enum in processkit.h and the two lookups here, so a code, its name and its message
 * cannot drift apart. errno names come from glibc's strerrorname_np (2.32+).
 */
#define _GNU_SOURCE
#include "internal.h"

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
    if (err < 0 && strerrorname_np(-err) != NULL)
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
        const char *name = strerrorname_np(-err);
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
    }
    return "unknown";
}

const char *pk_version(void)
{
    return "0.1.0";
}
