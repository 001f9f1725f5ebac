/*
 * The project's layout, checked two ways.
 *
 * Rooms (layout_rooms_include_downward). Every `#include "..."` in harness/, contenders/ and
 * phases/attribution/ is read, and each one must go from a room to a room the one table below
 * lets it use (the same directions as harness/CMakeLists.txt and harness/README.md's
 * architecture), with no exception list: the plugins (contenders/, phases/attribution/) use only
 * the plugin contract (harness/plugin/) and processkit.h, and the suites reach the plugins, never
 * the other way. An include must be path-qualified, must not reach into a header private to
 * another folder, and a file must not share its name with the bare header it includes (the
 * contender once in contenders/processkit.c read as the library's processkit.h).
 *
 * Circles (layout_no_circles). The module graph of every C source outside tests/ (lib/, harness/,
 * contenders/, phases/): a module is a folder plus a file name up to its first dot (x.c, x.h,
 * x.linux.c and x.windows.c are one module), and A -> B when a file of A includes a header of B
 * or names a function or file-scope object a file of B defines without `static`. A small
 * tokenizer (comments, strings and character literals skipped; brace depth tracked) finds the
 * file-scope definitions and the names used in bodies and initializers; Tarjan's algorithm finds
 * the strongly connected components, and every circle is named with the file, line and include
 * or symbol behind each of its edges (the graph: layout_graph.c). Not seen: names made by token
 * pasting (registry X-macros) and uses inside macro bodies (a macro's uses belong where it is
 * expanded); BPF programs
 * (*.bpf.c) are compiled for the kernel, not linked, and are left out.
 *
 * Sizes (layout_files_and_functions_fit). The same sources, against the developers' guide's
 * limits: no file over 800 lines, no function over 80 (from the line naming it to its closing
 * brace), each one past them named with its length.
 */
#define _GNU_SOURCE
#include "test.h"

#include "layout_graph.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PK_SOURCE_DIR
#define PK_SOURCE_DIR "."
#endif

/* ==== rooms ================================================================================== */

/* A room (its path from the project root) and the rooms its files may include besides its own,
 * lowest first: the one table of allowed directions (a room's path is the longest that matches,
 * so phases/attribution/ is not phases/). processkit (the public header) and phases (the
 * programs beside attribution/ and their libraries, raw_clone3.h) are only included, not
 * scanned; harness/compat/, the Windows C runtime's missing POSIX pieces force-included
 * everywhere, is in no room. */
static const struct room {
    const char *name, *path, *may_use;
} rooms[] = {
    {"processkit", "lib/include", ""},
    {"plugin", "harness/plugin", ""},
    {"contenders", "contenders", "plugin processkit"},
    {"phases", "phases", "processkit"},
    {"attribution", "phases/attribution", "plugin phases processkit"},
    {"common", "harness/common", "processkit"},
    {"results", "harness/results", "common"},
    {"report", "harness/report", "common results processkit"},
    {"run", "harness/run", "common results plugin processkit"},
    {"regress", "harness/regress", "common results processkit"},
    {"suites", "harness/suites",
     "common results report run plugin contenders attribution phases processkit"},
    {"publish", "harness/publish", "common results report run suites processkit"},
    {"pkbench", "harness/pkbench.c",
     "common results report run suites regress publish contenders processkit"},
};
enum { NROOMS = sizeof rooms / sizeof rooms[0] };

/* Headers a folder keeps to itself: only files in that folder may include them. */
static const char *const private_headers[] = {
    "run/collect.h",
    "run/rounds.h",
    "run/remeasure.h",
    "phases/attribution/internal.h",
    "phases/attribution/walk.h",
    "contenders/raw.h",
    "publish/inline.h",
    "publish/multi.h",
    "publish/page.h",
    "publish/scan.h",
    "publish/view.h",
};

static char failures[16384];
static size_t nfailures;

static void fail_at(const char *file, int line, const char *what, const char *inc)
{
    size_t len = strlen(failures);
    snprintf(failures + len, sizeof failures - len, "  %s:%d: #include \"%s\": %s\n", file, line,
             inc, what);
    nfailures++;
}

/* The room of a path from the project root (the longest room path it lies in), or -1. */
static int room_of(const char *rel)
{
    int best = -1;
    for (int i = 0; i < NROOMS; i++) {
        size_t n = strlen(rooms[i].path);
        if (strncmp(rel, rooms[i].path, n) == 0 && (rel[n] == '/' || rel[n] == '\0') &&
            (best < 0 || n > strlen(rooms[best].path)))
            best = i;
    }
    return best;
}

/* The room an include names: it resolves against harness/ ("results/results.h") or the project
 * root ("contenders/contender.h", "phases/attribution/phases.h"); processkit.h is the library's. */
static int include_room(const char *inc)
{
    if (strcmp(inc, "processkit.h") == 0)
        return room_of("lib/include/processkit.h");
    char path[512];
    snprintf(path, sizeof path, "harness/%s", inc);
    int r = room_of(path);
    return r >= 0 ? r : room_of(inc);
}

static bool word_in(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

/* A suite's folder — "suites/<name>" — of a folder inside it (subfolders included): a suite's
 * headers are private to its folder and the folders within it (observe/observers/, say). */
static void suite_of(const char *dir, char *out, size_t cap)
{
    const char *slash = strncmp(dir, "suites/", 7) == 0 ? strchr(dir + 7, '/') : NULL;
    snprintf(out, cap, "%.*s", slash ? (int)(slash - dir) : (int)strlen(dir), dir);
}

static void check_private(const char *rel, int line, const char *inc)
{
    char header_dir[512], file_dir[512];
    layout_folder_of(inc, header_dir, sizeof header_dir);
    layout_folder_of(rel, file_dir, sizeof file_dir);
    const char *own = strncmp(file_dir, "harness/", 8) == 0 ? file_dir + 8 : file_dir;
    for (size_t i = 0; i < sizeof private_headers / sizeof private_headers[0]; i++)
        if (strcmp(inc, private_headers[i]) == 0 && strcmp(header_dir, own) != 0)
            fail_at(rel, line, "a header private to its folder", inc);
    char header_suite[512], own_suite[512];
    suite_of(header_dir, header_suite, sizeof header_suite);
    suite_of(own, own_suite, sizeof own_suite);
    if (strncmp(inc, "suites/", 7) == 0 && strchr(inc + 7, '/') != NULL &&
        strcmp(header_suite, own_suite) != 0)
        fail_at(rel, line, "a header private to that suite's folder", inc);
}

static void check_include(const char *rel, int line, int room, const char *inc)
{
    if (strchr(inc, '/') == NULL) {
        char file_stem[256], inc_stem[256];
        layout_stem_of(rel, file_stem, sizeof file_stem);
        layout_stem_of(inc, inc_stem, sizeof inc_stem);
        if (strcmp(inc, "processkit.h") != 0)
            fail_at(rel, line, "not path-qualified (write room/header.h)", inc);
        else if (strcmp(file_stem, inc_stem) == 0)
            fail_at(rel, line, "the file is named like the header it includes", inc);
        return;
    }
    int to = include_room(inc);
    if (to < 0) {
        fail_at(rel, line, "names no room", inc);
        return;
    }
    if (to != room && !word_in(rooms[room].may_use, rooms[to].name)) {
        fail_at(rel, line, "this room may not use that one", inc);
        return;
    }
    check_private(rel, line, inc);
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
    printf("# %zu files, %zu includes, %zu against the table, 0 whitelisted edges\n", nfiles,
           nincludes, nfailures);
    if (nfailures > 0)
        pk_test_fail(__FILE__, __LINE__, "%zu include(s) break the layout:\n%s", nfailures,
                     failures);
}

/* Whether room `from` reaches room `to` through the table (depth-first, `seen` per call). */
static bool room_reaches(int from, int to, bool *seen)
{
    seen[from] = true;
    for (int i = 0; i < NROOMS; i++)
        if (word_in(rooms[from].may_use, rooms[i].name) &&
            (i == to || (!seen[i] && room_reaches(i, to, seen))))
            return true;
    return false;
}

/* The checker itself: back-edges, a plugin reaching into a suite or the runner, a private header
 * and a bare include are each caught; the table has one direction. */
TEST_IMPL(layout_checker_catches_back_edges)
{
    for (int i = 0; i < NROOMS; i++) {
        bool seen[NROOMS] = {false};
        if (room_reaches(i, i, seen))
            pk_test_fail(__FILE__, __LINE__, "the table lets room %s reach itself", rooms[i].name);
    }
    int results = room_of("harness/results/load.c"), suites = room_of("harness/suites/x/a.c"),
        contenders = room_of("contenders/glib.c"), attribution = room_of("phases/attribution/a.c");
    ASSERT(results >= 0 && suites >= 0 && contenders >= 0 && attribution >= 0);
    ASSERT(attribution != room_of("phases/floor.c"));
    check_include("harness/results/load.c", 1, results, "report/report.h");
    ASSERT_EQ(nfailures, 1);
    check_include("harness/suites/phases/suite.c", 2, suites, "run/collect.h");
    ASSERT_EQ(nfailures, 2);
    check_include("harness/suites/phases/suite.c", 3, suites, "suites/forkathon/view.h");
    ASSERT_EQ(nfailures, 3);
    check_include("harness/suites/phases/suite.c", 4, suites, "view.h");
    ASSERT_EQ(nfailures, 4);
    /* The plugins use the contract only: not the suite that drives them, not the runner. */
    check_include("contenders/glib.c", 5, contenders, "suites/scenarios/scenario.h");
    check_include("contenders/glib.c", 6, contenders, "run/run.h");
    check_include("phases/attribution/run.c", 7, attribution, "run/series.h");
    check_include("phases/attribution/run.c", 8, attribution, "contenders/contender.h");
    ASSERT_EQ(nfailures, 8);
    check_include("contenders/processkit.c", 9, contenders, "processkit.h");
    ASSERT_EQ(nfailures, 9);
    /* ... while the allowed ones pass. */
    check_include("harness/suites/phases/suite.c", 10, suites, "suites/phases/view.h");
    check_include("harness/suites/phases/suite.c", 11, suites, "report/report.h");
    check_include("harness/suites/phases/suite.c", 12, suites, "phases/attribution/phases.h");
    check_include("harness/suites/scenarios/suite.c", 13, suites, "contenders/registry.h");
    check_include("harness/run/run.c", 14, room_of("harness/run/run.c"), "run/collect.h");
    check_include("contenders/glib.c", 15, contenders, "contenders/contender.h");
    check_include("contenders/contender.h", 16, contenders, "plugin/sample.h");
    check_include("contenders/glib.c", 17, contenders, "processkit.h");
    check_include("phases/attribution/run.c", 18, attribution, "plugin/sample.h");
    check_include("phases/attribution/run.c", 19, attribution, "phases/raw_clone3.h");
    ASSERT_EQ(nfailures, 9);
    /* A suite's subfolders share its headers, and only its own. */
    check_include("harness/suites/observe/observers/none.c", 20, suites,
                  "suites/observe/observer.h");
    check_include("harness/suites/observe/suite.c", 21, suites, "suites/observe/bpf/event.h");
    ASSERT_EQ(nfailures, 9);
    check_include("harness/suites/observe/observers/none.c", 22, suites, "suites/forkathon/view.h");
    check_include("harness/suites/forkathon/suite.c", 23, suites,
                  "suites/observe/observers/poll.h");
    ASSERT_EQ(nfailures, 11);
}

/* ==== circles ================================================================================ */

static layout_graph *tree; /* the graph scan_source adds to */

/* Every C source and header under the scanned folders, but BPF programs (see the top). */
static int scan_source(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    size_t n = strlen(path);
    if (flag != FTW_F || n < 3 || (strcmp(path + n - 2, ".c") != 0 && strcmp(path + n - 2, ".h")) ||
        (n > 6 && strcmp(path + n - 6, ".bpf.c") == 0))
        return 0;
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    char buf[8192];
    size_t got;
    while (mem != NULL && (got = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, got, mem);
    fclose(f);
    if (mem == NULL || fclose(mem) != 0)
        return -1;
    layout_graph_add(tree, path + strlen(PK_SOURCE_DIR) + 1, text);
    free(text);
    return 0;
}

/* Every C source outside tests/ into g. */
static void scan_repository(layout_graph *g)
{
    static const char *const dirs[] = {"lib/src", "lib/pkrun",  "lib/include",
                                       "harness", "contenders", "phases"};
    tree = g;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", PK_SOURCE_DIR, dirs[i]);
        ASSERT_EQ(nftw(dir, scan_source, 16, FTW_PHYS), 0);
    }
}

TEST_IMPL(layout_no_circles)
{
    layout_graph g = {0};
    scan_repository(&g);
    layout_graph_link(&g);
    static char out[65536];
    int circles = layout_graph_circles(&g, out, sizeof out);
    printf("# %zu files, %zu modules, %zu definitions, %zu edges: %d circles, 0 whitelisted "
           "edges\n",
           g.nfiles, g.nmodules, g.ndefs, g.nedges, circles);
    /* The scan must have seen the repository: a wrong root would pass vacuously. */
    if (g.nfiles < 180 || g.nmodules < 120 || g.ndefs < 500 || g.nedges < 400)
        pk_test_fail(__FILE__, __LINE__,
                     "scanned only %zu files, %zu modules, %zu definitions, "
                     "%zu edges",
                     g.nfiles, g.nmodules, g.ndefs, g.nedges);
    /* ... and must have read it: an include and a use the tree is known to hold are edges. */
    ASSERT(strstr(layout_graph_edge(&g, "harness/run/run", "harness/run/rounds"),
                  "#include \"run/rounds.h\"") != NULL);
    ASSERT(strstr(layout_graph_edge(&g, "contenders/processkit_resolved_program",
                                    "contenders/processkit_default"),
                  "uses pkb_contender_processkit ") != NULL);
    layout_graph_free(&g);
    if (circles > 0)
        pk_test_fail(__FILE__, __LINE__, "%d circle(s) between modules:\n%s", circles, out);
}

/* The circle checker itself, on sources held in memory: a seeded include circle and a seeded
 * call circle are caught with their evidence, while comments, strings, character literals,
 * members, declarations and a file's own statics tie nothing. */
TEST_IMPL(layout_circle_checker_catches_circles)
{
    static char out[8192];
    layout_graph g = {0};
    layout_graph_add(&g, "t/f.h", "int f(void);\nint g(void *v);\nextern int g_count;\n");
    layout_graph_add(
        &g, "t/f.c",
        "#include \"t/f.h\"\n#define CALL_G() g(0)\n/* g() */\nstruct s {\n    int g;\n};\n"
        "static const char *name = \"g()\";\nstatic int helper(void)\n{\n    return 'g';\n}\n"
        "int f(void)\n{\n    struct s v = {0}, *p = &v;\n    // g(0)\n"
        "    return v.g + p->g + helper() + name[0];\n}\n");
    layout_graph_add(&g, "t/g.c",
                     "#include \"t/f.h\"\nint g(void *v)\n{\n    return v != 0 && f() && h();\n}\n"
                     "int g_count;\n");
    layout_graph_add(
        &g, "t/h.c",
        "static int g(void *v)\n{\n    return v != 0;\n}\nint h(void)\n{\n    return g(0);\n}\n");
    layout_graph_link(&g);
    /* Each trap in f.c and h.c would tie it back to g, which uses both. */
    ASSERT_EQ(layout_graph_circles(&g, out, sizeof out), 0);
    ASSERT_EQ(g.ndefs, 4); /* f, g, g_count, h: no static, no prototype, no extern */
    ASSERT_EQ(g.nedges, 2);
    ASSERT_STR_EQ(layout_graph_edge(&g, "t/g", "t/f"), "t/g.c:1: #include \"t/f.h\"");
    ASSERT_STR_EQ(layout_graph_edge(&g, "t/g", "t/h"), "t/g.c:4: uses h (defined at t/h.c:5)");
    ASSERT_STR_EQ(layout_graph_edge(&g, "t/f", "t/g"), "");
    layout_graph_free(&g);

    layout_graph_add(&g, "t/a.h", "#ifndef A_H\n#define A_H\n#include \"t/b.h\"\n#endif\n");
    layout_graph_add(&g, "t/b.h", "#pragma once\n\n#include \"t/a.h\"\n");
    layout_graph_link(&g);
    ASSERT_EQ(layout_graph_circles(&g, out, sizeof out), 1);
    ASSERT(strstr(out, "t/a -> t/b: t/a.h:3: #include \"t/b.h\"") != NULL);
    ASSERT(strstr(out, "t/b -> t/a: t/b.h:3: #include \"t/a.h\"") != NULL);
    layout_graph_free(&g);

    layout_graph_add(&g, "t/x.c", "int x(void)\n{\n    return y();\n}\n");
    layout_graph_add(
        &g, "t/y.linux.c",
        "extern int x(void);\nstatic int (*hook)(void) = x;\nint y(void)\n{\n    return "
        "hook != 0;\n}\n");
    layout_graph_add(&g, "t/z.c",
                     "const int table[] = {1, 2};\nint z(void)\n{\n    return y();\n}\n");
    layout_graph_link(&g);
    ASSERT_EQ(layout_graph_circles(&g, out, sizeof out), 1);
    ASSERT(strstr(out, "t/x -> t/y: t/x.c:3: uses y (defined at t/y.linux.c:3)") != NULL);
    ASSERT(strstr(out, "t/y -> t/x: t/y.linux.c:2: uses x (defined at t/x.c:1)") != NULL);
    ASSERT(strstr(out, "t/z") == NULL); /* z only uses y: no part of the circle */
    layout_graph_free(&g);
}

/* ==== sizes ================================================================================== */

enum { MAX_FILE_LINES = 800, MAX_FUNCTION_LINES = 80 };

/* Every file and function of g past the limits, one line each into out; how many. */
static size_t oversized(const layout_graph *g, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < g->nfiles; i++)
        if (g->files[i].lines > MAX_FILE_LINES) {
            size_t len = strlen(out);
            snprintf(out + len, cap - len, "  %s: %d lines (file)\n", g->files[i].rel,
                     g->files[i].lines);
            n++;
        }
    for (size_t i = 0; i < g->nfuncs; i++) {
        const struct gfunc *fn = &g->funcs[i];
        if (fn->last - fn->first + 1 > MAX_FUNCTION_LINES) {
            size_t len = strlen(out);
            snprintf(out + len, cap - len, "  %s:%d: %s, %d lines\n", g->files[fn->file].rel,
                     fn->first, fn->name, fn->last - fn->first + 1);
            n++;
        }
    }
    return n;
}

TEST_IMPL(layout_files_and_functions_fit)
{
    layout_graph g = {0};
    scan_repository(&g);
    size_t longest_file = 0, longest_fn = 0;
    for (size_t i = 1; i < g.nfiles; i++)
        if (g.files[i].lines > g.files[longest_file].lines)
            longest_file = i;
    for (size_t i = 1; i < g.nfuncs; i++)
        if (g.funcs[i].last - g.funcs[i].first >
            g.funcs[longest_fn].last - g.funcs[longest_fn].first)
            longest_fn = i;
    /* The scan must have seen the repository's functions: a wrong root would pass vacuously. */
    if (g.nfiles < 180 || g.nfuncs < 1000)
        pk_test_fail(__FILE__, __LINE__, "scanned only %zu files, %zu functions", g.nfiles,
                     g.nfuncs);
    const struct gfunc *fn = &g.funcs[longest_fn];
    printf("# %zu files, the longest %s (%d lines); %zu functions, the longest %s in %s (%d "
           "lines)\n",
           g.nfiles, g.files[longest_file].rel, g.files[longest_file].lines, g.nfuncs, fn->name,
           g.files[fn->file].rel, fn->last - fn->first + 1);
    static char out[16384];
    size_t n = oversized(&g, out, sizeof out);
    layout_graph_free(&g);
    if (n > 0)
        pk_test_fail(__FILE__, __LINE__,
                     "%zu past the limits (files %d lines, functions %d lines):\n%s", n,
                     MAX_FILE_LINES, MAX_FUNCTION_LINES, out);
}

/* The size check itself, on sources held in memory: a function's span runs from the line naming
 * it to its closing brace, braces in strings, characters and comments and a nested block do not
 * end it early, and one line past a limit is caught while the limit itself passes. */
TEST_IMPL(layout_size_checker_measures)
{
    char body[8192] = "static int\nlong_one(int x)\n{\n    const char *s = \"}\"; /* } */\n"
                      "    if (x == '}') {\n        x++;\n    }\n";
    for (int i = 7; i < MAX_FUNCTION_LINES - 1; i++) /* up to its last line but one */
        strcat(body, "    x++;\n");
    strcat(body, "    return x;\n}\nint fits(void)\n{\n    return 0;\n}\n");
    layout_graph g = {0};
    layout_graph_add(&g, "t/a.c", body);
    ASSERT_EQ(g.nfuncs, 2);
    ASSERT_STR_EQ(g.funcs[0].name, "long_one");
    ASSERT_EQ(g.funcs[0].first, 2);
    ASSERT_EQ(g.funcs[0].last - g.funcs[0].first + 1, MAX_FUNCTION_LINES);
    ASSERT_EQ(g.funcs[1].last - g.funcs[1].first + 1, 4);
    ASSERT_EQ(g.files[0].lines, MAX_FUNCTION_LINES + 5);
    static char out[4096];
    ASSERT_EQ(oversized(&g, out, sizeof out), 0);
    layout_graph_free(&g);

    strcat(body, "int over(void)\n{\n");
    for (int i = 0; i < MAX_FUNCTION_LINES - 2; i++)
        strcat(body, "    ;\n");
    strcat(body, "}\n");
    for (int i = 0; i < MAX_FILE_LINES; i++)
        strcat(body, "\n");
    layout_graph_add(&g, "t/b.c", body);
    layout_graph_add(&g, "t/c.c", "int x;"); /* no newline at its end: a line all the same */
    ASSERT_EQ(g.files[1].lines, 1);
    ASSERT_EQ(oversized(&g, out, sizeof out), 2);
    ASSERT(strstr(out, "t/b.c:") != NULL && strstr(out, ": over, 81 lines") != NULL);
    ASSERT(strstr(out, "t/b.c: ") != NULL && strstr(out, " lines (file)") != NULL);
    layout_graph_free(&g);
}
