/*
 * remote — Windows: no worker runs here (the worker client, worker.c, is POSIX: poll, pipe2 and
 * a pipe reader kept against SIGPIPE), and registry.windows.c lists none. What the scenarios suite
 * and pkbench ask of the contenders added for one run answers that there are none, and
 * `--worker` says why it cannot add one.
 */
#include "contenders/remote.h"

#include <stdio.h>

const pkb_contender *pkb_remote_add(const char *definition, char *why, size_t why_len)
{
    snprintf(why, why_len, "--worker '%s': workers run on Linux only", definition);
    return NULL;
}

size_t pkb_remote_extra_count(void)
{
    return 0;
}

const pkb_contender *pkb_remote_extra(size_t i)
{
    (void)i;
    return NULL;
}
