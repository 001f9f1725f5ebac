/*
 * pkrun.exe as a Windows user runs it: the child's exit status passed through, a crash passed
 * through as its NTSTATUS, 124 after a time limit with the whole tree gone, 127 for a program
 * not found, 125 for bad arguments (named), the child's bytes forwarded unchanged, and the JSON
 * outcome written atomically.
 */
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

/* pkrun.exe sits in the build tree's lib/, two levels above this program's directory. */
static const char *pkrun_path(void)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s", pk_test_self());
    for (int up = 0; up < 3; up++) {
        char *slash = strrchr(path, '\\');
        ASSERT(slash != NULL);
        *slash = '\0';
    }
    strcat(path, "\\lib\\pkrun.exe");
    return path;
}

#define PKRUN(res, ...)                                                                            \
    pk_run(&(pk_command){.argv = (const char *const[]){pkrun_path(), __VA_ARGS__, NULL}}, res)

TEST_IMPL(win_pkrun_exit_statuses)
{
    pk_result r;
    ASSERT_OK(PKRUN(&r, "--", pk_test_self(), "--helper", "exit", "3"));
    ASSERT_EXITED(r, 3);
    pk_result_release(&r);
    ASSERT_OK(PKRUN(&r, pk_test_self(), "--helper", "crash"));
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_CRASHED);
    ASSERT_EQ(r.outcome.ntstatus, 0xC0000005u);
    pk_result_release(&r);
    ASSERT_OK(PKRUN(&r, "pk-no-such-program-anywhere"));
    ASSERT_EXITED(r, 127);
    ASSERT(strstr(r.err.data, "pk-no-such-program-anywhere: not found") != NULL);
    pk_result_release(&r);
    ASSERT_OK(PKRUN(&r, "--timeout", "soon", pk_test_self()));
    ASSERT_EXITED(r, 125);
    ASSERT(strstr(r.err.data, "--timeout") != NULL);
    pk_result_release(&r);
    ASSERT_OK(PKRUN(&r, "--containment", "cgroup", pk_test_self(), "--helper", "exit", "0"));
    ASSERT_EXITED(r, 125);
    pk_result_release(&r);
    ASSERT_OK(PKRUN(&r, "--help"));
    ASSERT_EXITED(r, 0);
    ASSERT(strstr(r.out.data, "--containment M") != NULL);
    pk_result_release(&r);
}

TEST_IMPL(win_pkrun_timeout_ends_tree)
{
    pk_result r;
    int64_t t0 = pk_test_now_ms();
    ASSERT_OK(PKRUN(&r, "--timeout", "500ms", "--grace", "0", pk_test_self(), "--helper",
                    "grandchild", "60000"));
    ASSERT_EXITED(r, 124);
    ASSERT_LT(pk_test_now_ms() - t0, 15000);
    int gpid = atoi(r.out.data);
    ASSERT_GT(gpid, 0);
    ASSERT(pk_test_wait_dead(gpid, 5000));
    pk_result_release(&r);
}

TEST_IMPL(win_pkrun_forwards_bytes_and_json)
{
    char json[512];
    snprintf(json, sizeof json, "%s\\out.json", pk_test_tmpdir());
    pk_result r;
    ASSERT_OK(PKRUN(&r, "--json", json, pk_test_self(), "--helper", "emit", "3", "2"));
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "line 1\nline 2\nline 3\n"); /* no CR added, nothing dropped */
    ASSERT_STR_EQ(r.err.data, "err 1\nerr 2\n");
    pk_result_release(&r);
    FILE *f = fopen(json, "rb");
    ASSERT(f != NULL);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    ASSERT(strstr(buf, "\"schema\": \"pkrun\"") != NULL);
    ASSERT(strstr(buf, "\"containment\": \"job\"") != NULL);
    ASSERT(strstr(buf, "\"containment_downgraded\": false") != NULL);
    ASSERT(strstr(buf, "\"exited\"") != NULL);
    /* Written again over the same name: replaced, never appended. */
    ASSERT_OK(PKRUN(&r, "--json", json, pk_test_self(), "--helper", "exit", "4"));
    ASSERT_EXITED(r, 4);
    pk_result_release(&r);
    f = fopen(json, "rb");
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    ASSERT(strstr(buf, "\"schema\": \"pkrun\"") == strstr(buf, "\"schema\""));
    ASSERT(strstr(buf, "\"exit_code\": 4,") != NULL);
    /* A crash: the status by number and by name. */
    ASSERT_OK(PKRUN(&r, "--json", json, pk_test_self(), "--helper", "crash"));
    ASSERT_EQ(r.outcome.ntstatus, 0xC0000005u);
    pk_result_release(&r);
    f = fopen(json, "rb");
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    ASSERT(strstr(buf, "\"outcome\": \"crashed\"") != NULL);
    ASSERT(strstr(buf, "\"ntstatus\": \"0xC0000005\"") != NULL);
    ASSERT(strstr(buf, "STATUS_ACCESS_VIOLATION") != NULL);
}
