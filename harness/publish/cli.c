/*
 * cli — `pkbench publish DIR --out SITE`'s command line (cli.h): its options read and checked
 * (each bad one named), the site built (publish.h), the files left out said on stderr, and the
 * site's path on stdout.
 */
#define _GNU_SOURCE
#include "publish/cli.h"

#include "common/cli.h"
#include "processkit.h"
#include "publish/publish.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define bad_usage(...) pkb_cli_usage_error(usage_text, __VA_ARGS__)

enum { OPT_HELP = 'h', OPT_OUT = 1000, OPT_NO_PLOTS, OPT_TITLE, OPT_REPO, OPT_RATIO };

static const struct option publish_options[] = {
    {"out", required_argument, NULL, OPT_OUT},
    {"no-plots", no_argument, NULL, OPT_NO_PLOTS},
    {"title", required_argument, NULL, OPT_TITLE},
    {"repo", required_argument, NULL, OPT_REPO},
    {"ratio", no_argument, NULL, OPT_RATIO},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

int pkb_cmd_publish(int argc, char **argv, const char *usage_text, void (*help)(void))
{
    const char *out = NULL;
    pkb_publish_options po = {.progress = stderr};
    int opt;
    while ((opt = pkb_cli_next_option(argc, argv, publish_options)) != -1) {
        if (opt == OPT_HELP) {
            help();
            exit(0);
        } else if (opt == OPT_OUT && optarg[0] == '\0') {
            return bad_usage("publish: --out needs a directory");
        } else if (opt == OPT_OUT) {
            out = optarg;
        } else if (opt == OPT_NO_PLOTS) {
            po.report.no_plots = true;
        } else if (opt == OPT_TITLE && optarg[0] == '\0') {
            return bad_usage("publish: --title needs a text");
        } else if (opt == OPT_TITLE) {
            po.title = optarg;
        } else if (opt == OPT_REPO && optarg[0] == '\0') {
            return bad_usage("publish: --repo needs a directory (a git repository)");
        } else if (opt == OPT_REPO) {
            po.repo = optarg;
        } else if (opt == OPT_RATIO) {
            po.ratio = true;
        } else {
            return pkb_cli_getopt_failed(usage_text, "publish", opt, argv);
        }
    }
    if (optind >= argc)
        return bad_usage("publish: no DIR given (the directory of results files)");
    if (optind + 1 < argc)
        return bad_usage("publish: extra argument '%s' (one DIR)", argv[optind + 1]);
    if (out == NULL)
        return bad_usage("publish: --out SITE is required (the directory the site goes to)");
    char err[1024] = "";
    pkb_publish_summary sum = {0};
    int rc = pkb_publish(argv[optind], out, &po, &sum, err, sizeof err);
    pk_cleanup();
    if (rc != 0) {
        pkb_buf_free(&sum.warnings);
        return pkb_cli_failed(rc, err);
    }
    for (const char *line = sum.warnings.data; line != NULL && *line;) {
        const char *nl = strchr(line, '\n');
        fprintf(stderr, "pkbench: publish: not published: %.*s\n", (int)(nl - line), line);
        line = nl + 1;
    }
    pkb_buf b = {0};
    pkb_buf_printf(&b, "site     %s/index.html (%zu stud%s", out, sum.studies,
                   sum.studies == 1 ? "y" : "ies");
    if (sum.skipped > 0)
        pkb_buf_printf(&b, "; %zu file%s not published, named on the index", sum.skipped,
                       sum.skipped == 1 ? "" : "s");
    pkb_buf_puts(&b, ")\n");
    rc = pkb_cli_put_stdout(&b);
    pkb_buf_free(&b);
    pkb_buf_free(&sum.warnings);
    return rc;
}
