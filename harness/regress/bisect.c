/*
 * bisect — `pkbench bisect` (bisect.h): the options, the check that BAD regressed at all, the
 * scratch worktree where git bisect runs `pkbench ab --bisect-step GOOD HEAD` at each commit
 * (ab_cli.h maps its status to git's: good, bad, skip, stop), and the report of the first bad
 * commit read back from its step's results file (ab.h's pkb_ab_compare).
 */
#define _GNU_SOURCE
#include "regress/bisect.h"

#include "common/cli.h"
#include "common/parse.h"
#include "regress/ab_cli.h"
#include "regress/build.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char bisect_usage[] =
    "usage: pkbench bisect GOOD BAD --series REGEX [--out DIR] [--max-time DURATION]\n"
    "                      [--profile quick|full] [--no-prime] [--settle S]\n"
    "                      [--alpha A] [--threshold PCT] [--cv-limit PCT]\n"
    "\n"
    "Finds the first commit between GOOD and BAD that made the series (REGEX over\n"
    "scenario/contender) slower: pkbench ab GOOD BAD first, then git bisect run in a scratch\n"
    "worktree with pkbench ab GOOD <commit> at each step (regressed: bad; no regression: good;\n"
    "undecidable: skipped). The options after --series are ab's, for every step. Each step's\n"
    "results file is kept in DIR (results/bisect-<UTC time>/), named after its commit.\n"
    "Exit status: 0 found; 3 cannot tell (undecidable, or skipped commits hide it); 1 a usage\n"
    "or build error, or BAD not slower than GOOD; 130 interrupted.\n";

enum { OPT_SERIES = 1200, OPT_OUT_DIR, OPT_PASS_VALUE, OPT_PASS_FLAG, OPT_HELP_B };

static const struct option bisect_options[] = {
    {"series", required_argument, NULL, OPT_SERIES},
    {"out", required_argument, NULL, OPT_OUT_DIR},
    {"max-time", required_argument, NULL, OPT_PASS_VALUE},
    {"profile", required_argument, NULL, OPT_PASS_VALUE},
    {"settle", required_argument, NULL, OPT_PASS_VALUE},
    {"alpha", required_argument, NULL, OPT_PASS_VALUE},
    {"threshold", required_argument, NULL, OPT_PASS_VALUE},
    {"cv-limit", required_argument, NULL, OPT_PASS_VALUE},
    {"no-prime", no_argument, NULL, OPT_PASS_FLAG},
    {"help", no_argument, NULL, OPT_HELP_B},
    {NULL, 0, NULL, 0},
};

struct bisect {
    const char *good_spec, *bad_spec, *series, *out;
    const char *pass[32]; /* ab's options, passed on as given */
    size_t npass;
    char top[PATH_MAX], dir[PATH_MAX], tmp[PATH_MAX], tree[PATH_MAX + 8];
    char good[48], bad[48];
    char candidates[512]; /* git's list when only skipped commits are left */
    bool in_candidates;
};

static int parse(int argc, char **argv, struct bisect *b)
{
    static char names[16][32]; /* the options passed on, as "--name" */
    size_t nnames = 0;
    int opt, index = 0;
    char **args = argv + 1;
    optind = 0; /* getopt's full reset, as pkb_cli_next_option does: this parser needs the index */
    opterr = 0;
    while ((opt = getopt_long(argc - 1, args, ":h", bisect_options, &index)) != -1) {
        if (opt == OPT_HELP_B || opt == 'h') {
            fputs(bisect_usage, stdout);
            return -1;
        }
        if (opt == OPT_SERIES)
            b->series = optarg;
        else if (opt == OPT_OUT_DIR)
            b->out = optarg;
        else if ((opt == OPT_PASS_VALUE || opt == OPT_PASS_FLAG) && nnames < 16) {
            snprintf(names[nnames], sizeof names[0], "--%s", bisect_options[index].name);
            b->pass[b->npass++] = names[nnames++];
            if (opt == OPT_PASS_VALUE)
                b->pass[b->npass++] = optarg;
        } else {
            return pkb_cli_getopt_failed(bisect_usage, "bisect", opt, args);
        }
    }
    const char *specs[2];
    int nargs = pkb_cli_operands(argc - 1, args, specs, 2,
                                 &(pkb_cli_cmd){"bisect", bisect_usage, bisect_options});
    if (nargs < 0)
        return 1;
    if (nargs < 2)
        return pkb_cli_usage_error(bisect_usage, "bisect: needs GOOD and BAD (two revisions)");
    b->good_spec = specs[0];
    b->bad_spec = specs[1];
    if (b->series == NULL || b->series[0] == '\0')
        return pkb_cli_usage_error(bisect_usage,
                                   "bisect: --series REGEX names the series that regressed");
    return 0;
}

/* The repository, GOOD and BAD as commits, GOOD an ancestor of BAD; the results directory. */
static int resolve(struct bisect *b)
{
    char out[PATH_MAX];
    if (pkb_ab_git(".", (const char *const[]){"rev-parse", "--show-toplevel", NULL}, out,
                   sizeof out) != 0)
        return pkb_cli_usage_error(bisect_usage, "bisect: not in a git work tree: %s", out);
    snprintf(b->top, sizeof b->top, "%s", out);
    const char *specs[2] = {b->good_spec, b->bad_spec};
    char *shas[2] = {b->good, b->bad};
    for (int i = 0; i < 2; i++) {
        char arg[PATH_MAX];
        snprintf(arg, sizeof arg, "%s^{commit}", specs[i]);
        if (pkb_ab_git(b->top, (const char *const[]){"rev-parse", "--verify", "--quiet", arg, NULL},
                       out, sizeof out) != 0)
            return pkb_cli_usage_error(bisect_usage, "bisect: %s: '%s' is no commit of %s",
                                       i ? "BAD" : "GOOD", specs[i], b->top);
        snprintf(shas[i], 48, "%.47s", out);
    }
    if (strcmp(b->good, b->bad) == 0 ||
        pkb_ab_git(b->top,
                   (const char *const[]){"merge-base", "--is-ancestor", b->good, b->bad, NULL},
                   NULL, 0) != 0)
        return pkb_cli_usage_error(bisect_usage, "bisect: GOOD %s is not an ancestor of BAD %s",
                                   b->good_spec, b->bad_spec);
    if (b->out != NULL) {
        snprintf(b->dir, sizeof b->dir, "%s", b->out);
    } else {
        char stamp[32];
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
        mkdir("results", 0755);
        snprintf(b->dir, sizeof b->dir, "results/bisect-%s", stamp);
    }
    if (mkdir(b->dir, 0755) != 0 && errno != EEXIST)
        return pkb_cli_usage_error(bisect_usage, "bisect: cannot create %s: %s", b->dir,
                                   strerror(errno));
    char *abs = realpath(b->dir, NULL);
    if (abs != NULL)
        snprintf(b->dir, sizeof b->dir, "%s", abs);
    free(abs);
    return 0;
}

/* `pkbench ab [--bisect-step] GOOD HEAD-or-BAD --filter SERIES --out FILE <passed>` in cwd. */
static int
run_ab(const struct bisect *b, bool step, const char *head, const char *out, const char *cwd)
{
    const char *argv[48] = {NULL, "ab"};
    size_t n = 2;
    if (step)
        argv[n++] = "--bisect-step";
    argv[n++] = b->good;
    argv[n++] = head;
    argv[n++] = "--filter";
    argv[n++] = b->series;
    argv[n++] = "--out";
    argv[n++] = out;
    for (size_t i = 0; i < b->npass; i++)
        argv[n++] = b->pass[i];
    argv[n] = NULL;
    return pkb_ab_run(argv, cwd, NULL, NULL);
}

/* git bisect run's output, echoed; the candidates when only skipped commits are left. */
static int on_bisect_line(void *user, const pk_line *line)
{
    struct bisect *b = user;
    printf("%s\n", line->data);
    fflush(stdout);
    if (strstr(line->data, "The first bad commit could be any of") != NULL)
        b->in_candidates = true;
    else if (b->in_candidates && line->len >= 40 && strspn(line->data, "0123456789abcdef") >= 40)
        snprintf(b->candidates + strlen(b->candidates),
                 sizeof b->candidates - strlen(b->candidates), "%s%.12s",
                 b->candidates[0] ? ", " : "", line->data);
    return 0;
}

/* Counts the lines of `git bisect log` that mark a commit good, bad or skipped. */
struct tally {
    int good, bad, skip;
};

static int on_log_line(void *user, const pk_line *line)
{
    struct tally *t = user;
    t->good += strncmp(line->data, "# good:", 7) == 0;
    t->bad += strncmp(line->data, "# bad:", 6) == 0;
    t->skip += strncmp(line->data, "# skip:", 7) == 0;
    return 0;
}

/* The scratch worktree at BAD, git bisect start, run, the log, and the worktree removed. Returns
 * git bisect run's status (0: found) or 130; *first the first bad commit. */
static int bisect_in_worktree(struct bisect *b, char *first, size_t cap, struct tally *t)
{
    const char *tmpdir = getenv("TMPDIR");
    snprintf(b->tmp, sizeof b->tmp, "%s/pkbench-bisect-XXXXXX",
             tmpdir != NULL && tmpdir[0] == '/' ? tmpdir : "/tmp");
    if (mkdtemp(b->tmp) == NULL) {
        fprintf(stderr, "pkbench: bisect: cannot create %s: %s\n", b->tmp, strerror(errno));
        return 1;
    }
    snprintf(b->tree, sizeof b->tree, "%s/tree", b->tmp);
    char why[512], out_arg[PATH_MAX + 32];
    int rc = pkb_ab_git(
        b->top,
        (const char *const[]){"worktree", "add", "--detach", "--quiet", b->tree, b->bad, NULL}, why,
        sizeof why);
    if (rc == 0)
        rc = pkb_ab_git(b->tree, (const char *const[]){"bisect", "start", b->bad, b->good, NULL},
                        why, sizeof why);
    if (rc != 0) {
        fprintf(stderr, "pkbench: bisect: cannot start git bisect in %s: %s\n", b->tree, why);
        rc = 1;
    } else {
        snprintf(out_arg, sizeof out_arg, "%s/{commit}.json", b->dir);
        const char *argv[48] = {"git",      "-C",      b->tree,         "bisect", "run",
                                NULL,       "ab",      "--bisect-step", b->good,  "HEAD",
                                "--filter", b->series, "--out",         out_arg};
        size_t n = 14;
        char self[PATH_MAX];
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        self[len > 0 ? len : 0] = '\0';
        argv[5] = self;
        for (size_t i = 0; i < b->npass; i++)
            argv[n++] = b->pass[i];
        argv[n] = NULL;
        rc = pkb_ab_run(argv, b->tree, on_bisect_line, b);
        if (rc == 0 &&
            pkb_ab_git(b->tree, (const char *const[]){"rev-parse", "refs/bisect/bad", NULL}, first,
                       cap) != 0)
            rc = 1;
        pkb_ab_run((const char *const[]){"git", "-C", b->tree, "bisect", "log", NULL}, NULL,
                   on_log_line, t);
    }
    pkb_ab_git(b->top, (const char *const[]){"worktree", "remove", "--force", b->tree, NULL}, NULL,
               0);
    rmdir(b->tmp);
    return rc;
}

/* The first bad commit, its regressed series and their effect, from its step's results. */
static void report(const struct bisect *b, const char *first, const struct tally *t)
{
    char subject[256] = "", path[PATH_MAX + 64];
    pkb_ab_git(b->top, (const char *const[]){"log", "-1", "--format=%s", first, NULL}, subject,
               sizeof subject);
    printf("\nfirst bad commit: %.12s %s\n", first, subject);
    snprintf(path, sizeof path, "%s/%s.json", b->dir, first);
    pkb_compare c;
    char err[512];
    if (pkb_ab_compare(path, &(pkb_compare_options){.filter = b->series}, &c, err, sizeof err) ==
        0) {
        for (size_t i = 0; i < c.nrows; i++) {
            const pkb_compare_row *r = &c.rows[i];
            if (r->d.verdict != PKS_REGRESSED)
                continue;
            printf("  %s: %+.1f%% [%+.1f%%, %+.1f%%], p %.2g at look %d (%d rounds), against "
                   "%.12s\n",
                   r->name, 100 * r->s.delta, 100 * (r->s.ratio.lo - 1), 100 * (r->s.ratio.hi - 1),
                   r->p_holm, r->ab_look + 1, r->ab_rounds, b->good);
        }
        pkb_compare_free(&c);
    } else {
        printf("  (its results: %s)\n", err);
    }
    int steps = t->good + t->bad + t->skip - 2; /* git bisect start marked GOOD and BAD */
    printf("%d step%s (%d skipped) after ab %.12s %.12s; every step's results in %s/\n", steps,
           steps == 1 ? "" : "s", t->skip, b->good, b->bad, b->dir);
}

int pkb_cmd_bisect(int argc, char **argv)
{
    struct bisect b = {0};
    int rc = parse(argc, argv, &b);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if ((rc = resolve(&b)) != 0)
        return rc;
    char first_file[PATH_MAX + 64];
    snprintf(first_file, sizeof first_file, "%s/%s.json", b.dir, b.bad);
    fprintf(stderr, "pkbench: bisect: is %s slower than %s on %s at all?\n", b.bad_spec,
            b.good_spec, b.series);
    rc = run_ab(&b, false, b.bad, first_file, b.top);
    if (rc == 0) {
        fprintf(stderr, "pkbench: bisect: %s is not slower than %s on %s: nothing to bisect\n",
                b.bad_spec, b.good_spec, b.series);
        return 1;
    }
    if (rc == 3)
        fprintf(stderr,
                "pkbench: bisect: cannot tell whether %s is slower than %s on %s "
                "(measure more quietly, or longer with --max-time)\n",
                b.bad_spec, b.good_spec, b.series);
    if (rc != 2)
        return rc;
    char first[64] = "";
    struct tally t = {0};
    rc = bisect_in_worktree(&b, first, sizeof first, &t);
    if (rc == 130)
        return 130;
    if (rc != 0 && b.candidates[0] != '\0') {
        fprintf(stderr,
                "pkbench: bisect: skipped steps hide the first bad commit; it is one of "
                "%s\n",
                b.candidates);
        return 3;
    }
    if (rc != 0) {
        fprintf(stderr, "pkbench: bisect: git bisect run failed (status %d)\n", rc);
        return 1;
    }
    report(&b, first, &t);
    return 0;
}
