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

enum {
    OPT_OUT = 1000,
    OPT_NAME,
    OPT_HOST,
    OPT_REPO,
    OPT_FILTER,
    OPT_RATIO,
    OPT_ALPHA,
    OPT_MIN_SIZE,
    OPT_MIN_CHANGE,
    OPT_NO_PLOTS,
    OPT_PRINT,
};

static const struct option history_options[] = {
    {"out", required_argument, NULL, OPT_OUT},
    {"name", required_argument, NULL, OPT_NAME},
    {"host", required_argument, NULL, OPT_HOST},
    {"repo", required_argument, NULL, OPT_REPO},
    {"filter", required_argument, NULL, OPT_FILTER},
    {"ratio", no_argument, NULL, OPT_RATIO},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"min-size", required_argument, NULL, OPT_MIN_SIZE},
    {"min-change", required_argument, NULL, OPT_MIN_CHANGE},
    {"no-plots", no_argument, NULL, OPT_NO_PLOTS},
    {"print", no_argument, NULL, OPT_PRINT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct history_args {
    const char *out, *name;
    bool plots, print;
    pkb_history_options h;
};

#define bad(...) pkb_cli_usage_error(history_usage, __VA_ARGS__)

static int history_option(int opt, const char *v, struct history_args *a, char **argv)
{
    double x;
    long n;
    switch (opt) {
    case OPT_OUT:
    case OPT_NAME:
        if (v[0] == '\0')
            return bad("history: %s needs a %s", opt == OPT_OUT ? "--out" : "--name",
                       opt == OPT_OUT ? "directory" : "name");
        if (opt == OPT_NAME && strpbrk(v, "/\\") != NULL)
            return bad("history: --name is a file name without a directory, got '%s'", v);
        *(opt == OPT_OUT ? &a->out : &a->name) = v;
        return 0;
    case OPT_HOST:
        a->h.host = v;
        return 0;
    case OPT_REPO:
        a->h.repo = v;
        return 0;
    case OPT_FILTER:
        a->h.filter = v;
        return 0;
    case OPT_RATIO:
        a->h.ratio = true;
        return 0;
    case OPT_ALPHA:
        if (!pkb_parse_number(v, false, &x) || !(x > 0 && x < 1))
            return bad("history: --alpha needs a number in (0, 1), got '%s'", v);
        a->h.cp.alpha = x;
        return 0;
    case OPT_MIN_SIZE:
        if (!pkb_parse_count(v, 2, 1000, &n))
            return bad("history: --min-size needs a count from 2 to 1000, got '%s'", v);
        a->h.cp.min_size = (size_t)n;
        return 0;
    case OPT_MIN_CHANGE:
        if (!pkb_parse_number(v, true, &x) || !(x >= 0 && x < 1000))
            return bad("history: --min-change needs a percentage from 0 to 1000 (5 or 5%%), "
                       "got '%s'",
                       v);
        a->h.cp.min_magnitude = x / 100;
        return 0;
    case OPT_NO_PLOTS:
        a->plots = false;
        return 0;
    case OPT_PRINT:
        a->print = true;
        return 0;
    }
    return pkb_cli_getopt_failed(history_usage, "history", opt, argv);
}

int pkb_cmd_history(int argc, char **argv)
{
    struct history_args a = {.out = "reports", .plots = true};
    int opt;
    while ((opt = pkb_cli_next_option(argc, argv, history_options)) != -1) {
        if (opt == 'h') {
            history_help();
            return 0;
        }
        int rc = history_option(opt, optarg, &a, argv);
        if (rc != 0)
            return rc;
    }
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
