/*
 * contender — the scenarios' names, units and descriptions, read from the contract's one table
 * (PKB_SCENARIO_MAP in contender.h), so the suite, `pkbench list` and the contenders name a
 * scenario the same way; each scenario's kind, as the worker protocol names it; and a series'
 * set-up through whichever of setup and prepare the contender has.
 */
#include "contenders/contender.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *pkb_scenario_name(pkb_scenario s)
{
    switch (s) {
#define PKB__SCENARIO_NAME(id, name, unit, desc)                                                   \
    case PKB_##id:                                                                                 \
        return name;
        PKB_SCENARIO_MAP(PKB__SCENARIO_NAME)
#undef PKB__SCENARIO_NAME
    case PKB_SCENARIO_COUNT:
        break;
    }
    return "unknown";
}

const char *pkb_scenario_unit(pkb_scenario s)
{
    switch (s) {
#define PKB__SCENARIO_UNIT(id, name, unit, desc)                                                   \
    case PKB_##id:                                                                                 \
        return unit;
        PKB_SCENARIO_MAP(PKB__SCENARIO_UNIT)
#undef PKB__SCENARIO_UNIT
    case PKB_SCENARIO_COUNT:
        break;
    }
    return "";
}

const char *pkb_scenario_description(pkb_scenario s)
{
    switch (s) {
#define PKB__SCENARIO_DESC(id, name, unit, desc)                                                   \
    case PKB_##id:                                                                                 \
        return desc;
        PKB_SCENARIO_MAP(PKB__SCENARIO_DESC)
#undef PKB__SCENARIO_DESC
    case PKB_SCENARIO_COUNT:
        break;
    }
    return "";
}

int pkb_scenario_from_name(const char *name)
{
    for (int s = 0; s < PKB_SCENARIO_COUNT; s++)
        if (strcmp(name, pkb_scenario_name((pkb_scenario)s)) == 0)
            return s;
    return -1;
}

const char *pkb_scenario_kind(pkb_scenario s)
{
    /* A new scenario must say which kind it is: -Wswitch flags a missing case. */
    switch (s) {
    case PKB_SPAWN_CAPTURE_SMALL:
        return "capture";
    case PKB_STREAM_LARGE_STDOUT:
        return "stream";
    case PKB_CONCURRENT_FAN_OUT:
        return "fan_out";
    case PKB_SPAWN_ONLY:
        return "spawn_only";
    case PKB_SCENARIO_COUNT:
        break;
    }
    return "unknown";
}

int pkb_contender_setup(
    const pkb_contender *c, void **state, const pkb_workload *w, char *why, size_t why_len)
{
    *state = NULL;
    if (why_len > 0)
        why[0] = '\0';
    if (c->prepare != NULL)
        return c->prepare(state, w, why, why_len);
    int rc = c->setup != NULL ? c->setup(state, w) : 0;
    if (rc != 0)
        snprintf(why, why_len, "%s: set-up failed: %s", c->name, strerror(rc < 0 ? -rc : rc));
    return rc;
}
