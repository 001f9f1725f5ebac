/*
 * Windows starts: exit codes and crash codes as typed outcomes, command lines that the child reads
 * back exactly, typed spawn failures, the environment, PATH x PATHEXT resolution that matches
 * what a launch starts, batch files that cannot be turned into commands, and both ways of putting
 * a child in its job.
 */
#include "test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    ASSERT(f != NULL);
    fputs(text, f);
    fclose(f);
}

static bool file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f != NULL)
        fclose(f);
    return f != NULL;
}

TEST_IMPL(win_exit_codes)
{
    static const struct {
        const char *arg;
        int code;
    } cases[] = {{"0", 0},
                 {"1", 1},
                 {"255", 255},
                 {"256", 256},
                 {"70000", 70000},
                 {"0xFFFFFFFF", -1},
                 {"0x20000001", 0x20000001}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pk_result r;
        ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("exit", cases[i].arg)}, &r));
        ASSERT_EXITED(r, cases[i].code);
        ASSERT_EQ(r.outcome.ntstatus, 0);
        ASSERT_GT(r.outcome.pid, 0);
        ASSERT_GT(r.outcome.wall_ns, 0);
        pk_result_release(&r);
    }
}

TEST_IMPL(win_crash_is_ntstatus)
{
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("crash")}, &r));
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_CRASHED);
    ASSERT_EQ(r.outcome.ntstatus, 0xC0000005u);
    ASSERT_EQ(r.outcome.code, 0); /* never folded into the exit code */
    ASSERT_STR_EQ(pk_ntstatus_name(r.outcome.ntstatus), "STATUS_ACCESS_VIOLATION");
    ASSERT_STR_EQ(pk_outcome_kind_name(r.outcome.kind), "crashed");
    pk_result_release(&r);
    /* A status ExitProcess passes on is classified the same way. */
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("exit", "0xC0000094")}, &r));
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_CRASHED);
    ASSERT_STR_EQ(pk_ntstatus_name(r.outcome.ntstatus), "STATUS_INTEGER_DIVIDE_BY_ZERO");
    pk_result_release(&r);
}

TEST_IMPL(win_quoting_round_trips)
{
    static const char *const cases[] = {"plain",
                                        "",
                                        "a b",
                                        "  two  spaces ",
                                        "tab\there",
                                        "a\"b",
                                        "\"",
                                        "\"\"",
                                        "\\",
                                        "a\\",
                                        "a\\\\",
                                        "a\\\"b",
                                        "a\\\\\"b",
                                        "\\\\server\\share\\",
                                        "C:\\Program Files\\x\\",
                                        "trailing\\\\",
                                        "ünïcödé",
                                        "日本語 テキスト",
                                        "emoji \xF0\x9F\x98\x80",
                                        "{}[]&|<>^%!",
                                        "new\nline",
                                        "x"};
    size_t n = sizeof cases / sizeof cases[0];
    const char *argv[64] = {pk_test_self(), "--helper", "args"};
    for (size_t i = 0; i < n; i++)
        argv[3 + i] = cases[i];
    argv[3 + n] = NULL;
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
    ASSERT_EXITED(r, 0);
    /* One line per argument; an argument holding a newline spans two. */
    const char *p = r.out.data != NULL ? r.out.data : "";
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(cases[i]);
        if (strncmp(p, cases[i], len) != 0 || p[len] != '\n')
            pk_test_fail(__FILE__, __LINE__, "argument %d: sent \"%s\", got \"%.*s\"", (int)i,
                         cases[i], (int)strcspn(p, "\n"), p);
        p += len + 1;
    }
    ASSERT_EQ(*p, '\0');
    pk_result_release(&r);
}

TEST_IMPL(win_argv0_with_quote_refused)
{
    pk_result r;
    const char *const argv[] = {"a\"b", NULL};
    int rc = pk_run(&(pk_command){.program = pk_test_self(), .argv = argv}, &r);
    ASSERT_EQ(rc, -EINVAL);
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_SPAWN_FAILED);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_VALIDATE);
    pk_result_release(&r);
}

TEST_IMPL(win_spawn_failures_typed)
{
    pk_result r;
    const char *const set[] = {"PATH=C:\\pk-nonexistent-a;C:\\pk-nonexistent-b", NULL};
    int rc = pk_run(&(pk_command){.program = "pk-no-such-program", .env.set = set}, &r);
    ASSERT_EQ(rc, PK_ENOTFOUND);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_RESOLVE);
    ASSERT_STR_EQ(r.searched, "C:\\pk-nonexistent-a;C:\\pk-nonexistent-b");
    ASSERT_EQ(r.outcome.pid, 0);
    pk_result_release(&r);

    rc = pk_run(&(pk_command){.program = "C:\\pk-nonexistent\\prog.exe"}, &r);
    ASSERT_EQ(rc, -ENOENT);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_EXEC);
    pk_result_release(&r);

    rc = pk_run(&(pk_command){.argv = HELPER("exit", "0"), .cwd = "C:\\pk-nonexistent-dir"}, &r);
    ASSERT_EQ(rc, -ENOENT);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_CHDIR);
    pk_result_release(&r);

    rc = pk_run(&(pk_command){.argv = HELPER("args", "bad \xff utf-8")}, &r);
    ASSERT_EQ(rc, -EILSEQ);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_VALIDATE);
    pk_result_release(&r);

    const char *const bad[] = {"=nope", NULL};
    rc = pk_run(&(pk_command){.argv = HELPER("exit", "0"), .env.set = bad}, &r);
    ASSERT_EQ(rc, PK_EBADENV);
    pk_result_release(&r);

    rc = pk_run(&(pk_command){.argv = HELPER("exit", "0"), .containment = PK_CONTAIN_CGROUP}, &r);
    ASSERT_EQ(rc, PK_ENOCONTAIN);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_CONTAIN);
    pk_result_release(&r);
}

TEST_IMPL(win_env_set_unset_clear)
{
    _putenv("PK_TEST_INHERITED=yes");
    const char *const set[] = {"PK_TEST_SET=one", "pk_test_set=two", "PK_TEST_UNI=ü", NULL};
    const char *const unset[] = {"pk_test_inherited", NULL};
    pk_result r;
    ASSERT_OK(pk_run(
        &(pk_command){.argv = HELPER("env", "PK_TEST_SET", "PK_TEST_UNI", "PK_TEST_INHERITED"),
                      .env = {.set = set, .unset = unset}},
        &r));
    ASSERT_EXITED(r, 0);
    /* Names are case-insensitive: the later entry wins, the unset removes the inherited one. */
    ASSERT_STR_EQ(r.out.data, "PK_TEST_SET=two\nPK_TEST_UNI=ü\nPK_TEST_INHERITED=(unset)\n");
    pk_result_release(&r);

    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("env", "PK_TEST_INHERITED")}, &r));
    ASSERT_STR_EQ(r.out.data, "PK_TEST_INHERITED=yes\n");
    pk_result_release(&r);

    const char *const only[] = {"ONLY=1", NULL};
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("env", "ONLY", "PK_TEST_INHERITED"),
                                   .env = {.clear = true, .set = only}},
                     &r));
    ASSERT_STR_EQ(r.out.data, "ONLY=1\nPK_TEST_INHERITED=(unset)\n");
    pk_result_release(&r);
}

TEST_IMPL(win_pathext_resolution_equals_launch)
{
    const char *dir = pk_test_tmpdir();
    char cmdfile[512], exe[512], pathset[600];
    snprintf(cmdfile, sizeof cmdfile, "%s\\pktool.cmd", dir);
    snprintf(exe, sizeof exe, "%s\\pktool.exe", dir);
    write_file(cmdfile, "@echo from-cmd\r\n");
    wchar_t wself[MAX_PATH], wexe[MAX_PATH];
    MultiByteToWideChar(CP_UTF8, 0, pk_test_self(), -1, wself, MAX_PATH);
    MultiByteToWideChar(CP_UTF8, 0, exe, -1, wexe, MAX_PATH);
    ASSERT(CopyFileW(wself, wexe, FALSE));
    snprintf(pathset, sizeof pathset, "PATH=%s", dir);

    /* .CMD first in PATHEXT: the bare name is the batch file, and the launch runs it. */
    const char *const cmd_first[] = {pathset, "PATHEXT=.CMD;.EXE", NULL};
    pk_env env = {.set = cmd_first};
    char *path = NULL;
    ASSERT_OK(pk_resolve_program("pktool", &env, &path, NULL));
    ASSERT(_stricmp(path, cmdfile) == 0);
    free(path);
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.program = "pktool", .env = env}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "from-cmd\r\n");
    pk_result_release(&r);

    /* .EXE first: the copy of this program, which names the file it was started from. */
    const char *const exe_first[] = {pathset, "PATHEXT=.EXE;.CMD", NULL};
    env.set = exe_first;
    ASSERT_OK(pk_resolve_program("pktool", &env, &path, NULL));
    ASSERT(_stricmp(path, exe) == 0);
    const char *const argv[] = {"pktool", "--helper", "self", NULL};
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .env = env}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT(r.out.data != NULL && _strnicmp(r.out.data, path, strlen(path)) == 0);
    free(path);
    pk_result_release(&r);

    /* A name already carrying a PATHEXT extension is taken as is; the current directory is not
     * searched implicitly. */
    ASSERT_OK(pk_resolve_program("pktool.cmd", &env, &path, NULL));
    ASSERT(_stricmp(path, cmdfile) == 0);
    free(path);
    const char *const elsewhere[] = {"PATH=C:\\pk-nonexistent", NULL};
    env.set = elsewhere;
    SetCurrentDirectoryA(dir);
    char *searched = NULL;
    ASSERT_EQ(pk_resolve_program("pktool", &env, &path, &searched), PK_ENOTFOUND);
    ASSERT_STR_EQ(searched, "C:\\pk-nonexistent");
    free(searched);
    SetCurrentDirectoryA("C:\\");
}

/* A batch file that prints its arguments as cmd.exe hands them over, and leaves a marker. */
static void make_batch(char *bat, size_t cap, char *marker, size_t mcap)
{
    const char *dir = pk_test_tmpdir();
    snprintf(bat, cap, "%s\\show.bat", dir);
    snprintf(marker, mcap, "%s\\ran.txt", dir);
    char text[1024];
    snprintf(text, sizeof text, "@echo off\r\necho ran> \"%s\"\r\necho [%%1] [%%2]\r\n", marker);
    write_file(bat, text);
}

TEST_IMPL(win_batch_arguments_inert)
{
    char bat[512], marker[512];
    make_batch(bat, sizeof bat, marker, sizeof marker);
    /* Every cmd.exe metacharacter arrives as text, quoted, and runs nothing. */
    const char *const argv[] = {bat, "a&echo INJECTED", "\"&echo INJECTED&\"", NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT(file_exists(marker));
    ASSERT(r.out.data != NULL);
    ASSERT(strstr(r.out.data, "\nINJECTED") == NULL && strncmp(r.out.data, "INJECTED", 8) != 0);
    ASSERT_STR_EQ(r.out.data, "[\"a&echo INJECTED\"] [\"\"\"&echo INJECTED&\"\"\"]\r\n");
    pk_result_release(&r);
}

TEST_IMPL(win_batch_injection_refused)
{
    char bat[512], marker[512];
    make_batch(bat, sizeof bat, marker, sizeof marker);
    static const char *const unsafe[] = {"%PATH%", "50%", "two\r\nlines", "x\ny"};
    for (size_t i = 0; i < sizeof unsafe / sizeof unsafe[0]; i++) {
        const char *const argv[] = {bat, "fine", unsafe[i], NULL};
        pk_result r;
        int rc = pk_run(&(pk_command){.argv = argv}, &r);
        ASSERT_EQ(rc, PK_EUNSAFEARG);
        ASSERT_EQ(r.outcome.kind, PK_OUTCOME_SPAWN_FAILED);
        ASSERT_EQ(r.outcome.stage, PK_STAGE_VALIDATE);
        ASSERT_EQ(r.outcome.pid, 0);
        pk_result_release(&r);
        ASSERT(!file_exists(marker)); /* nothing ran */
    }
    /* The same arguments to a program (not a batch file) are fine. */
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("args", "%PATH%", "50%")}, &r));
    ASSERT_STR_EQ(r.out.data, "%PATH%\n50%\n");
    pk_result_release(&r);
}

/* Runs a child that leaves a grandchild, and checks that the run's job took the grandchild. */
static void grandchild_contained(void)
{
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("grandchild")}, &r));
    ASSERT_EXITED(r, 0);
    int gpid = atoi(r.out.data != NULL ? r.out.data : "0");
    ASSERT_GT(gpid, 0);
    ASSERT(pk_test_wait_dead(gpid, 5000));
    ASSERT_EQ(r.containment, PK_CONTAIN_JOB);
    pk_result_release(&r);
}

TEST_IMPL(win_mechanism_default)
{
    /* Born in the job where Windows allows it (10 1607 and later, and Wine). */
    pk_mechanism m = pk_spawn_mechanism();
    printf("# mechanism: %s\n", pk_mechanism_name(m));
    ASSERT(m == PK_MECH_JOB_LIST || m == PK_MECH_SUSPENDED);
    grandchild_contained();
}

TEST_IMPL(win_mechanism_suspended_fallback)
{
    /* The probe reads this once, at the first start of this (fresh) test process. */
    _putenv("PK_SPAWN_MECHANISM=createprocess_suspended");
    ASSERT_EQ(pk_spawn_mechanism(), PK_MECH_SUSPENDED);
    ASSERT_STR_EQ(pk_mechanism_name(PK_MECH_SUSPENDED), "createprocess_suspended");
    grandchild_contained();
}
