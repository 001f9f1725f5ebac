/*
 * Private to the scenarios suite's folder: its report (report.c: the seed document's tables per
 * scenario; verdict.c: conclusions and targets) and its figures (figures.c: a bar chart per
 * scenario), which suite.c puts into the suite's registry entry.
 */
#ifndef PKB_SUITES_SCENARIOS_REPORT_H
#define PKB_SUITES_SCENARIOS_REPORT_H

#include "common/buf.h"
#include "report/report.h"
#include "results/results.h"

int pkb__scenarios_markdown(
    const pkb_results *r, bool plots, pkb_buf *out, char *err, size_t err_len);
int pkb__scenarios_figures(const pkb_results *r, pkb_figures *figs, char *err, size_t err_len);

/* verdict.c: the "Conclusions" section and its "Targets" subsection. */
void pkb__md_conclusions(const pkb_results *r, pkb_buf *b);
void pkb__md_targets(const pkb_results *r, pkb_buf *b);

#endif /* PKB_SUITES_SCENARIOS_REPORT_H */
