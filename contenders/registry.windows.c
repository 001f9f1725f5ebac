/*
 * The Windows build's registry (see registry.c), in report order: processkit three ways and the
 * baseline, CreateProcessW as a standard library uses it.
 */
#include "contenders/registry.h"

#define PKB_CONTENDER_LIST(X)                                                                      \
    X(processkit)                                                                                  \
    X(processkit_resolved_program)                                                                 \
    X(processkit_discard_stdout)                                                                   \
    X(createprocess)

#define PKB__DECLARE(name) extern const pkb_contender pkb_contender_##name;
PKB_CONTENDER_LIST(PKB__DECLARE)
#undef PKB__DECLARE

const pkb_contender *const pkb_contenders[] = {
#define PKB__ENTRY(name) &pkb_contender_##name,
    PKB_CONTENDER_LIST(PKB__ENTRY)
#undef PKB__ENTRY
};

const size_t pkb_contender_count = sizeof pkb_contenders / sizeof pkb_contenders[0];
