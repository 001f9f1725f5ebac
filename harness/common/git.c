/*
 * git — `git -C DIR ARGS...` through processkit (git.h). The run's environment (its revision and
 * dirty flag) and a history's order (which commits a repository has, in what order) both ask git;
 * one function runs it, so both get the same stdin, time limit and notion of success.
 */
#include "common/git.h"

#include "processkit.h"

#include <stdlib.h>

char *pkb_git(const char *dir, const char *const *args, const pkb_buf *in, int timeout_ms)
{
    const char *argv[16] = {"git", "-C", dir};
    size_t n = 3;
    for (; args[n - 3] != NULL && n + 1 < sizeof argv / sizeof argv[0]; n++)
        argv[n] = args[n - 3];
    argv[n] = NULL;
    pk_result r;
    int rc = pk_run(&(pk_command){.argv = argv,
                                  .in = {.kind = in != NULL ? PK_STDIO_BYTES : PK_STDIO_NULL,
                                         .data = in != NULL ? in->data : NULL,
                                         .len = in != NULL ? in->len : 0},
                                  .err.kind = PK_STDIO_NULL,
                                  .timeout_ms = timeout_ms},
                    &r);
    char *out = NULL;
    if (rc == 0 && r.outcome.kind == PK_OUTCOME_EXITED && r.outcome.code == 0) {
        out = r.out.data != NULL ? r.out.data : calloc(1, 1);
        r.out.data = NULL;
    }
    pk_result_release(&r);
    return out;
}
