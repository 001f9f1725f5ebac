/*
 * The contenders pkbench knows, in report order: what the scenarios suite (and `pkbench list`)
 * walks. The list itself is registry.c (registry.windows.c for the Windows build): one line per
 * contender, whose file defines `const pkb_contender pkb_contender_<name>` (contender.h).
 */
#ifndef PKB_CONTENDERS_REGISTRY_H
#define PKB_CONTENDERS_REGISTRY_H

#include "contenders/contender.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

extern const pkb_contender *const pkb_contenders[];
extern const size_t pkb_contender_count;

#ifdef __cplusplus
}
#endif

#endif /* PKB_CONTENDERS_REGISTRY_H */
