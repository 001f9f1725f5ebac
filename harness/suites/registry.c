/*
 * The registry: turns registry.h's list into the array pkbench walks (find.c looks suites up and
 * renders their reports; registry.windows.c is the Windows build's list).
 */
#include "suites/registry.h"
#include "suites/suite.h"

#define PKB__DECLARE(name) extern const pkb_suite pkb_suite_##name;
PKB_SUITE_LIST(PKB__DECLARE)
#undef PKB__DECLARE

const pkb_suite *const pkb_suites[] = {
#define PKB__ENTRY(name) &pkb_suite_##name,
    PKB_SUITE_LIST(PKB__ENTRY)
#undef PKB__ENTRY
};

const size_t pkb_suite_count = sizeof pkb_suites / sizeof pkb_suites[0];
