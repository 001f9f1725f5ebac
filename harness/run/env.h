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

/* The fields every platform fills the same way (env.c): the compiler, its flags, the build
 * type, git's commit and whether the tree is dirty (asked through processkit) ... */
void pkb_env_build(json_t *env);
/* ... and the library's spawn mechanism, CLONE_CLEAR_SIGHAND, containment and version. */
void pkb_env_library(json_t *env);

/* Live counts: processes in /proc, scheduling entities (threads), runnable tasks now. */
int pkb_env_processes(void);
int pkb_env_threads(void);
int pkb_env_procs_running(void);

#endif /* PKB_ENV_H */
