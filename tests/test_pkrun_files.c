/*
 * Where --json writes. A regular file (or a new path) is replaced atomically, a symlink's target
 * being what is replaced; anything else (/dev/stderr, a FIFO) is written in place, never renamed
 * over; a write that fails after the run is reported without hiding the command's status.
 */
#define _GNU_SOURCE
#include "pkrun_test.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PK_PKRUN_PATH
#error "tests/CMakeLists.txt passes the pkrun binary's path"
#endif

static void path_in_tmp(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", pk_test_tmpdir(), name);
}

/* Runs pkrun --json=target true; returns the result (caller releases). */
static void run_json(const char *target, pk_result *r)
{
    char opt[700];
    snprintf(opt, sizeof opt, "--json=%s", target);
    const char *const argv[] = {PK_PKRUN_PATH, opt, "10", "true", NULL};
    ASSERT_OK(pk_run(&(pk_command){.argv = argv}, r));
    ASSERT_EXITED(*r, 0);
}

static bool is_outcome(const char *text)
{
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    bool ok = j != NULL && strcmp(json_string_value(json_object_get(j, "schema")), "pkrun") == 0;
    json_decref(j);
    return ok;
}

/* A symlink to the standard error (what /dev/stderr is) stays a symlink, and the outcome goes to
 * pkrun's stderr. As root, /dev/stderr itself, on a private /dev in a private mount namespace
 * (so a failure could not damage the machine's). */
TEST_IMPL(pkrun_json_symlink_to_stderr_stays_a_symlink)
{
    char link[600];
    path_in_tmp(link, sizeof link, "stderr");
    ASSERT_EQ(symlink("/proc/self/fd/2", link), 0);
    pk_result r;
    run_json(link, &r);
    ASSERT(is_outcome(r.err.data));
    pk_result_release(&r);
    struct stat st;
    ASSERT_EQ(lstat(link, &st), 0);
    ASSERT(S_ISLNK(st.st_mode));
    unlink(link);

    if (geteuid() != 0)
        pk_test_skip_gate("root",
                          "the /dev/stderr case needs root (the symlink case above passed)");
    const char *const argv[] = {
        "unshare",
        "--mount",
        "sh",
        "-c",
        "mount -t tmpfs none /dev && ln -s /proc/self/fd/2 /dev/stderr && "
        "\"$0\" --json /dev/stderr 10 true && test -L /dev/stderr && echo still-a-symlink",
        PK_PKRUN_PATH,
        NULL};
    ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
    if (r.outcome.kind == PK_OUTCOME_EXITED && r.outcome.code != 0 && r.out.len == 0 &&
        strstr(r.err.data ? r.err.data : "", "schema") == NULL) {
        pk_result_release(&r);
        pk_test_skip("no private mount namespace here (unshare --mount failed)");
    }
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "still-a-symlink\n");
    ASSERT(is_outcome(r.err.data));
    pk_result_release(&r);
}

/* A FIFO is written in place: its reader gets the outcome, and it stays a FIFO. */
TEST_IMPL(pkrun_json_fifo_written_in_place)
{
    char fifo[600];
    path_in_tmp(fifo, sizeof fifo, "outcome.fifo");
    ASSERT_EQ(mkfifo(fifo, 0600), 0);
    const char *const reader_argv[] = {"cat", fifo, NULL};
    pk_process *reader;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = reader_argv}, &reader, NULL));
    pk_result r;
    run_json(fifo, &r);
    pk_result_release(&r);
    ASSERT_OK(pk_process_wait(reader, &r));
    ASSERT_EXITED(r, 0);
    ASSERT(is_outcome(r.out.data));
    pk_result_release(&r);
    pk_process_free(reader);
    struct stat st;
    ASSERT_EQ(lstat(fifo, &st), 0);
    ASSERT(S_ISFIFO(st.st_mode));
    unlink(fifo);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "re");
    ASSERT(f != NULL);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* A regular file is replaced by a rename (a new inode; a reader never sees half of it), leaving
 * no temporary file behind; through a symlink, the target is replaced and the link stays. */
TEST_IMPL(pkrun_json_regular_file_replaced_atomically)
{
    char file[600], link[600];
    path_in_tmp(file, sizeof file, "real.json");
    path_in_tmp(link, sizeof link, "link.json");
    FILE *f = fopen(file, "w");
    ASSERT(f != NULL);
    fputs("old\n", f);
    ASSERT_EQ(fclose(f), 0);
    struct stat before, after;
    ASSERT_EQ(stat(file, &before), 0);
    pk_result r;
    run_json(file, &r);
    pk_result_release(&r);
    ASSERT_EQ(stat(file, &after), 0);
    ASSERT_NE(before.st_ino, after.st_ino);
    ASSERT(is_outcome(slurp(file)));

    ASSERT_EQ(symlink("real.json", link), 0);
    run_json(link, &r);
    pk_result_release(&r);
    ASSERT_EQ(lstat(link, &after), 0);
    ASSERT(S_ISLNK(after.st_mode));
    ASSERT(is_outcome(slurp(file)));
    /* Nothing else in the directory: no temporary file left. */
    char cmd[800];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", pk_test_tmpdir());
    const char *const argv[] = {"sh", "-c", cmd, NULL};
    ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
    ASSERT_STR_EQ(r.out.data, "2\n");
    pk_result_release(&r);
    unlink(link);
    unlink(file);
}

/* The JSON cannot be written after the run (its directory went away): said on stderr, and the
 * exit status stays the command's (it used to become 125). */
TEST_IMPL(pkrun_json_failure_keeps_command_status)
{
    char dir[600], opt[700];
    path_in_tmp(dir, sizeof dir, "gone");
    ASSERT_EQ(mkdir(dir, 0755), 0);
    snprintf(opt, sizeof opt, "--json=%s/out.json", dir);
    const char *const argv[] = {PK_PKRUN_PATH,          opt, "10", "sh", "-c",
                                "rmdir \"$0\"; exit 3", dir, NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
    ASSERT_EXITED(r, 3);
    ASSERT(strstr(r.err.data, "pkrun: --json: cannot write") != NULL);
    pk_result_release(&r);
}
