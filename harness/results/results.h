/*
 * Private to the report module (report.c, report_load.c, report_verdict.c, plot.c): the validated
 * view of one results file, a growable text buffer, and the helpers the Markdown and the plots
 * share.
 */
#ifndef PKB_REPORT_INTERNAL_H
#define PKB_REPORT_INTERNAL_H

#include "report.h"
#include "stats.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* ---- text buffer ------------------------------------------------------------------------- */

/* A growable NUL-terminated string. An allocation failure is latched in `failed` (later appends
 * do nothing), so a renderer checks once at the end. */
typedef struct pkb__buf {
    char *data;
    size_t len, cap;
    bool failed;
} pkb__buf;

void pkb__buf_printf(pkb__buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pkb__buf_puts(pkb__buf *b, const char *s);
void pkb__buf_free(pkb__buf *b);

/* ---- the results file, validated --------------------------------------------------------- */

typedef struct pkb__series {
    /* borrowed from the JSON tree */
    const char *name, *scenario, *contender, *status, *unit;
    const char *reason;      /* NULL when the file gives none */
    const char *description; /* the contender's one line; NULL when the file gives none */
    bool baseline;
    double work; /* work_per_iteration, in the unit's numerator */
    /* samples_ns (owned); measured = status "measured" with at least one sample */
    double *samples;
    size_t n;
    bool measured;
    pks_summary sum; /* of samples (valid when measured); sd and cv NaN when n < 2 */
    size_t noisy;    /* repetitions flagged noisy (the `noisy` array, else procs_running > CPUs) */
} pkb__series;

typedef struct pkb__scenario {
    const char *name;
    size_t *members; /* indexes into series[], in file order */
    size_t count;
    long baseline;  /* index of the measured baseline series, -1 when none */
    long measured;  /* members that were measured */
    char stem[192]; /* plot file stem: <name>-<scenario>, sanitized */
} pkb__scenario;

typedef struct pkb__results {
    json_t *root;
    char file[256]; /* basename of the results file */
    char name[256]; /* ... without ".json": the report is <name>.md */
    pkb__series *series;
    size_t nseries;
    pkb__scenario *scenarios; /* contender.h's order first, then unknown ones as they appear */
    size_t nscenarios;
    long long logical_cpus;
} pkb__results;

/* Reads and validates `path`. Returns 0 or an error of pkb_report_render's reading/validation
 * kinds with the message in err. On error *r needs no freeing; on success pkb__results_free. */
int pkb__results_load(const char *path, pkb__results *r, char *err, size_t err_len);
void pkb__results_free(pkb__results *r);

/* ---- shared formatting ------------------------------------------------------------------- */

/* The unit a time of `ns` reads best in (ns, µs, ms, s): its name and ns per unit. */
const char *pkb__time_unit(double ns, double *scale);

/* Appends a file name made of `s` with every byte outside [A-Za-z0-9_.-] replaced by '_'. */
void pkb__buf_sanitized(pkb__buf *b, const char *s);

/* Markdown pieces (report.c): text for a sentence or a table cell (pipes escaped, newlines
 * flattened), a name as inline code, a delta as "+2.3%" (one decimal, never "-0.0%"). */
void pkb__md_text(pkb__buf *b, const char *s);
void pkb__md_code(pkb__buf *b, const char *s);
void pkb__fmt_delta(pkb__buf *b, double d);

/* report.c: the sections every suite's report shares — the title (first), and the appendix
 * (last: priming, settings, environment, footnotes); a JSON object as a field | value table. */
void pkb__md_title(const pkb__results *r, pkb__buf *b);
void pkb__md_appendix(const pkb__results *r, pkb__buf *b);
void pkb__md_object_table(pkb__buf *b, const json_t *obj);

/* report_verdict.c: the "Conclusions" section and its "Targets" subsection. */
void pkb__md_conclusions(const pkb__results *r, pkb__buf *b);
void pkb__md_targets(const pkb__results *r, pkb__buf *b);

/* ---- output -------------------------------------------------------------------------------- */

/* Writes data[0..len) to dir/name (created mode 0644, fsync'ed). Returns 0 or -errno. */
int pkb__write_file(const char *dir, const char *name, const char *data, size_t len);
/* Writes buffer b as <stem><suffix> in dir (plot.c); -ENOMEM when b failed to build. */
int pkb__write_buf(const char *dir, const char *stem, const char *suffix, pkb__buf *b);

/* plot.c: writes every scenario's .dat, .gp and .py into `dir` (the staging directory), runs
 * gnuplot and Python there, and checks the figures they wrote. Returns 0 or an error of
 * pkb_report_render's plotting kinds with the message in err. */
int pkb__plots_render(const pkb__results *r,
                      const char *dir,
                      const pkb_report_options *opts,
                      char *err,
                      size_t err_len);

/* Writes a one-line message (newlines folded to spaces) into err and returns rc. */
int pkb__fail(char *err, size_t err_len, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A JSON value as a Markdown table cell: strings as text, numbers shortest, arrays joined with
 * ", ", objects as compact JSON in backticks. */
void pkb__md_json_value(pkb__buf *b, const json_t *v);

/* report.c: the Markdown report. `plots`: link each scenario's figures. Returns 0 or -ENOMEM. */
int pkb__markdown(const pkb__results *r, bool plots, pkb__buf *out);

/* plot.c, for the phases and forkathon figures: a tool run (as for the scenario figures: captured
 * output, time limit, the tool's last line in err) and string literals for the two scripts. */
int pkb__run_tool(const char *what,
                  const char *const *argv,
                  const char *dir,
                  const char *const *env_set,
                  int64_t timeout_ms,
                  char *err,
                  size_t err_len);
void pkb__gp_string(pkb__buf *b, const char *s);
void pkb__py_string(pkb__buf *b, const char *s);

/* ---- the phases suite (suite "phases": report_phases.c, plot_phases.c) ---------------------- */

/* True when the file is a phases results file: its report is the phases report. */
bool pkb__phases_report(const pkb__results *r);
/* The Markdown report; -EBADMSG (a malformed phases field, named in err) or -ENOMEM. */
int pkb__phases_markdown(
    const pkb__results *r, bool plots, pkb__buf *out, char *err, size_t err_len);
/* The stacked-bar figure's .dat, .gp, .py, drawn by gnuplot and matplotlib into dir; errors as
 * pkb__plots_render. Draws nothing (and returns 0) when no composite could be reconciled. */
int pkb__phases_plots_render(const pkb__results *r,
                             const char *dir,
                             const pkb_report_options *opts,
                             char *err,
                             size_t err_len);
/* The figure's file stem into stem; false when there is no figure (nothing reconciled). */
bool pkb__phases_plot_stem(const pkb__results *r, char *stem, size_t cap);

#endif /* PKB_REPORT_INTERNAL_H */
