/*
 * Environment capture for results files (see env.c).
 */
#ifndef PKB_ENV_H
#define PKB_ENV_H

#include <jansson.h>

/* The environment object of a results file, as at the start of a run (new reference). */
json_t *pkb_env_capture(void);
/* Adds the end-of-run fields (process and thread counts, load average). */
void pkb_env_finish(json_t *env);

/* Live counts: processes in /proc, scheduling entities (threads), runnable tasks now. */
int pkb_env_processes(void);
int pkb_env_threads(void);
int pkb_env_procs_running(void);

#endif /* PKB_ENV_H */
