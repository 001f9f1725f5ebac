/*
 * cli — the command-line pieces pkbench's commands share (cli.h), written once so that every
 * command names a bad option, a missing value and an unwritable output the same way.
 */
#define _GNU_SOURCE
#include "common/cli.h"

#include "common/files.h"
#include "common/parse.h"
#include "common/stats.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int pkb_cli_next_option(int argc, char **args, const struct option *options)
{
    opterr = 0;
    return getopt_long(argc, args, ":h", options, NULL);
}

int pkb_cli_usage_error(const char *usage, const char *fmt, ...)
{
    fputs("pkbench: ", stderr);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fputs(usage, stderr);
    return 1;
}

int pkb_cli_getopt_failed(const char *usage, const char *cmd, int opt, char **args)
{
    const char *arg = args[optind - 1];
    if (opt == ':')
        return pkb_cli_usage_error(usage, "%s: %s needs a value", cmd, arg);
    return pkb_cli_usage_error(usage, "%s: unknown option '%s'", cmd, arg);
}

/* The long name of option code `opt` in a getopt_long table ("out"). */
/* The long name of option code `opt` in a getopt_long table ("out"), or NULL. */
static const char *option_name(const struct option *options, int opt)
{
    while (options->name != NULL && options->val != opt)
        options++;
    return options->name;
}

/* "pkbench: <cmd>: --<option> <what>" and the usage. Returns -1. */
static int refuse(const pkb_cli_cmd *cmd, const char *option, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(const pkb_cli_cmd *cmd, const char *option, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return -pkb_cli_usage_error(cmd->usage, "%s%s--%s %s", cmd->name != NULL ? cmd->name : "",
                                cmd->name != NULL ? ": " : "", option, what);
}

int pkb_cli_take(const pkb_cli_value *table, int opt, const char *v, const pkb_cli_cmd *cmd)
{
    const char *name = option_name(cmd->options, opt);
    const pkb_cli_value *t = table;
    while (t->name != NULL && (name == NULL || strcmp(t->name, name) != 0))
        t++;
    switch (t->name != NULL ? t->kind : 0) {
    case PKB_CLI_SET:
    case PKB_CLI_CLEAR:
        *t->flag = t->kind == PKB_CLI_SET;
        return 1;
    case PKB_CLI_TEXT:
    case PKB_CLI_NAME:
    case PKB_CLI_FILE:
        if (t->kind != PKB_CLI_TEXT && v[0] == '\0')
            return refuse(cmd, name, "needs %s", t->needs);
        if (t->kind == PKB_CLI_FILE && strpbrk(v, "/\\") != NULL)
            return refuse(cmd, name, "is a file name without a directory, got '%s'", v);
        *t->text = v;
        return 1;
    case PKB_CLI_FRACTION:
        if (!pkb_parse_number(v, false, t->number) || !(*t->number > 0 && *t->number < 1))
            return refuse(cmd, name, "needs a number in (0, 1), got '%s'", v);
        return 1;
    case PKB_CLI_COUNT:
        if (!pkb_parse_count(v, t->lo, t->hi, t->count))
            return refuse(cmd, name, "needs a count from %ld to %ld, got '%s'", t->lo, t->hi, v);
        return 1;
    case PKB_CLI_PERCENT:
        if (!pkb_parse_number(v, true, t->number) || !(*t->number >= t->lo && *t->number < t->hi))
            return refuse(cmd, name, "needs a percentage from %ld to %ld (5 or 5%%), got '%s'",
                          t->lo, t->hi, v);
        *t->number /= 100;
        return 1;
    }
    return 0;
}

int pkb_cli_take_all(int argc,
                     char **args,
                     const pkb_cli_value *table,
                     const char *name,
                     const char *usage,
                     void (*help)(void))
{
    /* getopt_long's table from the rows: each row's index its code, past every short option. */
    struct option options[PKB_CLI_MAX_PLAIN + 2];
    size_t n = 0;
    for (; table[n].name != NULL && n < PKB_CLI_MAX_PLAIN; n++) {
        bool flag = table[n].kind == PKB_CLI_SET || table[n].kind == PKB_CLI_CLEAR;
        options[n] = (struct option){table[n].name, flag ? no_argument : required_argument, NULL,
                                     1000 + (int)n};
    }
    options[n++] = (struct option){"help", no_argument, NULL, 'h'};
    options[n] = (struct option){NULL, 0, NULL, 0};
    const pkb_cli_cmd cmd = {name, usage, options};
    int opt;
    while ((opt = pkb_cli_next_option(argc, args, options)) != -1) {
        if (opt == 'h') {
            help();
            exit(0);
        }
        int known = pkb_cli_take(table, opt, optarg, &cmd);
        if (known < 0)
            return 1;
        if (known == 0)
            return pkb_cli_getopt_failed(usage, name, opt, args);
    }
    return 0;
}

int pkb_cli_operands(int argc, char **args, const char **out, int max, const pkb_cli_cmd *cmd)
{
    int n = 0;
    for (int i = optind; i < argc; i++) {
        if (n == max)
            return -pkb_cli_usage_error(cmd->usage, "%s: extra argument '%s'", cmd->name, args[i]);
        out[n++] = args[i];
    }
    return n;
}

int pkb_cli_run_option(int opt, const char *v, pkb_cli_run *o, const char *cmd, const char *usage)
{
    static const struct option names[] = {PKB_CLI_RUN_OPTIONS, {NULL, 0, NULL, 0}};
    const pkb_cli_value plain[] = {
        {"suite", PKB_CLI_NAME, .text = &o->suite, .needs = "a value"},
        {"no-prime", PKB_CLI_CLEAR, .flag = &o->prime},
        {"sequential", PKB_CLI_SET, .flag = &o->sequential},
        {0},
    };
    int known = pkb_cli_take(plain, opt, v, &(pkb_cli_cmd){cmd, usage, names});
    if (known != 0)
        return known;
    switch (opt) {
    case PKB_OPT_PROFILE:
        if (strcmp(v, "quick") != 0 && strcmp(v, "full") != 0)
            return -pkb_cli_usage_error(usage, "%s: --profile needs full or quick, got '%s'", cmd,
                                        v);
        o->profile = v;
        return 1;
    case PKB_OPT_SETTLE:
        if (!pkb_parse_number(v, false, &o->settle_s) || !(o->settle_s >= 0 && o->settle_s <= 60))
            return -pkb_cli_usage_error(usage, "%s: --settle needs seconds from 0 to 60, got '%s'",
                                        cmd, v);
        o->settle = v;
        return 1;
    case PKB_OPT_REPETITIONS:
        /* Fewer than the verdicts' minimum could decide nothing. */
        if (!pkb_parse_count(v, PKS_MIN_SAMPLES, PKB_MAX_REPETITIONS, &o->nrepetitions))
            return -pkb_cli_usage_error(usage,
                                        "%s: --repetitions needs a count from %d to %d (fewer "
                                        "than %d samples decide nothing), got '%s'",
                                        cmd, PKS_MIN_SAMPLES, PKB_MAX_REPETITIONS, PKS_MIN_SAMPLES,
                                        v);
        o->repetitions = v;
        return 1;
    }
    return 0;
}

int pkb_cli_results_path(const char *name, char *path, size_t cap)
{
    char stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    if (mkdir("results", 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "pkbench: cannot create results/: %s\n", strerror(errno));
        return 1;
    }
    snprintf(path, cap, "results/%s-%s.json", name, stamp);
    return 0;
}

int pkb_cli_check_writable(const char *path)
{
    int rc = pkb_check_writable(path);
    if (rc != 0)
        fprintf(stderr, "pkbench: cannot write %s: %s\n", path, strerror(-rc));
    return rc != 0;
}

int pkb_cli_check_results_file(const char *cmd, const char *opt, const char *path)
{
    const char *kind = pkb_path_kind(path);
    if (kind != NULL && strcmp(kind, "a directory") != 0) {
        fprintf(stderr,
                "pkbench: %s: %s %s is %s: a results file is rewritten after every finished series "
                "and read back at the end, so it must be a regular file or a new path\n",
                cmd, opt, path, kind);
        return 1;
    }
    return pkb_cli_check_writable(path);
}

int pkb_cli_put_stdout(const pkb_buf *b)
{
    if (b->failed) {
        fprintf(stderr, "pkbench: out of memory\n");
        return 1;
    }
    if ((b->len > 0 && fwrite(b->data, 1, b->len, stdout) != b->len) || fflush(stdout) != 0) {
        fprintf(stderr, "pkbench: cannot write to stdout: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}

int pkb_cli_failed(int rc, const char *err)
{
    fprintf(stderr, "pkbench: %s\n", err[0] ? err : strerror(-rc));
    return 1;
}

void pkb_cli_on_stop(void (*handler)(int), int flags)
{
    struct sigaction sa = {.sa_handler = handler, .sa_flags = flags};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}
