/*
 * pkrun end to end: exit codes, forwarding, the JSON outcome, time limits and signal forwarding
 * that leave no process of the tree behind.
 */
#define _GNU_SOURCE
#include "test.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PK_PKRUN_PATH
#error "tests/CMakeLists.txt passes the pkrun binary's path"
#endif

static int pkrun(const char *const *args, pk_result *r)
{
    const char *argv[32] = {PK_PKRUN_PATH};
    int n = 1;
    for (; args[n - 1] != NULL && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    int rc = pk_run(&(pk_command){.argv = argv}, r);
    ASSERT_OK(rc);
    ASSERT_EQ(r->outcome.kind, PK_OUTCOME_EXITED);
    return r->outcome.code;
}

#define PKRUN(r, ...) pkrun((const char *const[]){__VA_ARGS__, NULL}, r)

TEST_IMPL(pkrun_exit_codes)
{
    pk_result r;
    ASSERT_EQ(PKRUN(&r, "--", "sh", "-c", "exit 3"), 3);
    pk_result_release(&r);
    ASSERT_EQ(PKRUN(&r, "sh", "-c", "exit 0"), 0);
    pk_result_release(&r);
    ASSERT_EQ(PKRUN(&r, "--", "pk-no-such-program"), 127);
    ASSERT(strstr(r.err.data, "not found in PATH") != NULL);
    pk_result_release(&r);
    ASSERT_EQ(PKRUN(&r, "--", "/nonexistent/prog"), 127);
    pk_result_release(&r);
    ASSERT_EQ(PKRUN(&r, "--", "/etc/passwd"), 126);
    pk_result_release(&r);
    ASSERT_EQ(PKRUN(&r, "--", "sh", "-c", "kill -9 $$"), 128 + 9);
    pk_result_release(&r);
    ASSERT_EQ(PKRUN(&r, "--timeout", "0.2", "--grace", "0", "--", "sleep", "100"), 124);
    pk_result_release(&r);
    ASSERT_EQ(PKRUN(&r, "--idle-timeout", "0.2", "--", "sleep", "100"), 124);
    pk_result_release(&r);
}

TEST_IMPL(pkrun_bad_arguments)
{
    static const char *const cases[][4] = {
        {"--timeout", "abc", "true", "--timeout needs a number of seconds"},
        {"--timeout", "-1", "true", "--timeout needs a number of seconds"},
        {"--keep", "middle", "true", "--keep needs head, tail or fail"},
        {"--containment", "jail", "true", "--containment needs auto, cgroup or pgroup"},
        {"--max-bytes", "12Q", "true", "--max-bytes needs a count"},
        {"--frobnicate", "x", "true", "unknown option '--frobnicate'"},
        {"--json", "", "true", "--json needs a file name"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pk_result r;
        ASSERT_EQ(PKRUN(&r, cases[i][0], cases[i][1], cases[i][2]), 125);
        if (strstr(r.err.data, cases[i][3]) == NULL || strstr(r.err.data, "usage: pkrun") == NULL)
            pk_test_fail(__FILE__, __LINE__, "case %zu: stderr was: %s", i, r.err.data);
        /* one line naming the argument, then the usage */
        ASSERT(strncmp(r.err.data, "pkrun: ", 7) == 0);
        pk_result_release(&r);
    }
    pk_result r;
    ASSERT_EQ(PKRUN(&r, "--timeout", "1"), 125);
    ASSERT(strstr(r.err.data, "no PROGRAM given") != NULL);
    pk_result_release(&r);
    ASSERT_EQ(PKRUN(&r, "--help"), 0);
    ASSERT(strstr(r.out.data, "Exit status") != NULL);
    pk_result_release(&r);
}

TEST_IMPL(pkrun_forwards_lines_exactly)
{
    pk_result r;
    ASSERT_EQ(PKRUN(&r, "--", pk_test_self(), "--helper", "write-hex", "610a62ff0d0a63"), 0);
    ASSERT_EQ(r.out.len, 7); /* raw bytes, including the final unterminated "c" */
    ASSERT(memcmp(r.out.data, "a\nb\xff\r\nc", 7) == 0);
    pk_result_release(&r);
    ASSERT_EQ(PKRUN(&r, "--", pk_test_self(), "--helper", "interleave", "3"), 0);
    ASSERT_STR_EQ(r.out.data, "out 0\nout 1\nout 2\n");
    ASSERT_STR_EQ(r.err.data, "err 0\nerr 1\nerr 2\n");
    pk_result_release(&r);
}

static json_t *load_json(const char *path)
{
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    if (j == NULL)
        pk_test_fail(__FILE__, __LINE__, "%s: %s (line %d)", path, err.text, err.line);
    return j;
}

TEST_IMPL(pkrun_json_outcome)
{
    char path[512];
    snprintf(path, sizeof path, "%s/out.json", pk_test_tmpdir());
    pk_result r;
    ASSERT_EQ(PKRUN(&r, "--json", path, "--max-lines", "2", "--", pk_test_self(), "--helper",
                    "emit-lines", "5", "3"),
              0);
    pk_result_release(&r);
    json_t *j = load_json(path);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "outcome")), "exited");
    ASSERT_EQ(json_integer_value(json_object_get(j, "exit_code")), 0);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "spawn_mechanism")),
                  pk_mechanism_name(pk_spawn_mechanism()));
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "containment")),
                  pk_containment_name(pk_host_containment()));
    ASSERT(json_is_boolean(json_object_get(j, "containment_downgraded")));
    ASSERT(json_real_value(json_object_get(j, "wall_ms")) > 0);
    ASSERT(json_is_real(json_object_get(j, "user_ms")));
    json_t *out = json_object_get(json_object_get(j, "streams"), "stdout");
    ASSERT_EQ(json_integer_value(json_object_get(out, "bytes")), 20);
    ASSERT_EQ(json_integer_value(json_object_get(out, "lines")), 5);
    ASSERT(json_is_true(json_object_get(out, "truncated")));
    ASSERT_STR_EQ(json_string_value(json_object_get(out, "kept")), "tail");
    ASSERT_STR_EQ(json_string_value(json_object_get(out, "text")), "def\nefg\n");
    json_decref(j);

    /* A signal death, an invalid UTF-8 tail kept as valid JSON, and the head policy. */
    ASSERT_EQ(PKRUN(&r, "--json", path, "--keep", "head", "--", "sh", "-c",
                    "printf 'x\\377y\\n'; kill -TERM $$"),
              128 + SIGTERM);
    pk_result_release(&r);
    j = load_json(path);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "outcome")), "signaled");
    ASSERT_EQ(json_integer_value(json_object_get(j, "signal")), SIGTERM);
    out = json_object_get(json_object_get(j, "streams"), "stdout");
    ASSERT_STR_EQ(json_string_value(json_object_get(out, "text")), "x\xEF\xBF\xBDy\n");
    ASSERT_STR_EQ(json_string_value(json_object_get(out, "kept")), "head");
    json_decref(j);

    /* A timeout says so; a spawn failure names its stage. */
    ASSERT_EQ(PKRUN(&r, "--json", path, "--timeout", "0.1", "--grace", "0", "--", "sleep", "9"),
              124);
    pk_result_release(&r);
    j = load_json(path);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "outcome")), "timed_out");
    json_decref(j);
    ASSERT_EQ(PKRUN(&r, "--json", path, "--", "/etc/passwd"), 126);
    pk_result_release(&r);
    j = load_json(path);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "outcome")), "spawn_failed");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "stage")), "exec");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "error")), "EACCES");
    json_decref(j);
}

TEST_IMPL(pkrun_fail_loud_exit_125)
{
    pk_result r;
    ASSERT_EQ(PKRUN(&r, "--keep", "fail", "--max-bytes", "10", "--", pk_test_self(), "--helper",
                    "emit-lines", "100", "9"),
              125);
    ASSERT(strstr(r.err.data, "stdout 1000 bytes / 100 lines") != NULL);
    ASSERT_EQ(r.out.total_lines, 100); /* still forwarded and drained */
    pk_result_release(&r);
}

static int first_number(const char *text)
{
    const char *p = text;
    while (p != NULL && *p && (*p < '0' || *p > '9'))
        p++;
    return p != NULL && *p ? atoi(p) : -1;
}

TEST_IMPL(pkrun_timeout_and_signals_leave_no_tree)
{
    /* Timeout: the background sleep of the shell is gone when pkrun returns. */
    pk_result r;
    ASSERT_EQ(PKRUN(&r, "--timeout", "0.3", "--", "sh", "-c", "sleep 1000 & echo $!; wait"), 124);
    int bg = first_number(r.out.data);
    ASSERT_GT(bg, 0);
    ASSERT(!pk_test_pid_alive(bg));
    pk_result_release(&r);

    /* SIGTERM to pkrun is forwarded to the tree; pkrun returns only when it is gone. */
    const char *const argv[] = {PK_PKRUN_PATH, "--", "sh", "-c", "sleep 1000 & echo $!; wait",
                                NULL};
    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = argv, .containment = PK_CONTAIN_NONE}, &p, NULL));
    pk_line line;
    ASSERT_OK(pk_process_read_line(p, &line));
    bg = atoi(line.data);
    ASSERT_GT(bg, 0);
    ASSERT_OK(pk_process_signal(p, SIGTERM));
    ASSERT_OK(pk_process_wait(p, &r));
    ASSERT_EXITED(r, 128 + SIGTERM); /* sh died of the forwarded TERM */
    ASSERT(!pk_test_pid_alive(bg));
    pk_result_release(&r);
    pk_process_free(p);

    /* A child ignoring SIGINT: forwarded, then SIGKILL after the grace. */
    const char *const argv2[] = {
        PK_PKRUN_PATH, "--grace", "0.3", "--", "sh", "-c", "trap '' INT; echo ready; sleep 1000",
        NULL};
    ASSERT_OK(pk_spawn(&(pk_command){.argv = argv2, .containment = PK_CONTAIN_NONE}, &p, NULL));
    ASSERT_OK(pk_process_read_line(p, &line));
    ASSERT_OK(pk_process_signal(p, SIGINT));
    ASSERT_OK(pk_process_wait(p, &r));
    ASSERT_EXITED(r, 128 + SIGKILL);
    pk_result_release(&r);
    pk_process_free(p);
}

TEST_IMPL(pkrun_verbose_states_containment)
{
    pk_result r;
    ASSERT_EQ(PKRUN(&r, "--verbose", "--containment", "pgroup", "true"), 0);
    ASSERT(strstr(r.err.data, "containment pgroup") != NULL);
    ASSERT(strstr(r.err.data, "spawn mechanism") != NULL);
    pk_result_release(&r);
    if (pk_host_containment() == PK_CONTAIN_CGROUP) {
        ASSERT_EQ(PKRUN(&r, "--verbose", "true"), 0);
        ASSERT(strstr(r.err.data, "containment cgroup;") != NULL);
        pk_result_release(&r);
    }
}
