/*
 * ab_cli — `pkbench ab BASE HEAD` (ab_cli.h): the options, the two builds before anything is
 * measured, and after the run the comparison of its file (ab.h's pkb_ab_compare: the verdicts
 * the run's looks gave), printed as compare prints one.
 */
#define _GNU_SOURCE
#include "regress/ab_cli.h"

#include "common/cli.h"
#include "common/md.h"
#include "common/parse.h"
#include "regress/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char ab_usage[] =
    "usage: pkbench ab BASE HEAD [--filter REGEX] [--max-time DURATION] [--profile quick|full]\n"
    "                  [--no-prime] [--settle S] [--out FILE] [--format text|md|json]\n"
    "                  [--alpha A] [--threshold PCT] [--cv-limit PCT] [--controls] [--quiet]\n"
    "\n"
    "Measures two builds of the library in one interleaved run: every round takes one sample of\n"
    "every selected series of the scenarios suite from each side, the two sides of a series\n"
    "next to each other, and the verdicts pair them by round. BASE and HEAD are git revisions\n"
    "of the repository here (their lib/ built once, Release, under build/ab/ of the tree pkbench\n"
    "was built from, and reused), source trees (a directory with CMakeLists.txt and lib/, e.g.\n"
    "the working tree) or trees ab built before (a directory with pk_contender_host). The\n"
    "contenders, their children and the settings are this tree's on both sides; a contender\n"
    "that calls nothing of the library (posix_spawn, libuv, ...) runs the same code on both,\n"
    "so it is left out unless --controls. Every sample is taken by a worker process started\n"
    "afresh for it, so what one process happens to get cannot stay with one side.\n"
    "Rounds are added in blocks until every series is decided or --max-time (5m) is spent; a\n"
    "sequential rule keeps the false alarms at --alpha (0.05) over every series and look: a\n"
    "series is regressed when p is below its look's level and delta above --threshold (2%),\n"
    "unchanged when its CI at that level lies within the threshold.\n"
    "Exit status: 0 no regression; 2 a series regressed (or failed on the head side only); 3\n"
    "none, but a series undecidable; 1 a usage or build error; 130 interrupted.\n";

enum {
    OPT_MAX_TIME = 1100,
    OPT_BISECT_STEP,
    OPT_QUIET,
    OPT_CONTROLS,
};

static const struct option ab_options[] = {
    PKB_COMPARE_OPTIONS,
    PKB_CLI_RUN_OPTIONS,
    {"max-time", required_argument, NULL, OPT_MAX_TIME},
    {"bisect-step", no_argument, NULL, OPT_BISECT_STEP},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"controls", no_argument, NULL, OPT_CONTROLS},
    {NULL, 0, NULL, 0},
};

static const pkb_cli_cmd cmd = {"ab", ab_usage, ab_options};

/* One option of ab's own, or of a run's. 0, or 1 after a usage error. */
static int ab_option(int opt, const char *v, pkb_ab_args *a, char **args)
{
    switch (opt) {
    case OPT_MAX_TIME:
        if (!pkb_parse_duration(v, &a->max_time_s) || a->max_time_s < 1 ||
            a->max_time_s > 7 * 86400)
            return pkb_cli_usage_error(ab_usage,
                                       "ab: --max-time needs a duration from 1s to 7d (300, 90s, "
                                       "5m, 2h), got '%s'",
                                       v);
        return 0;
    case PKB_OPT_SUITE:
        if (strcmp(v, "scenarios") != 0 && strcmp(v, "compare") != 0)
            return pkb_cli_usage_error(ab_usage,
                                       "ab: --suite %s: ab measures the scenarios suite, whose "
                                       "contenders run in each build's worker",
                                       v);
        break;
    case PKB_OPT_SEQUENTIAL:
        return pkb_cli_usage_error(ab_usage, "ab: --sequential: ab measures both builds in the "
                                             "same interleaved rounds, never one after another");
    case PKB_OPT_REPETITIONS:
        return pkb_cli_usage_error(ab_usage, "ab: --repetitions: ab adds rounds until every "
                                             "series is decided (--max-time bounds it)");
    }
    const pkb_cli_value flags[] = {
        {"bisect-step", PKB_CLI_SET, .flag = &a->bisect_step},
        {"quiet", PKB_CLI_SET, .flag = &a->quiet},
        {"controls", PKB_CLI_SET, .flag = &a->controls},
        {0},
    };
    int known = pkb_cli_take(flags, opt, v, &cmd);
    if (known == 0)
        known = pkb_cli_run_option(opt, v, &a->run, "ab", ab_usage);
    return known > 0 ? 0 : known < 0 ? 1 : pkb_cli_getopt_failed(ab_usage, "ab", opt, args);
}

int pkb_ab_parse(int argc, char **argv, pkb_ab_args *a)
{
    *a = (pkb_ab_args){.run = PKB_CLI_RUN_DEFAULTS, .max_time_s = PKB_AB_MAX_TIME_S};
    pkb_compare_options o = {0};
    const char *out = NULL;
    int opt;
    while ((opt = pkb_cli_next_option(argc - 1, argv + 1, ab_options)) != -1) {
        if (opt == OPT_HELP) {
            fputs(ab_usage, stdout);
            return -1;
        }
        int r = pkb__compare_option(opt, optarg, &o, &a->format, &out, ab_usage);
        if (r < 0)
            return 1;
        if (r == 0 && ab_option(opt, optarg, a, argv + 1) != 0)
            return 1;
    }
    if (o.env_keys != NULL || o.strict_env || o.no_drift_correction || o.drift_limit != 0)
        return pkb_cli_usage_error(ab_usage,
                                   "ab: --env-keys, --strict-env and the drift options compare two "
                                   "runs; ab's builds share one run, one machine and one drift");
    int nargs = pkb_cli_operands(argc - 1, argv + 1, a->spec, 2, &cmd);
    if (nargs < 0)
        return 1;
    if (nargs < 2)
        return pkb_cli_usage_error(ab_usage, "ab: needs BASE and HEAD (two revisions or trees)");
    a->filter = o.filter;
    a->out = out;
    a->rule = (pkb_ab_rule){.alpha = o.alpha, .threshold = o.threshold, .cv_limit = o.cv_limit};
    return 0;
}

/* --out with "{commit}" in it (pkbench bisect's steps): the head side's commit there. */
static int out_path(pkb_ab_args *a, const pkb_ab_side *head)
{
    const char *at = a->out != NULL ? strstr(a->out, "{commit}") : NULL;
    int n = at == NULL ? snprintf(a->path, sizeof a->path, "%s", a->out)
                       : snprintf(a->path, sizeof a->path, "%.*s%s%s", (int)(at - a->out), a->out,
                                  head->commit[0] ? head->commit : "tree", at + 8);
    if (n < 0 || (size_t)n >= sizeof a->path)
        return pkb_cli_usage_error(ab_usage, "ab: --out: the path is too long");
    return pkb_cli_check_writable(a->path);
}

int pkb_ab_prepare(pkb_ab_args *a, pkb_ab_side sides[2])
{
    bool later = a->out != NULL && strstr(a->out, "{commit}") != NULL;
    if (a->out == NULL && pkb_cli_results_path("ab", a->path, sizeof a->path) != 0)
        return 1;
    /* Before anything is built or measured: a run whose results cannot be written is lost. */
    if (!later && (a->out != NULL ? out_path(a, NULL) : pkb_cli_check_writable(a->path)) != 0)
        return 1;
    static const char *const labels[2] = {"base", "head"};
    for (int i = 0; i < 2; i++) {
        char err[1024] = "";
        sides[i].label = labels[i];
        int rc = pkb_ab_side_prepare(&sides[i], a->spec[i],
                                     &(pkb_ab_build_options){.quiet = a->quiet}, err, sizeof err);
        if (rc != 0)
            return pkb_cli_failed(rc, err);
        if (!a->quiet)
            fprintf(stderr, "pkbench: %s: %s%s, ready in %.1f s: %s\n", labels[i],
                    sides[i].describe, sides[i].dirty ? " (uncommitted changes)" : "",
                    sides[i].build_s, sides[i].worker);
    }
    return later ? out_path(a, &sides[1]) : 0;
}

/* git bisect run's reading of ab's status: 0 good, 1 bad, 125 skip, 128 stop. */
static int bisect_status(int status)
{
    return status == 0 ? 0 : status == 2 ? 1 : status == 3 ? 125 : 128;
}

int pkb_ab_conclude(const pkb_ab_args *a, int run_rc)
{
    pkb_compare c;
    char err[1024] = "";
    int rc =
        pkb_ab_compare(a->path, &(pkb_compare_options){.filter = a->filter}, &c, err, sizeof err);
    if (rc != 0) {
        int status = pkb_cli_failed(rc, err);
        return a->bisect_step ? bisect_status(status) : status;
    }
    char *text = NULL;
    rc = pkb_compare_render(&c, a->format, &text);
    if (rc == 0 && (fputs(text, stdout) == EOF || fflush(stdout) != 0))
        rc = -EIO;
    free(text);
    int status = rc != 0 ? pkb_cli_failed(rc, "cannot write the comparison to stdout") : c.status;
    if (rc == 0)
        pkb__compare_say_status(&c);
    if (run_rc == 130) {
        fprintf(stderr, "pkbench: ab interrupted; its rounds so far are in %s\n", a->path);
        status = 130;
    } else {
        fprintf(stderr, "pkbench: results %s\n", a->path);
    }
    pkb_compare_free(&c);
    return a->bisect_step ? bisect_status(status) : status;
}

int pkb_ab_series_line(const char *path, const char *name, pkb_buf *out)
{
    char err[256];
    pkb_results r;
    int rc = pkb_results_load(path, &r, err, sizeof err);
    if (rc != 0)
        return rc;
    const pkb_results_series *s = pkb_results_find(&r, name);
    if (s == NULL || !s->measured) {
        pkb_results_free(&r);
        return -ENOENT;
    }
    double scale;
    const char *unit = pkb_time_unit(s->sum.median, &scale);
    pkb_buf_printf(out, "median %.2f %s over %zu rounds", s->sum.median / scale, unit, s->n);
    pkb_results_free(&r);
    return 0;
}

/* ==== a child: pkbench ab for check --against and bisect, git bisect run ===================== */

static pk_cancel *stop;

static void on_stop(int sig)
{
    (void)sig;
    /* SIGTERM to the child: a terminal's Ctrl-C reached it already, and its SIGINT handler is
     * one-shot; its SIGTERM handler stops it the same graceful way. */
    if (stop != NULL)
        pk_cancel_trigger(stop);
}

int pkb_ab_run(const char *const *argv,
               const char *cwd,
               int (*on_line)(void *user, const pk_line *line),
               void *user)
{
    char self[PATH_MAX];
    const char *args[64];
    size_t n = 0;
    if (argv[0] == NULL) {
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        if (len <= 0) {
            fprintf(stderr, "pkbench: cannot find this executable: %s\n", strerror(errno));
            return 1;
        }
        self[len] = '\0';
        args[n++] = self;
        argv++;
    }
    for (; *argv != NULL && n + 1 < sizeof args / sizeof args[0]; argv++)
        args[n++] = *argv;
    args[n] = NULL;
    if (stop == NULL && pk_cancel_new(&stop) != 0) {
        fprintf(stderr, "pkbench: out of memory\n");
        return 1;
    }
    pkb_cli_on_stop(on_stop, 0);
    pk_result r;
    int rc = pk_run(
        &(pk_command){
            .argv = args,
            .cwd = cwd,
            .out = on_line != NULL
                       ? (pk_stdio){.kind = PK_STDIO_CAPTURE, .capture = {.keep = PK_KEEP_NONE}}
                       : (pk_stdio){.kind = PK_STDIO_INHERIT},
            .err = {.kind = PK_STDIO_INHERIT},
            .containment = PK_CONTAIN_NONE, /* measured exactly as a direct run */
            .grace_ms = 30000,
            .cancel = stop,
            .on_line = on_line,
            .line_user = user,
        },
        &r);
    int status = 1;
    if (rc == PK_ECANCELLED)
        status = 130;
    else if (rc != 0)
        fprintf(stderr, "pkbench: cannot start %s: %s\n", args[0], pk_strerror(rc));
    else if (r.outcome.kind == PK_OUTCOME_EXITED)
        status = r.outcome.code;
    else if (r.outcome.kind == PK_OUTCOME_CANCELLED)
        status = 130;
    else
        fprintf(stderr, "pkbench: %s ended by signal %d\n", args[0], r.outcome.signo);
    pk_result_release(&r);
    return status;
}
