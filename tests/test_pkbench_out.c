/*
 * pkbench checks that its output can be written before it measures anything: run, compare and
 * check refuse an --out they could not write (a missing directory, a directory) at once, exit 1,
 * naming the path; an output that is not a regular file (a symlink to stdout) is written in
 * place and stays what it was.
 */
#define _GNU_SOURCE
#include "test.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif

TEST_IMPL(pkbench_checks_output_before_measuring)
{
    if (PK_PKBENCH_PATH[0] == '\0')
        pk_test_skip_gate("build", "pkbench is built only with PK_BUILD_BENCH");
    const char *fixture = PK_TEST_DATA_DIR "/compare-fixture.json";
    const char *dir = pk_test_tmpdir();
    struct {
        const char *args[8];
        const char *says;
    } cases[] = {
        /* Unchecked, this one would measure the whole quick profile before failing. */
        {{"run", "--out", "/nonexistent-dir/out.json"},
         "cannot write /nonexistent-dir/out.json: No such file or directory"},
        {{"run", "--out", dir}, "Is a directory"},
        {{"compare", fixture, fixture, "--out", "/nonexistent-dir/cmp.txt"},
         "cannot write /nonexistent-dir/cmp.txt"},
        {{"check", "--baseline", fixture, "--out", "/nonexistent-dir/check.json"},
         "cannot write /nonexistent-dir/check.json"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[10] = {PK_PKBENCH_PATH};
        for (int k = 0; k < 8 && cases[i].args[k] != NULL; k++)
            argv[k + 1] = cases[i].args[k];
        int64_t t0 = pk_test_now_ms();
        pk_result r;
        ASSERT_OK(pk_run(&(pk_command){.argv = argv, .timeout_ms = 120000}, &r));
        int64_t ms = pk_test_now_ms() - t0;
        /* Checked first: nothing measured (no round reported), and seconds, not the minutes a
         * measurement takes (5.1 s seen under ASan beside three other test lanes). */
        if (r.outcome.kind != PK_OUTCOME_EXITED || r.outcome.code != 1 || r.err.data == NULL ||
            strstr(r.err.data, cases[i].says) == NULL || strstr(r.err.data, "round ") != NULL ||
            ms > 30000)
            pk_test_fail(__FILE__, __LINE__, "case %zu: exit %d after %lld ms, stderr: %s", i,
                         r.outcome.code, (long long)ms, r.err.data ? r.err.data : "");
        pk_result_release(&r);
    }

    /* Not a regular file: written in place, and a symlink stays one. */
    char link[600];
    snprintf(link, sizeof link, "%s/stdout", dir);
    ASSERT_EQ(symlink("/proc/self/fd/1", link), 0);
    const char *const argv[] = {PK_PKBENCH_PATH, "compare", fixture, fixture, "--out", link, NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_EXITED);
    ASSERT(r.out.data != NULL && strstr(r.out.data, "geomean") != NULL);
    pk_result_release(&r);
    struct stat st;
    ASSERT_EQ(lstat(link, &st), 0);
    ASSERT(S_ISLNK(st.st_mode));
    unlink(link);
}
