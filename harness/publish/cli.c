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

int pkb_cmd_publish(int argc, char **argv, const char *usage_text, void (*help)(void))
{
    const char *out = NULL;
    pkb_publish_options po = {.progress = stderr};
    const pkb_cli_value plain[] = {
        {"out", PKB_CLI_NAME, .text = &out, .needs = "a directory"},
        {"no-plots", PKB_CLI_SET, .flag = &po.report.no_plots},
        {"title", PKB_CLI_NAME, .text = &po.title, .needs = "a text"},
        {"repo", PKB_CLI_NAME, .text = &po.repo, .needs = "a directory (a git repository)"},
        {"ratio", PKB_CLI_SET, .flag = &po.ratio},
        {0},
    };
    if (pkb_cli_take_all(argc, argv, plain, "publish", usage_text, help) != 0)
        return 1;
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
