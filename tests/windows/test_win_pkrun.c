/*
 * pkrun.exe as a Windows user runs it: the child's exit status passed through, a crash passed
 * through as its NTSTATUS, 124 after a time limit with the whole tree gone, 127 for a program
 * not found, 125 for bad arguments (named), the child's bytes forwarded unchanged, and the JSON
 * outcome written atomically. The command line, its messages and the JSON schema are the POSIX
 * pkrun's (tests/test_pkrun.c expects the same strings); what Windows lacks (-s, --foreground)
 * is refused by name.
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

/* The whole of a file (at most cap - 1 bytes), NUL-terminated, into buf. */
static void read_text(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    ASSERT(f != NULL);
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = '\0';
}

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
    /* The limit must come after the helper has started its grandchild and printed its pid:
     * 500 ms did not, under Wine beside two CPU hogs (the output was empty). */
    ASSERT_OK(PKRUN(&r, "--timeout", "5s", "--grace", "0", pk_test_self(), "--helper", "grandchild",
                    "60000"));
    ASSERT_EXITED(r, 124);
    ASSERT_LT(pk_test_now_ms() - t0, 20000); /* a hang guard: the grandchild sleeps 60 s */
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
    char buf[8192];
    read_text(json, buf, sizeof buf);
    ASSERT(strstr(buf, "\"schema\": \"pkrun\"") != NULL);
    ASSERT(strstr(buf, "\"containment\": \"job\"") != NULL);
    ASSERT(strstr(buf, "\"containment_downgraded\": false") != NULL);
    ASSERT(strstr(buf, "\"exited\"") != NULL);
    /* Written again over the same name: replaced, never appended. */
    ASSERT_OK(PKRUN(&r, "--json", json, pk_test_self(), "--helper", "exit", "4"));
    ASSERT_EXITED(r, 4);
    pk_result_release(&r);
    read_text(json, buf, sizeof buf);
    ASSERT(strstr(buf, "\"schema\": \"pkrun\"") == strstr(buf, "\"schema\""));
    ASSERT(strstr(buf, "\"exit_code\": 4,") != NULL);
    /* A crash: the status by number and by name. */
    ASSERT_OK(PKRUN(&r, "--json", json, pk_test_self(), "--helper", "crash"));
    ASSERT_EQ(r.outcome.ntstatus, 0xC0000005u);
    pk_result_release(&r);
    read_text(json, buf, sizeof buf);
    ASSERT(strstr(buf, "\"outcome\": \"crashed\"") != NULL);
    ASSERT(strstr(buf, "\"ntstatus\": \"0xC0000005\"") != NULL);
    ASSERT(strstr(buf, "STATUS_ACCESS_VIOLATION") != NULL);
}

/* Asserts pkrun refused its arguments as the POSIX pkrun does: exit 125, nothing run, stderr
 * starting with `says`, then the usage. */
#define ASSERT_REFUSED(r, says)                                                                    \
    do {                                                                                           \
        ASSERT_EXITED(r, 125);                                                                     \
        const char *err_ = (r).err.data ? (r).err.data : "";                                       \
        if (strncmp(err_, says, strlen(says)) != 0 ||                                              \
            strstr(err_, "\nusage: pkrun [OPTION]... DURATION COMMAND [ARG]...\n") == NULL)        \
            pk_test_fail(__FILE__, __LINE__, "expected \"%s\", stderr was: %s", says, err_);       \
        ASSERT_EQ((r).out.len, 0);                                                                 \
    } while (0)

/* The POSIX pkrun's command line: its messages for bad values and options (the same strings
 * tests/test_pkrun.c expects), timeout's DURATION-first form, --version; -s and --foreground
 * refused by name, --containment offering what Windows has. */
TEST_IMPL(win_pkrun_command_line_as_on_posix)
{
    static const char *const cases[][2] = {
        {"--timeout=-1",
         "pkrun: --timeout: '-1' is not a duration (examples: 10, 1.5, 250ms, 2m, inf; no spaces, "
         "signs or hex)\n"},
        {"--kill-after=1x", "pkrun: --kill-after: '1x' is not a duration"},
        {"--max-bytes=2048G", "pkrun: --max-bytes: '2048G' is over the limit of 1T\n"},
        {"--keep=middle", "pkrun: --keep: 'middle' is not one of head, tail, fail\n"},
        {"--max=5", "pkrun: ambiguous option '--max': --max-bytes, --max-lines\n"},
        {"--frobnicate", "pkrun: unknown option '--frobnicate'\n"},
        {"--verbose=yes", "pkrun: --verbose: takes no value, got 'yes'\n"},
        {"--containment=pgroup", "pkrun: --containment: 'pgroup' is not one of auto, job\n"},
        {"--signal=TERM", "pkrun: --signal: not on Windows"},
        {"-s9", "pkrun: --signal: not on Windows"},
        {"--foreground", "pkrun: --foreground: not on Windows"},
    };
    pk_result r;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ASSERT_OK(PKRUN(&r, cases[i][0], "--", pk_test_self(), "--helper", "exit", "0"));
        ASSERT_REFUSED(r, cases[i][1]);
        pk_result_release(&r);
    }
    ASSERT_OK(PKRUN(&r, "5"));
    ASSERT_REFUSED(r, "pkrun: no COMMAND after DURATION '5'\n");
    pk_result_release(&r);
    ASSERT_OK(PKRUN(&r, "42D", pk_test_self()));
    ASSERT_REFUSED(r,
                   "pkrun: '42D' is neither a duration (examples: 10, 1.5, 250ms, 2m, inf) nor a "
                   "program\n");
    pk_result_release(&r);
    /* timeout's form: DURATION first. */
    ASSERT_OK(PKRUN(&r, "5", pk_test_self(), "--helper", "exit", "3"));
    ASSERT_EXITED(r, 3);
    pk_result_release(&r);
    ASSERT_OK(PKRUN(&r, "-k", "0", "0.3", pk_test_self(), "--helper", "sleep", "60000"));
    ASSERT_EXITED(r, 124);
    pk_result_release(&r);
    ASSERT_OK(PKRUN(&r, "--version"));
    ASSERT_EXITED(r, 0);
    ASSERT(strncmp(r.out.data, "pkrun (processkit) ", 19) == 0);
    pk_result_release(&r);
    /* --help: the shared text around the Windows lines. */
    ASSERT_OK(PKRUN(&r, "--help"));
    ASSERT_EXITED(r, 0);
    ASSERT(strncmp(r.out.data, "usage: pkrun [OPTION]... DURATION COMMAND [ARG]...\n", 51) == 0);
    ASSERT(strstr(r.out.data, "[--containment auto|job]") != NULL);
    ASSERT(strstr(r.out.data, "S, a duration") != NULL);
    ASSERT(strstr(r.out.data, "-s and --foreground exist on POSIX only") != NULL);
    ASSERT(strstr(r.out.data, "--signal SIG") == NULL);
    pk_result_release(&r);
}

/* The JSON outcome has the POSIX schema (version 2), key for key and in the same order: a
 * relayed stream with its capture, and a stream the command inherited. */
TEST_IMPL(win_pkrun_json_schema_as_on_posix)
{
    char json[512], buf[8192];
    snprintf(json, sizeof json, "%s\\out.json", pk_test_tmpdir());
    pk_result r;
    ASSERT_OK(PKRUN(&r, "--json", json, "--max-lines", "2", "--", pk_test_self(), "--helper",
                    "emit", "3", "2"));
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "line 1\nline 2\nline 3\n"); /* relayed in full, not capped */
    ASSERT_STR_EQ(r.err.data, "err 1\nerr 2\n");
    pk_result_release(&r);
    read_text(json, buf, sizeof buf);
    static const char *const in_order[] = {
        "{\n  \"schema\": \"pkrun\",\n  \"schema_version\": 2,\n  \"argv\": [\"",
        "\"],\n  \"spawn_mechanism\": \"",
        "\",\n  \"containment\": \"job\",\n  \"containment_requested\": \"auto\",\n"
        "  \"containment_downgraded\": false,\n  \"outcome\": \"exited\",\n"
        "  \"exit_code\": 0,\n  \"pkrun_exit_status\": 0,\n  \"wall_ms\": ",
        ",\n  \"user_ms\": ",
        ",\n  \"sys_ms\": ",
        ",\n  \"streams\": {\n"
        "    \"stdout\": {\"forwarding\": \"relayed\", \"bytes\": 21, \"delivered_bytes\": 21, "
        "\"lines\": 3, \"truncated\": true, \"kept\": \"tail\", \"kept_bytes\": 14, "
        "\"text\": \"line 2\\nline 3\\n\"},\n"
        "    \"stderr\": {\"forwarding\": \"relayed\", \"bytes\": 12, \"delivered_bytes\": 12, "
        "\"lines\": 2, \"truncated\": false, \"kept\": \"tail\", \"kept_bytes\": 12, "
        "\"text\": \"err 1\\nerr 2\\n\"}\n  }\n}\n",
    };
    const char *at = buf;
    for (size_t i = 0; i < sizeof in_order / sizeof in_order[0]; i++) {
        const char *found = strstr(at, in_order[i]);
        if (found == NULL || (i == 0 && found != buf))
            pk_test_fail(__FILE__, __LINE__, "expected next: %s\nJSON was:\n%s", in_order[i], buf);
        at = found + strlen(in_order[i]);
    }
    ASSERT_EQ(*at, '\0');
    /* No capture option: the command had pkrun's own stdout and stderr. */
    ASSERT_OK(PKRUN(&r, "--json", json, "--", pk_test_self(), "--helper", "exit", "4"));
    ASSERT_EXITED(r, 4);
    pk_result_release(&r);
    read_text(json, buf, sizeof buf);
    ASSERT(strstr(buf, "  \"streams\": {\n    \"stdout\": {\"forwarding\": \"inherited\"},\n"
                       "    \"stderr\": {\"forwarding\": \"inherited\"}\n  }\n}\n") != NULL);
    /* --keep fail: over the cap is 125, named per stream, as on POSIX. */
    ASSERT_OK(PKRUN(&r, "--keep", "fail", "--max-bytes", "10", "--", pk_test_self(), "--helper",
                    "emit", "3"));
    ASSERT_EXITED(r, 125);
    ASSERT_STR_EQ(r.out.data, "line 1\nline 2\nline 3\n");
    ASSERT_STR_EQ(r.err.data,
                  "pkrun: output over the --keep fail cap: stdout 21 bytes / 3 lines\n");
    pk_result_release(&r);
    /* The file rule: a directory is refused before anything runs; NUL is written in place. */
    ASSERT_OK(PKRUN(&r, "--json", pk_test_tmpdir(), pk_test_self(), "--helper", "exit", "0"));
    ASSERT_REFUSED(r, "pkrun: --json: cannot write '");
    pk_result_release(&r);
    ASSERT_OK(PKRUN(&r, "--json", "NUL", pk_test_self(), "--helper", "exit", "5"));
    ASSERT_EXITED(r, 5);
    ASSERT_EQ(r.err.len, 0);
    pk_result_release(&r);
}

/* Without an option that needs the output, the command inherits pkrun's handles: its bytes
 * arrive unchanged, however long a line (one of 3 MiB without a newline here, with CRs, NULs
 * and bytes that are not UTF-8). With one, they are relayed, still unchanged. The relayed line
 * ends with a newline: processkit on Windows does not always hand on_line a last line without
 * one when it finds the pipe empty after the exit (engine.windows.c, drain_after_exit; about 1
 * run in 3 under Wine), and pkrun can only say how many bytes it did not get. */
TEST_IMPL(win_pkrun_passes_bytes_through)
{
    size_t len = 3u << 20;
    char *data = malloc(len);
    ASSERT(data != NULL);
    for (size_t i = 0; i < len; i++)
        data[i] = "ab\r\0\xff\xc3 \r"[i % 8];
    static const char *const modes[][4] = {
        {"--verbose", "--", NULL},
        {"--verbose", "--idle-timeout", "60", "--"},
    };
    for (int m = 0; m < 2; m++) {
        data[len - 1] = m == 0 ? 'x' : '\n';
        const char *argv[12];
        int n = 0;
        argv[n++] = pkrun_path();
        for (int k = 0; k < 4 && modes[m][k] != NULL; k++)
            argv[n++] = modes[m][k];
        argv[n++] = pk_test_self();
        argv[n++] = "--helper";
        argv[n++] = "cat";
        argv[n] = NULL;
        pk_result r;
        ASSERT_OK(pk_run(
            &(pk_command){.argv = argv, .in = {.kind = PK_STDIO_BYTES, .data = data, .len = len}},
            &r));
        ASSERT_EXITED(r, 0);
        if (r.out.len != len)
            pk_test_fail(__FILE__, __LINE__, "run %d: %llu bytes of %llu; stderr: %s", m,
                         (unsigned long long)r.out.len, (unsigned long long)len, r.err.data);
        ASSERT(memcmp(r.out.data, data, len) == 0);
        ASSERT(strstr(r.err.data, m == 0 ? "; output inherited\n"
                                         : "; output relayed through pipes\n") != NULL);
        pk_result_release(&r);
    }
    free(data);
}
