#!/usr/bin/env bash
# fleet-merge — the fleet's merge step: the merge job of .github/workflows/fleet.yml runs exactly
# this, and the site stage of ./x test runs it on files from this machine and from pkbench.exe
# under Wine, so the path the fleet's results take is the one tested here.
#
# Usage: tests/site/fleet-merge.sh PKBENCH FLEET OUT [TITLE [PUBLISH-OPTION...]]
#   FLEET   every runner's results files, as actions/download-artifact lays them out
#           (FLEET/results-<runner>/<suite>-<runner>.json)
#   OUT/table/fleet.md, fleet.json   `pkbench report FLEET`: one table per suite, a column per
#                                    host and platform, each cell a same-host ratio
#   OUT/site/                        `pkbench publish FLEET --ratio`: the site (index.html)
# PUBLISH-OPTIONs go to `pkbench publish` (--no-plots, --repo DIR). The table is printed on
# stdout as well. Exit status: 0, or pkbench's when a step failed.
set -euo pipefail
if [ $# -lt 3 ]; then
    echo "usage: tests/site/fleet-merge.sh PKBENCH FLEET OUT [TITLE [PUBLISH-OPTION...]]" >&2
    exit 2
fi
pkbench=$1
fleet=$2
out=$3
title=${4:-processkit fleet}
shift $(($# < 4 ? $# : 4))
echo "fleet-merge: the runners' results files:"
find "$fleet" -name '*.json' | sort | sed 's/^/  /'
"$pkbench" report "$fleet" --out "$out/table" --name fleet --print
"$pkbench" publish "$fleet" --out "$out/site" --ratio --title "$title" "$@"
