/*
 * git — the harness's one way of asking git a question (a run's revision, a history's order):
 * `git -C DIR ARGS...` through processkit, its stdout kept when it exits 0.
 */
#ifndef PKB_GIT_H
#define PKB_GIT_H

#include "common/buf.h"

/* Runs `git -C dir args...` (args NULL-terminated, at most 12) with in's bytes on its stdin (NULL:
 * none), its stderr discarded, killed after timeout_ms. Returns its stdout, malloc'd and
 * NUL-terminated (empty, not NULL, when it printed nothing), when it exits 0; NULL when git is not
 * there, fails, times out or memory runs out. */
char *pkb_git(const char *dir, const char *const *args, const pkb_buf *in, int timeout_ms);

#endif /* PKB_GIT_H */
