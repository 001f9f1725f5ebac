/*
 * cli — what pkbench's commands (run, report, history, publish, compare, check, ab, bisect)
 * share on their command lines: getopt_long over a command's own arguments with the errors named
 * by pkbench rather than by getopt, the one-line usage error, a table of a command's plain options
 * (flags, texts, numbers: where each goes and how it is checked, its error worded as every
 * command words it), the operands after them, the values more than one command takes, the
 * default results file's name, and the lines every command ends with on failure.
 *
 * Every function that prints returns pkbench's exit status for what it printed (1).
 */
#ifndef PKB_COMMON_CLI_H
#define PKB_COMMON_CLI_H

#include "common/buf.h"

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

/* The options of `pkbench run` that `pkbench check` takes too and passes on to its runs: one
 * code each, and their lines of a getopt_long table, for both commands (whose own codes start at
 * 1000). */
enum {
    PKB_OPT_SUITE = 900,
    PKB_OPT_PROFILE,
    PKB_OPT_NO_PRIME,
    PKB_OPT_SEQUENTIAL,
    PKB_OPT_SETTLE,
    PKB_OPT_REPETITIONS,
};

#define PKB_CLI_RUN_OPTIONS                                                                        \
    {"suite", required_argument, NULL, PKB_OPT_SUITE},                                             \
        {"profile", required_argument, NULL, PKB_OPT_PROFILE},                                     \
        {"no-prime", no_argument, NULL, PKB_OPT_NO_PRIME},                                         \
        {"sequential", no_argument, NULL, PKB_OPT_SEQUENTIAL},                                     \
        {"settle", required_argument, NULL, PKB_OPT_SETTLE},                                       \
    {                                                                                              \
        "repetitions", required_argument, NULL, PKB_OPT_REPETITIONS                                \
    }

/* The most repetitions `pkbench run --repetitions` (and check) takes: a thousand rounds of a
 * suite are hours of work already. */
#define PKB_MAX_REPETITIONS 1000

/* The run options' values, each checked once (pkb_cli_run_option): what `run` runs with, what
 * `check` passes on to its runs as given, what `ab` takes of them. */
typedef struct pkb_cli_run {
    const char *suite;       /* as given: the command finds it (default "scenarios") */
    const char *profile;     /* "quick" (the default) or "full" */
    bool prime, sequential;  /* --no-prime clears prime; --sequential */
    const char *settle;      /* --settle as given; NULL: the profile's */
    double settle_s;         /* its seconds */
    const char *repetitions; /* --repetitions as given; NULL: the profile's */
    long nrepetitions;       /* its count */
} pkb_cli_run;

#define PKB_CLI_RUN_DEFAULTS                                                                       \
    {                                                                                              \
        .suite = "scenarios", .profile = "quick", .prime = true                                    \
    }

/* One option of PKB_CLI_RUN_OPTIONS into o, for command `cmd`: 1 when `opt` is one of them, 0
 * when it is not, -1 after its usage error ("<cmd>: --settle needs seconds from 0 to 60, got
 * 'x'", then `usage`). */
int pkb_cli_run_option(int opt, const char *v, pkb_cli_run *o, const char *cmd, const char *usage);

/* ---- a command's plain options, as a table ----------------------------------------------- */

/* What a plain option takes, and how it is checked. */
typedef enum pkb_cli_kind {
    PKB_CLI_SET = 1,  /* no value: *flag = true */
    PKB_CLI_CLEAR,    /* no value: *flag = false (--no-prime, --no-plots) */
    PKB_CLI_TEXT,     /* *text = the value as given, empty or not */
    PKB_CLI_NAME,     /* *text = the value, which must not be empty */
    PKB_CLI_FILE,     /* the same, and a file name without a directory (--name) */
    PKB_CLI_FRACTION, /* *number = a number in (0, 1): a significance level */
    PKB_CLI_COUNT,    /* *count = a whole number from lo to hi */
    PKB_CLI_PERCENT,  /* *number = a percentage p ("5" or "5%"), lo <= p < hi, as a fraction */
} pkb_cli_kind;

/* A row of a command's table of plain options: its long name, its kind, and where its value goes
 * (the one pointer its kind uses). A table ends with a row whose name is NULL. */
typedef struct pkb_cli_value {
    const char *name; /* "out" for --out */
    pkb_cli_kind kind;
    bool *flag;
    const char **text;
    double *number;
    long *count;
    const char *needs; /* NAME, FILE: what an empty value lacks ("a file name") */
    long lo, hi;       /* COUNT's and PERCENT's range */
} pkb_cli_value;

/* A command as its usage errors name it. */
typedef struct pkb_cli_cmd {
    const char *name;             /* "run": errors begin "run: "; NULL: they name no command */
    const char *usage;            /* printed after every error */
    const struct option *options; /* its getopt_long table: an option's name by its code */
} pkb_cli_cmd;

/* Option `opt` (getopt_long's code in cmd's table) with value v (optarg) into the place the row of
 * its name gives, checked as the row's kind says; an error names the option: "run: --out needs a
 * file name", "run: --alpha needs a number in (0, 1), got '2'", "history: --min-size needs a count
 * from 2 to 1000, got 'x'", "report: --name is a file name without a directory, got 'a/b'", then
 * cmd's usage. Returns 1 when opt has a row, 0 when it has none, -1 after the error. */
int pkb_cli_take(const pkb_cli_value *table, int opt, const char *v, const pkb_cli_cmd *cmd);

/* The most rows pkb_cli_take_all reads of a table (report's has 8, history's 11). */
#define PKB_CLI_MAX_PLAIN 24

/* Every option of command `name`, whose options are all plain: getopt_long's table is table's rows
 * (in their order) and --help; -h or --help prints `help` and exits 0; an unknown option or a
 * missing value is named (pkb_cli_getopt_failed). Returns 0, or 1 after a usage error. */
int pkb_cli_take_all(int argc,
                     char **args,
                     const pkb_cli_value *table,
                     const char *name,
                     const char *usage,
                     void (*help)(void));

/* After the options: the command's operands, args[optind] on, into out[], at most `max` of them
 * ("<cmd>: extra argument 'x'" after that). `argc` and `args` as given to pkb_cli_next_option.
 * Returns how many, or -1 after the usage error. */
int pkb_cli_operands(int argc, char **args, const char **out, int max, const pkb_cli_cmd *cmd);

/* getopt_long over a command's arguments, args[0] (the command's name) playing the program, with
 * opterr 0 so that getopt prints nothing of its own (it would name the wrong program): ':' a
 * value is missing, '?' an unknown option (pkb_cli_getopt_failed names either), 'h' for -h. */
int pkb_cli_next_option(int argc, char **args, const struct option *options);

/* "pkbench: <message>" and the command's usage on stderr. Returns 1. */
int pkb_cli_usage_error(const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* After pkb_cli_next_option returned ':' or '?' (opt): "<cmd>: --x needs a value" or "<cmd>:
 * unknown option '--x'", then the usage. `args` as given to pkb_cli_next_option. Returns 1. */
int pkb_cli_getopt_failed(const char *usage, const char *cmd, int opt, char **args);

/* pkbench run's status when the run went through but a series it was to measure was not: one
 * failed while timing, or its correctness check refused it for a reason of the code (a refusal
 * for a reason of the host, e.g. no root for an eBPF observer, is a skip, not a failure). The
 * results file keeps what was measured; `check` compares it as usual. */
#define PKB_EXIT_UNMEASURED 4

/* results/<name>-<UTC time>.json into path, creating results/ first. Returns 0, or 1 after
 * saying why results/ cannot be created. */
int pkb_cli_results_path(const char *name, char *path, size_t cap);

/* Before anything is measured or computed: whether `path` can be written
 * (files.h's pkb_check_writable). Returns 0, or 1 after saying why not. */
int pkb_cli_check_writable(const char *path);

/* The same for a results file `run` (or `check`, through its runs) writes, named by option `opt`
 * of command `cmd`: it is rewritten after every finished series and read back at the end, so it
 * must be a regular file or a new path (through a symlink, its target's); a FIFO, a device or a
 * terminal is refused, named. Returns 0, or 1 after saying why not. */
int pkb_cli_check_results_file(const char *cmd, const char *opt, const char *path);

/* Writes b to stdout, flushed: a buffer that failed to build, or a write error (a full disk, a
 * closed pipe), is said on stderr and returns 1; else 0. */
int pkb_cli_put_stdout(const pkb_buf *b);

/* A failed call's one line, "pkbench: <err>" (strerror(-rc) when err is empty). Returns 1. */
int pkb_cli_failed(int rc, const char *err);

/* Installs `handler` for SIGINT and SIGTERM (sa_flags `flags`, e.g. SA_RESETHAND: a second
 * Ctrl-C kills). */
void pkb_cli_on_stop(void (*handler)(int), int flags);

#endif /* PKB_COMMON_CLI_H */
