/*
 * Environment capture for results files: env.linux.c or env.windows.c read the machine, env.c
 * the build and the library, for both.
 */
#ifndef PKB_ENV_H
#define PKB_ENV_H

#include <jansson.h>

/* The environment object of a results file, as at the start of a run (new reference). */
json_t *pkb_env_capture(void);
/* Adds the end-of-run fields (process and thread counts, load average). */
void pkb_env_finish(json_t *env);

/* The fields every platform fills the same way (env.c), first the host's identity: `host` (the
 * environment variable PKBENCH_HOST, else `hostname`), `host_id` (12 hex digits of a digest of
 * `machine_id`, else of the host name, CPU model and count) and `host_id_from` (`id_source`, or
 * "hostname+cpu" without a machine id) ... */
void pkb_env_host(json_t *env,
                  const char *hostname,
                  const char *machine_id,
                  const char *id_source,
                  const char *cpu_model,
                  long cpus);
/* ... the compiler, its flags, the build type, and the revision measured: git's commit, whether
 * tracked files differed from it, its committer date, and `revision_from` ("build": stamped when
 * pkbench was built; "run": asked of the source tree's git at run time, for a build made without
 * git; "unknown") ... */
void pkb_env_build(json_t *env);
/* ... and the library's spawn mechanism, CLONE_CLEAR_SIGHAND, containment and version. */
void pkb_env_library(json_t *env);

/* Live counts: processes in /proc, scheduling entities (threads), runnable tasks now. */
int pkb_env_processes(void);
int pkb_env_threads(void);
int pkb_env_procs_running(void);

#endif /* PKB_ENV_H */
