/*
 * layout_graph — the module graph of C sources and its circles (layout_graph.h), for
 * tests/test_layout.c.
 */
#define _GNU_SOURCE
#include "layout_graph.h"

#include "test.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TK_IDENT, TK_PUNCT, TK_OTHER };

typedef struct tok {
    int kind, line;
    char text[64]; /* an identifier (cut at 63), a punctuator ("->" or one character) */
} tok;

/* The folder of a path ("harness/suites/phases/report.c" -> "harness/suites/phases"). */
void layout_folder_of(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    snprintf(out, cap, "%.*s", slash ? (int)(slash - path) : 0, path);
}

/* A file name without its folder and from its first dot ("x.linux.c" -> "x"). */
void layout_stem_of(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    snprintf(out, cap, "%.*s", (int)strcspn(base, "."), base);
}

/* Appends an element to a growable array: its address (zeroed by the caller's writes). */
static void *push(void *arrp, size_t *n, size_t *cap, size_t size)
{
    void **arr = arrp;
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *arr = realloc(*arr, *cap * size);
        if (*arr == NULL)
            pk_test_fail(__FILE__, __LINE__, "out of memory");
    }
    return (char *)*arr + (*n)++ * size;
}
#define PUSH(arr, n, cap) ((__typeof__(arr))push(&(arr), &(n), &(cap), sizeof *(arr)))

static bool is_punct(const tok *t, const char *s)
{
    return t->kind == TK_PUNCT && strcmp(t->text, s) == 0;
}

static bool is_ident(const tok *t, const char *s)
{
    return t->kind == TK_IDENT && strcmp(t->text, s) == 0;
}

static bool is_open(const tok *t)
{
    return is_punct(t, "(") || is_punct(t, "[") || is_punct(t, "{");
}

/* Words that are never the name a declaration defines. */
static bool is_keyword(const char *w)
{
    static const char *const words[] = {
        "auto",           "bool",          "char",      "const",         "double",
        "enum",           "extern",        "float",     "inline",        "int",
        "long",           "register",      "restrict",  "short",         "signed",
        "static",         "struct",        "typedef",   "union",         "unsigned",
        "void",           "volatile",      "_Noreturn", "_Thread_local", "_Alignas",
        "__attribute__",  "__declspec",    "__asm__",   "asm",           "__extension__",
        "_Static_assert", "static_assert", "__inline",  "__inline__",    "__restrict",
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp(w, words[i]) == 0)
            return true;
    return false;
}

/* The index of the closer matching the opener at t[i] (or n - 1 when unbalanced). */
static size_t skip_group(const tok *t, size_t n, size_t i)
{
    int depth = 0;
    for (; i < n; i++) {
        if (is_open(&t[i]))
            depth++;
        else if ((is_punct(&t[i], ")") || is_punct(&t[i], "]") || is_punct(&t[i], "}")) &&
                 --depth == 0)
            return i;
    }
    return n - 1;
}

static int module_of(layout_graph *g, const char *rel)
{
    char dir[128], stem[120], name[256];
    layout_folder_of(rel, dir, sizeof dir);
    layout_stem_of(rel, stem, sizeof stem);
    snprintf(name, sizeof name, "%s/%s", dir, stem);
    for (size_t i = 0; i < g->nmodules; i++)
        if (strcmp(g->modules[i], name) == 0)
            return (int)i;
    snprintf(*PUSH(g->modules, g->nmodules, g->capmodules), sizeof g->modules[0], "%s", name);
    return (int)g->nmodules - 1;
}

static void add_name(struct gname **arr, size_t *n, size_t *cap, const tok *t, int file)
{
    struct gname *x = PUSH(*arr, *n, *cap);
    snprintf(x->name, sizeof x->name, "%s", t->text);
    x->file = file;
    x->line = t->line;
}

/* A name used in the file: identifiers of bodies and initializers, but not a member (after `.` or
 * `->`); each name once per file, at its first line. */
static void add_uses(layout_graph *g, int file, const tok *t, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        if (t[i].kind != TK_IDENT ||
            (i > 0 && (is_punct(&t[i - 1], ".") || is_punct(&t[i - 1], "->"))))
            continue;
        bool seen = false;
        for (size_t k = g->nuses; k-- > 0 && g->uses[k].file == file && !seen;)
            seen = strcmp(g->uses[k].name, t[i].text) == 0;
        if (!seen)
            add_name(&g->uses, &g->nuses, &g->capuses, &t[i], file);
    }
}

static void add_definition(layout_graph *g, int file, const tok *name, bool is_static)
{
    if (is_static)
        add_name(&g->statics, &g->nstatics, &g->capstatics, name, file);
    else if (strcmp(name->text, "main") != 0)
        add_name(&g->defs, &g->ndefs, &g->capdefs, name, file);
}

/* Whether a top-level word of t[from, to) is `w` (groups skipped). */
static bool has_word(const tok *t, size_t from, size_t to, const char *w)
{
    for (size_t i = from; i < to; i++) {
        if (is_ident(&t[i], w))
            return true;
        if (is_open(&t[i]))
            i = skip_group(t, to, i);
    }
    return false;
}

/* The name one declarator of t[from, to) defines (stopping at its `=`), or NULL for a prototype
 * or a bare tag: the last top-level word that is no keyword and no tag, or the `(*name)` of a
 * function pointer. */
static const tok *declarator_name(const tok *t, size_t from, size_t to)
{
    const tok *name = NULL;
    for (size_t i = from; i < to && !is_punct(&t[i], "="); i++) {
        if (is_punct(&t[i], "(")) {
            if (i > from && is_ident(&t[i - 1], "__attribute__")) {
                i = skip_group(t, to, i);
                continue;
            }
            if (i + 1 < to && is_punct(&t[i + 1], "*")) { /* int (*fp)(void) */
                for (size_t k = i + 1; k < to && !is_punct(&t[k], ")"); k++)
                    if (t[k].kind == TK_IDENT && !is_keyword(t[k].text))
                        return &t[k];
            }
            return NULL; /* a prototype */
        }
        if (is_open(&t[i])) {
            i = skip_group(t, to, i);
            continue;
        }
        bool tag = i > from && (is_ident(&t[i - 1], "struct") || is_ident(&t[i - 1], "union") ||
                                is_ident(&t[i - 1], "enum"));
        if (t[i].kind == TK_IDENT && !is_keyword(t[i].text) && !tag)
            name = &t[i];
    }
    return name;
}

/* A file-scope declaration t[from, to), ended by `;`: the objects it defines and the names its
 * initializers use. Typedefs and extern declarations define nothing. */
static void declaration(layout_graph *g, int file, const tok *t, size_t from, size_t to)
{
    if (from == to || has_word(t, from, to, "typedef") ||
        (has_word(t, from, to, "extern") && !(to - from >= 2 && t[from + 1].kind == TK_OTHER)))
        return;
    bool is_static = has_word(t, from, to, "static");
    size_t seg = from;
    for (size_t i = from; i <= to; i++) {
        if (i < to && is_open(&t[i])) {
            i = skip_group(t, to, i);
            continue;
        }
        if (i < to && !is_punct(&t[i], ","))
            continue;
        const tok *name = declarator_name(t, seg, i);
        if (name != NULL)
            add_definition(g, file, name, is_static);
        for (size_t k = seg; k < i; k++)
            if (is_punct(&t[k], "=")) {
                add_uses(g, file, t, k + 1, i);
                break;
            } else if (is_open(&t[k])) {
                k = skip_group(t, i, k);
            }
        seg = i + 1;
    }
}

enum { BRACE_EXTERN_C, BRACE_INITIALIZER, BRACE_TYPE, BRACE_FUNCTION };

/* What the `{` at t[brace] opens, from the statement t[from, brace) before it. */
static int classify(const tok *t, size_t from, size_t brace)
{
    if (brace - from == 2 && is_ident(&t[from], "extern") && t[from + 1].kind == TK_OTHER)
        return BRACE_EXTERN_C;
    bool paren = false;
    for (size_t i = from; i < brace; i++) {
        if (is_punct(&t[i], "="))
            return BRACE_INITIALIZER;
        paren |= is_punct(&t[i], "(");
        if (is_open(&t[i]))
            i = skip_group(t, brace, i);
    }
    const tok *a = brace > from ? &t[brace - 1] : NULL,
              *b = brace > from + 1 ? &t[brace - 2] : NULL;
    bool tagged =
        a != NULL && (is_ident(a, "struct") || is_ident(a, "union") || is_ident(a, "enum") ||
                      (a->kind == TK_IDENT && b != NULL &&
                       (is_ident(b, "struct") || is_ident(b, "union") || is_ident(b, "enum"))));
    return tagged || !paren ? BRACE_TYPE : BRACE_FUNCTION;
}

/* The name of the function defined by t[from, brace): the word before its first top-level `(`. */
static const tok *function_name(const tok *t, size_t from, size_t brace)
{
    for (size_t i = from; i < brace; i++) {
        if (is_punct(&t[i], "(") && i > from && t[i - 1].kind == TK_IDENT &&
            !is_keyword(t[i - 1].text))
            return &t[i - 1];
        if (is_open(&t[i]))
            i = skip_group(t, brace, i);
    }
    return NULL;
}

/* The file scope: declarations, definitions, and the bodies whose names are uses. */
static void parse(layout_graph *g, int file, const tok *t, size_t n)
{
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        if (is_punct(&t[i], ";")) {
            declaration(g, file, t, from, i);
            from = i + 1;
        } else if (is_punct(&t[i], "}")) { /* the end of an extern "C" block */
            from = i + 1;
        } else if (is_punct(&t[i], "{")) {
            int kind = classify(t, from, i);
            if (kind == BRACE_EXTERN_C) {
                from = i + 1;
                continue;
            }
            size_t end = skip_group(t, n, i);
            if (kind == BRACE_FUNCTION) {
                const tok *name = function_name(t, from, i);
                if (name != NULL) {
                    add_definition(g, file, name, has_word(t, from, i, "static"));
                    struct gfunc *fn = PUSH(g->funcs, g->nfuncs, g->capfuncs);
                    snprintf(fn->name, sizeof fn->name, "%s", name->text);
                    fn->file = file;
                    fn->first = name->line;
                    fn->last = t[end].line;
                }
                add_uses(g, file, t, i + 1, end);
                from = end + 1;
            }
            i = end; /* a type's body or an initializer: the declaration goes on to its `;` */
        } else if (is_open(&t[i])) {
            i = skip_group(t, n, i);
        }
    }
}

/* A preprocessor line at s ('#'): records an include, returns the end of the logical line (its
 * newline, or the end). Continuations, comments and strings are stepped over. */
static const char *directive(layout_graph *g, int file, const char *s, int *line)
{
    int at = *line;
    const char *p = s + 1;
    p += strspn(p, " \t");
    if (strncmp(p, "include", 7) == 0) {
        p += 7;
        p += strspn(p, " \t");
        size_t len = *p == '"' ? strcspn(p + 1, "\"\n") : 0;
        if (len > 0 && p[1 + len] == '"') {
            struct ginc *x = PUSH(g->incs, g->nincs, g->capincs);
            snprintf(x->target, sizeof x->target, "%.*s", (int)len, p + 1);
            x->file = file;
            x->line = at;
        }
    }
    while (*p != '\0' && *p != '\n') {
        if (p[0] == '\\' && p[1] == '\n') {
            (*line)++;
            p += 2;
        } else if (p[0] == '/' && p[1] == '*') {
            for (p += 2; *p != '\0' && !(p[0] == '*' && p[1] == '/'); p++)
                *line += *p == '\n';
            p += *p != '\0' ? 2 : 0;
        } else if (*p == '"' || *p == '\'') {
            char q = *p++;
            while (*p != '\0' && *p != '\n' && *p != q)
                p += p[0] == '\\' && p[1] != '\0' ? 2 : 1;
            p += *p == q;
        } else {
            p++;
        }
    }
    return p;
}

static void push_tok(tok **t, size_t *n, size_t *cap, int kind, int line, const char *s, size_t len)
{
    tok *x = PUSH(*t, *n, *cap);
    x->kind = kind;
    x->line = line;
    snprintf(x->text, sizeof x->text, "%.*s", (int)(len < 63 ? len : 63), s);
}

/* The tokens of a C source: identifiers, punctuators, and one TK_OTHER per number, string or
 * character literal; comments and preprocessor lines (includes recorded) produce none. */
static tok *lex(layout_graph *g, int file, const char *s, size_t *ntoks)
{
    tok *t = NULL;
    size_t n = 0, cap = 0;
    int line = 1;
    bool line_start = true;
    for (const char *p = s; *p != '\0';) {
        if (*p == '\n' || isspace((unsigned char)*p)) {
            line_start |= *p == '\n';
            line += *p++ == '\n';
        } else if (p[0] == '/' && p[1] == '*') {
            for (p += 2; *p != '\0' && !(p[0] == '*' && p[1] == '/'); p++)
                line += *p == '\n';
            p += *p != '\0' ? 2 : 0;
        } else if (p[0] == '/' && p[1] == '/') {
            p += strcspn(p, "\n");
        } else if (*p == '#' && line_start) {
            p = directive(g, file, p, &line);
        } else if (*p == '"' || *p == '\'') {
            char q = *p++;
            while (*p != '\0' && *p != q && *p != '\n') {
                line += p[0] == '\\' && p[1] == '\n';
                p += p[0] == '\\' && p[1] != '\0' ? 2 : 1;
            }
            p += *p == q;
            push_tok(&t, &n, &cap, TK_OTHER, line, "", 0);
            line_start = false;
        } else if (isalpha((unsigned char)*p) || *p == '_') {
            size_t len = 0;
            while (isalnum((unsigned char)p[len]) || p[len] == '_')
                len++;
            push_tok(&t, &n, &cap, TK_IDENT, line, p, len);
            p += len;
            line_start = false;
        } else if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
            while (isalnum((unsigned char)*p) || *p == '.' || *p == '_' ||
                   ((*p == '+' || *p == '-') && (p[-1] == 'e' || p[-1] == 'E' || p[-1] == 'p')))
                p++;
            push_tok(&t, &n, &cap, TK_OTHER, line, "", 0);
            line_start = false;
        } else {
            size_t len = p[0] == '-' && p[1] == '>' ? 2 : 1;
            push_tok(&t, &n, &cap, TK_PUNCT, line, p, len);
            p += len;
            line_start = false;
        }
    }
    *ntoks = n;
    return t;
}

/* Adds one source (its path from the project root, its text) to the graph. */
void layout_graph_add(layout_graph *g, const char *rel, const char *text)
{
    struct gfile *f = PUSH(g->files, g->nfiles, g->capfiles);
    int file = (int)g->nfiles - 1;
    snprintf(f->rel, sizeof f->rel, "%s", rel);
    f->lines = 0;
    for (const char *p = text; *p != '\0'; p++)
        f->lines += *p == '\n' || (p[1] == '\0' && *p != '\n'); /* an unended last line too */
    f->module = module_of(g, rel);
    size_t statics = g->nstatics, n = 0;
    tok *t = lex(g, file, text, &n);
    parse(g, file, t, n);
    free(t);
    g->files[file].statics = statics;
    g->files[file].nstatics = g->nstatics - statics;
}

static int file_index(const layout_graph *g, const char *rel)
{
    for (size_t i = 0; i < g->nfiles; i++)
        if (strcmp(g->files[i].rel, rel) == 0)
            return (int)i;
    return -1;
}

/* The file an include names: beside the including file, else from harness/, the project root,
 * the library's include folder or compat's (the build's include paths); -1 when outside. */
static int resolve(const layout_graph *g, const struct ginc *inc)
{
    static const char *const roots[] = {"harness/", "", "lib/include/", "harness/compat/include/"};
    char dir[256], path[600];
    layout_folder_of(g->files[inc->file].rel, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/%s", dir, inc->target);
    int at = file_index(g, path);
    for (size_t i = 0; at < 0 && i < sizeof roots / sizeof roots[0]; i++) {
        snprintf(path, sizeof path, "%s%s", roots[i], inc->target);
        at = file_index(g, path);
    }
    return at;
}

static void add_edge(layout_graph *g, int from, int to, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add_edge(layout_graph *g, int from, int to, const char *fmt, ...)
{
    char **slot = &g->why[(size_t)from * g->nmodules + (size_t)to];
    if (from == to || *slot != NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    ASSERT(vasprintf(slot, fmt, ap) >= 0);
    va_end(ap);
    g->nedges++;
}

static bool file_static(const layout_graph *g, int file, const char *name)
{
    const struct gfile *f = &g->files[file];
    for (size_t i = f->statics; i < f->statics + f->nstatics; i++)
        if (strcmp(g->statics[i].name, name) == 0)
            return true;
    return false;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct gname *)a)->name, ((const struct gname *)b)->name);
}

/* The edges: every include of a scanned header, every use of a name another module defines
 * (unless the using file has a static of that name). */
void layout_graph_link(layout_graph *g)
{
    g->why = calloc(g->nmodules * g->nmodules, sizeof *g->why);
    ASSERT(g->why != NULL);
    for (size_t i = 0; i < g->nincs; i++) {
        const struct ginc *inc = &g->incs[i];
        int to = resolve(g, inc);
        if (to >= 0)
            add_edge(g, g->files[inc->file].module, g->files[to].module, "%s:%d: #include \"%s\"",
                     g->files[inc->file].rel, inc->line, inc->target);
    }
    if (g->ndefs > 0) /* qsort and bsearch take no NULL array, even of length 0 */
        qsort(g->defs, g->ndefs, sizeof *g->defs, by_name);
    for (size_t u = 0; u < g->nuses; u++) {
        const struct gname *use = &g->uses[u];
        if (file_static(g, use->file, use->name))
            continue;
        const struct gname *def =
            g->ndefs > 0 ? bsearch(use, g->defs, g->ndefs, sizeof *g->defs, by_name) : NULL;
        while (def != NULL && def > g->defs && strcmp(def[-1].name, use->name) == 0)
            def--; /* the first of the name's definitions (one per module defining it) */
        for (; def != NULL && def < g->defs + g->ndefs && strcmp(def->name, use->name) == 0; def++)
            add_edge(g, g->files[use->file].module, g->files[def->file].module,
                     "%s:%d: uses %s (defined at %s:%d)", g->files[use->file].rel, use->line,
                     use->name, g->files[def->file].rel, def->line);
    }
}

void layout_graph_free(layout_graph *g)
{
    for (size_t i = 0; g->why != NULL && i < g->nmodules * g->nmodules; i++)
        free(g->why[i]);
    free(g->why);
    free(g->files);
    free(g->modules);
    free(g->defs);
    free(g->statics);
    free(g->uses);
    free(g->incs);
    free(g->funcs);
    memset(g, 0, sizeof *g);
}

/* Tarjan's strongly connected components: comp[v] is v's component. */
struct tarjan {
    const layout_graph *g;
    int *index, *low, *stack, *comp;
    bool *on;
    int next, top, ncomp;
};

static void strongconnect(struct tarjan *x, int v)
{
    size_t n = x->g->nmodules;
    x->index[v] = x->low[v] = x->next++;
    x->stack[x->top++] = v;
    x->on[v] = true;
    for (size_t w = 0; w < n; w++) {
        if (x->g->why[(size_t)v * n + w] == NULL)
            continue;
        if (x->index[w] < 0) {
            strongconnect(x, (int)w);
            x->low[v] = x->low[v] < x->low[w] ? x->low[v] : x->low[w];
        } else if (x->on[w]) {
            x->low[v] = x->low[v] < x->index[w] ? x->low[v] : x->index[w];
        }
    }
    if (x->low[v] == x->index[v]) {
        int w;
        do {
            w = x->stack[--x->top];
            x->on[w] = false;
            x->comp[w] = x->ncomp;
        } while (w != v);
        x->ncomp++;
    }
}

static void appendf(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void appendf(char *out, size_t cap, const char *fmt, ...)
{
    size_t len = strlen(out);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out + len, cap - len, fmt, ap);
    va_end(ap);
}

/* One circle through `start` inside its component (the shortest, breadth-first), with the
 * evidence of every edge; then the component's other edges, each with its evidence, so one
 * reading shows everything that ties the modules together. */
static void
describe_circle(const layout_graph *g, const int *comp, int start, char *out, size_t cap)
{
    size_t n = g->nmodules;
    int *prev = malloc(n * sizeof *prev), *queue = malloc(n * sizeof *queue), head = 0, tail = 0;
    bool *shown = calloc(n * n, sizeof *shown);
    ASSERT(prev != NULL && queue != NULL && shown != NULL);
    for (size_t i = 0; i < n; i++)
        prev[i] = -1;
    int last = -1;
    queue[tail++] = start;
    while (head < tail && last < 0) {
        int v = queue[head++];
        for (size_t w = 0; w < n && last < 0; w++) {
            if (g->why[(size_t)v * n + w] == NULL || comp[w] != comp[start])
                continue;
            if ((int)w == start)
                last = v;
            else if (prev[w] < 0) {
                prev[w] = v;
                queue[tail++] = (int)w;
            }
        }
    }
    int path[512], len = 0;
    for (int v = last; v >= 0 && v != start && len < 511; v = prev[v])
        path[len++] = v;
    path[len++] = start;
    for (int i = len - 1; i >= 0; i--)
        appendf(out, cap, "%s%s", i == len - 1 ? "  circle: " : " -> ", g->modules[path[i]]);
    appendf(out, cap, " -> %s\n", g->modules[start]);
    for (int i = len - 1; i >= 0; i--) {
        size_t from = (size_t)path[i], to = (size_t)(i > 0 ? path[i - 1] : start);
        appendf(out, cap, "    %s -> %s: %s\n", g->modules[from], g->modules[to],
                g->why[from * n + to]);
        shown[from * n + to] = true;
    }
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++)
            if (comp[a] == comp[start] && comp[b] == comp[start] && g->why[a * n + b] != NULL &&
                !shown[a * n + b])
                appendf(out, cap, "    (also) %s -> %s: %s\n", g->modules[a], g->modules[b],
                        g->why[a * n + b]);
    free(prev);
    free(queue);
    free(shown);
}

/* The circles of a linked graph, one per component of more than one module, described in out;
 * returns how many. */
int layout_graph_circles(const layout_graph *g, char *out, size_t cap)
{
    size_t n = g->nmodules;
    struct tarjan x = {.g = g};
    x.index = malloc(n * sizeof *x.index);
    x.low = malloc(n * sizeof *x.low);
    x.stack = malloc(n * sizeof *x.stack);
    x.comp = malloc(n * sizeof *x.comp);
    x.on = calloc(n, sizeof *x.on);
    ASSERT(x.index && x.low && x.stack && x.comp && x.on);
    for (size_t v = 0; v < n; v++)
        x.index[v] = -1;
    for (size_t v = 0; v < n; v++)
        if (x.index[v] < 0)
            strongconnect(&x, (int)v);
    out[0] = '\0';
    int circles = 0;
    for (int c = 0; c < x.ncomp; c++) {
        int first = -1, members = 0;
        for (size_t v = 0; v < n; v++)
            if (x.comp[v] == c) {
                first = first < 0 ? (int)v : first;
                members++;
            }
        if (members < 2)
            continue;
        circles++;
        appendf(out, cap, "  %d modules tied together:", members);
        for (size_t v = 0; v < n; v++)
            if (x.comp[v] == c)
                appendf(out, cap, " %s", g->modules[v]);
        appendf(out, cap, "\n");
        describe_circle(g, x.comp, first, out, cap);
    }
    free(x.index);
    free(x.low);
    free(x.stack);
    free(x.comp);
    free(x.on);
    return circles;
}

/* The evidence of the edge from -> to of a linked graph, "" when there is none. */
const char *layout_graph_edge(const layout_graph *g, const char *from, const char *to)
{
    const char *why = NULL;
    for (size_t a = 0; a < g->nmodules; a++)
        for (size_t b = 0; b < g->nmodules; b++)
            if (strcmp(g->modules[a], from) == 0 && strcmp(g->modules[b], to) == 0)
                why = g->why[a * g->nmodules + b];
    return why != NULL ? why : "";
}
