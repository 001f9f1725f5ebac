/*
 * pk_extra_run: pk_run against the library as the ab study's slowed builds make it
 * (processkit_extra_run: lib/src/inject_run.c with PK_INJECT_EXTRA_RUN_PCT=25). test_inject.c
 * counts the children it starts through the file each child appends a line to.
 *
 *   pk_extra_run RUNS STREAMS FILE
 *
 * runs `sh -c 'echo run >>FILE; echo out'` RUNS times, with STREAMS one of: quiet (stdin
 * /dev/null, stdout and stderr /dev/null — no pipe), inherit (all three the caller's), capture
 * (stdout captured: a pipe) or fed (stdin bytes: a pipe). Each run must exit 0; with capture each
 * must have captured "out" exactly once. Exit status 0, or 1 with the reason on stderr.
 */
#include "processkit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int streams(const char *name, pk_command *cmd)
{
    pk_stdio_kind all = PK_STDIO_NULL;
    if (strcmp(name, "inherit") == 0)
        all = PK_STDIO_INHERIT;
    else if (strcmp(name, "quiet") != 0 && strcmp(name, "capture") != 0 && strcmp(name, "fed") != 0)
        return -1;
    cmd->in.kind = cmd->out.kind = cmd->err.kind = all;
    if (strcmp(name, "capture") == 0)
        cmd->out.kind = PK_STDIO_CAPTURE;
    if (strcmp(name, "fed") == 0)
        cmd->in = (pk_stdio){.kind = PK_STDIO_BYTES, .data = "in\n", .len = 3};
    return 0;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    long runs = argc == 4 ? strtol(argv[1], &end, 10) : 0;
    if (argc != 4 || end == argv[1] || *end != '\0' || runs < 1) {
        fprintf(stderr, "usage: pk_extra_run RUNS quiet|inherit|capture|fed FILE\n");
        return 1;
    }
    const char *const args[] = {"/bin/sh", "-c",    "echo run >>\"$1\"; echo out",
                                "sh",      argv[3], NULL};
    pk_command cmd = {.argv = args};
    if (streams(argv[2], &cmd) != 0) {
        fprintf(stderr, "pk_extra_run: unknown STREAMS '%s'\n", argv[2]);
        return 1;
    }
    for (long i = 0; i < runs; i++) {
        pk_result res;
        int rc = pk_run(&cmd, &res);
        bool ok = rc == 0 && res.outcome.kind == PK_OUTCOME_EXITED && res.outcome.code == 0;
        if (ok && cmd.out.kind == PK_STDIO_CAPTURE)
            ok = res.out.len == 4 && memcmp(res.out.data, "out\n", 4) == 0;
        pk_result_release(&res);
        if (!ok) {
            fprintf(stderr, "pk_extra_run: run %ld of %ld: rc %d (%s)\n", i + 1, runs, rc,
                    pk_errname(rc));
            return 1;
        }
    }
    return 0;
}
