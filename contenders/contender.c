/*
 * contender — the scenarios' names, units and descriptions, read from the contract's one table
 * (PKB_SCENARIO_MAP in contender.h), so the suite, `pkbench list` and the contenders name a
 * scenario the same way; the names of the fan-out at scale, one scenario per size
 * ("fan_out_256"); each scenario's kind, as the worker protocol names it; and a series' set-up
 * through whichever of setup and prepare the contender has.
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

int pkb_scenario_parse(const char *name, int *children)
{
    if (children != NULL)
        *children = 0;
    for (int s = 0; s < PKB_SCENARIO_COUNT; s++) {
        if (s == PKB_FAN_OUT_SCALE || strcmp(name, pkb_scenario_name((pkb_scenario)s)) != 0)
            continue;
        if (children != NULL)
            *children = s == PKB_CONCURRENT_FAN_OUT ? 16 : 1;
        return s;
    }
    /* "fan_out_<N>": N decimal, 1..PKB_FAN_OUT_MAX, no sign, no leading zero. */
    const char *prefix = pkb_scenario_name(PKB_FAN_OUT_SCALE);
    size_t k = strlen(prefix);
    if (strncmp(name, prefix, k) != 0 || name[k] != '_' || name[k + 1] < '1' || name[k + 1] > '9')
        return -1;
    long n = 0;
    for (const char *p = name + k + 1; *p != '\0'; p++) {
        if (*p < '0' || *p > '9' || (n = n * 10 + (*p - '0')) > PKB_FAN_OUT_MAX)
            return -1;
    }
    if (children != NULL)
        *children = (int)n;
    return PKB_FAN_OUT_SCALE;
}

int pkb_scenario_from_name(const char *name)
{
    return pkb_scenario_parse(name, NULL);
}

void pkb_scenario_fan_out_name(int children, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s_%d", pkb_scenario_name(PKB_FAN_OUT_SCALE), children);
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
    case PKB_FAN_OUT_SCALE:
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
