/*
 * cli — the command lines of the documents made of many results files: `pkbench report FILE...
 * | DIR` (the table across hosts and revisions, report/cross.h), once pkbench.c has read
 * report's options and seen more than one file, a directory or a table option, and `pkbench
 * history` (report/history.h); and the list of what a render wrote, which `pkbench report FILE`
 * prints too.
 */
#ifndef PKB_REPORT_CLI_H
#define PKB_REPORT_CLI_H

#include "common/buf.h"
#include "report/cross.h"

#include <stdbool.h>
#include <stddef.h>

/* What `pkbench report` was told, for a table of many files. */
typedef struct pkb_report_many_args {
    const char *out_dir; /* where the files go */
    const char *name;    /* <name>.md and <name>.json; NULL: the one directory's name, else
                            "table" */
    bool print;          /* the tables on stdout first */
    pkb_cross_options cross;
} pkb_report_many_args;

/* Builds the table of `paths` and writes it, prints the warnings on stderr and, with --print,
 * the tables on stdout, then the paths of what it wrote. Returns pkbench's exit status: 0, or 1
 * after one line saying what was wrong. */
int pkb_report_many(const char *const *paths, size_t n, const pkb_report_many_args *a);

/* `pkbench history ...` (argv[0] is "history"): returns pkbench's exit status. */
int pkb_cmd_history(int argc, char **argv);

/* "<label> DIR/NAME" for the documents a render wrote (`written`: names each followed by a NUL;
 * the Markdown last, its JSON before it), then one line per figure: its SVG and the siblings
 * the render wrote. `label` names the document ("report", "table", "history"). */
void pkb_report_list_outputs(const char *dir,
                             const char *label,
                             const pkb_buf *written,
                             pkb_buf *b);

#endif /* PKB_REPORT_CLI_H */
