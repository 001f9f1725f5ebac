/*
 * `pkbench check`: runs a suite, compares it with a baseline (cli.h, compare.h), and reports only
 * the regressions that repeat.
 *
 * check measures: it runs `pkbench run` (this very executable, as a child process, so every suite
 * `run` knows works here unchanged, and the run sees exactly the environment a direct run would:
 * no extra cgroup, the same PKBENCH_TINY; its rounds spread a neighbour's burst over every series;
 * --sequential opts out), compares the new file with the baseline, and before it reports a
 * regression re-runs only the series that regressed (a filter built from their names) and
 * compares again. A regression is reported only when it repeats: two independent runs must both
 * show it, so noise has to strike twice (≈ p² instead of p). The re-run's comparison corrects for
 * the re-run series only. Both new results files are kept and named on stderr. A series the
 * baseline measured that the run lacks or failed is not re-run: it fails the check (exit 2) as it
 * is. When the first comparison was drift-corrected, the re-run also measures the control series,
 * so its comparison is corrected for its own drift. (PKBENCH_CHECK_RUNNER names a program to
 * start instead of this pkbench: the tests use it to feed check prepared runs, so that "a
 * regression that does not repeat is never confirmed" is checked deterministically rather than on
 * a noisy machine.)
 *
 * Exit status: as compare's (cli.c), and 130 when interrupted (the run's file keeps finished
 * series).
 */
#define _GNU_SOURCE
#include "regress/cli.h"

#include "regress/ab_cli.h"
#include "regress/build.h"

#include "common/cli.h"
#include "common/files.h"
#include "common/parse.h"
#include "processkit.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char check_usage[] =
    "usage: pkbench check --baseline FILE [--suite NAME] [--profile quick|full] [--filter REGEX]\n"
    "                     [--no-prime] [--sequential] [--settle S] [--repetitions N]\n"
    "                     [--out FILE]\n"
    "                     [--format text|md|json] [--alpha A] [--threshold PCT] [--cv-limit PCT]\n"
    "                     [--env-keys LIST]\n"
    "                     [--strict-env] [--no-drift-correction] [--drift-limit PCT]\n"
    "       pkbench check --against REV [--filter REGEX] [--max-time DURATION]\n"
    "                     [--profile quick|full] [--no-prime] [--settle S] [--out FILE]\n"
    "                     [--format text|md|json] [--alpha A] [--threshold PCT] [--cv-limit PCT]\n"
    "\n"
    "--against REV checks the working tree against a revision through pkbench ab: both builds\n"
    "in one interleaved run, rounds until decided (ab --help).\n";

enum { OPT_AGAINST = 1300, OPT_MAX_TIME };

static const struct option check_options[] = {
    PKB_COMPARE_OPTIONS,
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"against", required_argument, NULL, OPT_AGAINST},
    {"max-time", required_argument, NULL, OPT_MAX_TIME},
    PKB_CLI_RUN_OPTIONS,
    {NULL, 0, NULL, 0},
};

/* ==== check ================================================================================== */

/* The run's stdout (its tables and path): check prints the comparison and the paths itself, and
 * its own stdout stays the comparison's (--format json). */
static int drop_line(void *user, const pk_line *line)
{
    (void)user, (void)line;
    return 0;
}

/* Runs `pkbench run` into `out` with `filter`, as a child (ab_cli.h: Ctrl-C and SIGTERM stop it);
 * its progress lines (stderr) show as it goes. Returns its exit status, or 1 after a message. */
static int run_child(const pkb_cli_run *a, const char *filter, const char *out)
{
    /* PKBENCH_CHECK_RUNNER, for tests: a program started in place of this pkbench with the same
     * arguments, so that the confirmation logic can be checked on prepared results files. */
    const char *runner = getenv("PKBENCH_CHECK_RUNNER");
    const char *argv[16] = {runner != NULL && runner[0] != '\0' ? runner : NULL,
                            "run",
                            "--suite",
                            a->suite,
                            "--profile",
                            a->profile,
                            "--out",
                            out};
    int k = 8;
    if (filter != NULL) {
        argv[k++] = "--filter";
        argv[k++] = filter;
    }
    if (!a->prime)
        argv[k++] = "--no-prime";
    if (a->sequential)
        argv[k++] = "--sequential";
    if (a->settle != NULL) {
        argv[k++] = "--settle";
        argv[k++] = a->settle;
    }
    if (a->repetitions != NULL) {
        argv[k++] = "--repetitions";
        argv[k++] = a->repetitions;
    }
    argv[k] = NULL;
    return pkb_ab_run(argv, NULL, drop_line, NULL);
}

/* "^(a|b)$" with the names' ERE metacharacters escaped. */
static char *names_filter(const pkb_compare *c)
{
    size_t cap = 8;
    for (size_t i = 0; i < c->nrows; i++)
        cap += 2 * strlen(c->rows[i].name) + 1;
    char *f = malloc(cap), *p = f;
    if (f == NULL)
        return NULL;
    p += sprintf(p, "^(");
    bool first = true;
    for (size_t i = 0; i < c->nrows; i++) {
        /* the controls too: the re-run's comparison is drift-corrected like the first */
        if (c->rows[i].d.verdict != PKS_REGRESSED && !(c->rows[i].control && c->drift_applied))
            continue;
        if (!first)
            *p++ = '|';
        first = false;
        for (const char *s = c->rows[i].name; *s; s++) {
            if (strchr(".[]()*+?{}|^$\\", *s) != NULL)
                *p++ = '\\';
            *p++ = *s;
        }
    }
    strcpy(p, ")$");
    return f;
}

static const pkb_compare_row *row_named(const pkb_compare *c, const char *name)
{
    for (size_t i = 0; i < c->nrows; i++)
        if (strcmp(c->rows[i].name, name) == 0)
            return &c->rows[i];
    return NULL;
}

static void print_rendered(const pkb_compare *c, pkb_compare_format format)
{
    char *text;
    if (pkb_compare_render(c, format, &text) == 0) {
        fputs(text, stdout);
        free(text);
    }
}

/* The conclusion of a check: the final status, and the text/Markdown/JSON that says it. */
static int conclude(const pkb_compare *first,
                    const pkb_compare *again,
                    const char *results,
                    const char *rerun_path,
                    const char *baseline,
                    pkb_compare_format format)
{
    size_t confirmed = 0;
    bool undecided = first->undecidable > 0;
    json_t *jc = json_array(), *jn = json_array();
    char line[4096] = "";
    size_t used = 0;
    for (size_t i = 0; again != NULL && i < first->nrows; i++) {
        const pkb_compare_row *r1 = &first->rows[i];
        if (r1->d.verdict != PKS_REGRESSED)
            continue;
        const pkb_compare_row *r2 = row_named(again, r1->name);
        bool repeat = r2 != NULL && r2->d.verdict == PKS_REGRESSED;
        undecided |= r2 == NULL || r2->d.verdict == PKS_UNDECIDABLE;
        confirmed += repeat;
        json_array_append_new(repeat ? jc : jn, json_string(r1->name));
        if (format != PKB_COMPARE_JSON && used < sizeof line) {
            char d2[64] = "not measured again";
            if (r2 != NULL)
                snprintf(d2, sizeof d2, "%+.1f%%, %s", 100 * r2->s.delta,
                         pks_verdict_name(r2->d.verdict));
            int w = snprintf(line + used, sizeof line - used, "%s%s %s (%+.1f%%, then %s)\n",
                             format == PKB_COMPARE_MD ? "- " : "  ",
                             repeat ? "confirmed:   " : "not repeated:", r1->name,
                             100 * r1->s.delta, d2);
            used += w > 0 ? (size_t)w : 0;
        }
    }
    /* A series missing from the run is not re-run: it fails the check as it is. */
    int status = confirmed > 0 || first->missing > 0     ? 2
                 : undecided || first->environmental > 0 ? 3
                                                         : 0;
    if (again == NULL)
        status = first->status;
    if (format == PKB_COMPARE_JSON) {
        json_t *doc = json_object();
        json_object_set_new(doc, "schema", json_string("pkbench-check"));
        json_object_set_new(doc, "schema_version", json_integer(1));
        json_object_set_new(doc, "baseline", json_string(baseline));
        json_object_set_new(doc, "results", json_string(results));
        json_object_set_new(doc, "comparison", pkb_compare_json(first));
        json_t *rerun = json_null();
        if (again != NULL)
            rerun = json_pack("{s:s, s:s, s:o}", "results", rerun_path, "why",
                              "these series regressed in the first run; a regression is reported "
                              "only when it repeats",
                              "comparison", pkb_compare_json(again));
        json_object_set_new(doc, "rerun", rerun);
        json_object_set_new(doc, "confirmed", jc);
        json_object_set_new(doc, "not_repeated", jn);
        json_object_set_new(doc, "status", json_integer(status));
        char *s = pkb_json_text(doc, 2);
        if (s != NULL)
            fputs(s, stdout);
        free(s);
        json_decref(doc);
        return status;
    }
    json_decref(jc);
    json_decref(jn);
    if (again != NULL) {
        printf("%s", line);
        printf("\n%s %zu of %zu regression%s repeated.\n",
               format == PKB_COMPARE_MD ? "**Conclusion:**" : "Conclusion:", confirmed,
               first->regressed, first->regressed == 1 ? "" : "s");
    }
    fflush(stdout);
    return status;
}

/* The stderr line after a re-run: what repeated, or that nothing did. */
static void say_confirmed(const pkb_compare *first, const pkb_compare *again, int status)
{
    fprintf(stderr, "pkbench: %s",
            status == 2 ? "regressed (repeated in the re-run):"
                        : "no regression repeated in the re-run");
    size_t k = 0;
    for (size_t i = 0; status == 2 && i < again->nrows; i++) {
        const pkb_compare_row *r2 = &again->rows[i], *r1 = row_named(first, r2->name);
        if (r2->d.verdict == PKS_REGRESSED && r1 != NULL && r1->d.verdict == PKS_REGRESSED)
            fprintf(stderr, "%s %s (%+.1f%%, then %+.1f%%)", k++ ? "," : "", r2->name,
                    100 * r1->s.delta, 100 * r2->s.delta);
    }
    if (status == 3) {
        fputs("; cannot decide:", stderr);
        for (int pass = 0; pass < 2; pass++) {
            const pkb_compare *c = pass ? again : first;
            for (size_t i = 0; i < c->nrows; i++) {
                if (c->rows[i].d.verdict != PKS_UNDECIDABLE)
                    continue;
                char why[200];
                pkb_compare_why(c, &c->rows[i], why, sizeof why);
                fprintf(stderr, "%s %s (%s%s)", k++ ? "," : "", c->rows[i].name,
                        pass ? "re-run: " : "", why);
            }
        }
    }
    fputc('\n', stderr);
}

/* The first run's results file (--out, else results/check-<UTC time>.json, creating results/)
 * and the re-run's beside it ("-rerun" before ".json"). Returns 0, or 1 after a message. */
static int check_paths(const char *out, char *path, char *rerun, size_t cap)
{
    if (out != NULL)
        snprintf(path, cap, "%s", out);
    else if (pkb_cli_results_path("check", path, cap) != 0)
        return 1;
    size_t n = strlen(path);
    bool json = n > 5 && strcmp(path + n - 5, ".json") == 0;
    if (snprintf(rerun, cap, "%.*s-rerun.json", (int)(json ? n - 5 : n), path) >= (int)cap)
        return pkb_cli_usage_error(check_usage, "check: --out path too long: '%s'", path);
    return 0;
}

/* check's command line. Returns 0, or 1 after a usage message; -1 for --help (printed). */
struct check_cli {
    pkb_cli_run run; /* passed on to the runs as given */
    const char *baseline, *out;
    const char *against, *max_time; /* --against REV: through pkbench ab */
    pkb_compare_options o;
    pkb_compare_format format;
};

static int parse_check(int argc, char **argv, struct check_cli *c)
{
    *c = (struct check_cli){.run = PKB_CLI_RUN_DEFAULTS};
    int opt;
    while ((opt = pkb_cli_next_option(argc - 1, argv + 1, check_options)) != -1) {
        if (opt == OPT_HELP) {
            fputs(check_usage, stdout);
            return -1;
        }
        int r = pkb__compare_option(opt, optarg, &c->o, &c->format, &c->out, check_usage);
        if (r == 0)
            r = pkb_cli_run_option(opt, optarg, &c->run, "check", check_usage);
        if (r < 0)
            return 1;
        if (r > 0)
            continue;
        double seconds;
        if (opt == OPT_AGAINST && optarg[0] != '\0')
            c->against = optarg;
        else if (opt == OPT_AGAINST)
            return pkb_cli_usage_error(check_usage, "check: --against needs a revision");
        else if (opt == OPT_MAX_TIME && !pkb_parse_duration(optarg, &seconds))
            return pkb_cli_usage_error(check_usage,
                                       "check: --max-time needs a duration (300, 90s, 5m), got "
                                       "'%s'",
                                       optarg);
        else if (opt == OPT_MAX_TIME)
            c->max_time = optarg;
        else if (opt != OPT_BASELINE)
            return pkb_cli_getopt_failed(check_usage, "check", opt, argv + 1);
        else if (optarg[0] == '\0')
            return pkb_cli_usage_error(check_usage, "check: --baseline needs a value");
        else
            c->baseline = optarg;
    }
    if (optind + 1 < argc)
        return pkb_cli_usage_error(check_usage, "check: unexpected argument '%s'",
                                   argv[optind + 1]);
    if (c->against != NULL && c->baseline != NULL)
        return pkb_cli_usage_error(check_usage, "check: --baseline FILE and --against REV are two "
                                                "ways of checking: give one");
    if (c->max_time != NULL && c->against == NULL)
        return pkb_cli_usage_error(check_usage, "check: --max-time bounds --against's rounds");
    if (c->against != NULL)
        return 0; /* pkbench ab parses the rest, and names what does not apply */
    if (c->baseline == NULL)
        return pkb_cli_usage_error(check_usage,
                                   "check: --baseline FILE is required (or --against REV)");
    return 0;
}

/* The baseline is readable, the output paths fit, results/ exists when it is the default. */
static int prepare_check(const struct check_cli *c, char *path, char *rerun, size_t cap)
{
    char err[1024] = "";
    if (pkb_compare_check_file(c->baseline, err, sizeof err) != 0) {
        fprintf(stderr, "pkbench: %s\n", err);
        return 1;
    }
    if (check_paths(c->out, path, rerun, cap) != 0)
        return 1;
    /* Before anything is measured: both runs' results, and the comparison. */
    if (pkb_cli_check_results_file("check", "--out", path) != 0 ||
        pkb_cli_check_results_file("check", "the re-run's file", rerun) != 0)
        return 1;
    return 0;
}

/* The first run and its comparison. Returns the exit status so far; *have says whether `first`
 * holds a comparison. */
static int first_run(const struct check_cli *c, const char *path, pkb_compare *first, bool *have)
{
    char err[1024] = "";
    int status = run_child(&c->run, c->o.filter, path);
    if (status == PKB_EXIT_UNMEASURED) /* compared as usual: a series failed there is a note */
        status = 0;
    if (status == 0) {
        int rc = pkb_compare_files(c->baseline, path, &c->o, first, err, sizeof err);
        *have = rc == 0;
        status = rc == 0 ? first->status : 1;
        if (rc != 0)
            fprintf(stderr, "pkbench: %s\n", err);
    }
    if (*have) {
        pkb__compare_warn(first, " (a regression here is still confirmed by a re-run)");
        if (c->format != PKB_COMPARE_JSON)
            print_rendered(first, c->format);
    }
    return status;
}

/* Re-runs only the series that regressed and compares them again. Returns the exit status so
 * far; *have says whether `again` holds a comparison. The re-run's filter is returned in *filter
 * for the caller to free once `again` is no longer used: the comparison borrows it (its opts). */
static int confirm_run(const struct check_cli *c,
                       const pkb_compare *first,
                       const char *rerun,
                       pkb_compare *again,
                       bool *have,
                       char **filter_out)
{
    char *filter = names_filter(first);
    *filter_out = filter;
    char list[2048] = "", err[1024] = "";
    size_t used = 0;
    for (size_t i = 0; i < first->nrows && used < sizeof list; i++) {
        const pkb_compare_row *r = &first->rows[i];
        if (r->d.verdict != PKS_REGRESSED)
            continue;
        int w = snprintf(list + used, sizeof list - used, "%s%s (%+.1f%%)", used ? ", " : "",
                         r->name, 100 * r->s.delta);
        used += w > 0 ? (size_t)w : 0;
    }
    fprintf(stderr, "pkbench: re-running %zu series that regressed, to confirm: %s\n",
            first->regressed, list);
    if (c->format != PKB_COMPARE_JSON)
        printf("\n%sRe-running the %zu series that regressed, once: %s. A regression counts "
               "only when it repeats.\n\n",
               c->format == PKB_COMPARE_MD ? "### Confirmation\n\n" : "", first->regressed, list);
    fflush(stdout);
    int status = filter != NULL ? run_child(&c->run, filter, rerun) : 1;
    if (status == PKB_EXIT_UNMEASURED)
        status = 0;
    if (status == 0) {
        pkb_compare_options o2 = c->o;
        o2.filter = filter;
        int rc = pkb_compare_files(c->baseline, rerun, &o2, again, err, sizeof err);
        *have = rc == 0;
        if (rc != 0) {
            fprintf(stderr, "pkbench: %s\n", err);
            status = 1;
        } else if (c->format != PKB_COMPARE_JSON) {
            print_rendered(again, c->format);
            printf("\n");
        }
    }
    return status;
}

/* The last lines on stderr: the verdict and where the results are. */
static void say_where(int status,
                      const pkb_compare *first,
                      bool have_first,
                      const pkb_compare *again,
                      bool have_again,
                      const char *path,
                      const char *rerun)
{
    if (have_again)
        say_confirmed(first, again, status);
    else if (have_first && status == first->status)
        pkb__compare_say_status(first);
    if (status == 130 && have_first)
        fprintf(stderr,
                "pkbench: check interrupted during the re-run; results %s and %s (partial)\n", path,
                rerun);
    else if (status == 130)
        fprintf(stderr, "pkbench: check interrupted; results so far in %s\n", path);
    else if (have_first)
        fprintf(stderr, "pkbench: results %s%s%s\n", path, have_again ? " and " : "",
                have_again ? rerun : "");
}

/* check --against REV: `pkbench ab REV <the working tree>` with check's other options. */
static int check_against(int argc, char **argv, const struct check_cli *c)
{
    char top[PATH_MAX];
    if (pkb_ab_git(".", (const char *const[]){"rev-parse", "--show-toplevel", NULL}, top,
                   sizeof top) != 0)
        return pkb_cli_usage_error(check_usage, "check: --against: not in a git work tree: %s",
                                   top);
    const char *args[64] = {NULL, "ab", c->against, top};
    size_t n = 4;
    for (int i = 2; i < argc && n + 1 < sizeof args / sizeof args[0]; i++) {
        if (strcmp(argv[i], "--against") == 0) {
            i++; /* and its value */
            continue;
        }
        if (strncmp(argv[i], "--against=", 10) != 0)
            args[n++] = argv[i];
    }
    args[n] = NULL;
    fprintf(stderr, "pkbench: check: the working tree %s against %s, through pkbench ab\n", top,
            c->against);
    return pkb_ab_run(args, NULL, NULL, NULL);
}

int pkb_cmd_check(int argc, char **argv)
{
    struct check_cli c;
    int status = parse_check(argc, argv, &c);
    if (status != 0)
        return status < 0 ? 0 : status;
    if (c.against != NULL)
        return check_against(argc, argv, &c);
    char path[PATH_MAX], rerun[PATH_MAX];
    status = prepare_check(&c, path, rerun, sizeof path);
    if (status != 0)
        return status;
    pkb_compare first = {0}, again = {0};
    bool have_first = false, have_again = false;
    char *rerun_filter = NULL;
    status = first_run(&c, path, &first, &have_first);
    if (have_first && first.regressed > 0)
        status = confirm_run(&c, &first, rerun, &again, &have_again, &rerun_filter);
    if (have_first && (first.regressed == 0 || have_again))
        status = conclude(&first, have_again ? &again : NULL, path, rerun, c.baseline, c.format);
    say_where(status, &first, have_first, &again, have_again, path, rerun);
    pkb_compare_free(&first);
    pkb_compare_free(&again);
    free(rerun_filter);
    pk_cleanup();
    return status;
}
