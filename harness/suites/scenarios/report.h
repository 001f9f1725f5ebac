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
#include "results/verdict.h"

int pkb__scenarios_markdown(
    const pkb_results *r, bool plots, pkb_buf *out, char *err, size_t err_len);
int pkb__scenarios_figures(const pkb_results *r, pkb_figures *figs, char *err, size_t err_len);

/* verdict.c: where a contender's series falls against its scenario's baseline, from the
 * pair's verdict (results/verdict.h) — the words of the table's verdict column and of the
 * conclusions. */
typedef enum pkb__bucket {
    PKB__NEGLIGIBLE = 0,      /* "~" and |Δ| within the bar */
    PKB__NOT_DISTINGUISHABLE, /* "~" with a larger |Δ| that is not significant */
    PKB__SLOWER,              /* "regressed" */
    PKB__FASTER,              /* "improved" */
    PKB__UNDECIDABLE,         /* too few samples, too noisy */
    PKB__UNTIMED,             /* refused or failed */
    PKB__NO_BASELINE,         /* the scenario's baseline was not measured */
    PKB__NBUCKETS
} pkb__bucket;

pkb__bucket pkb__bucket_of(const pkb_verdict *v);
const char *pkb__bucket_word(pkb__bucket k);

/* verdict.c: the "Conclusions" section (from the file's verdict set, pkb_verdict_contenders
 * with each scenario's baseline) and its "Targets" subsection. */
void pkb__md_conclusions(const pkb_results *r, const pkb_verdict_set *vs, pkb_buf *b);
void pkb__md_targets(const pkb_results *r, pkb_buf *b);

#endif /* PKB_SUITES_SCENARIOS_REPORT_H */
