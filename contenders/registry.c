/*
 * The registry: the contenders pkbench knows, in report order, one line each. A contender's file
 * defines `const pkb_contender pkb_contender_<name>` (contender.h); its line here is all the
 * harness needs. (The file of `processkit` is processkit_default.c: a file named processkit.c
 * would read as the library's header's.)
 */
#include "contenders/registry.h"

#define PKB_CONTENDER_LIST(X)                                                                      \
    X(processkit)                                                                                  \
    X(processkit_resolved_program)                                                                 \
    X(processkit_discard_stdout)                                                                   \
    X(posix_spawn)                                                                                 \
    X(vfork_exec)                                                                                  \
    X(fork_exec)                                                                                   \
    X(libuv)                                                                                       \
    X(glib)

#define PKB__DECLARE(name) extern const pkb_contender pkb_contender_##name;
PKB_CONTENDER_LIST(PKB__DECLARE)
#undef PKB__DECLARE

const pkb_contender *const pkb_contenders[] = {
#define PKB__ENTRY(name) &pkb_contender_##name,
    PKB_CONTENDER_LIST(PKB__ENTRY)
#undef PKB__ENTRY
};

const size_t pkb_contender_count = sizeof pkb_contenders / sizeof pkb_contenders[0];
