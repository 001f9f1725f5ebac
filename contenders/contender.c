/*
 * contender — the scenarios' names, units and descriptions, read from the contract's one table
 * (PKB_SCENARIO_MAP in contender.h), so the suite, `pkbench list` and the contenders name a
 * scenario the same way.
 */
#include "contenders/contender.h"

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
