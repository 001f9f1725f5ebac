/*
 * The ab study's injected slowdown (lib/src/inject_run.c) does what the study's note says of it:
 * a build with PK_INJECT_EXTRA_RUN_PCT=N starts N extra children per 100 pk_run when no stream is
 * a pipe, and none when one is; the library everyone else links starts exactly one per run.
 * pk_extra_run (tests/extra_run.c, linked with such a build at N = 25) runs the commands; each
 * child appends a line to a file, which is what is counted.
 */
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PK_EXTRA_RUN_PATH
#define PK_EXTRA_RUN_PATH ""
#endif

static long lines_in(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    long n = 0;
    int c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* Runs pk_extra_run RUNS STREAMS into a fresh file: the children it started (lines in the file);
 * *outs, the "out" lines that reached its own stdout. */
static long children(const char *streams, long runs, long *outs)
{
    char file[512], count[32];
    snprintf(file, sizeof file, "%s/runs-%s", pk_test_tmpdir(), streams);
    snprintf(count, sizeof count, "%ld", runs);
    unlink(file);
    const char *const argv[] = {PK_EXTRA_RUN_PATH, count, streams, file, NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
    ASSERT_EXITED(r, 0);
    *outs = 0;
    for (const char *p = r.out.data; p != NULL && (p = strstr(p, "out\n")) != NULL; p += 4)
        ++*outs;
    pk_result_release(&r);
    long n = lines_in(file);
    unlink(file);
    return n;
}

TEST_IMPL(inject_extra_run_counts)
{
    if (PK_EXTRA_RUN_PATH[0] == '\0')
        pk_test_skip_gate("build", "pk_extra_run is not built here (Linux test builds only)");
    long outs = 0;
    /* No pipe: 25 extra children per 100 runs, each the same command with the same streams. */
    ASSERT_EQ(children("quiet", 100, &outs), 125);
    ASSERT_EQ(children("inherit", 100, &outs), 125);
    ASSERT_EQ(outs, 125);
    /* The share is kept across calls, not rounded per call: 7 runs owe 175%, one extra so far. */
    ASSERT_EQ(children("quiet", 7, &outs), 8);
    /* A pipe: nothing is run twice (pk_extra_run also checks that each capture holds one "out"). */
    ASSERT_EQ(children("capture", 100, &outs), 100);
    ASSERT_EQ(children("fed", 100, &outs), 100);
}

TEST_IMPL(inject_nothing_in_the_library)
{
    /* The library this runner links (the one installed) runs each command once. */
    char file[512];
    snprintf(file, sizeof file, "%s/runs", pk_test_tmpdir());
    unlink(file);
    const char *const argv[] = {"/bin/sh", "-c", "echo run >>\"$1\"", "sh", file, NULL};
    pk_command cmd = {.argv = argv,
                      .in.kind = PK_STDIO_NULL,
                      .out.kind = PK_STDIO_NULL,
                      .err.kind = PK_STDIO_NULL};
    for (int i = 0; i < 100; i++) {
        pk_result r;
        ASSERT_OK(pk_run(&cmd, &r));
        ASSERT_EXITED(r, 0);
        pk_result_release(&r);
    }
    ASSERT_EQ(lines_in(file), 100);
    unlink(file);
}
