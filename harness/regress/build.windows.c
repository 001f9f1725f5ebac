/*
 * build — the sides of `pkbench ab` (build.h), on Windows: not there. A side is built with git, a
 * POSIX shell's tools and the revision's own CMake build, into a worker that is a POSIX program
 * (contenders/host/host.c); every call says so (build.c is the POSIX file).
 */
#include "regress/build.h"

#include "common/buf.h"

#include <errno.h>
#include <stdio.h>

int pkb_ab_source(char *out, size_t cap, char *err, size_t err_len)
{
    if (cap > 0)
        out[0] = '\0';
    return pkb_fail(err, err_len, -ENOTSUP,
                    "pkbench ab builds and measures revisions on Linux only");
}

int pkb_ab_side_prepare(pkb_ab_side *side,
                        const char *spec,
                        const pkb_ab_build_options *opts,
                        char *err,
                        size_t err_len)
{
    (void)side, (void)spec, (void)opts;
    return pkb_ab_source(NULL, 0, err, err_len);
}

int pkb_ab_git(const char *dir, const char *const *args, char *out, size_t cap)
{
    (void)dir, (void)args;
    if (out != NULL && cap > 0)
        snprintf(out, cap, "git runs for pkbench ab on Linux only");
    return -1;
}
