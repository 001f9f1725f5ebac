/*
 * multi — the site's pages over many files (private to harness/publish/): the table across hosts
 * (report/cross.h) when the files come from two hosts or more, and a history per host
 * (report/history.h) whose suite was measured three times or more. Each is the report room's own
 * document — its Markdown, its JSON and its figures, written by the same code as `pkbench report
 * FILE...` and `pkbench history` — turned into a page inside the site's frame.
 */
#ifndef PKB_PUBLISH_MULTI_H
#define PKB_PUBLISH_MULTI_H

#include "publish/view.h"

#include <stddef.h>

/* cross-host/index.html (with cross-host.md and .json) when the published files come from two
 * hosts or more (host and platform); s->cross_hosts says how many, 0 when there is no page.
 * Returns 0, or a negative errno with the message in err. */
int pkb__multi_cross(struct pkb__site *s, char *err, size_t err_len);

/* history/<host>--<platform>/index.html per host (its name and platform, as report/history.h
 * groups a history) that measured a suite in three files or more, recorded in s->histories. Errors
 * as pkb__multi_cross. */
int pkb__multi_histories(struct pkb__site *s, char *err, size_t err_len);

/* Frees what the two recorded in s. */
void pkb__multi_free(struct pkb__site *s);

#endif /* PKB_PUBLISH_MULTI_H */
