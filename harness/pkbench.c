/*
 * pkbench — the benchmark harness's command line: parses options (getopt_long, so `--opt value`
 * and `--opt=value` both work and an unknown option is named), then hands over to a room:
 *
 *   pkbench run [--suite NAME] [--profile full|quick] [--filter REGEX] [--out FILE] [--no-prime]
 *               [--sequential] [--aa [--alpha A]] [--iterations N]     -> suites/ (registry)
 *   pkbench report FILE [--out DIR] [--no-plots] [--print]               -> suites/ -> report/
 *   pkbench report FILE... | DIR [--rows KEYS] [--cols KEYS] [...]      -> report/cli.c (a table)
 *   pkbench history DIR|FILE... [options]                                -> report/cli.c
 *   pkbench list                                                         -> suites/, contenders/
 *   pkbench compare BASE.json NEW.json [options]                         -> regress/cli.c
 *   pkbench check --baseline FILE [options]                              -> regress/cli.c
 *   pkbench publish DIR --out SITE [--no-plots] [--title T] [--repo DIR] [--ratio] -> publish/
 *   pkbench check --against REV [options]                 -> regress/check.c, then pkbench ab
 *   pkbench ab BASE HEAD [options]        -> regress/ab_cli.c (builds), suites/ (the rounds),
 *                                            regress/ab.c (the looks, the verdict)
 *   pkbench bisect GOOD BAD --series REGEX [options]     -> regress/bisect.c (git bisect run ab)
 *   pkbench worker  (internal: the C measuring worker, started by pkbench) -> contenders/host.c
 *
 * Exit status: 0 success; 1 bad arguments, an unreadable or invalid results file, a suite that
 * could not start, or stdout that cannot be written (one line on stderr says which); 4 when a run
 * went through but a series failed or was refused by its check (PKB_EXIT_UNMEASURED: the last
 * line names them); 130 when a run was interrupted (its results file still holds every finished
 * series). compare and check add 2 (a regression) and 3 (undecidable).
 */
#define _GNU_SOURCE
#include "common/cli.h"
#include "common/files.h"
#include "common/parse.h"
#include "common/term.h"
#include "processkit.h"
#include "publish/cli.h"
#include "regress/ab_cli.h"
#include "regress/bisect.h"
#include "regress/compare.h"
#include "contenders/host.h"
#include "report/cli.h"
#include "contenders/registry.h"
#include "contenders/remote.h"
#include "suites/suite.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PKB_TINY_PATH
#define PKB_TINY_PATH ""
#endif

static const char usage_text[] =
    "usage: pkbench run [--suite NAME] [--profile full|quick] [--filter REGEX] [--out FILE]\n"
    "                   [--no-prime] [--sequential] [--settle S] [--repetitions N]\n"
    "                   [--aa [--alpha A]] [--iterations N] [--fan-out N[,N...]]\n"
    "                   [--worker NAME=COMMAND]... [--build REV|TREE]\n"
    "       pkbench report FILE [--out DIR] [--no-plots] [--print]\n"
    "       pkbench report FILE... | DIR [--rows KEYS] [--cols KEYS] [--absolute]\n"
    "                      [--baseline-contender NAME] [--name NAME] [--out DIR] [--print]\n"
    "       pkbench history DIR|FILE... [--host NAME] [--repo DIR] [--ratio] [--filter REGEX]\n"
    "                       [--alpha A] [--min-size N] [--min-change PCT] [--name NAME]\n"
    "                       [--out DIR] [--no-plots] [--print]\n"
    "       pkbench list\n"
    "       pkbench compare BASE.json NEW.json [--format text|md|json] [--out FILE] [--alpha A]\n"
    "                       [--threshold PCT] [--cv-limit PCT] [--filter REGEX]\n"
    "                       [--env-keys LIST] [--strict-env]\n"
    "                       [--no-drift-correction] [--drift-limit PCT]\n"
    "       pkbench compare FILE.json --baseline-contender NAME [options as above]\n"
    "       pkbench check --baseline FILE [--suite NAME] [--profile quick|full] [--filter REGEX]\n"
    "                     [--no-prime] [--sequential] [--settle S] [--repetitions N]\n"
    "                     [--out FILE]\n"
    "                     [compare's options]\n"
    "       pkbench publish DIR --out SITE [--no-plots] [--title TEXT] [--repo DIR] [--ratio]\n"
    "       pkbench check --against REV [ab's options]\n"
    "       pkbench ab BASE HEAD [--filter REGEX] [--max-time DURATION] [--profile quick|full]\n"
    "                  [--no-prime] [--settle S] [--out FILE] [--format text|md|json]\n"
    "                  [--alpha A] [--threshold PCT] [--cv-limit PCT] [--controls] [--quiet]\n"
    "       pkbench bisect GOOD BAD --series REGEX [ab's options]\n"
    "       pkbench --help\n";

/* --help's paragraph on `run`, with the suites it runs. */
static void help_run(void)
{
    fputs("\n"
          "run      times every series of a suite through Google Benchmark and writes\n"
          "         results/<suite>-<UTC time>.json (or --out FILE), atomically, after every\n"
          "         finished series; Ctrl-C stops at the next iteration and keeps what finished.\n"
          "         On stderr, a line per round with the time left, then one line per series\n"
          "         once it is final (median, mean ± sd, throughput, delta and verdict against\n"
          "         the scenario's baseline once it has run); on a terminal a live progress\n"
          "         line instead of the round lines. At the end, on stdout, the report's key\n"
          "         tables as aligned text, then the results file's path.\n"
          "         --suite (default scenarios) is one of:\n",
          stdout);
    for (size_t i = 0; i < pkb_suite_count; i++)
        printf("           %-10s %s\n", pkb_suites[i]->name, pkb_suites[i]->description);
    fputs("         --profile full: 20 samples, 10 s warm-up, 5 s of measurement per series (the\n"
          "         seed's configuration); quick (default): 20 samples of 30 ms, short warm-up,\n"
          "         the whole scenarios suite in about three and a half minutes. --filter\n"
          "         selects series by an extended regular expression over their names\n"
          "         (scenario/contender).\n"
          "         --no-prime skips the priming batches. PKBENCH_TINY overrides the tiny\n"
          "         helper's path.\n"
          "         Series are sampled in interleaved rounds (one repetition of every series\n"
          "         per round, the order rotated); --sequential runs them one after another\n"
          "         instead (--interleave, the default, is accepted). Before each sample of a\n"
          "         round the series runs untimed for --settle S seconds (default 0.15; 0:\n"
          "         off), so it does not start in what the series before it left.\n"
          "         --repetitions N (6 to 1000) takes N rounds instead of the profile's 20:\n"
          "         more rounds narrow the paired CIs of a close call.\n"
          "         Every repetition records what else used the CPUs; a series more than 25%\n"
          "         of whose repetitions were disturbed is measured once more, both attempts\n"
          "         kept in the file.\n"
          "         --aa also runs a copy of every series next to it in every round and stores\n"
          "         each series' noise floor (minimum detectable effect at --alpha, 0.05).\n"
          "         --iterations N (forkathon only) sets Wemm's loop count (full 100000, quick\n"
          "         10000).\n"
          "         --worker NAME=COMMAND (scenarios only; up to 8) adds a contender for this\n"
          "         run: a program speaking the worker protocol (contenders/README.md),\n"
          "         COMMAND split at spaces. PKBENCH_WORKER_DEADLINE_MS (default 30000) is the\n"
          "         base deadline of every request to a worker (a run of K iterations adds K\n"
          "         times the larger of 1 s and ten times its slowest iteration so far).\n",
          stdout);
    fputs("         --build REV|TREE (scenarios only) runs every C contender in the worker of\n"
          "         that build of the library instead (a revision or tree, built once as ab\n"
          "         builds it, under build/ab/); series keep their names, so two such runs\n"
          "         compare.\n"
          "         --fan-out N,N,... (scenarios only) sets the sizes of the fan-out at scale,\n"
          "         fan_out_<N>: up to 8 increasing counts from 1 to 65536 (full 16,64,256,1024,\n"
          "         4096; quick 16,64,256). Each of its series runs in a measuring process of\n"
          "         its own (`pkbench worker`), with RLIMIT_NOFILE raised to the hard limit.\n"
          "         observe measures its own cells: full is 0/50/200/500 connections/s x hold\n"
          "         0/250 ms, 20 s cells, 5 interleaved repetitions (about 85 min); quick is\n"
          "         0/200 x 0/250 ms, 1.5 s cells, 2 repetitions. PKBENCH_OBSERVE_CELL_MS sets\n"
          "         the cell length; PKBENCH_OBSERVE_BTF the kernel BTF (missing: eBPF SKIPs).\n",
          stdout);
}

/* --help's paragraphs on the commands that read results files: report, history, list, compare,
 * check. */
static void help_read(void)
{
    fputs("report   renders a results file as reports/<name>.md plus gnuplot (PNG, SVG) and\n"
          "         matplotlib (PNG) figures, then prints their paths; --out DIR changes the\n"
          "         directory; --no-plots writes the Markdown only; --print first prints the\n"
          "         report's key tables, as `run` does at its end.\n"
          "         Several files, or a directory (its results files at any depth), make one\n"
          "         table per suite (reports/<dir name or --name>.md and .json): a row per\n"
          "         --rows key values (series), a column per --cols key values (host,os); each\n"
          "         cell the series' same-host ratio to its file's baseline contender (or\n"
          "         --baseline-contender's) with its 95% CI and verdict, never a time compared\n"
          "         across hosts unless --absolute; a noise floor column where a file has one;\n"
          "         a warning naming every key that differs inside a row. Keys: host,\n"
          "         host_id, os, kernel, cpu, cpus, machine, distribution, libc, compiler,\n"
          "         build_type, spawn, containment, revision, profile, suite, scenario,\n"
          "         contender, series, file, or any environment or settings field.\n"
          "history  puts the files of a host at many revisions in history order (git\n"
          "         ancestry) and finds each series' change points (E-divisive means, Student's\n"
          "         t-test): `pkbench history --help`.\n"
          "list     prints the suites, the contenders and the scenarios each one runs.\n"
          "compare  medians, bootstrap CI of their ratio, Mann-Whitney p with Holm's correction\n"
          "         and a verdict per series (regressed / improved / ~ / undecidable), then a\n"
          "         geomean; --threshold (5%) and the base file's noise floor set the bar.\n"
          "         Between two files the control series (list marks them) measure the\n"
          "         machine's drift and the other series are judged drift-corrected, the raw\n"
          "         verdicts beside them; --no-drift-correction gates on the raw ones; a drift\n"
          "         above --drift-limit (25%), controls that disagree, or a scenario 15% off\n"
          "         the whole machine's drift: machine changed (3). Within one file\n"
          "         (--baseline-contender) series taken in the same rounds are paired by\n"
          "         round: median per-round ratio, its CI, Wilcoxon's signed-rank p.\n"
          "check    runs a suite (quick by default), compares it with --baseline, re-runs the\n"
          "         series that regressed once and reports only regressions that repeat.\n"
          "         --against REV checks the working tree against a revision through ab.\n",
          stdout);
}

/* The rest of --help: the commands after check, what every command shares, files, the exit
 * statuses. */
static void help_more(void)
{
    fputs("publish  every results file under DIR (searched recursively) as a static site in\n"
          "         SITE: an index of the studies, and per file a page with its report's\n"
          "         tables and figures (SVG) and the file itself. Plain HTML, no script,\n"
          "         nothing loaded from elsewhere: open SITE/index.html from disk or put SITE on\n"
          "         any static host. The site is built beside SITE and swapped in whole; SITE\n"
          "         must be new, empty, or a site publish wrote. A results file that cannot\n"
          "         be read is named on the index and on stderr, the rest is published.\n"
          "         Files from two hosts or more also get the table across hosts (as report\n"
          "         FILE... makes it); a host that measured a suite three times or more, its\n"
          "         history (as history makes it: --repo orders the revisions, --ratio shows\n"
          "         same-host ratios instead of medians). --no-plots leaves the figures out;\n"
          "         --title names the index.\n"
          "ab       measures two builds of the library (git revisions, source trees, or trees\n"
          "         ab built) in one interleaved run: each build's lib/ is built once under\n"
          "         build/ab/ and runs the contenders in a worker; every round takes each\n"
          "         series from both sides; rounds are added until every series is decided\n"
          "         (regressed, improved, or unchanged within --threshold, 2%) or --max-time\n"
          "         (5m) is spent, a sequential rule keeping false alarms at --alpha.\n"
          "bisect   runs git bisect between GOOD and BAD with ab at every step (in a scratch\n"
          "         worktree), skipping undecidable steps, and names the first bad commit, the\n"
          "         series and the effect with its CI.\n"
          "worker   (internal) the C measuring worker: serves the C contenders over the worker\n"
          "         protocol on stdin and stdout (contenders/README.md); pkbench starts it.\n"
          "\n"
          "Every option that takes a value accepts --opt VALUE and --opt=VALUE. Each command\n"
          "also takes --help. Tables are coloured only on a terminal, and never when NO_COLOR\n"
          "is set or TERM is dumb.\n",
          stdout);
    fputs("\n"
          "Files. An output is replaced atomically (a temporary file renamed over it) when it\n"
          "is a regular file or a new path; through a symlink, its target (created when the\n"
          "link dangles), and the link stays a link. compare --out writes anything else (a\n"
          "FIFO, /dev/stdout) in place; run --out and check --out must be a regular file or a\n"
          "new path (the results are rewritten after every series and read back). A FIFO, a\n"
          "pipe or a terminal as input or output is waited on for at most PKBENCH_FIFO_WAIT\n"
          "seconds (10): no writer, no reader or no byte for that long is an error.\n"
          "\n"
          "Exit status: 0 ok; 1 bad arguments or input; 4 (run) the run went through but a\n"
          "series failed or its check refused it (the last line names them; the file keeps\n"
          "what was measured); 130 interrupted (finished series kept, a series cut short\n"
          "marked partial); compare, check and ab: 2 a regression, 3 none but a series too\n"
          "noisy, with too few samples to decide, still open when ab stopped, or whose\n"
          "controls cannot correct the drift (named); bisect: 0 found the first bad commit,\n"
          "3 cannot tell (skipped commits hide it), 1 an error or BAD not slower than GOOD.\n",
          stdout);
}

static void help(void)
{
    fputs(usage_text, stdout);
    help_run();
    help_read();
    help_more();
}

/* One line naming what was wrong, then the usage; pkbench's usage status. */
#define bad_usage(...) pkb_cli_usage_error(usage_text, __VA_ARGS__)

static void on_signal(int sig)
{
    (void)sig;
    pkb_interrupted = 1;
}

static int cmd_list(int argc, char **argv)
{
    (void)argv;
    if (argc > 1)
        return bad_usage("list: takes no arguments");
    pkb_buf b = {0};
    pkb_suites_list(&b);
    int rc = pkb_cli_put_stdout(&b);
    pkb_buf_free(&b);
    return rc;
}

/* ---- run ------------------------------------------------------------------------------------ */

struct run_args {
    pkb_cli_run run; /* --suite, --profile, --no-prime, --sequential, --settle, --repetitions */
    const pkb_suite *suite;
    const pkb_profile *profile;
    const char *out;
    bool interleave, aa;
    double alpha;
    const char *workers[PKB_REMOTE_EXTRA_MAX + 1]; /* --worker NAME=COMMAND, in order */
    size_t nworkers;
    const char *build; /* --build: the scenarios suite's contenders in that build's worker */
    pkb_cli cli;
};

enum {
    OPT_HELP = 'h',
    OPT_FILTER = 1000,
    OPT_OUT,
    OPT_INTERLEAVE,
    OPT_AA,
    OPT_ALPHA,
    OPT_ITERATIONS,
    OPT_BUILD,
    OPT_WORKER,
    OPT_FAN_OUT,
};

static const struct option run_options[] = {
    PKB_CLI_RUN_OPTIONS,
    {"filter", required_argument, NULL, OPT_FILTER},
    {"out", required_argument, NULL, OPT_OUT},
    {"interleave", no_argument, NULL, OPT_INTERLEAVE},
    {"aa", no_argument, NULL, OPT_AA},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"iterations", required_argument, NULL, OPT_ITERATIONS},
    {"build", required_argument, NULL, OPT_BUILD},
    {"worker", required_argument, NULL, OPT_WORKER},
    {"fan-out", required_argument, NULL, OPT_FAN_OUT},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* --fan-out's value: up to PKB_FAN_OUT_SIZES counts from 1 to PKB_FAN_OUT_MAX, comma-separated,
 * increasing. */
static bool parse_fan_out(const char *v, pkb_cli *cli)
{
    char buf[256];
    if (snprintf(buf, sizeof buf, "%s", v) >= (int)sizeof buf || buf[0] == '\0')
        return false;
    cli->nfan_out = 0;
    for (char *tok = buf, *next; tok != NULL; tok = next) {
        next = strchr(tok, ',');
        if (next != NULL)
            *next++ = '\0';
        long n;
        if (cli->nfan_out == PKB_FAN_OUT_SIZES || !pkb_parse_count(tok, 1, PKB_FAN_OUT_MAX, &n) ||
            (cli->nfan_out > 0 && n <= cli->fan_out[cli->nfan_out - 1]))
            return false;
        cli->fan_out[cli->nfan_out++] = (int)n;
    }
    return true;
}

/* One option of `run`: 0, or pkbench's usage status after saying what was wrong. */
static int run_option(int opt, const char *v, struct run_args *a, char **args)
{
    switch (opt) {
    case OPT_WORKER:
        if (a->nworkers == PKB_REMOTE_EXTRA_MAX)
            return bad_usage("run: --worker: at most %d workers can be added",
                             PKB_REMOTE_EXTRA_MAX);
        a->workers[a->nworkers++] = v;
        return 0;
    case OPT_FAN_OUT:
        if (!parse_fan_out(v, &a->cli))
            return bad_usage("run: --fan-out needs up to %d increasing child counts from 1 to %d, "
                             "comma-separated (e.g. 16,256,4096), got '%s'",
                             PKB_FAN_OUT_SIZES, PKB_FAN_OUT_MAX, v);
        return 0;
    }
    const pkb_cli_value plain[] = {
        {"filter", PKB_CLI_TEXT, .text = &a->cli.filter},
        {"out", PKB_CLI_NAME, .text = &a->out, .needs = "a file name"},
        {"interleave", PKB_CLI_SET, .flag = &a->interleave},
        {"aa", PKB_CLI_SET, .flag = &a->aa},
        {"alpha", PKB_CLI_FRACTION, .number = &a->alpha},
        {"build", PKB_CLI_NAME, .text = &a->build,
         .needs = "a revision or a tree (as pkbench ab's BASE)"},
        {"iterations", PKB_CLI_COUNT, .count = &a->cli.iterations, .lo = 1, .hi = 100000000},
        {0},
    };
    int known = pkb_cli_take(plain, opt, v, &(pkb_cli_cmd){"run", usage_text, run_options});
    if (known == 0)
        known = pkb_cli_run_option(opt, v, &a->run, "run", usage_text);
    return known > 0 ? 0 : known < 0 ? 1 : pkb_cli_getopt_failed(usage_text, "run", opt, args);
}

/* The suite and the profile the run options name. */
static int find_suite(struct run_args *a)
{
    a->suite = pkb_suite_find(a->run.suite);
    if (a->suite == NULL)
        return bad_usage("run: --suite: unknown suite '%s' (pkbench list names them)",
                         a->run.suite);
    if (strcmp(a->run.suite, a->suite->name) != 0)
        fprintf(stderr, "pkbench: --suite %s is now called %s\n", a->run.suite, a->suite->name);
    a->profile = strcmp(a->run.profile, "full") == 0 ? &pkb_profile_full : &pkb_profile_quick;
    return 0;
}

/* What no single option can check: combinations, and the suite's needs. */
static int check_run_args(struct run_args *a)
{
    if (find_suite(a) != 0)
        return 1;
    if (a->alpha != 0 && !a->aa)
        return bad_usage("run: --alpha is the noise floor's significance level: it needs --aa");
    if (a->build != NULL && strcmp(a->suite->name, "scenarios") != 0)
        return bad_usage("run: --build runs the scenarios suite's contenders in that build's "
                         "worker: it does not apply to the %s suite",
                         a->suite->name);
    if (a->cli.iterations > 0 && !a->suite->takes_iterations)
        return bad_usage("run: --iterations does not apply to the %s suite", a->suite->name);
    if (a->cli.nfan_out > 0 && strcmp(a->suite->name, "scenarios") != 0)
        return bad_usage("run: --fan-out sets the scenarios suite's fan-out at scale; it does not "
                         "apply to the %s suite",
                         a->suite->name);
    if ((a->interleave || a->run.sequential || a->aa) && !a->suite->rounds)
        return bad_usage("run: --interleave, --sequential and --aa apply to suites timed through "
                         "Google Benchmark; the %s suite interleaves its own rounds",
                         a->suite->name);
    if (a->run.settle != NULL && !a->suite->rounds)
        return bad_usage("run: --settle applies to suites timed through Google Benchmark; the %s "
                         "suite interleaves its own rounds",
                         a->suite->name);
    if (a->run.repetitions != NULL && !a->suite->rounds)
        return bad_usage("run: --repetitions applies to suites timed through Google Benchmark; "
                         "the %s suite sets its own",
                         a->suite->name);
    if (a->run.settle != NULL && a->run.sequential)
        return bad_usage("run: --settle runs before each sample of a round: it cannot be "
                         "combined with --sequential");
    if (a->run.sequential && (a->interleave || a->aa))
        return bad_usage("run: --sequential runs the series one after another: it cannot be "
                         "combined with %s",
                         a->aa ? "--aa" : "--interleave");
    if (a->nworkers > 0 && !a->suite->takes_workers)
        return bad_usage("run: --worker adds a contender: it applies to the scenarios suite, not "
                         "the %s suite",
                         a->suite->name);
    for (size_t i = 0; i < a->nworkers; i++) {
        char why[256];
        size_t len = strcspn(a->workers[i], "=");
        for (size_t k = 0; k < pkb_contender_count; k++)
            if (strlen(pkb_contenders[k]->name) == len &&
                strncmp(pkb_contenders[k]->name, a->workers[i], len) == 0)
                return bad_usage("run: --worker '%s': %s is a contender already (pkbench list)",
                                 a->workers[i], pkb_contenders[k]->name);
        if (pkb_remote_add(a->workers[i], why, sizeof why) == NULL)
            return bad_usage("run: %s", why);
    }
    a->interleave = a->suite->rounds && !a->run.sequential; /* rounds are the default */
    if (a->cli.tiny_path == NULL || a->cli.tiny_path[0] == '\0')
        a->cli.tiny_path = PKB_TINY_PATH;
    if (access(a->cli.tiny_path, X_OK) != 0) {
        fprintf(stderr,
                "pkbench: the tiny helper '%s' is missing (build the phases target, or "
                "set PKBENCH_TINY)\n",
                a->cli.tiny_path);
        return 1;
    }
    return 0;
}

/* Appends the terminal view of results file `path` to b (coloured when stdout wants it). */
static int print_tables(const char *path, pkb_buf *b)
{
    char err[512] = "";
    int rc = pkb_report_print(path, pkb_term_wants_color(STDOUT_FILENO), b, err, sizeof err);
    return rc != 0 ? pkb_cli_failed(rc, err) : 0;
}

/* The run's last line when a series it was to measure was not (failed, or refused for a reason
 * of the code): "pkbench: 2 series not measured: a/b (failed: why), ...". Returns
 * PKB_EXIT_UNMEASURED then, else 0 (and 0 when the file cannot be read: the tables said why). */
static int say_unmeasured(const char *path)
{
    pkb_results r;
    if (pkb_results_load(path, &r, NULL, 0) != 0)
        return 0;
    pkb_buf names = {0};
    size_t count = 0;
    for (size_t i = 0; i < r.nseries; i++) {
        const pkb_results_series *s = &r.series[i];
        bool failed = strcmp(s->status, "failed") == 0;
        if (!failed && (strcmp(s->status, "refused") != 0 || s->environmental))
            continue;
        pkb_buf_printf(&names, "%s%s (%s%s%.160s)", count++ > 0 ? ", " : "", s->name, s->status,
                       s->reason != NULL ? ": " : "", s->reason != NULL ? s->reason : "");
    }
    if (count > 0)
        fprintf(stderr, "pkbench: %zu series not measured: %s\n", count,
                names.failed ? "(out of memory)" : names.data);
    pkb_buf_free(&names);
    pkb_results_free(&r);
    return count > 0 ? PKB_EXIT_UNMEASURED : 0;
}

/* --build: the library of that revision or tree, built once (regress/build.h), runs the suite's
 * contenders in its worker; the file's "build" says which. Returns 0, or 1 after a message. */
static int
prepare_build(struct run_args *a, pkb_ab_side *side, const pkb_cli_side *cli_side, json_t **build)
{
    char err[1024] = "";
    int rc = pkb_ab_side_prepare(side, a->build, NULL, err, sizeof err);
    if (rc != 0)
        return pkb_cli_failed(rc, err);
    a->cli.sides = cli_side;
    a->cli.nsides = 1;
    *build = pkb_ab_side_json(side);
    return 0;
}

/* argv: the whole command line ("pkbench run ..."), recorded in the results file. */
static int cmd_run(int argc, char **argv)
{
    int nargs = argc - 1;
    char **args = argv + 1;
    struct run_args a = {
        .run = PKB_CLI_RUN_DEFAULTS,
        .cli = {.tiny_path = getenv("PKBENCH_TINY")},
    };
    int opt;
    while ((opt = pkb_cli_next_option(nargs, args, run_options)) != -1) {
        if (opt == OPT_HELP) {
            help();
            exit(0);
        }
        int rc = run_option(opt, optarg, &a, args);
        if (rc != 0)
            return rc;
    }
    if (optind < nargs)
        return bad_usage("run: unexpected argument '%s'", args[optind]);
    int rc = check_run_args(&a);
    if (rc != 0)
        return rc;
    char defpath[256];
    if (a.out == NULL) {
        if (pkb_cli_results_path(a.suite->name, defpath, sizeof defpath) != 0)
            return 1;
        a.out = defpath;
    }
    /* Before anything is measured: a run whose results cannot be written is time lost. */
    if (pkb_cli_check_results_file("run", "--out", a.out) != 0)
        return 1;
    pkb_ab_side side = {.label = "build"};
    const pkb_cli_side cli_side = {"build", side.worker};
    json_t *build = NULL;
    if (a.build != NULL && (rc = prepare_build(&a, &side, &cli_side, &build)) != 0)
        return rc;
    /* Ctrl-C: stop at the next iteration and keep every finished series; a second one kills. */
    pkb_cli_on_stop(on_signal, SA_RESETHAND);

    /* The profile, with --repetitions in place of its count. */
    pkb_profile profile = *a.profile;
    if (a.run.repetitions != NULL)
        profile.repetitions = (int)a.run.nrepetitions;
    pkb_suite_options opts = {
        .suite = a.suite->name,
        .profile = &profile,
        .out_path = a.out,
        .filter = a.cli.filter,
        .prime = a.run.prime,
        .argc = argc,
        .argv = argv,
        .interleave = a.interleave,
        .aa = a.aa,
        .aa_alpha = a.alpha,
        .settle_s = !a.interleave          ? 0
                    : a.run.settle != NULL ? a.run.settle_s
                                           : a.profile->settle_s,
        .series_line = pkb_report_series_line,
        .build = build,
    };
    rc = a.suite->run(&a.cli, &opts);
    json_decref(build);
    pk_cleanup();
    if (rc != 0 && rc != 130)
        return rc;
    if (rc == 130)
        fprintf(stderr, "pkbench: interrupted: the finished series are kept in %s\n", a.out);
    /* The results, as the report reads them back from the file just written. */
    pkb_buf b = {0};
    int prc = print_tables(a.out, &b);
    pkb_buf_printf(&b, "results  %s\n", a.out);
    prc = prc != 0 ? prc : pkb_cli_put_stdout(&b);
    pkb_buf_free(&b);
    /* Last, so a log's tail says it: the series that should have been measured and were not. */
    int unmeasured = rc == 0 && prc == 0 ? say_unmeasured(a.out) : 0;
    return rc != 0 ? rc : prc != 0 ? prc : unmeasured;
}

/* ---- ab ------------------------------------------------------------------------------------- */

/* The runner's question after every block of rounds, answered by ab's sequential rule. */
static int ab_more_rounds(void *user, const pkb_rounds_look *look, bool *retire, int *more)
{
    return pkb_ab_after_block(user, look->path, look->rounds, look->round_s, look->n, retire, more);
}

/* `pkbench ab BASE HEAD`: both builds (regress/ab_cli.c), then the scenarios suite with both
 * sides' workers in one interleaved run, rounds added until decided (regress/ab.c), then the
 * verdict read back from the file. */
static int cmd_ab(int argc, char **argv)
{
    pkb_ab_args a;
    int rc = pkb_ab_parse(argc, argv, &a);
    bool step = false; /* git bisect run reads 1 as "bad": a usage error must stop it (128) */
    for (int i = 2; i < argc; i++)
        step |= strcmp(argv[i], "--bisect-step") == 0;
    if (rc != 0)
        return rc < 0 ? 0 : step ? 128 : rc;
    pkb_ab_side sides[2];
    const char *tiny = getenv("PKBENCH_TINY");
    tiny = tiny != NULL && tiny[0] != '\0' ? tiny : PKB_TINY_PATH;
    if (access(tiny, X_OK) != 0) {
        fprintf(stderr, "pkbench: the tiny helper '%s' is missing (set PKBENCH_TINY)\n", tiny);
        return a.bisect_step ? 128 : 1;
    }
    rc = pkb_ab_prepare(&a, sides);
    if (rc != 0)
        return a.bisect_step ? 128 : rc;
    pkb_ab_session session;
    if (pkb_ab_session_begin(&session, &sides[0], &sides[1], &a.rule, a.max_time_s, a.quiet) != 0) {
        fprintf(stderr, "pkbench: out of memory\n");
        return a.bisect_step ? 128 : 1;
    }
    pkb_profile profile = strcmp(a.run.profile, "full") == 0 ? pkb_profile_full : pkb_profile_quick;
    profile.repetitions = PKB_AB_FIRST_BLOCK; /* the first look's; then blocks until decided */
    const pkb_cli_side cli_sides[2] = {{"base", sides[0].worker}, {"head", sides[1].worker}};
    pkb_cli cli = {.filter = a.filter,
                   .tiny_path = tiny,
                   .sides = cli_sides,
                   .nsides = 2,
                   .controls = a.controls};
    pkb_suite_options opts = {
        .suite = "scenarios",
        .profile = &profile,
        .out_path = a.path,
        .filter = a.filter,
        .prime = a.run.prime,
        .argc = argc,
        .argv = argv,
        .interleave = true,
        .settle_s = a.run.settle != NULL ? a.run.settle_s : profile.settle_s,
        .series_line = pkb_ab_series_line,
        .more_rounds = ab_more_rounds,
        .more_user = &session,
        .max_time_s = a.max_time_s,
        .ab = session.section,
    };
    pkb_cli_on_stop(on_signal, SA_RESETHAND);
    rc = pkb_suite_find("scenarios")->run(&cli, &opts);
    pk_cleanup();
    pkb_ab_session_free(&session);
    if (rc != 0 && rc != 130)
        return a.bisect_step ? 128 : rc;
    return pkb_ab_conclude(&a, rc);
}

/* ---- report --------------------------------------------------------------------------------- */

/* Whether `path` is a directory. */
static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmd_report(int argc, char **argv)
{
    const char *out = "reports";
    bool plots = true, print = false;
    pkb_report_many_args many = {0};
    const pkb_cli_value plain[] = {
        {"out", PKB_CLI_NAME, .text = &out, .needs = "a directory"},
        {"no-plots", PKB_CLI_CLEAR, .flag = &plots},
        {"print", PKB_CLI_SET, .flag = &print},
        /* One table of many files: */
        {"rows", PKB_CLI_NAME, .text = &many.cross.rows, .needs = "a value"},
        {"cols", PKB_CLI_NAME, .text = &many.cross.cols, .needs = "a value"},
        {"absolute", PKB_CLI_SET, .flag = &many.cross.absolute},
        {"baseline-contender", PKB_CLI_NAME, .text = &many.cross.baseline, .needs = "a value"},
        {"name", PKB_CLI_FILE, .text = &many.name, .needs = "a value"},
        {0},
    };
    if (pkb_cli_take_all(argc, argv, plain, "report", usage_text, help) != 0)
        return 1;
    bool table_option = many.cross.rows || many.cross.cols || many.cross.absolute ||
                        many.cross.baseline || many.name;
    if (optind >= argc)
        return bad_usage("report: no results FILE given");
    /* Several files, a directory or a table option: one table of them all. */
    if (table_option || optind + 1 < argc || is_dir(argv[optind])) {
        many.out_dir = out;
        many.print = print;
        int rc =
            pkb_report_many((const char *const *)argv + optind, (size_t)(argc - optind), &many);
        pk_cleanup();
        return rc;
    }
    const char *file = argv[optind];
    char err[512] = "";
    pkb_buf written = {0}, b = {0};
    pkb_report_options ro = {.no_plots = !plots, .written = &written};
    int rc = pkb_report_render(file, out, &ro, err, sizeof err);
    pk_cleanup();
    if (rc != 0) {
        pkb_buf_free(&written);
        return pkb_cli_failed(rc, err);
    }
    /* The files are in place; now what they say (when asked) and where they are. */
    rc = print ? print_tables(file, &b) : 0;
    pkb_report_list_outputs(out, "report", &written, &b);
    b.failed |= written.failed;
    rc = rc != 0 ? rc : pkb_cli_put_stdout(&b);
    pkb_buf_free(&b);
    pkb_buf_free(&written);
    return rc;
}

static int cmd_publish(int argc, char **argv)
{
    return pkb_cmd_publish(argc, argv, usage_text, help);
}

/* pkbench's commands. Each is given its arguments from its own name on, which getopt_long then
 * takes for the program's name; or, `whole`, the whole command line (run records it in the
 * results file; the others read their arguments from argv[2] on). */
static const struct command {
    const char *name;
    int (*main)(int argc, char **argv);
    bool whole;
} commands[] = {
    {"run", cmd_run, true},           {"report", cmd_report, false},
    {"list", cmd_list, false},        {"compare", pkb_cmd_compare, true},
    {"check", pkb_cmd_check, true},   {"history", pkb_cmd_history, false},
    {"publish", cmd_publish, false},  {"ab", cmd_ab, true},
    {"bisect", pkb_cmd_bisect, true}, {"worker", pkb_host_main, false},
};

int main(int argc, char **argv)
{
    if (argc < 2)
        return bad_usage("no command given");
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        help();
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        const struct command *c = &commands[i];
        if (strcmp(cmd, c->name) == 0)
            return c->whole ? c->main(argc, argv) : c->main(argc - 1, argv + 1);
    }
    return bad_usage("unknown command '%s'", cmd);
}
