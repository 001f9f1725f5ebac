/*
 * `pkbench list`: the suites of the registry, the scenarios suite's contenders with the scenarios
 * each one runs, and the suite's own control series — what a user picks --suite, --filter and
 * --worker from.
 */
#include "suites/suite.h"

#include "contenders/registry.h"

#include <stdio.h>

void pkb_suites_list(pkb_buf *out)
{
    pkb_buf_printf(out, "%-12s %s\n", "suite", "what it measures");
    for (size_t i = 0; i < pkb_suite_count; i++)
        pkb_buf_printf(out, "%-12s %s\n", pkb_suites[i]->name, pkb_suites[i]->description);
    pkb_buf_printf(out, "\nThe scenarios suite's contenders:\n\n%-32s", "contender");
    for (int s = 0; s < PKB_SCENARIO_COUNT; s++)
        pkb_buf_printf(out, " %-20s",
                       s == PKB_FAN_OUT_SCALE ? "fan_out_<N>" : pkb_scenario_name((pkb_scenario)s));
    pkb_buf_puts(out, "\n");
    for (size_t k = 0; k < pkb_contender_count; k++) {
        const pkb_contender *c = pkb_contenders[k];
        char name[64];
        snprintf(name, sizeof name, "%s%s", c->name,
                 c->baseline && c->control ? " (baseline, control)"
                 : c->baseline             ? " (baseline)"
                 : c->control              ? " (control)"
                                           : "");
        pkb_buf_printf(out, "%-32s", name);
        for (int s = 0; s < PKB_SCENARIO_COUNT; s++)
            pkb_buf_printf(out, " %-20s", c->scenarios & PKB_SCENARIO_BIT(s) ? "yes" : "-");
        pkb_buf_puts(out, "\n");
    }
    pkb_buf_puts(out, "\n");
    for (size_t k = 0; k < pkb_contender_count; k++)
        pkb_buf_printf(out, "%-30s %s\n", pkb_contenders[k]->name, pkb_contenders[k]->description);
    pkb_buf_printf(
        out,
        "\nAnd one series of the suite's own, %s/%s (control): %s.\n"
        "Controls cannot change with the library: pkbench compare measures the machine's drift\n"
        "between two runs from them and corrects the other series for it.\n",
        PKB_CALIBRATION_SCENARIO, PKB_CALIBRATION_CONTENDER, PKB_CALIBRATION_DESCRIPTION);
}
