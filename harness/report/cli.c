/*
 * cli — `pkbench report FILE... | DIR` and `pkbench history` (cli.h): options read and checked
 * (each bad one named), the document built and written, warnings said on stderr, the tables on
 * stdout when asked, and the paths of what was written.
 */
#define _GNU_SOURCE
#include "report/cli.h"

#include "common/cli.h"
#include "common/parse.h"
#include "common/term.h"
#include "processkit.h"
#include "report/history.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool ends_with(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n >= k && strcmp(name + n - k, suffix) == 0;
}

void pkb_report_list_outputs(const char *dir, const char *label, const pkb_buf *written, pkb_buf *b)
{
    const char *doc = NULL;
    for (size_t at = 0; at < written->len; at += strlen(written->data + at) + 1)
        doc = written->data + at;
    for (size_t at = 0; at < written->len; at += strlen(written->data + at) + 1) {
        const char *name = written->data + at;
        if (doc != NULL && ends_with(name, ".json") && ends_with(doc, ".md") &&
            strncmp(name, doc, strlen(doc) - 3) == 0 && strlen(name) == strlen(doc) + 2)
            pkb_buf_printf(b, "data     %s/%s\n", dir, name);
    }
    if (doc != NULL)
        pkb_buf_printf(b, "%-8s %s/%s\n", label, dir, doc);
    static const char *const also[] = {".gnuplot.png", ".matplotlib.png"};
    bool first = true;
    for (size_t at = 0; at < written->len; at += strlen(written->data + at) + 1) {
        const char *name = written->data + at;
        if (!ends_with(name, ".gnuplot.svg"))
            continue;
        int stem = (int)(strlen(name) - strlen(".gnuplot.svg"));
        pkb_buf_printf(b, "%s%s/%s", first ? "figures  " : "         ", dir, name);
        first = false;
        const char *sep = " (also ";
        for (size_t k = 0; k < sizeof also / sizeof also[0]; k++) {
            for (size_t j = 0; j < written->len; j += strlen(written->data + j) + 1) {
                const char *other = written->data + j;
                if (strncmp(other, name, (size_t)stem) == 0 && strcmp(other + stem, also[k]) == 0) {
                    pkb_buf_printf(b, "%s%s", sep, also[k]);
                    sep = ", ";
                }
            }
        }
        pkb_buf_puts(b, strcmp(sep, ", ") == 0 ? ")\n" : "\n");
    }
}

/* The name of a document of `paths`: the one directory's last component, else `fallback`. */
static void doc_name(const char *const *paths,
                     size_t n,
                     const char *fallback,
                     const char *suffix,
                     char *name,
                     size_t cap)
{
    struct stat st;
    if (n == 1 && stat(paths[0], &st) == 0 && S_ISDIR(st.st_mode)) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", paths[0]);
        size_t len = strlen(dir);
        while (len > 1 && dir[len - 1] == '/')
            dir[--len] = '\0';
        const char *base = strrchr(dir, '/');
        base = base != NULL ? base + 1 : dir;
        if (strcmp(base, ".") != 0 && strcmp(base, "..") != 0 && base[0] != '\0') {
            pkb_buf b = {0};
            pkb_buf_sanitized(&b, base);
            snprintf(name, cap, "%s%s", b.failed ? fallback : b.data, suffix);
            pkb_buf_free(&b);
            return;
        }
    }
    snprintf(name, cap, "%s", fallback);
}

int pkb_report_many(const char *const *paths, size_t n, const pkb_report_many_args *a)
{
    char err[1024] = "", name[256];
    if (a->name != NULL)
        snprintf(name, sizeof name, "%s", a->name);
    else
        doc_name(paths, n, "table", "", name, sizeof name);
    pkb_cross c;
    int rc = pkb_cross_build(paths, n, &a->cross, &c, err, sizeof err);
    if (rc != 0)
        return pkb_cli_failed(rc, err);
    pkb_buf written = {0}, b = {0};
    rc = pkb_cross_write(&c, a->out_dir, name, &(pkb_report_options){.written = &written}, err,
                         sizeof err);
    if (rc != 0) {
        pkb_cross_free(&c);
        pkb_buf_free(&written);
        return pkb_cli_failed(rc, err);
    }
    /* Warnings go to stderr whether or not the tables are printed: they are what a reader of the
     * paths alone must not miss. */
    for (size_t i = 0; i < c.ntables; i++) {
        const pkb_cross_table *t = &c.tables[i];
        if (t->ndiffs == 0)
            continue;
        fprintf(stderr, "pkbench: warning: the %s table: %zu key%s differ%s inside rows:", t->suite,
                t->ndiffs, t->ndiffs == 1 ? "" : "s", t->ndiffs == 1 ? "s" : "");
        for (size_t k = 0; k < t->ndiffs; k++)
            fprintf(stderr, "%s %s", k > 0 ? "," : "", t->diffs[k].key);
        fprintf(stderr, " (see the table's warnings)\n");
    }
    for (size_t i = 0; i < c.files.nskipped; i++) {
        const char *s = c.files.skipped.data;
        for (size_t k = 0; k < i; k++)
            s += strlen(s) + 1;
        fprintf(stderr, "pkbench: skipped %s: not a pkbench results file\n", s);
    }
    if (a->print)
        pkb_cross_terminal(&c, pkb_term_wants_color(STDOUT_FILENO), &b);
    pkb_report_list_outputs(a->out_dir, "table", &written, &b);
    b.failed |= written.failed;
    rc = pkb_cli_put_stdout(&b);
    pkb_buf_free(&b);
    pkb_buf_free(&written);
    pkb_cross_free(&c);
    return rc;
}

/* ==== pkbench history ========================================================================= */

static const char history_usage[] =
    "usage: pkbench history DIR|FILE... [--out DIR] [--name NAME] [--host NAME] [--repo DIR]\n"
    "                       [--filter REGEX] [--ratio] [--alpha A] [--min-size N]\n"
    "                       [--min-change PCT] [--no-plots] [--print]\n";

static void history_help(void)
{
    fputs(history_usage, stdout);
    fputs("\n"
          "Puts the results files of a host at many revisions in the order of the project's\n"
          "history (git ancestry in --repo, default the current directory; by each revision's\n"
          "commit date when the repository is not there or lacks a revision), follows every\n"
          "series through them, and finds where its level changed: E-divisive means with\n"
          "Student's t-test (p < --alpha, 0.0001; at least --min-size files, 3, on each side;\n"
          "--min-change PCT drops smaller changes). Each change point comes with its magnitude\n"
          "and 95% CI, the revisions between which it happened and the environment keys that\n"
          "changed there too. Writes reports/<name>.md, <name>.json and a figure per scenario\n"
          "(every series over the history, change points marked); prints the paths, and with\n"
          "--print the change points first.\n"
          "  --out DIR     where the files go (reports)\n"
          "  --name NAME   the files' name (the directory's name + \"-history\", else history)\n"
          "  --host NAME   only this host (its name or host_id); default: a history per host\n"
          "  --filter RE   only the series whose names match\n"
          "  --ratio       each series' same-host ratio to its scenario's baseline in the same\n"
          "                file instead of its median: what a shared machine did between runs\n"
          "                cancels\n"
          "  --no-plots    the Markdown and JSON only\n"
          "Exit status: 0 written (change points or not); 1 bad arguments or input.\n",
          stdout);
}

struct history_args {
    const char *out, *name;
    bool plots, print;
    long min_size; /* --min-size, into h.cp.min_size; 0: the default */
    pkb_history_options h;
};

#define bad(...) pkb_cli_usage_error(history_usage, __VA_ARGS__)

int pkb_cmd_history(int argc, char **argv)
{
    struct history_args a = {.out = "reports", .plots = true};
    const pkb_cli_value plain[] = {
        {"out", PKB_CLI_NAME, .text = &a.out, .needs = "a directory"},
        {"name", PKB_CLI_FILE, .text = &a.name, .needs = "a name"},
        {"host", PKB_CLI_TEXT, .text = &a.h.host},
        {"repo", PKB_CLI_TEXT, .text = &a.h.repo},
        {"filter", PKB_CLI_TEXT, .text = &a.h.filter},
        {"ratio", PKB_CLI_SET, .flag = &a.h.ratio},
        {"alpha", PKB_CLI_FRACTION, .number = &a.h.cp.alpha},
        {"min-size", PKB_CLI_COUNT, .count = &a.min_size, .lo = 2, .hi = 1000},
        {"min-change", PKB_CLI_PERCENT, .number = &a.h.cp.min_magnitude, .lo = 0, .hi = 1000},
        {"no-plots", PKB_CLI_CLEAR, .flag = &a.plots},
        {"print", PKB_CLI_SET, .flag = &a.print},
        {0},
    };
    if (pkb_cli_take_all(argc, argv, plain, "history", history_usage, history_help) != 0)
        return 1;
    a.h.cp.min_size = (size_t)a.min_size;
    if (optind >= argc)
        return bad("history: no results DIR or FILE given");
    const char *const *paths = (const char *const *)argv + optind;
    size_t n = (size_t)(argc - optind);
    char name[256], err[1024] = "";
    if (a.name != NULL)
        snprintf(name, sizeof name, "%s", a.name);
    else
        doc_name(paths, n, "history", "-history", name, sizeof name);
    pkb_history h;
    int rc = pkb_history_build(paths, n, &a.h, &h, err, sizeof err);
    if (rc != 0) {
        pk_cleanup();
        return pkb_cli_failed(rc, err);
    }
    pkb_buf written = {0}, b = {0};
    rc = pkb_history_write(&h, a.out, name,
                           &(pkb_report_options){.no_plots = !a.plots, .written = &written}, err,
                           sizeof err);
    pk_cleanup();
    if (rc == 0) {
        for (size_t i = 0; i < h.nhosts; i++)
            if (!h.hosts[i].ancestry)
                fprintf(stderr, "pkbench: history of %s: %s\n", h.hosts[i].host,
                        h.hosts[i].order_note);
        if (a.print)
            pkb_history_terminal(&h, pkb_term_wants_color(STDOUT_FILENO), &b);
        pkb_report_list_outputs(a.out, "history", &written, &b);
        b.failed |= written.failed;
        rc = pkb_cli_put_stdout(&b);
    } else {
        rc = pkb_cli_failed(rc, err);
    }
    pkb_buf_free(&b);
    pkb_buf_free(&written);
    pkb_history_free(&h);
    return rc;
}
