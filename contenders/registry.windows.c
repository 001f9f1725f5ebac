/*
 * The Windows build's registry: registry.windows.h's list as the array pkbench walks.
 */
#include "suites/scenarios/contender.h"
#include "registry.windows.h"

#define PKB__DECLARE(name) extern const pkb_contender pkb_contender_##name;
PKB_CONTENDER_LIST(PKB__DECLARE)
#undef PKB__DECLARE

const pkb_contender *const pkb_contenders[] = {
#define PKB__ENTRY(name) &pkb_contender_##name,
    PKB_CONTENDER_LIST(PKB__ENTRY)
#undef PKB__ENTRY
};

const size_t pkb_contender_count = sizeof pkb_contenders / sizeof pkb_contenders[0];
