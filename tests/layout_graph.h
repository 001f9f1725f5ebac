/*
 * layout_graph — the module graph of C sources and its circles, for tests/test_layout.c: a small
 * tokenizer (comments, strings and character literals skipped, brace depth tracked) finds each
 * file's includes, its file-scope definitions (and whether they are static) and the names its
 * bodies and initializers use; linking turns them into edges between modules (a folder plus a
 * file name up to its first dot), each with the file, line and include or symbol behind it; and
 * Tarjan's algorithm finds the strongly connected components. See test_layout.c for what the
 * graph leaves out. Beside the graph, each file's length and each function's span in lines, for
 * the size limits.
 */
#ifndef PK_TESTS_LAYOUT_GRAPH_H
#define PK_TESTS_LAYOUT_GRAPH_H

#include <stdbool.h>
#include <stddef.h>

struct gfile {
    char rel[256];
    int module;
    int lines;                /* its length */
    size_t statics, nstatics; /* its file-static names: statics[statics .. +nstatics] */
};

struct gname {
    char name[64];
    int file, line;
};

/* A function's definition: from the line naming it to the line of its closing brace. */
struct gfunc {
    char name[64];
    int file, first, last;
};

struct ginc {
    char target[256];
    int file, line;
};

typedef struct layout_graph {
    struct gfile *files;
    size_t nfiles, capfiles;
    char (*modules)[256];
    size_t nmodules, capmodules;
    struct gname *defs, *statics, *uses;
    size_t ndefs, capdefs, nstatics, capstatics, nuses, capuses;
    struct ginc *incs;
    size_t nincs, capincs;
    struct gfunc *funcs;
    size_t nfuncs, capfuncs;
    char **why; /* nmodules x nmodules: the first evidence of the edge a -> b, or NULL */
    size_t nedges;
} layout_graph;

/* Adds one source (its path from the project root, its text) to the graph. */
void layout_graph_add(layout_graph *g, const char *rel, const char *text);
/* Turns the sources' includes and uses into edges; call once, after the last layout_graph_add. */
void layout_graph_link(layout_graph *g);
/* The circles of a linked graph, one per component of more than one module, described in `out`
 * (the shortest circle through it and every other edge among its modules, with their evidence);
 * returns how many. */
int layout_graph_circles(const layout_graph *g, char *out, size_t cap);
/* The evidence of the edge from -> to (modules by name) of a linked graph, "" when none. */
const char *layout_graph_edge(const layout_graph *g, const char *from, const char *to);
void layout_graph_free(layout_graph *g);

/* A path's folder ("harness/run/run.c" -> "harness/run"), and its file name up to the first dot
 * ("x.linux.c" -> "x"). */
void layout_folder_of(const char *path, char *out, size_t cap);
void layout_stem_of(const char *path, char *out, size_t cap);

#endif /* PK_TESTS_LAYOUT_GRAPH_H */
