/*
 * The environment fields that do not depend on the platform: what was built, from which commit,
 * and what the library chose on this host. env.linux.c and env.windows.c read the machine and
 * call these at the same places, so both write their fields in one order.
 */
#include "run/env.h"

#include "processkit.h"

#include <stdlib.h>
#include <string.h>

#ifndef PKB_COMPILER
#define PKB_COMPILER "unknown"
#endif
#ifndef PKB_COMPILER_FLAGS
#define PKB_COMPILER_FLAGS ""
#endif
#ifndef PKB_BUILD_TYPE
#define PKB_BUILD_TYPE "unknown"
#endif
#ifndef PKB_SOURCE_DIR
#define PKB_SOURCE_DIR "."
#endif

/* git's answer for the source tree (its first line), through processkit itself; NULL when git is
 * not there or fails. */
static char *git(const char *const *args)
{
    const char *argv[8] = {"git", "-C", PKB_SOURCE_DIR};
    int n = 3;
    for (; args[n - 3] != NULL && n < 7; n++)
        argv[n] = args[n - 3];
    argv[n] = NULL;
    pk_result r;
    int rc = pk_run(&(pk_command){.argv = argv, .err.kind = PK_STDIO_NULL, .timeout_ms = 5000}, &r);
    char *out = NULL;
    if (rc == 0 && r.outcome.kind == PK_OUTCOME_EXITED && r.outcome.code == 0) {
        out = r.out.data != NULL ? r.out.data : calloc(1, 1);
        r.out.data = NULL;
        if (out != NULL)
            out[strcspn(out, "\r\n")] = '\0';
    }
    pk_result_release(&r);
    return out;
}

void pkb_env_build(json_t *env)
{
    char *commit = git((const char *const[]){"rev-parse", "HEAD", NULL});
    char *status =
        git((const char *const[]){"status", "--porcelain", "--untracked-files=no", NULL});
    json_object_set_new(env, "compiler", json_string(PKB_COMPILER));
    json_object_set_new(env, "compiler_flags", json_string(PKB_COMPILER_FLAGS));
    json_object_set_new(env, "build_type", json_string(PKB_BUILD_TYPE));
    json_object_set_new(env, "git_commit", json_string(commit != NULL ? commit : "unknown"));
    json_object_set_new(env, "git_dirty",
                        status != NULL ? json_boolean(status[0] != '\0') : json_null());
    free(commit);
    free(status);
}

void pkb_env_library(json_t *env)
{
    json_object_set_new(env, "spawn_mechanism",
                        json_string(pk_mechanism_name(pk_spawn_mechanism())));
    json_object_set_new(env, "clear_sighand", json_boolean(pk_spawn_clears_sighand()));
    json_object_set_new(env, "containment",
                        json_string(pk_containment_name(pk_host_containment())));
    json_object_set_new(env, "processkit_version", json_string(pk_version()));
}
