/*
 * Where --json writes. A regular file (or a new path) is replaced atomically, a symlink's target
 * being what is replaced (or made, when the link dangles); anything else (/dev/stderr, a FIFO) is
 * written in place, never renamed over; what can be checked before the run is; a FIFO's reader
 * is awaited for a bounded time and signals end the wait; a write that fails after the run is an
 * error (125), and the earlier outcome at the path does not stay to pass for this run's.
 */
#define _GNU_SOURCE
#include "pkrun_test.h"

#include <errno.h>
#include <fcntl.h>
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

/* The JSON cannot be written after the run (its directory went away): said on stderr, and a lost
 * outcome is an error, 125, not the command's status (a CI step must not pass it off as done). */
TEST_IMPL(pkrun_json_failure_is_an_error)
{
    char dir[600], opt[700];
    path_in_tmp(dir, sizeof dir, "gone");
    ASSERT_EQ(mkdir(dir, 0755), 0);
    snprintf(opt, sizeof opt, "--json=%s/out.json", dir);
    const char *const argv[] = {PK_PKRUN_PATH,          opt, "10", "sh", "-c",
                                "rmdir \"$0\"; exit 3", dir, NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
    ASSERT_EXITED(r, 125);
    ASSERT(strstr(r.err.data, "pkrun: --json: cannot write") != NULL);
    pk_result_release(&r);
}

/* Runs `sh -c script` (with pkrun's path as $0) in a private mount namespace, where it may mount a
 * small or read-only tmpfs; skips the test when there is none to be had. */
static void in_private_mounts(const char *script, pk_result *r)
{
    if (geteuid() != 0)
        pk_test_skip_gate("root", "mounting a tmpfs needs root (unshare --mount)");
    const char *const argv[] = {"unshare", "--mount", "sh", "-c", script, PK_PKRUN_PATH, NULL};
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .cwd = pk_test_tmpdir()}, r));
    if (r->outcome.kind == PK_OUTCOME_EXITED && r->outcome.code == 99) {
        pk_result_release(r);
        pk_test_skip("no private mount namespace here (unshare --mount or mount failed)");
    }
}

/* What --json needs is checked before the command runs, so a run is never wasted on an outcome
 * that cannot be written: a name of 246 bytes works (the temporary file's name does not grow
 * with it); one over the file system's limit, a directory that does not take a new file, or a
 * read-only file system is refused with 125, the command never started. */
TEST_IMPL(pkrun_json_checked_before_the_run)
{
    char name[300], path[900], opt[1000];
    memset(name, 'a', 246);
    name[246] = '\0';
    path_in_tmp(path, sizeof path, name);
    snprintf(opt, sizeof opt, "--json=%s", path);
    const char *const ok[] = {PK_PKRUN_PATH, opt, "10", "true", NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = ok}, &r));
    ASSERT_EXITED(r, 0);
    pk_result_release(&r);
    ASSERT(is_outcome(slurp(path)));
    unlink(path);

    memset(name, 'a', 256);
    name[256] = '\0';
    path_in_tmp(path, sizeof path, name);
    snprintf(opt, sizeof opt, "--json=%s", path);
    const char *const too_long[] = {PK_PKRUN_PATH, opt, "10", "sh", "-c", "echo ran", NULL};
    ASSERT_OK(pk_run(&(pk_command){.argv = too_long}, &r));
    ASSERT_EXITED(r, 125);
    ASSERT_EQ(r.out.len, 0);
    ASSERT(strstr(r.err.data, "File name too long") != NULL);
    pk_result_release(&r);

    /* A directory that refuses a new file: by its mode (not for root, which its mode does not
     * stop), and a read-only file system. */
    if (geteuid() != 0) {
        char dir[600];
        path_in_tmp(dir, sizeof dir, "locked");
        ASSERT_EQ(mkdir(dir, 0555), 0);
        snprintf(opt, sizeof opt, "--json=%s/out.json", dir);
        const char *const locked[] = {PK_PKRUN_PATH, opt, "10", "sh", "-c", "echo ran", NULL};
        ASSERT_OK(pk_run(&(pk_command){.argv = locked}, &r));
        ASSERT_EXITED(r, 125);
        ASSERT_EQ(r.out.len, 0);
        pk_result_release(&r);
        rmdir(dir);
    }
    in_private_mounts("mkdir ro && mount -t tmpfs -o ro none ro || exit 99; "
                      "\"$0\" --json ro/out.json 10 sh -c 'echo ran'; echo \"status $?\"",
                      &r);
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "status 125\n");
    ASSERT(strstr(r.err.data, "Read-only file system") != NULL);
    pk_result_release(&r);
}

/* A write error after the run is an error (125), never a quiet success: a full disk (and then the
 * earlier outcome at the path is removed, so that it cannot pass for this run's), /dev/full, and
 * `--json -` into a pipe nobody reads any more. */
TEST_IMPL(pkrun_json_write_errors_are_errors)
{
    pk_result r;
    const char *const full[] = {PK_PKRUN_PATH, "--json=/dev/full", "10", "true", NULL};
    ASSERT_OK(pk_run(&(pk_command){.argv = full}, &r));
    ASSERT_EXITED(r, 125);
    ASSERT(strstr(r.err.data, "No space left on device") != NULL);
    pk_result_release(&r);

    int p[2];
    ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
    close(p[0]);
    const char *const dash[] = {PK_PKRUN_PATH, "--json=-", "10", "true", NULL};
    ASSERT_OK(pk_run(&(pk_command){.argv = dash, .out = {.kind = PK_STDIO_FD, .fd = p[1]}}, &r));
    close(p[1]);
    ASSERT_EXITED(r, 125);
    ASSERT(strstr(r.err.data, "pkrun: --json: cannot write '-': Broken pipe") != NULL);
    pk_result_release(&r);

    /* A 64 KiB tmpfs: one outcome fits, then a file fills it. */
    in_private_mounts("mkdir small && mount -t tmpfs -o size=64k none small || exit 99; "
                      "\"$0\" --json small/out.json 10 true || exit 98; "
                      "head -c 1000000 /dev/zero > small/fill 2>/dev/null; "
                      "\"$0\" --json small/out.json 10 true; echo \"status $?\"; "
                      "test -e small/out.json && echo stale; ls -A small",
                      &r);
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, "status 125\nfill\n");
    ASSERT(strstr(r.err.data, "No space left on device") != NULL);
    ASSERT(strstr(r.err.data, "removed") != NULL);
    pk_result_release(&r);
}

/* --json through a symlink whose target does not exist yet writes the target, as through any
 * other symlink: the link stays a link. A link into a directory that does not exist is refused
 * before the run. */
TEST_IMPL(pkrun_json_dangling_symlink_writes_its_target)
{
    char link[600], target[600];
    path_in_tmp(link, sizeof link, "link.json");
    path_in_tmp(target, sizeof target, "target.json");
    ASSERT_EQ(symlink("target.json", link), 0);
    pk_result r;
    run_json(link, &r);
    pk_result_release(&r);
    struct stat st;
    ASSERT_EQ(lstat(link, &st), 0);
    ASSERT(S_ISLNK(st.st_mode));
    ASSERT(is_outcome(slurp(target)));
    unlink(link);
    unlink(target);

    ASSERT_EQ(symlink("no-such-dir/target.json", link), 0);
    char opt[700];
    snprintf(opt, sizeof opt, "--json=%s", link);
    const char *const argv[] = {PK_PKRUN_PATH, opt, "10", "sh", "-c", "echo ran", NULL};
    ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
    ASSERT_EXITED(r, 125);
    ASSERT_EQ(r.out.len, 0);
    pk_result_release(&r);
    ASSERT_EQ(lstat(link, &st), 0);
    ASSERT(S_ISLNK(st.st_mode));
    unlink(link);
}

/* A FIFO nobody opens does not hold pkrun: it gives the outcome up after PKR_OUTPUT_WAIT_MS (5 s)
 * with 125; TERM, INT and HUP end the wait at once (125 too); a reader that comes within the
 * wait gets the whole outcome. */
TEST_IMPL(pkrun_json_fifo_wait_is_bounded)
{
    char fifo[600], marker[600], opt[700];
    path_in_tmp(fifo, sizeof fifo, "outcome.fifo");
    path_in_tmp(marker, sizeof marker, "ran");
    ASSERT_EQ(mkfifo(fifo, 0600), 0);
    snprintf(opt, sizeof opt, "--json=%s", fifo);
    const char *const argv[] = {PK_PKRUN_PATH, opt, "10", "touch", marker, NULL};
    int64_t t0 = pk_test_now_ms();
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .timeout_ms = 60000}, &r));
    int64_t ms = pk_test_now_ms() - t0;
    ASSERT_EXITED(r, 125);
    ASSERT(strstr(r.err.data, "no reader opened it for 5 s") != NULL);
    ASSERT_GE(ms, 4900);
    ASSERT_LT(ms, 20000);
    pk_result_release(&r);

    const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    for (size_t i = 0; i < 3; i++) {
        unlink(marker);
        pk_process *p;
        ASSERT_OK(pk_spawn(&(pk_command){.argv = argv, .containment = PK_CONTAIN_NONE}, &p, NULL));
        for (int k = 0; k < 1000 && access(marker, F_OK) != 0; k++)
            usleep(10000);
        usleep(100 * 1000); /* most likely in the wait by now; before it, the same must hold */
        t0 = pk_test_now_ms();
        ASSERT_OK(pk_process_signal(p, sigs[i]));
        ASSERT_OK(pk_process_wait(p, &r));
        ms = pk_test_now_ms() - t0;
        pk_process_free(p);
        if (r.outcome.kind != PK_OUTCOME_EXITED || r.outcome.code != 125 || ms >= 3000 ||
            strstr(r.err.data ? r.err.data : "", "a signal told pkrun to stop") == NULL)
            pk_test_fail(__FILE__, __LINE__, "signal %d: %s %d after %lld ms: %s", sigs[i],
                         pk_outcome_kind_name(r.outcome.kind), r.outcome.code, (long long)ms,
                         r.err.data ? r.err.data : "");
        pk_result_release(&r);
    }

    /* A reader 1 s late. */
    const char *const late[] = {"sh", "-c", "sleep 1; exec cat \"$0\"", fifo, NULL};
    pk_process *reader;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = late}, &reader, NULL));
    ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
    ASSERT_EXITED(r, 0);
    pk_result_release(&r);
    ASSERT_OK(pk_process_wait(reader, &r));
    ASSERT(is_outcome(r.out.data));
    pk_result_release(&r);
    pk_process_free(reader);
    unlink(fifo);
    unlink(marker);
}
