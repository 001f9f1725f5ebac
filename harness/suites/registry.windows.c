/*
 * The Windows build's registry: registry.windows.h's list as the array pkbench walks.
 */
#include "suites/registry.windows.h"
#include "suites/suite.h"

PKB_SUITE_LIST(PKB_SUITE_DECLARE)

const pkb_suite *const pkb_suites[] = {PKB_SUITE_LIST(PKB_SUITE_ENTRY)};
const size_t pkb_suite_count = sizeof pkb_suites / sizeof pkb_suites[0];
