/*
 * pkbench — the benchmark harness's command line.
 *
 *   pkbench run [--suite compare|phases|forkathon] [--profile full|quick] [--filter REGEX]
 *               [--out FILE] [--no-prime] [--interleave] [--aa [--alpha A]] [--iterations N]
 *   pkbench report FILE [--out DIR] [--no-plots]
 *   pkbench list
 *   pkbench compare BASE.json NEW.json [options]      (compare_cli.c)
 *   pkbench check --baseline FILE [options]           (compare_cli.c)
 *
 * Exit status: 0 success; 1 bad arguments, an unreadable or invalid results file, or a suite that
 * could not start (one line on stderr says which); 130 when a run was interrupted (its results
 * file still holds every finished series).
 */
#define _GNU_SOURCE
#include "compare.h"
#include "processkit.h"
#include "report.h"
#include "scenario.h"
#include "suites.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef PKB_TINY_PATH
#define PKB_TINY_PATH ""
#endif

static const char usage_text[] =
    "usage: pkbench run [--suite compare|phases|forkathon] [--profile full|quick]\n"
    "                   [--filter REGEX] [--out FILE] [--no-prime] [--interleave]\n"
    "                   [--aa [--alpha A]] [--iterations N]\n"
    "       pkbench report FILE [--out DIR] [--no-plots]\n"
    "       pkbench list\n"
    "       pkbench compare BASE.json NEW.json [--format text|md|json] [--out FILE] [--alpha A]\n"
    "                       [--threshold PCT] [--cv-limit PCT] [--filter REGEX]\n"
    "                       [--env-keys LIST] [--strict-env]\n"
    "       pkbench compare FILE.json --baseline-contender NAME [options as above]\n"
    "       pkbench check --baseline FILE [--suite NAME] [--profile quick|full] [--filter REGEX]\n"
    "                     [--no-prime] [--sequential] [--out FILE] [compare's options]\n"
    "       pkbench --help\n";

static void help(void)
{
    fputs(usage_text, stdout);
    fputs("\n"
          "run      times every series of a suite through Google Benchmark and writes\n"
          "         results/<suite>-<UTC time>.json (or --out FILE), atomically, after every\n"
          "         finished series; Ctrl-C stops at the next iteration and keeps what finished.\n"
          "         --profile full: 20 samples, 10 s warm-up, 5 s of measurement per series (the\n"
          "         seed's configuration); quick (default): 10 samples, short warm-up, the whole\n"
          "         compare suite in well under 90 s. --filter selects series by an extended\n"
          "         regular expression over their names (scenario/contender). --no-prime skips\n"
          "         the priming batches. PKBENCH_TINY overrides the tiny helper's path.\n"
          "         --interleave samples in rounds (one repetition of every series per round).\n"
          "         --aa also runs a copy of every series next to it in every round and stores\n"
          "         each series' noise floor (minimum detectable effect at --alpha, 0.05).\n"
          "         --suite forkathon: the fork/vfork study (Wemm's fork/vfork loops, static and\n"
          "         dynamic; spawn cost against the parent's RSS); --iterations N sets Wemm's\n"
          "         loop count (full 100000, quick 10000).\n"
          "         --suite phases: where a start goes (phase/, primitive/, spawn_lock/ series);\n"
          "         its report reconciles each composite with its parts.\n"
          "report   renders a results file as reports/<name>.md plus gnuplot (PNG, SVG) and\n"
          "         matplotlib (PNG) bar charts; --out DIR changes the directory.\n"
          "list     prints the contenders and the scenarios each one runs.\n"
          "compare  medians, bootstrap CI of their ratio, Mann-Whitney p with Holm's correction\n"
          "         and a verdict per series (regressed / improved / ~ / undecidable), then a\n"
          "         geomean; --threshold (5%) and the base file's noise floor set the bar.\n"
          "check    runs a suite (quick by default), compares it with --baseline, re-runs the\n"
          "         series that regressed once and reports only regressions that repeat.\n"
          "\n"
          "Exit status: 0 ok; 1 bad arguments or input; 130 interrupted (finished series kept);\n"
          "compare and check: 2 a regression, 3 none but a series too noisy or with too few\n"
          "samples to decide (named).\n",
          stdout);
}

static _Noreturn void bad_usage(const char *fmt, const char *arg)
{
    fputs("pkbench: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    fputs(usage_text, stderr);
    exit(1);
}

static void on_signal(int sig)
{
    (void)sig;
    pkb_interrupted = 1;
}

static int cmd_list(void)
{
    printf("%-30s", "contender");
    for (int s = 0; s < PKB_SCENARIO_COUNT; s++)
        printf(" %-20s", pkb_scenario_name((pkb_scenario)s));
    printf("\n");
    for (size_t k = 0; k < pkb_contender_count; k++) {
        const pkb_contender *c = pkb_contenders[k];
        char name[64];
        snprintf(name, sizeof name, "%s%s", c->name, c->baseline ? " (baseline)" : "");
        printf("%-30s", name);
        for (int s = 0; s < PKB_SCENARIO_COUNT; s++)
            printf(" %-20s", c->scenarios & PKB_SCENARIO_BIT(s) ? "yes" : "-");
        printf("\n");
    }
    printf("\n");
    for (size_t k = 0; k < pkb_contender_count; k++)
        printf("%-30s %s\n", pkb_contenders[k]->name, pkb_contenders[k]->description);
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    const char *suite = "compare", *out = NULL;
    pkb_cli cli = {.tiny_path = getenv("PKBENCH_TINY")};
    const pkb_profile *prof = &pkb_profile_quick;
    bool prime = true, interleave = false, aa = false;
    double alpha = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--suite") == 0 && v != NULL) {
            suite = v, i++;
        } else if (strcmp(a, "--profile") == 0 && v != NULL) {
            if (strcmp(v, "full") == 0)
                prof = &pkb_profile_full;
            else if (strcmp(v, "quick") == 0)
                prof = &pkb_profile_quick;
            else
                bad_usage("--profile needs full or quick, got '%s'", v);
            i++;
        } else if (strcmp(a, "--filter") == 0 && v != NULL) {
            cli.filter = v, i++;
        } else if (strcmp(a, "--out") == 0 && v != NULL && v[0] != '\0') {
            out = v, i++;
        } else if (strcmp(a, "--no-prime") == 0) {
            prime = false;
        } else if (strcmp(a, "--interleave") == 0) {
            interleave = true;
        } else if (strcmp(a, "--aa") == 0) {
            aa = true;
        } else if (strcmp(a, "--alpha") == 0 && v != NULL) {
            char *end;
            alpha = strtod(v, &end);
            if (end == v || *end != '\0' || !(alpha > 0 && alpha < 1))
                bad_usage("--alpha needs a number in (0, 1), got '%s'", v);
        } else if (strcmp(a, "--iterations") == 0 && v != NULL) {
            char *end;
            cli.iterations = strtol(v, &end, 10);
            if (*end != '\0' || end == v || cli.iterations < 1 || cli.iterations > 100000000)
                bad_usage("--iterations needs a count from 1 to 100000000, got '%s'", v);
            i++;
        } else {
            bad_usage("run: unknown or incomplete argument '%s'", a);
        }
    }
    if (alpha != 0 && !aa)
        bad_usage("--alpha is the noise floor's significance level: it needs --aa%s", "");
    bool forkathon = strcmp(suite, "forkathon") == 0, phases = strcmp(suite, "phases") == 0;
    if (strcmp(suite, "compare") != 0 && !forkathon && !phases)
        bad_usage("--suite: unknown suite '%s' (known: compare, phases, forkathon)", suite);
    if (cli.iterations > 0 && !forkathon)
        bad_usage("--iterations applies to --suite forkathon only%s", "");
    if (forkathon && (interleave || aa))
        bad_usage("--interleave and --aa apply to suites timed through Google Benchmark; "
                  "the forkathon interleaves its own rounds%s",
                  "");
    if (cli.tiny_path == NULL || cli.tiny_path[0] == '\0')
        cli.tiny_path = PKB_TINY_PATH;
    if (access(cli.tiny_path, X_OK) != 0) {
        fprintf(stderr,
                "pkbench: the tiny helper '%s' is missing (build the phases target, or "
                "set PKBENCH_TINY)\n",
                cli.tiny_path);
        return 1;
    }

    char defpath[256];
    if (out == NULL) {
        char stamp[32];
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
        if (mkdir("results", 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "pkbench: cannot create results/: %s\n", strerror(errno));
            return 1;
        }
        snprintf(defpath, sizeof defpath, "results/%s-%s.json", suite, stamp);
        out = defpath;
    }

    /* Ctrl-C: stop at the next iteration and keep every finished series; a second one kills. */
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESETHAND};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    pkb_suite_options opts = {
        .suite = suite,
        .profile = prof,
        .out_path = out,
        .filter = cli.filter,
        .prime = prime,
        .argc = argc,
        .argv = argv,
        .interleave = interleave,
        .aa = aa,
        .aa_alpha = alpha,
    };
    int rc = forkathon ? pkb_suite_forkathon(&cli, &opts)
             : phases  ? pkb_suite_phases(&cli, &opts)
                       : pkb_suite_compare(&cli, &opts);
    pk_cleanup();
    if (rc == 0 || rc == 130)
        fprintf(stderr, "pkbench: results %s%s\n", out,
                rc == 130 ? " (interrupted: finished series kept)" : "");
    return rc;
}

static int cmd_report(int argc, char **argv)
{
    const char *file = NULL, *out = "reports";
    bool plots = true;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--out") == 0 && v != NULL && v[0] != '\0')
            out = v, i++;
        else if (strcmp(a, "--no-plots") == 0)
            plots = false;
        else if (a[0] == '-' || file != NULL)
            bad_usage("report: unknown or extra argument '%s'", a);
        else
            file = a;
    }
    if (file == NULL)
        bad_usage("report: no results FILE given%s", "");
    if (mkdir(out, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "pkbench: cannot create %s: %s\n", out, strerror(errno));
        return 1;
    }
    char err[512] = "";
    pkb_report_options ro = {.no_plots = !plots};
    int rc = pkb_report_render(file, out, &ro, err, sizeof err);
    pk_cleanup();
    if (rc != 0) {
        fprintf(stderr, "pkbench: %s\n", err[0] ? err : strerror(-rc));
        return 1;
    }
    fprintf(stderr, "pkbench: report written to %s/\n", out);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        bad_usage("no command given%s", "");
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        help();
        return 0;
    }
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc, argv);
    if (strcmp(cmd, "report") == 0)
        return cmd_report(argc, argv);
    if (strcmp(cmd, "list") == 0)
        return cmd_list();
    if (strcmp(cmd, "compare") == 0)
        return pkb_cmd_compare(argc, argv);
    if (strcmp(cmd, "check") == 0)
        return pkb_cmd_check(argc, argv);
    bad_usage("unknown command '%s'", cmd);
}
