/*
 * The registry: turns registry.h's list into the array pkbench walks (find.c looks suites up and
 * renders their reports; registry.windows.c is the Windows build's list).
 */
#include "suites/registry.h"
#include "suites/suite.h"

PKB_SUITE_LIST(PKB_SUITE_DECLARE)

const pkb_suite *const pkb_suites[] = {PKB_SUITE_LIST(PKB_SUITE_ENTRY)};
const size_t pkb_suite_count = sizeof pkb_suites / sizeof pkb_suites[0];
