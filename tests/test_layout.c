/*
 * The harness's layout, checked: every `#include "..."` in harness/, phases/attribution/ and
 * contenders/ is read, and each one must go from a room to a room it may use (the table below,
 * the same as harness/CMakeLists.txt and harness/README.md's architecture section), must be
 * path-qualified, and must not reach into a header private to another folder. A back-edge (the
 * results model including the report, say) fails this test with the file and the line.
 */
#define _GNU_SOURCE
#include "test.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PK_SOURCE_DIR
#define PK_SOURCE_DIR "."
#endif

/* A room and the rooms its files may include (itself included). */
static const struct {
    const char *room, *may_use;
} rooms[] = {
    {"harness/common", "common"},
    {"harness/results", "common results"},
    {"harness/report", "common results report"},
    {"harness/run", "common results run"},
    {"harness/regress", "common results regress"},
    {"harness/suites", "common results report run suites phases"},
    {"harness/pkbench.c", "common results report run suites regress"},
    {"phases/attribution", "phases run"},
    {"contenders", "suites run"},
};

/* Headers a folder keeps to itself: only files in that folder may include them. */
static const char *const private_headers[] = {
    "run/collect.h",
    "run/rounds.h",
    "phases/attribution/internal.h",
    "phases/attribution/walk.h",
};

/* The headers of a suite's folder are its own, except the contract contenders implement. */
static const char *const suite_exports[] = {"suites/scenarios/contender.h"};

static char failures[8192];
static size_t nfailures;

static void fail_at(const char *file, int line, const char *what, const char *inc)
{
    size_t len = strlen(failures);
    snprintf(failures + len, sizeof failures - len, "  %s:%d: #include \"%s\": %s\n", file, line,
             inc, what);
    nfailures++;
}

/* The room of a source path relative to the project root, or NULL when not checked. */
static int room_of(const char *rel)
{
    for (size_t i = 0; i < sizeof rooms / sizeof rooms[0]; i++) {
        size_t n = strlen(rooms[i].room);
        if (strncmp(rel, rooms[i].room, n) == 0 && (rel[n] == '/' || rel[n] == '\0'))
            return (int)i;
    }
    return -1;
}

/* The room an include names: its first path component. */
static void target_room(const char *inc, char *out, size_t cap)
{
    size_t n = strcspn(inc, "/");
    snprintf(out, cap, "%.*s", (int)n, inc);
}

static bool word_in(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

/* The folder of a path ("harness/suites/phases/report.c" -> "harness/suites/phases"). */
static void folder_of(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    snprintf(out, cap, "%.*s", slash ? (int)(slash - path) : 0, path);
}

/* A suite's folder — "suites/<name>" — of a folder inside it (subfolders included): a suite's
 * headers are private to its folder and the folders within it (observe/observers/, say). */
static void suite_of(const char *dir, char *out, size_t cap)
{
    const char *slash = strncmp(dir, "suites/", 7) == 0 ? strchr(dir + 7, '/') : NULL;
    snprintf(out, cap, "%.*s", slash ? (int)(slash - dir) : (int)strlen(dir), dir);
}

static void check_include(const char *rel, int line, int room, const char *inc)
{
    bool harness = strncmp(rel, "harness/", 8) == 0 || strncmp(rel, "phases/", 7) == 0;
    if (strchr(inc, '/') == NULL) {
        if (harness && strcmp(inc, "processkit.h") != 0)
            fail_at(rel, line, "not path-qualified (write room/header.h)", inc);
        return;
    }
    char to[64];
    target_room(inc, to, sizeof to);
    if (!word_in(rooms[room].may_use, to)) {
        fail_at(rel, line, "this room may not use that one", inc);
        return;
    }
    /* An include resolves against harness/ or the project root: its folder, for privacy. */
    char header_dir[512], file_dir[512];
    folder_of(inc, header_dir, sizeof header_dir);
    folder_of(rel, file_dir, sizeof file_dir);
    const char *own = strncmp(file_dir, "harness/", 8) == 0 ? file_dir + 8 : file_dir;
    for (size_t i = 0; i < sizeof private_headers / sizeof private_headers[0]; i++)
        if (strcmp(inc, private_headers[i]) == 0 && strcmp(header_dir, own) != 0)
            fail_at(rel, line, "a header private to its folder", inc);
    char header_suite[512], own_suite[512];
    suite_of(header_dir, header_suite, sizeof header_suite);
    suite_of(own, own_suite, sizeof own_suite);
    if (strncmp(inc, "suites/", 7) == 0 && strchr(inc + 7, '/') != NULL &&
        strcmp(header_suite, own_suite) != 0) {
        bool exported = false;
        for (size_t i = 0; i < sizeof suite_exports / sizeof suite_exports[0]; i++)
            exported |= strcmp(inc, suite_exports[i]) == 0;
        if (!exported)
            fail_at(rel, line, "a header private to that suite's folder", inc);
    }
}

static size_t nfiles, nincludes;

static int scan(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    size_t n = strlen(path);
    if (flag != FTW_F || n < 3 || (strcmp(path + n - 2, ".c") != 0 && strcmp(path + n - 2, ".h")))
        return 0;
    const char *rel = path + strlen(PK_SOURCE_DIR) + 1;
    int room = room_of(rel);
    if (room < 0)
        return 0;
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    nfiles++;
    char buf[1024];
    for (int line = 1; fgets(buf, sizeof buf, f) != NULL; line++) {
        char inc[512];
        if (sscanf(buf, " # include \"%511[^\"]\"", inc) == 1) {
            nincludes++;
            check_include(rel, line, room, inc);
        }
    }
    fclose(f);
    return 0;
}

static void scan_tree(const char *sub)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", PK_SOURCE_DIR, sub);
    ASSERT_EQ(nftw(dir, scan, 16, FTW_PHYS), 0);
}

TEST_IMPL(layout_rooms_include_downward)
{
    scan_tree("harness");
    scan_tree("phases/attribution");
    scan_tree("contenders");
    /* The scan itself must have seen the tree: a wrong root would pass vacuously. */
    if (nfiles < 40 || nincludes < 100)
        pk_test_fail(__FILE__, __LINE__, "scanned only %zu files, %zu includes", nfiles, nincludes);
    if (nfailures > 0)
        pk_test_fail(__FILE__, __LINE__, "%zu include(s) break the layout:\n%s", nfailures,
                     failures);
}

/* The checker itself: a back-edge, a private header and a bare include are each caught. */
TEST_IMPL(layout_checker_catches_back_edges)
{
    int results = room_of("harness/results/load.c"), suites = room_of("harness/suites/x/a.c");
    ASSERT(results >= 0 && suites >= 0);
    check_include("harness/results/load.c", 1, results, "report/report.h");
    ASSERT_EQ(nfailures, 1);
    check_include("harness/suites/phases/suite.c", 2, suites, "run/collect.h");
    ASSERT_EQ(nfailures, 2);
    check_include("harness/suites/phases/suite.c", 3, suites, "suites/forkathon/report.h");
    ASSERT_EQ(nfailures, 3);
    check_include("harness/suites/phases/suite.c", 4, suites, "view.h");
    ASSERT_EQ(nfailures, 4);
    /* ... while the allowed ones pass. */
    check_include("harness/suites/phases/suite.c", 5, suites, "suites/phases/view.h");
    check_include("harness/suites/phases/suite.c", 6, suites, "report/report.h");
    check_include("harness/suites/phases/suite.c", 7, suites, "phases/attribution/phases.h");
    check_include("harness/run/run.c", 8, room_of("harness/run/run.c"), "run/collect.h");
    ASSERT_EQ(nfailures, 4);
    /* A suite's subfolders share its headers, and only its own. */
    check_include("harness/suites/observe/observers/none.c", 9, suites,
                  "suites/observe/observer.h");
    check_include("harness/suites/observe/suite.c", 10, suites, "suites/observe/bpf/event.h");
    ASSERT_EQ(nfailures, 4);
    check_include("harness/suites/observe/observers/none.c", 11, suites,
                  "suites/forkathon/report.h");
    check_include("harness/suites/forkathon/suite.c", 12, suites,
                  "suites/observe/observers/poll.h");
    ASSERT_EQ(nfailures, 6);
}
