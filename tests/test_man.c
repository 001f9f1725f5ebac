/*
 * The man pages cannot drift from the tools. Each tool's --help output is scanned for what a
 * reader of its man page relies on, and each item must appear in the page's scdoc source:
 *   - every option (--name), as a whole token;
 *   - every choice list (head|tail|fail), verbatim, so a renamed choice is caught;
 *   - every command word of the usage lines ("pkbench run");
 *   - every environment variable (NAME_WITH_UNDERSCORES) and every number of three or more digits
 *     (exit statuses, iteration counts).
 * The other way round, every option the man source names must be one --help prints (or --help
 * itself), so a removed option cannot linger in the page. Failures list every missing item.
 */
#define _GNU_SOURCE
#include "test.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PK_PKRUN_PATH
#error "tests/CMakeLists.txt passes the pkrun binary's path"
#endif
#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif

/* The man source with its comment lines (';' first) dropped and scdoc's backslash escapes
 * resolved, so "\[*--out*" reads "[*--out*". Caller frees. */
static char *read_man_source(const char *path)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        pk_test_fail(__FILE__, __LINE__, "cannot open %s", path);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    ASSERT(out != NULL);
    char line[4096];
    while (fgets(line, sizeof line, f) != NULL) {
        if (line[0] == ';')
            continue;
        for (const char *p = line; *p != '\0'; p++) {
            if (*p == '\\' && p[1] != '\0' && p[1] != '\n')
                p++;
            fputc(*p, out);
        }
    }
    fclose(f);
    ASSERT_EQ(fclose(out), 0);
    return text;
}

/* What `tool --help` prints on stdout; the tool must exit 0. Caller frees. */
static char *help_text(const char *tool)
{
    pk_result r;
    const char *const argv[] = {tool, "--help", NULL};
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .timeout_ms = 30000}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT(r.out.data != NULL && r.out.len > 100);
    char *text = strdup(r.out.data);
    pk_result_release(&r);
    ASSERT(text != NULL);
    return text;
}

static bool opt_char(char c)
{
    return islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-';
}

/* True when `tok` occurs in `text` not glued to more of the same kind of characters, so "--out"
 * is not found inside "--output" and "124" not inside "1240". */
static bool has_token(const char *text, const char *tok)
{
    size_t n = strlen(tok);
    for (const char *p = strstr(text, tok); p != NULL; p = strstr(p + 1, tok)) {
        char before = p > text ? p[-1] : ' ', after = p[n];
        if (!isalnum((unsigned char)before) && before != '-' && before != '_' &&
            !isalnum((unsigned char)after) && after != '-' && after != '_')
            return true;
    }
    return false;
}

/* The missing items, collected for one failure message. */
struct missing {
    char list[4096];
    size_t len;
    int checked;
};

static void require(struct missing *m, const char *text, const char *item, bool whole_token)
{
    m->checked++;
    if (whole_token ? has_token(text, item) : strstr(text, item) != NULL)
        return;
    char quoted[160];
    snprintf(quoted, sizeof quoted, " '%s'", item);
    if (strstr(m->list, quoted) != NULL) /* said once is enough */
        return;
    if (m->len + strlen(quoted) < sizeof m->list)
        m->len += (size_t)snprintf(m->list + m->len, sizeof m->list - m->len, "%s", quoted);
}

/* True when `p` (inside `text`) starts a usage line's command: "usage: " or only blanks before
 * it on its line. */
static bool at_usage_start(const char *text, const char *p)
{
    while (p > text && p[-1] == ' ')
        p--;
    return p == text || p[-1] == '\n' || (p - text >= 6 && strncmp(p - 6, "usage:", 6) == 0);
}

/* Calls `each` for every option (--name) in `text`. */
static void for_each_option(const char *text, void (*each)(void *ctx, const char *opt), void *ctx)
{
    for (const char *p = text; (p = strstr(p, "--")) != NULL;) {
        bool starts = (p == text || (!opt_char(p[-1]) && !isupper((unsigned char)p[-1]))) &&
                      islower((unsigned char)p[2]);
        size_t n = 2;
        while (starts && opt_char(p[n]))
            n++;
        if (starts && n > 2) {
            char opt[64];
            snprintf(opt, sizeof opt, "%.*s", (int)n, p);
            each(ctx, opt);
        }
        p += n;
    }
}

struct option_check {
    struct missing *m;
    const char *other;
};

static void option_in_other(void *ctx, const char *opt)
{
    struct option_check *c = ctx;
    if (strcmp(opt, "--help") != 0)
        require(c->m, c->other, opt, true);
}

/* Everything the help names, looked for in the man source (see the file comment). */
static void check_help_against_man(const char *tool, const char *help, const char *man)
{
    struct missing m = {0}, back = {0};
    struct option_check to_man = {&m, man};
    for_each_option(help, option_in_other, &to_man);
    require(&m, man, "--help", true);
    int options = m.checked;

    const char *p = help;
    while (*p != '\0') {
        /* a run of lower-case words joined by '|': a choice list */
        if (islower((unsigned char)*p) && (p == help || !opt_char(p[-1]))) {
            size_t n = 0, bars = 0;
            while (opt_char(p[n]) || (p[n] == '|' && opt_char(p[n + 1])))
                bars += p[n++] == '|';
            if (bars > 0) {
                char list[128];
                snprintf(list, sizeof list, "%.*s", (int)n, p);
                require(&m, man, list, false);
            }
            p += n;
            continue;
        }
        /* an upper-case name with an underscore: an environment variable */
        if (isupper((unsigned char)*p) && (p == help || !isalnum((unsigned char)p[-1]))) {
            size_t n = 0;
            bool underscore = false;
            while (isupper((unsigned char)p[n]) || isdigit((unsigned char)p[n]) || p[n] == '_')
                underscore |= p[n++] == '_';
            if (underscore) {
                char name[128];
                snprintf(name, sizeof name, "%.*s", (int)n, p);
                require(&m, man, name, true);
            }
            p += n;
            continue;
        }
        /* a number of three or more digits */
        if (isdigit((unsigned char)*p) && (p == help || !isalnum((unsigned char)p[-1]))) {
            size_t n = 0;
            while (isdigit((unsigned char)p[n]))
                n++;
            if (n >= 3 && !isalpha((unsigned char)p[n])) {
                char num[32];
                snprintf(num, sizeof num, "%.*s", (int)n, p);
                require(&m, man, num, true);
            }
            p += n;
            continue;
        }
        p++;
    }

    /* the command words of the usage lines: "pkbench run ..." */
    const char *base = strrchr(tool, '/') ? strrchr(tool, '/') + 1 : tool;
    size_t blen = strlen(base);
    for (p = strstr(help, base); p != NULL; p = strstr(p + blen, base)) {
        const char *w = p + blen;
        if (!at_usage_start(help, p) || *w != ' ' || !islower((unsigned char)w[1]))
            continue;
        size_t n = 1;
        while (islower((unsigned char)w[n]))
            n++;
        char cmd[128];
        snprintf(cmd, sizeof cmd, "%s %.*s", base, (int)(n - 1), w + 1);
        require(&m, man, cmd, false);
    }

    /* and back: every option of the page is one the tool prints */
    struct option_check to_help = {&back, help};
    for_each_option(man, option_in_other, &to_help);

    if (options < 5) /* the scan itself must have found the options */
        pk_test_fail(__FILE__, __LINE__, "%s --help: only %d options found:\n%s", base, options,
                     help);
    if (m.len > 0 || back.len > 0)
        pk_test_fail(__FILE__, __LINE__,
                     "%s: --help names what its man page source lacks:%s%s; the man page names "
                     "options --help does not print:%s%s",
                     base, m.list, m.len ? "" : " none", back.list, back.len ? "" : " none");
}

static void check_tool(const char *tool, const char *man_source)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", PK_SOURCE_DIR, man_source);
    char *help = help_text(tool);
    char *man = read_man_source(path);
    check_help_against_man(tool, help, man);
    free(help);
    free(man);
}

TEST_IMPL(man_page_covers_pkrun_help)
{
    check_tool(PK_PKRUN_PATH, "lib/pkrun/pkrun.1.scd");
}

TEST_IMPL(man_page_covers_pkbench_help)
{
    if (PK_PKBENCH_PATH[0] == '\0')
        pk_test_skip_gate("build", "pkbench is built only with PK_BUILD_BENCH");
    check_tool(PK_PKBENCH_PATH, "harness/pkbench.1.scd");
}
