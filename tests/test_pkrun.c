/*
 * pkrun end to end: its arguments (each option with a value, spelled both "--opt=value" and
 * "--opt value", shown to take effect; bad values, unknown options and the end of options
 * refused or kept as they should be), exit codes, forwarding, the JSON outcome, and time limits
 * and signal forwarding that leave no process of the tree behind.
 */
#define _GNU_SOURCE
#include "test.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PK_PKRUN_PATH
#error "tests/CMakeLists.txt passes the pkrun binary's path"
#endif

/* How a test spells option values: as written ("--opt=value"), or split ("--opt" "value"). */
enum form { JOINED, SPLIT };

/* Runs pkrun with args and returns its exit status as a shell shows it: its code, or 128 + N when
 * it ended by signal N (as timeout, it ends by the signal that ended the command). In the SPLIT
 * form each "--opt=value" among pkrun's own options (before "--" or the program) is passed as two
 * arguments, so one test body checks both spellings; tests that use a form write every option
 * value joined. *ms, when not NULL, receives the run's wall time. */
static int pkrun_as(enum form form, pk_result *r, int64_t *ms, const char *const *args)
{
    const char *argv[48] = {PK_PKRUN_PATH};
    char names[8][64];
    int n = 1, nnames = 0;
    bool options = true;
    for (; *args != NULL && n < 46; args++) {
        const char *a = *args, *eq = strchr(a, '=');
        if (strcmp(a, "--") == 0 || a[0] != '-')
            options = false;
        if (form == SPLIT && options && strncmp(a, "--", 2) == 0 && eq != NULL) {
            ASSERT_LT(nnames, 8);
            snprintf(names[nnames], sizeof names[0], "%.*s", (int)(eq - a), a);
            argv[n++] = names[nnames++];
            argv[n++] = eq + 1;
        } else {
            argv[n++] = a;
        }
    }
    argv[n] = NULL;
    /* Shown only when the test fails: which spelling it was. */
    fprintf(stderr, "pkrun");
    for (int i = 1; i < n; i++)
        fprintf(stderr, " '%s'", argv[i]);
    fprintf(stderr, "\n");
    int64_t t0 = pk_test_now_ms();
    int rc = pk_run(&(pk_command){.argv = argv}, r);
    if (ms != NULL)
        *ms = pk_test_now_ms() - t0;
    ASSERT_OK(rc);
    if (r->outcome.kind == PK_OUTCOME_SIGNALED)
        return 128 + r->outcome.signo;
    ASSERT_EQ(r->outcome.kind, PK_OUTCOME_EXITED);
    return r->outcome.code;
}

#define PKRUN(r, ...)           pkrun_as(JOINED, r, NULL, (const char *const[]){__VA_ARGS__, NULL})
#define PKRUN_AS(f, r, ms, ...) pkrun_as(f, r, ms, (const char *const[]){__VA_ARGS__, NULL})

/* Asserts pkrun refused its arguments: exit 125, nothing run, and a first stderr line starting
 * with `says` (the option and what was wrong), then the usage. */
#define ASSERT_REFUSED(r, status, says)                                                            \
    do {                                                                                           \
        ASSERT_EQ(status, 125);                                                                    \
        if (strncmp((r).err.data ? (r).err.data : "", says, strlen(says)) != 0 ||                  \
            strstr((r).err.data, "\nusage: pkrun") == NULL)                                        \
            pk_test_fail(__FILE__, __LINE__, "expected \"%s\", stderr was: %s", says,              \
                         (r).err.data ? (r).err.data : "");                                        \
        ASSERT_EQ((r).out.len, 0);                                                                 \
    } while (0)

/* The JSON outcome of one finished run, written by --json=FILE. */
static json_t *load_json(const char *path)
{
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    if (j == NULL)
        pk_test_fail(__FILE__, __LINE__, "%s: %s (line %d)", path, err.text, err.line);
    return j;
}

static json_t *stdout_of(json_t *j)
{
    return json_object_get(json_object_get(j, "streams"), "stdout");
}

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
    ASSERT_EQ(PKRUN(&r, "--timeout", "0.2", "--", "sleep", "100"), 124);
    pk_result_release(&r);
    /* SIGKILL ended it: 128 + 9, as timeout says when KILL was needed. */
    ASSERT_EQ(PKRUN(&r, "--timeout", "0.2", "--grace", "0.1", "--", "sh", "-c",
                    "trap '' TERM; sleep 100"),
              137);
    pk_result_release(&r);
    /* The empty name, as execvp: not found. */
    ASSERT_EQ(PKRUN(&r, "--", ""), 127);
    pk_result_release(&r);
    ASSERT_EQ(PKRUN(&r, "--idle-timeout", "0.2", "--", "sleep", "100"), 124);
    pk_result_release(&r);
}

/* Every option that takes a value, given a bad one in both spellings: refused before anything
 * runs, naming the option and the value. */
TEST_IMPL(pkrun_bad_arguments)
{
    static const char *const cases[][2] = {
        {"--timeout=1x", "pkrun: --timeout: '1x' is not a duration"},
        {"--timeout=", "pkrun: --timeout: '' is not a duration"},
        {"--timeout=-1", "pkrun: --timeout: '-1' is not a duration"},
        {"--timeout=-0", "pkrun: --timeout: '-0' is not a duration"},
        {"--timeout=+5", "pkrun: --timeout: '+5' is not a duration"},
        {"--timeout= 5", "pkrun: --timeout: ' 5' is not a duration"},
        {"--timeout=nan", "pkrun: --timeout: 'nan' is not a duration"},
        {"--timeout=infinite", "pkrun: --timeout: 'infinite' is not a duration"},
        {"--timeout=-inf", "pkrun: --timeout: '-inf' is not a duration"},
        {"--timeout=0x10", "pkrun: --timeout: '0x10' is not a duration"},
        {"--timeout=1.5.2", "pkrun: --timeout: '1.5.2' is not a duration"},
        {"--timeout=5 s", "pkrun: --timeout: '5 s' is not a duration"},
        {"--timeout=2sec", "pkrun: --timeout: '2sec' is not a duration"},
        {"--timeout=1e", "pkrun: --timeout: '1e' is not a duration"},
        {"--grace=abc", "pkrun: --grace: 'abc' is not a duration"},
        {"--grace=-2", "pkrun: --grace: '-2' is not a duration"},
        {"--idle-timeout=1h30m", "pkrun: --idle-timeout: '1h30m' is not a duration"},
        {"--idle-timeout=.", "pkrun: --idle-timeout: '.' is not a duration"},
        {"--max-bytes=12Q", "pkrun: --max-bytes: '12Q' is not a count"},
        {"--max-bytes=-1", "pkrun: --max-bytes: '-1' is not a count"},
        {"--max-bytes=", "pkrun: --max-bytes: '' is not a count"},
        {"--max-bytes=1.5K", "pkrun: --max-bytes: '1.5K' is not a count"},
        {"--max-bytes=2048G", "pkrun: --max-bytes: '2048G' is over the limit of 1T"},
        {"--max-bytes=99999999999999999999", "pkrun: --max-bytes: '99999999999999999999' is over"},
        {"--max-lines=ten", "pkrun: --max-lines: 'ten' is not a count"},
        {"--max-lines=0x10", "pkrun: --max-lines: '0x10' is not a count"},
        {"--keep=middle", "pkrun: --keep: 'middle' is not one of head, tail, fail"},
        {"--keep=", "pkrun: --keep: '' is not one of head, tail, fail"},
        {"--containment=jail", "pkrun: --containment: 'jail' is not one of auto, cgroup, pgroup"},
        {"--json=", "pkrun: --json: needs a file name"},
        {"--signal=FOO", "pkrun: --signal: 'FOO' is not a signal"},
        {"--signal=", "pkrun: --signal: '' is not a signal"},
        {"--signal=99", "pkrun: --signal: '99' is not a signal"},
        {"--signal=RTMIN+99", "pkrun: --signal: 'RTMIN+99' is not a signal"},
        {"--signal=SIG", "pkrun: --signal: 'SIG' is not a signal"},
        {"--kill-after=1x", "pkrun: --kill-after: '1x' is not a duration"},
        {"--kill-after=-1", "pkrun: --kill-after: '-1' is not a duration"},
        {"--json=/nonexistent-dir/out.json", "pkrun: --json: cannot write "},
    };
    for (int form = JOINED; form <= SPLIT; form++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            pk_result r;
            int status = PKRUN_AS(form, &r, NULL, cases[i][0], "--", "sh", "-c", "echo ran");
            ASSERT_REFUSED(r, status, cases[i][1]);
            pk_result_release(&r);
        }
    }
    /* A value missing at the end, and no program at all. */
    pk_result r;
    ASSERT_REFUSED(r, PKRUN(&r, "--timeout"), "pkrun: --timeout: needs a value");
    pk_result_release(&r);
    ASSERT_REFUSED(r, PKRUN(&r, "--timeout", "1"), "pkrun: no COMMAND given");
    pk_result_release(&r);
    ASSERT_REFUSED(r, PKRUN(&r, "--timeout=1", "--"), "pkrun: no COMMAND given");
    pk_result_release(&r);
    /* timeout's form: a DURATION needs a COMMAND after it. */
    ASSERT_REFUSED(r, PKRUN(&r, "5"), "pkrun: no COMMAND after DURATION '5'");
    pk_result_release(&r);
    /* Something meant as a DURATION (what strtod would start to read, or nothing) that is neither
     * a duration nor a program: refused, as timeout refuses it, never run as COMMAND. */
    static const char *const meant[][2] = {
        {"42D", "pkrun: '42D' is neither a duration"},
        {"-5", "pkrun: '-5' is neither a duration"},
        {"nan", "pkrun: 'nan' is neither a duration"},
        {"NaN", "pkrun: 'NaN' is neither a duration"},
        {"inf5", "pkrun: 'inf5' is neither a duration"},
        {"+1", "pkrun: '+1' is neither a duration"},
        {"0x10", "pkrun: '0x10' is neither a duration"},
        {"", "pkrun: DURATION '' is not a duration: it is empty"},
        {".", "pkrun: DURATION '.' is not a duration"},
        {" 1", "pkrun: DURATION ' 1' is not a duration"},
        {" true", "pkrun: DURATION ' true' is not a duration"},
    };
    for (size_t i = 0; i < sizeof meant / sizeof meant[0]; i++) {
        ASSERT_REFUSED(r, PKRUN(&r, "--", meant[i][0], "sh", "-c", "echo ran"), meant[i][1]);
        pk_result_release(&r);
    }
    ASSERT_REFUSED(r, PKRUN(&r, "--foreground", "--containment=pgroup", "true"),
                   "pkrun: --foreground keeps COMMAND in pkrun's process group");
    pk_result_release(&r);
}

/* Unknown, ambiguous and misused options are refused by name; --help goes to stdout. */
TEST_IMPL(pkrun_unknown_options)
{
    static const char *const cases[][2] = {
        {"--frobnicate", "pkrun: unknown option '--frobnicate'"},
        {"--frobnicate=3", "pkrun: unknown option '--frobnicate'"},
        {"-x", "pkrun: unknown option '-x'"},
        {"-t", "pkrun: unknown option '-t'"},
        {"--max=5", "pkrun: ambiguous option '--max': --max-bytes, --max-lines"},
        {"--verbose=yes", "pkrun: --verbose: takes no value, got 'yes'"},
        {"--pdeathsig=1", "pkrun: --pdeathsig: takes no value, got '1'"},
        {"--help=1", "pkrun: --help: takes no value, got '1'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pk_result r;
        ASSERT_REFUSED(r, PKRUN(&r, cases[i][0], "--", "sh", "-c", "echo ran"), cases[i][1]);
        pk_result_release(&r);
    }
    pk_result r;
    ASSERT_EQ(PKRUN(&r, "--help", "--frobnicate"), 0);
    ASSERT(strncmp(r.out.data, "usage: pkrun", 12) == 0);
    ASSERT(strstr(r.out.data, "S, a duration") != NULL);
    ASSERT(strstr(r.out.data, "Exit status") != NULL);
    ASSERT_EQ(r.err.len, 0);
    pk_result_release(&r);
    ASSERT_EQ(PKRUN(&r, "-h"), 0);
    ASSERT(strncmp(r.out.data, "usage: pkrun", 12) == 0);
    pk_result_release(&r);
    /* A shortened long option, as getopt_long allows while it is unambiguous. */
    ASSERT_EQ(PKRUN(&r, "--verb", "true"), 0);
    ASSERT(strstr(r.err.data, "spawn mechanism") != NULL);
    pk_result_release(&r);
}

/* Options end at "--", at a DURATION or at the program: what follows is the program's, untouched.
 * Without --timeout a first operand that reads as a duration is timeout's DURATION; with it, the
 * first operand is the program whatever it looks like. */
TEST_IMPL(pkrun_options_end_at_program)
{
    pk_result r;
    ASSERT_EQ(PKRUN(&r, "--", "sh", "-c", "echo \"$@\"", "x", "--timeout", "3"), 0);
    ASSERT_STR_EQ(r.out.data, "--timeout 3\n");
    pk_result_release(&r);
    ASSERT_EQ(PKRUN(&r, "sh", "-c", "echo \"$@\"", "x", "--timeout", "3", "--frobnicate"), 0);
    ASSERT_STR_EQ(r.out.data, "--timeout 3 --frobnicate\n");
    pk_result_release(&r);
    ASSERT_EQ(PKRUN(&r, "--timeout=5", "--", "sh", "-c", "echo \"$@\"", "x", "--", "--json=-"), 0);
    ASSERT_STR_EQ(r.out.data, "-- --json=-\n");
    pk_result_release(&r);
    /* After "--" even an option's name is the program. */
    ASSERT_EQ(PKRUN(&r, "--", "--verbose"), 127);
    ASSERT(strncmp(r.err.data, "pkrun: --verbose: not found in PATH", 35) == 0);
    pk_result_release(&r);
    ASSERT_EQ(PKRUN(&r, "5", "sh", "-c", "echo \"$@\"", "x", "--timeout", "3"), 0);
    ASSERT_STR_EQ(r.out.data, "--timeout 3\n");
    pk_result_release(&r);
    ASSERT_EQ(PKRUN(&r, "-s", "INT", "--", "0.2", "sleep", "5"), 124);
    pk_result_release(&r);
    ASSERT_EQ(PKRUN(&r, "--timeout=5", "--", "5", "true"), 127);
    ASSERT(strncmp(r.err.data, "pkrun: 5: not found in PATH", 27) == 0);
    pk_result_release(&r);
    /* A program whose name starts with a digit is still a program. */
    char dir[512], prog[600], pathvar[700];
    snprintf(dir, sizeof dir, "%s", pk_test_tmpdir());
    snprintf(prog, sizeof prog, "%s/7z-like", dir);
    FILE *f = fopen(prog, "w");
    ASSERT(f != NULL);
    fputs("#!/bin/sh\necho seven \"$@\"\n", f);
    ASSERT_EQ(fclose(f), 0);
    ASSERT_EQ(chmod(prog, 0755), 0);
    snprintf(pathvar, sizeof pathvar, "PATH=%s:/usr/bin:/bin", dir);
    const char *const argv[] = {PK_PKRUN_PATH, "7z-like", "x", NULL};
    const char *const env[] = {pathvar, NULL};
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .env.set = env}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "seven x\n");
    pk_result_release(&r);
    unlink(prog);
}

/* --timeout ends a long child at the limit, in seconds or with a unit, with status 124. */
TEST_IMPL(pkrun_opt_timeout)
{
    static const char *const limits[] = {"--timeout=0.3", "--timeout=300ms", "--timeout=.005m"};
    for (int form = JOINED; form <= SPLIT; form++) {
        for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
            pk_result r;
            int64_t ms;
            ASSERT_EQ(PKRUN_AS(form, &r, &ms, limits[i], "--", "sleep", "30"), 124);
            ASSERT_GE(ms, 290);
            ASSERT_LT(ms, 8000); /* a hang guard */
            pk_result_release(&r);
        }
        /* A limit the child stays under changes nothing; inf (any case, or infinity) is none,
         * as timeout reads it, for every duration option and for DURATION itself. */
        static const char *const none[][3] = {
            {"--timeout=1h", "--", "sh"},    {"--timeout=inf", "--", "sh"},
            {"--timeout=INF", "--", "sh"},   {"--timeout=Infinity", "--", "sh"},
            {"--kill-after=inf", "1", "sh"}, {"--idle-timeout=inf", "inf", "sh"},
        };
        for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
            pk_result r;
            ASSERT_EQ(PKRUN_AS(form, &r, NULL, none[i][0], none[i][1], none[i][2], "-c", "exit 7"),
                      7);
            pk_result_release(&r);
        }
    }
}

/* --idle-timeout counts silence, not the whole run: a child that keeps talking outlives it, one
 * that goes quiet is ended with status 124 and outcome idle_timed_out. */
TEST_IMPL(pkrun_opt_idle_timeout)
{
    char path[512], opt[600];
    snprintf(path, sizeof path, "%s/out.json", pk_test_tmpdir());
    snprintf(opt, sizeof opt, "--json=%s", path);
    for (int form = JOINED; form <= SPLIT; form++) {
        pk_result r;
        int64_t ms;
        /* The limit counts from the spawn: sh prints within a few hundred ms however loaded the
         * machine (a helper of this binary took over a second under ASan on a loaded machine:
         * reports/notes/2026-12-05-tests-under-load.md). */
        ASSERT_EQ(PKRUN_AS(form, &r, &ms, "--idle-timeout=1", opt, "--", "sh", "-c",
                           "echo partial output; exec sleep 10"),
                  124);
        ASSERT_GE(ms, 990);
        ASSERT_LT(ms, 8000); /* a hang guard */
        ASSERT_STR_EQ(r.out.data, "partial output\n");
        pk_result_release(&r);
        json_t *j = load_json(path);
        ASSERT_STR_EQ(json_string_value(json_object_get(j, "outcome")), "idle_timed_out");
        json_decref(j);
        /* 30 lines 100 ms apart: 3 s in all, never 2 s silent. */
        ASSERT_EQ(PKRUN_AS(form, &r, NULL, "--idle-timeout=2000ms", "--", "sh", "-c",
                           "i=0; while [ $i -lt 30 ]; do echo $i; sleep 0.1; i=$((i + 1)); done"),
                  0);
        ASSERT_EQ(r.out.total_lines, 30);
        pk_result_release(&r);
    }
}

/* --grace (-k, --kill-after) is the time between SIGTERM and SIGKILL for a child that ignores
 * SIGTERM: 0.6 s here; without it, or with 0, there is none, as with timeout. SIGKILL ending it
 * makes the status 137, as with timeout. */
TEST_IMPL(pkrun_opt_grace)
{
    char path[512], opt[600];
    snprintf(path, sizeof path, "%s/out.json", pk_test_tmpdir());
    snprintf(opt, sizeof opt, "--json=%s", path);
    for (int form = JOINED; form <= SPLIT; form++) {
        pk_result r;
        int64_t ms;
        /* SIG_IGN survives exec, so sleep ignores SIGTERM too. The limit is 1 s so that the
         * shell has set its trap by then, however loaded the machine; the timings are a lower
         * bound and a hang guard. */
        ASSERT_EQ(PKRUN_AS(form, &r, &ms, "--timeout=1", "--grace=0.6", opt, "--", "sh", "-c",
                           "trap '' TERM; sleep 10"),
                  137);
        ASSERT_GE(ms, 1590);
        ASSERT_LT(ms, 8000);
        pk_result_release(&r);
        json_t *j = load_json(path);
        ASSERT_STR_EQ(json_string_value(json_object_get(j, "outcome")), "timed_out");
        ASSERT_EQ(json_integer_value(json_object_get(j, "signal")), SIGKILL);
        json_decref(j);
        /* --grace=0: no SIGKILL at all, as timeout's -k 0: a child that ignores SIGTERM runs
         * its 2 s out and exits 0; the limit fired, so 124 (SIGKILL at once would be 137). */
        ASSERT_EQ(PKRUN_AS(form, &r, &ms, "--timeout=0.3", "--grace=0", opt, "--", "sh", "-c",
                           "trap '' TERM; sleep 2"),
                  124);
        ASSERT_GE(ms, 1990);
        ASSERT_LT(ms, 8000);
        pk_result_release(&r);
        j = load_json(path);
        ASSERT_STR_EQ(json_string_value(json_object_get(j, "outcome")), "timed_out");
        ASSERT_EQ(json_integer_value(json_object_get(j, "exit_code")), 0);
        json_decref(j);
        /* The same as --kill-after. */
        ASSERT_EQ(PKRUN_AS(form, &r, &ms, "--timeout=1", "--kill-after=0.6", "--", "sh", "-c",
                           "trap '' TERM; sleep 10"),
                  137);
        ASSERT_GE(ms, 1590);
        ASSERT_LT(ms, 8000);
        pk_result_release(&r);
        /* A child that exits on SIGTERM needs no SIGKILL: 124 (with SIGKILL it would be 137). */
        ASSERT_EQ(PKRUN_AS(form, &r, &ms, "--timeout=0.3", "--kill-after=5", "--", "sleep", "10"),
                  124);
        ASSERT_LT(ms, 8000);
        pk_result_release(&r);
    }
}

/* --max-bytes caps what is kept of each stream (whole lines, the tail by default); the forwarded
 * output stays complete. */
TEST_IMPL(pkrun_opt_max_bytes)
{
    char path[512], opt[600];
    snprintf(path, sizeof path, "%s/out.json", pk_test_tmpdir());
    snprintf(opt, sizeof opt, "--json=%s", path);
    for (int form = JOINED; form <= SPLIT; form++) {
        /* 100 lines of 10 bytes; 50 bytes keep the last 5. */
        pk_result r;
        ASSERT_EQ(PKRUN_AS(form, &r, NULL, "--max-bytes=50", opt, "--", pk_test_self(), "--helper",
                           "emit-lines", "100", "9"),
                  0);
        ASSERT_EQ(r.out.total_bytes, 1000);
        pk_result_release(&r);
        json_t *j = load_json(path);
        ASSERT_EQ(json_integer_value(json_object_get(stdout_of(j), "kept_bytes")), 50);
        ASSERT(json_is_true(json_object_get(stdout_of(j), "truncated")));
        ASSERT_STR_EQ(json_string_value(json_object_get(stdout_of(j), "text")),
                      "rstuvwxyz\nstuvwxyza\ntuvwxyzab\nuvwxyzabc\nvwxyzabcd\n");
        json_decref(j);
        /* 1K is 1024 bytes: 102 whole lines of 10. */
        ASSERT_EQ(PKRUN_AS(form, &r, NULL, "--max-bytes=1K", opt, "--", pk_test_self(), "--helper",
                           "emit-lines", "200", "9"),
                  0);
        pk_result_release(&r);
        j = load_json(path);
        ASSERT_EQ(json_integer_value(json_object_get(stdout_of(j), "kept_bytes")), 1020);
        json_decref(j);
    }
}

/* Megabytes through the teed relay (stdout a pipe, --json recording it): every byte forwarded, and
 * the record exact: the totals, and the tail (the last whole lines within the default 1 MiB cap),
 * after the capture's side pipe filled and was read back several times (lib/pkrun/relay.posix.c).
 */
TEST_IMPL(pkrun_teed_capture_of_megabytes)
{
    char path[512], opt[600];
    snprintf(path, sizeof path, "%s/out.json", pk_test_tmpdir());
    snprintf(opt, sizeof opt, "--json=%s", path);
    size_t cap = 8u << 20, len = 0;
    char *want = malloc(cap);
    ASSERT(want != NULL);
    for (int i = 1; i <= 600000; i++)
        len += (size_t)snprintf(want + len, cap - len, "%d\n", i);
    pk_result r;
    ASSERT_EQ(PKRUN(&r, opt, "--keep=tail", "--", "seq", "1", "600000"), 0);
    ASSERT_EQ(r.out.len, len);
    ASSERT(memcmp(r.out.data, want, len) == 0);
    pk_result_release(&r);
    size_t from = len - (1u << 20);
    while (want[from - 1] != '\n')
        from++;
    json_t *j = load_json(path);
    ASSERT_EQ(json_integer_value(json_object_get(stdout_of(j), "bytes")), (json_int_t)len);
    ASSERT_EQ(json_integer_value(json_object_get(stdout_of(j), "lines")), 600000);
    ASSERT_STR_EQ(json_string_value(json_object_get(stdout_of(j), "text")), want + from);
    json_decref(j);
    free(want);
}

/* --max-lines caps the kept lines of each stream. */
TEST_IMPL(pkrun_opt_max_lines)
{
    char path[512], opt[600];
    snprintf(path, sizeof path, "%s/out.json", pk_test_tmpdir());
    snprintf(opt, sizeof opt, "--json=%s", path);
    for (int form = JOINED; form <= SPLIT; form++) {
        pk_result r;
        ASSERT_EQ(
            PKRUN_AS(form, &r, NULL, "--max-lines=3", opt, "--", "sh", "-c", "seq 10; seq 5 >&2"),
            0);
        ASSERT_EQ(r.out.total_lines, 10);
        pk_result_release(&r);
        json_t *j = load_json(path);
        ASSERT_STR_EQ(json_string_value(json_object_get(stdout_of(j), "text")), "8\n9\n10\n");
        json_t *err = json_object_get(json_object_get(j, "streams"), "stderr");
        ASSERT_STR_EQ(json_string_value(json_object_get(err, "text")), "3\n4\n5\n");
        json_decref(j);
    }
}

/* --keep picks which lines are kept within the cap; fail exits 125 when they do not fit. */
TEST_IMPL(pkrun_opt_keep)
{
    char path[512], opt[600];
    snprintf(path, sizeof path, "%s/out.json", pk_test_tmpdir());
    snprintf(opt, sizeof opt, "--json=%s", path);
    static const char *const cases[][3] = {
        {"--keep=head", "head", "1\n2\n"},
        {"--keep=tail", "tail", "4\n5\n"},
        {"--keep=fail", "head", "1\n2\n"},
    };
    for (int form = JOINED; form <= SPLIT; form++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            pk_result r;
            int status =
                PKRUN_AS(form, &r, NULL, cases[i][0], "--max-lines=2", opt, "--", "seq", "5");
            ASSERT_EQ(status, i == 2 ? 125 : 0);
            if (i == 2)
                ASSERT(strstr(r.err.data, "over the --keep fail cap") != NULL);
            pk_result_release(&r);
            json_t *j = load_json(path);
            ASSERT_STR_EQ(json_string_value(json_object_get(stdout_of(j), "kept")), cases[i][1]);
            ASSERT_STR_EQ(json_string_value(json_object_get(stdout_of(j), "text")), cases[i][2]);
            json_decref(j);
        }
    }
}

/* What the child reports about itself: "leader" when it leads its own process group, then its
 * parent's pid (pkrun's, which names pkrun's cgroup leaves "pk-<pid>-<n>") and its cgroup. */
static const char probe[] = "read -r _ _ _ _ pg _ < /proc/$$/stat; "
                            "if [ \"$pg\" = $$ ]; then echo leader; else echo member; fi; "
                            "echo \"/pk-$PPID-\"; cat /proc/$$/cgroup";

static bool in_pkrun_leaf(const char *out)
{
    const char *leaf = strchr(out, '\n') + 1, *cgroup = strchr(leaf, '\n');
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(cgroup - leaf), leaf);
    return strstr(cgroup, name) != NULL;
}

/* --containment: pgroup makes the child lead a new process group in pkrun's own cgroup; cgroup
 * puts it in a leaf of pkrun's (or fails with 125 where none is delegated), and in a process
 * group of its own too, so that its `kill 0` misses pkrun's caller; auto picks what the host
 * offers. With --foreground the child stays in pkrun's process group, as timeout's does. */
TEST_IMPL(pkrun_opt_containment)
{
    bool host_cgroup = pk_host_containment() == PK_CONTAIN_CGROUP;
    for (int form = JOINED; form <= SPLIT; form++) {
        pk_result r;
        ASSERT_EQ(PKRUN_AS(form, &r, NULL, "--containment=pgroup", "--", "sh", "-c", probe), 0);
        ASSERT(strncmp(r.out.data, "leader\n", 7) == 0);
        ASSERT(!in_pkrun_leaf(r.out.data));
        pk_result_release(&r);

        int status = PKRUN_AS(form, &r, NULL, "--containment=cgroup", "--", "sh", "-c", probe);
        if (host_cgroup) {
            ASSERT_EQ(status, 0);
            ASSERT(strncmp(r.out.data, "leader\n", 7) == 0);
            ASSERT(in_pkrun_leaf(r.out.data));
        } else {
            ASSERT_EQ(status, 125);
            ASSERT(strstr(r.err.data, "pkrun: --containment cgroup: ") != NULL);
        }
        pk_result_release(&r);

        ASSERT_EQ(PKRUN_AS(form, &r, NULL, "--containment=auto", "--", "sh", "-c", probe), 0);
        ASSERT(strncmp(r.out.data, "leader\n", 7) == 0);
        ASSERT_EQ(in_pkrun_leaf(r.out.data), host_cgroup);
        pk_result_release(&r);

        ASSERT_EQ(PKRUN_AS(form, &r, NULL, "--foreground", "--", "sh", "-c", probe), 0);
        ASSERT(strncmp(r.out.data, "member\n", 7) == 0);
        ASSERT_EQ(in_pkrun_leaf(r.out.data), host_cgroup);
        pk_result_release(&r);
    }
}

/* --json writes the outcome to a file, or to stdout after the child's own output. Alone it records
 * no output (the child inherits pkrun's descriptors); with --keep it records the tail too. */
TEST_IMPL(pkrun_opt_json)
{
    char path[512], opt[600];
    snprintf(path, sizeof path, "%s/run.json", pk_test_tmpdir());
    snprintf(opt, sizeof opt, "--json=%s", path);
    for (int form = JOINED; form <= SPLIT; form++) {
        unlink(path);
        pk_result r;
        ASSERT_EQ(PKRUN_AS(form, &r, NULL, opt, "--", "sh", "-c", "echo hi; exit 4"), 4);
        ASSERT_STR_EQ(r.out.data, "hi\n");
        pk_result_release(&r);
        json_t *j = load_json(path);
        ASSERT_EQ(json_integer_value(json_object_get(j, "exit_code")), 4);
        ASSERT_STR_EQ(json_string_value(json_object_get(stdout_of(j), "forwarding")), "inherited");
        ASSERT(json_object_get(stdout_of(j), "text") == NULL);
        json_decref(j);
        ASSERT_EQ(PKRUN_AS(form, &r, NULL, opt, "--keep=tail", "--", "sh", "-c", "echo hi; exit 4"),
                  4);
        ASSERT_STR_EQ(r.out.data, "hi\n");
        pk_result_release(&r);
        j = load_json(path);
        ASSERT_STR_EQ(json_string_value(json_object_get(stdout_of(j), "forwarding")), "relayed");
        ASSERT_STR_EQ(json_string_value(json_object_get(stdout_of(j), "text")), "hi\n");
        json_decref(j);

        ASSERT_EQ(PKRUN_AS(form, &r, NULL, "--json=-", "--", "sh", "-c", "echo hi; exit 4"), 4);
        ASSERT(strncmp(r.out.data, "hi\n{", 4) == 0);
        json_error_t err;
        j = json_loads(r.out.data + 3, 0, &err);
        if (j == NULL)
            pk_test_fail(__FILE__, __LINE__, "stdout JSON: %s: %s", err.text, r.out.data);
        ASSERT_EQ(json_integer_value(json_object_get(j, "pkrun_exit_status")), 4);
        json_decref(j);
        pk_result_release(&r);
    }
}

/* --pdeathsig: when pkrun itself is killed (and so cannot end the tree), the child dies too. In a
 * process group, since nothing else would kill it there (a dead process's cgroup leaf is swept by
 * the next pool user). */
TEST_IMPL(pkrun_opt_pdeathsig)
{
    const char *const argv[] = {PK_PKRUN_PATH, "--pdeathsig", "--containment=pgroup",   "--",
                                "sh",          "-c",          "echo $$; exec sleep 30", NULL};
    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = argv, .containment = PK_CONTAIN_NONE}, &p, NULL));
    pk_line line;
    ASSERT_OK(pk_process_read_line(p, &line));
    int child = atoi(line.data);
    ASSERT_GT(child, 0);
    ASSERT_OK(pk_process_signal(p, SIGKILL));
    pk_result r;
    ASSERT_OK(pk_process_wait(p, &r));
    pk_result_release(&r);
    pk_process_free(p);
    bool died = pk_test_wait_dead(child, 3000);
    if (!died)
        kill(child, SIGKILL); /* not left behind when the test fails */
    ASSERT(died);
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
    ASSERT_EQ(PKRUN(&r, "--json", path, "--timeout", "0.1", "--", "sleep", "9"), 124);
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
    /* sh died of the forwarded TERM, and pkrun by the same signal, as timeout does. */
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_SIGNALED);
    ASSERT_EQ(r.outcome.signo, SIGTERM);
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
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_SIGNALED);
    ASSERT_EQ(r.outcome.signo, SIGKILL);
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
