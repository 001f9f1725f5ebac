/*
 * `pkbench compare`: the command line over compare.h, and what `pkbench check` (check.c) takes
 * from it (cli.h): the options of a comparison, the warnings before it and the status after it.
 * compare reads files only; check measures.
 *
 * Exit status (both commands): 0 no regression; 2 a (confirmed) regression, or a series missing
 * or failed in the new run; 3 none of those, but a series was undecidable (too few samples, too
 * noisy) or could not run for an environmental reason (named); 1 a usage or input error (one line
 * on stderr, nothing written); 130 interrupted (check: the run's file keeps finished series).
 */
#define _GNU_SOURCE
#include "regress/cli.h"

#include "regress/ab.h"

#include "common/cli.h"
#include "common/files.h"
#include "common/parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char compare_usage[] =
    "usage: pkbench compare BASE.json NEW.json [--format text|md|json] [--out FILE]\n"
    "                       [--alpha A] [--threshold PCT] [--cv-limit PCT] [--filter REGEX]\n"
    "                       [--env-keys K1,K2,...] [--strict-env]\n"
    "                       [--no-drift-correction] [--drift-limit PCT]\n"
    "       pkbench compare FILE.json --baseline-contender NAME [options as above]\n"
    "       pkbench compare AB.json [options as above]   (a file of pkbench ab)\n"
    "\n"
    "Between two files the control series (marked `control`: code that cannot change with the\n"
    "library) measure the machine's drift; every other series is judged drift-corrected, and a\n"
    "drift above --drift-limit (default 25%), controls that disagree, or a scenario whose drift\n"
    "is more than 15% off the whole machine's make it undecidable (\"machine changed\", exit 3).\n"
    "--no-drift-correction judges the raw samples.\n"
    "One file of pkbench ab: each series' head side against its base side, paired by round,\n"
    "the run's looks replayed with its sequential rule (the same verdicts ab gave).\n"
    "Exit status: 0 no regression; 2 a regression or a series missing in NEW; 3 undecidable;\n"
    "1 a usage or input error.\n";

static const struct option compare_options[] = {
    PKB_COMPARE_OPTIONS,
    {"baseline-contender", required_argument, NULL, OPT_BASELINE_CONTENDER},
    {NULL, 0, NULL, 0},
};

/* A percentage ("5", "5%") or "none": the fraction, negative for none (compare.h). */
static bool parse_percent(const char *v, double *frac)
{
    double x;
    if (strcmp(v, "none") == 0) {
        *frac = -1;
        return true;
    }
    if (!pkb_parse_number(v, true, &x) || x < 0 || x >= 1000)
        return false;
    *frac = x == 0 ? -1 : x / 100;
    return true;
}

int pkb__compare_option(int opt,
                        const char *v,
                        pkb_compare_options *o,
                        pkb_compare_format *format,
                        const char **out,
                        const char *usage)
{
    const pkb_cli_value plain[] = {
        {"strict-env", PKB_CLI_SET, .flag = &o->strict_env},
        {"no-drift-correction", PKB_CLI_SET, .flag = &o->no_drift_correction},
        {"alpha", PKB_CLI_FRACTION, .number = &o->alpha},
        {"filter", PKB_CLI_TEXT, .text = &o->filter},
        {"env-keys", PKB_CLI_TEXT, .text = &o->env_keys},
        {"out", PKB_CLI_NAME, .text = out, .needs = "a file name"},
        /* compare's alone (check's and ab's tables do not list it) */
        {"baseline-contender", PKB_CLI_NAME, .text = &o->baseline_contender,
         .needs = "a contender's name"},
        {0},
    };
    /* The three commands that take these name none of them in their errors. */
    int known = pkb_cli_take(plain, opt, v, &(pkb_cli_cmd){NULL, usage, compare_options});
    if (known != 0)
        return known;
    switch (opt) {
    case OPT_DRIFT_LIMIT:
        if (!parse_percent(v, &o->drift_limit) || o->drift_limit <= 0)
            return -pkb_cli_usage_error(usage,
                                        "--drift-limit needs a percentage above 0 (25 or 25%%), "
                                        "got '%s'",
                                        v);
        return 1;
    case OPT_THRESHOLD:
        if (!parse_percent(v, &o->threshold))
            return -pkb_cli_usage_error(
                usage, "--threshold needs a percentage (5 or 5%%) or none, got '%s'", v);
        return 1;
    case OPT_CV_LIMIT:
        if (!parse_percent(v, &o->cv_limit))
            return -pkb_cli_usage_error(
                usage, "--cv-limit needs a percentage (5 or 5%%) or none, got '%s'", v);
        return 1;
    case OPT_FORMAT:
        if (pkb_compare_parse_format(v, format) != 0)
            return -pkb_cli_usage_error(usage, "--format needs text, md or json, got '%s'", v);
        return 1;
    }
    return 0;
}

/* Writes text to path atomically, or to stdout when path is NULL. */
static int emit(const char *text, const char *path)
{
    if (path == NULL) {
        fputs(text, stdout);
        return fflush(stdout) == 0 ? 0 : -EIO;
    }
    return pkb_write_text_atomic(path, text, strlen(text));
}

/* "pkbench: warning: <what>: key 'a' (base) vs 'b' (new); ..." when any differ. */
static void warn_differ(const char *what, const pkb_compare_env_diff *d, size_t n)
{
    if (n == 0)
        return;
    fprintf(stderr, "pkbench: warning: %s:", what);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "%s %s '%s' (base) vs '%s' (new)", i ? ";" : "", d[i].key, d[i].base,
                d[i].cand);
    fputs(" (--strict-env makes this an error)\n", stderr);
}

void pkb__compare_warn(const pkb_compare *c, const char *how)
{
    warn_differ("the environments differ", c->env, c->nenv);
    warn_differ("the runs were made with different settings", c->settings, c->nsettings);
    /* Between two runs, a rank test over each run's samples cannot tell a regression from the
     * whole machine being slower in one run; an A/A noise floor, or a confirming re-run, can.
     * The drift correction separates the machine's shift from the code's. */
    if (c->cand_path == NULL || c->noise_floor_known || c->drift_applied)
        return;
    fprintf(
        stderr,
        "pkbench: warning: %s has no noise floor: between two runs a shift of the whole machine "
        "reads as a change; make the base with `pkbench run --aa`%s\n",
        c->base_path, how);
}

void pkb__compare_say_status(const pkb_compare *c)
{
    if (c->status == 0)
        return;
    char line[2048];
    pkb_compare_summary_line(c, line, sizeof line);
    fprintf(stderr, "pkbench: %s\n", line);
}

/* ==== compare ================================================================================ */

int pkb_cmd_compare(int argc, char **argv)
{
    const char *files[2] = {NULL, NULL}, *out = NULL;
    pkb_compare_options o = {0};
    pkb_compare_format format = PKB_COMPARE_TEXT;
    int opt;
    while ((opt = pkb_cli_next_option(argc - 1, argv + 1, compare_options)) != -1) {
        if (opt == OPT_HELP) {
            fputs(compare_usage, stdout);
            return 0;
        }
        int r = pkb__compare_option(opt, optarg, &o, &format, &out, compare_usage);
        if (r < 0)
            return 1;
        if (r == 0)
            return pkb_cli_getopt_failed(compare_usage, "compare", opt, argv + 1);
    }
    int nfiles = pkb_cli_operands(argc - 1, argv + 1, files, 2,
                                  &(pkb_cli_cmd){"compare", compare_usage, compare_options});
    if (nfiles < 0)
        return 1;
    if (o.baseline_contender != NULL && nfiles != 1)
        return pkb_cli_usage_error(compare_usage,
                                   "compare: --baseline-contender takes exactly one results file");
    if (o.baseline_contender == NULL && nfiles == 0)
        return pkb_cli_usage_error(compare_usage,
                                   "compare: needs BASE.json and NEW.json (or one file of ab)");
    if (out != NULL && pkb_cli_check_writable(out) != 0)
        return 1;
    pkb_compare c;
    char err[1024] = "";
    int rc = o.baseline_contender == NULL && nfiles == 1
                 ? pkb_ab_compare(files[0], &o, &c, err, sizeof err)
                 : pkb_compare_files(files[0], files[1], &o, &c, err, sizeof err);
    if (rc != 0)
        return pkb_cli_failed(rc, err);
    pkb__compare_warn(&c, ", or use `pkbench check`, which confirms a regression by a re-run");
    char *text;
    rc = pkb_compare_render(&c, format, &text);
    if (rc == 0) {
        rc = emit(text, out);
        free(text);
        if (rc != 0)
            fprintf(stderr, "pkbench: cannot write %s: %s\n", out ? out : "the output",
                    strerror(-rc));
    } else {
        fprintf(stderr, "pkbench: out of memory\n");
    }
    int status = rc != 0 ? 1 : c.status;
    if (rc == 0)
        pkb__compare_say_status(&c);
    pkb_compare_free(&c);
    return status;
}
