/*
 * The environment fields that do not depend on the platform: which host this is, what was built,
 * from which commit, and what the library chose on this host. env.linux.c and env.windows.c read
 * the machine and call these at the same places, so both write their fields in one order.
 *
 * The revision is the one the build measures: run/revision.h is written at build time by
 * run/revision.cmake (so a Windows build run under Wine, or on a machine without the source
 * tree, still knows it); only a build made without git asks git about the source tree at run
 * time.
 */
#include "run/env.h"

#include "common/git.h"
#include "processkit.h"
#include "run/revision.h"

#include <stdint.h>
#include <stdio.h>
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
    char *out = pkb_git(PKB_SOURCE_DIR, args, NULL, 5000);
    if (out != NULL)
        out[strcspn(out, "\r\n")] = '\0';
    return out;
}

void pkb_env_build(json_t *env)
{
    json_object_set_new(env, "compiler", json_string(PKB_COMPILER));
    json_object_set_new(env, "compiler_flags", json_string(PKB_COMPILER_FLAGS));
    json_object_set_new(env, "build_type", json_string(PKB_BUILD_TYPE));
    if (PKB_BUILD_GIT_COMMIT[0] != '\0') {
        json_object_set_new(env, "git_commit", json_string(PKB_BUILD_GIT_COMMIT));
        json_object_set_new(env, "git_dirty",
                            PKB_BUILD_GIT_DIRTY < 0 ? json_null()
                                                    : json_boolean(PKB_BUILD_GIT_DIRTY > 0));
        json_object_set_new(env, "git_commit_time",
                            PKB_BUILD_GIT_COMMIT_TIME[0] != '\0'
                                ? json_string(PKB_BUILD_GIT_COMMIT_TIME)
                                : json_null());
        json_object_set_new(env, "revision_from", json_string("build"));
        return;
    }
    char *commit = git((const char *const[]){"rev-parse", "HEAD", NULL});
    char *status =
        git((const char *const[]){"status", "--porcelain", "--untracked-files=no", NULL});
    char *when = commit != NULL
                     ? git((const char *const[]){"show", "-s", "--format=%cI", "HEAD", NULL})
                     : NULL;
    json_object_set_new(env, "git_commit", json_string(commit != NULL ? commit : "unknown"));
    json_object_set_new(env, "git_dirty",
                        status != NULL ? json_boolean(status[0] != '\0') : json_null());
    json_object_set_new(env, "git_commit_time",
                        when != NULL && when[0] != '\0' ? json_string(when) : json_null());
    json_object_set_new(env, "revision_from", json_string(commit != NULL ? "run" : "unknown"));
    free(commit);
    free(status);
    free(when);
}

/* FNV-1a, 64 bits: a stable digest, not a secret-keeping one; what it digests is. */
static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

void pkb_env_host(json_t *env,
                  const char *hostname,
                  const char *machine_id,
                  const char *id_source,
                  const char *cpu_model,
                  long cpus)
{
    const char *named = getenv("PKBENCH_HOST");
    const char *host = named != NULL && named[0] != '\0'         ? named
                       : hostname != NULL && hostname[0] != '\0' ? hostname
                                                                 : "unknown";
    /* The machine's id never leaves it: 48 bits of a digest of it, under this program's own
     * prefix, identify the host in a fleet and give nothing back. Without one, the host's name,
     * CPU and counts stand in. */
    uint64_t h = fnv1a(0xcbf29ce484222325ull, "pkbench host id\n");
    if (machine_id != NULL && machine_id[0] != '\0') {
        h = fnv1a(h, machine_id);
    } else {
        char count[32];
        snprintf(count, sizeof count, "\n%ld\n", cpus);
        h = fnv1a(fnv1a(fnv1a(h, hostname != NULL ? hostname : ""), count), cpu_model);
        id_source = "hostname+cpu";
    }
    json_object_set_new(env, "host", json_string(host));
    json_object_set_new(env, "host_id", json_sprintf("%012llx", (unsigned long long)(h >> 16)));
    json_object_set_new(env, "host_id_from", json_string(id_source));
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
