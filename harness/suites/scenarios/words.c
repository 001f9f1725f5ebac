/*
 * The words a verdict is said in, shared by the table's cells (table.c) and the conclusions and
 * targets (verdict.c), so both say a pair's result the same way and neither reaches into the
 * other: where a series falls against its baseline (its bucket: results/verdict.h's word for the
 * pair, or why it has none) and that bucket's word, and a ratio's confidence interval written as
 * deltas.
 */
#include "suites/scenarios/view.h"

#include "common/md.h"

pkb__bucket pkb__bucket_of(const pkb_verdict *v)
{
    return (pkb__bucket)pkb_verdict_word_of(v);
}

pkb__bucket pkb__series_bucket(const pkb_results_series *s, const pkb_verdict *v)
{
    return !s->measured ? PKB__UNTIMED : v == NULL ? PKB__NO_BASELINE : pkb__bucket_of(v);
}

const char *pkb__bucket_word(pkb__bucket k)
{
    return k == PKB__UNTIMED       ? "not timed"
           : k == PKB__NO_BASELINE ? "no baseline"
                                   : pkb_verdict_word_name((pkb_verdict_word)k);
}

void pkb__fmt_ci(pkb_buf *b, const pks_interval *ci)
{
    pkb_buf_puts(b, "[");
    pkb_fmt_delta(b, ci->lo - 1);
    pkb_buf_puts(b, ", ");
    pkb_fmt_delta(b, ci->hi - 1);
    pkb_buf_puts(b, "]");
}
