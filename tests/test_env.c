/*
 * Environment and program resolution.
 */
#define _GNU_SOURCE
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; p != NULL && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
            return true;
    return false;
}

static bool has_name(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = text; p != NULL && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, name, n) == 0 && p[n] == '=')
            return true;
    return false;
}

TEST_IMPL(env_set_unset_clear)
{
    setenv("PK_TEST_INHERITED", "yes", 1);
    setenv("PK_TEST_DROPPED", "no", 1);
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("print-env")}, &r));
    ASSERT(has_line(r.out.data, "PK_TEST_INHERITED=yes"));
    pk_result_release(&r);

    const char *const set[] = {"PK_A=1", "PK_B=first", "PK_B=second", "PK_TEST_INHERITED=over",
                               NULL};
    const char *const unset[] = {"PK_TEST_DROPPED", NULL};
    ASSERT_OK(pk_run(
        &(pk_command){.argv = HELPER("print-env"), .env = {.set = set, .unset = unset}}, &r));
    ASSERT(has_line(r.out.data, "PK_A=1"));
    ASSERT(has_line(r.out.data, "PK_B=second"));
    ASSERT(!has_line(r.out.data, "PK_B=first"));
    ASSERT(has_line(r.out.data, "PK_TEST_INHERITED=over"));
    ASSERT(!has_line(r.out.data, "PK_TEST_INHERITED=yes"));
    ASSERT(!has_name(r.out.data, "PK_TEST_DROPPED"));
    ASSERT(has_name(r.out.data, "PATH"));
    pk_result_release(&r);

    const char *const only[] = {"ONLY=this", NULL};
    ASSERT_OK(pk_run(
        &(pk_command){.argv = HELPER("print-env"), .env = {.clear = true, .set = only}}, &r));
    ASSERT_STR_EQ(r.out.data, "ONLY=this\n");
    pk_result_release(&r);

    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("print-env"), .env = {.clear = true}}, &r));
    ASSERT(r.out.data == NULL);
    pk_result_release(&r);
}

TEST_IMPL(resolve_matches_proc_self_exe)
{
    /* Two PATH directories hold a copy of this binary; the first must win, and what the child
     * reads from /proc/self/exe must be exactly what the preflight returned. */
    char dir1[512], dir2[512], path_var[1100];
    snprintf(dir1, sizeof dir1, "%s/one", pk_test_tmpdir());
    snprintf(dir2, sizeof dir2, "%s/two", pk_test_tmpdir());
    ASSERT_EQ(mkdir(dir1, 0755), 0);
    ASSERT_EQ(mkdir(dir2, 0755), 0);
    const char *dirs[] = {dir1, dir2};
    for (int i = 0; i < 2; i++) {
        char dst[600];
        snprintf(dst, sizeof dst, "%s/pk-selfcopy", dirs[i]);
        const char *const cp[] = {"cp", pk_test_self(), dst, NULL};
        pk_result r;
        ASSERT_OK(pk_run(&(pk_command){.argv = cp}, &r));
        ASSERT_EXITED(r, 0);
        pk_result_release(&r);
    }
    snprintf(path_var, sizeof path_var, "PATH=%s:%s", dir1, dir2);
    const char *const set[] = {path_var, NULL};
    pk_env env = {.set = set};

    char *resolved = NULL;
    ASSERT_OK(pk_resolve_program("pk-selfcopy", &env, &resolved, NULL));
    char expect[600];
    snprintf(expect, sizeof expect, "%s/pk-selfcopy", dir1);
    ASSERT_STR_EQ(resolved, expect);

    const char *const argv[] = {"pk-selfcopy", "--helper", "print-exe", NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .env = env}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, resolved);
    pk_result_release(&r);

    /* A non-executable candidate earlier in PATH is skipped (EACCES remembered, not fatal). */
    char first[600];
    snprintf(first, sizeof first, "%s/pk-selfcopy", dir1);
    ASSERT_EQ(chmod(first, 0644), 0);
    free(resolved);
    ASSERT_OK(pk_resolve_program("pk-selfcopy", &env, &resolved, NULL));
    snprintf(expect, sizeof expect, "%s/pk-selfcopy", dir2);
    ASSERT_STR_EQ(resolved, expect);
    free(resolved);

    /* Only a non-executable candidate: EACCES, kept over not-found. */
    snprintf(path_var, sizeof path_var, "PATH=/nonexistent:%s", dir1);
    char *searched = NULL;
    ASSERT_EQ(pk_resolve_program("pk-selfcopy", &env, &resolved, &searched), -EACCES);
    ASSERT(resolved == NULL);
    ASSERT(searched == NULL);
    ASSERT_EQ(pk_run(&(pk_command){.argv = argv, .env = env}, &r), -EACCES);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_RESOLVE);
    pk_result_release(&r);
}

TEST_IMPL(resolve_rules)
{
    char *path = NULL, *searched = NULL;
    /* A name with a slash is returned unchanged, with no lookup. */
    ASSERT_OK(pk_resolve_program("./relative/x", NULL, &path, NULL));
    ASSERT_STR_EQ(path, "./relative/x");
    free(path);
    ASSERT_EQ(pk_resolve_program("", NULL, &path, NULL), -EINVAL);
    ASSERT_EQ(pk_resolve_program(NULL, NULL, &path, NULL), -EINVAL);

    const char *const set[] = {"PATH=/nonexistent-x::/nonexistent-y", NULL};
    ASSERT_EQ(pk_resolve_program("pk-none", &(pk_env){.set = set}, &path, &searched), PK_ENOTFOUND);
    ASSERT_STR_EQ(searched, "/nonexistent-x::/nonexistent-y");
    free(searched);

    /* PATH unset (or cleared): the default PATH applies, and it finds sh. */
    const char *const unset[] = {"PATH", NULL};
    ASSERT_OK(pk_resolve_program("sh", &(pk_env){.unset = unset}, &path, NULL));
    ASSERT(strcmp(path, "/usr/bin/sh") == 0 || strcmp(path, "/bin/sh") == 0);
    free(path);
    ASSERT_OK(pk_resolve_program("sh", &(pk_env){.clear = true}, &path, NULL));
    free(path);
    unsetenv("PATH");
    ASSERT_OK(pk_resolve_program("sh", NULL, &path, NULL));
    free(path);

    /* An empty PATH entry means the current directory. */
    ASSERT_EQ(chdir(pk_test_tmpdir()), 0);
    int fd = open("pk-here", O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
    ASSERT_GE(fd, 0);
    close(fd);
    const char *const cwd_path[] = {"PATH=/nonexistent:", NULL};
    ASSERT_OK(pk_resolve_program("pk-here", &(pk_env){.set = cwd_path}, &path, NULL));
    char expect[600];
    snprintf(expect, sizeof expect, "%s/pk-here", pk_test_tmpdir());
    ASSERT_STR_EQ(path, expect); /* made absolute: still right after the child's chdir */
    free(path);

    /* A directory named like the program is not a candidate. */
    ASSERT_EQ(mkdir("pk-dir", 0755), 0);
    const char *const dir_path[] = {"PATH=.", NULL};
    ASSERT_EQ(pk_resolve_program("pk-dir", &(pk_env){.set = dir_path}, &path, NULL), -EACCES);

    char longname[NAME_MAX + 10];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    ASSERT_EQ(pk_resolve_program(longname, NULL, &path, NULL), -ENAMETOOLONG);
}
