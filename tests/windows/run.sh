#!/bin/sh
# Runs the Windows build under Wine: first the test runner (pk_tests.exe), then, when the build has
# the benchmark harness, a quick pkbench.exe run of each suite whose results file must validate
# against harness/results/schema.json and render with `pkbench.exe report`, and the Linux pkbench's
# table of its scenarios file beside a committed Linux file. Wine gets a private
# WINEPREFIX inside the build tree (created on first use, a few seconds), WINEDEBUG=-all, and the
# tests' timeouts are scaled for Wine's slower process start. Arguments name tests; with any, only
# those tests run (no benchmark smoke).
# Exit status: 0 all passed; 1 a test or a smoke step failed (named), or Wine is missing; 2 bad usage.
set -eu
build=${1:?usage: tests/windows/run.sh BUILD_DIR [TEST...]}
shift
here=$(cd "$(dirname "$0")/../.." && pwd)
wine=/usr/lib/wine/wine64
if [ ! -x "$wine" ]; then
    wine=$(command -v wine64 || command -v wine || true)
fi
if [ -z "$wine" ] || [ ! -x "$wine" ]; then
    echo "tests/windows/run.sh: Wine not found (Debian package wine64)" >&2
    exit 1
fi
build=$(cd "$build" && pwd)
WINEPREFIX=$build/wine
WINEDEBUG=-all
PK_TEST_TIMEOUT_MULTIPLIER=${PK_TEST_TIMEOUT_MULTIPLIER:-3}
export WINEPREFIX WINEDEBUG PK_TEST_TIMEOUT_MULTIPLIER
"$wine" --version
status=0
"$wine" "$build/tests/windows/pk_tests.exe" "$@" || status=$?

# A quick run of each suite (the quick profile, no priming; the 16-way series left out, as they
# take most of the time under Wine and the loop test above covers 16 children): the file must
# validate and render. Wine's timings mean nothing; the point is that the Windows harness works.
pkbench=$build/harness/pkbench.exe
if [ $# -eq 0 ] && [ -f "$pkbench" ]; then
    out=$build/windows-smoke
    rm -rf "$out" && mkdir -p "$out"
    # `pkbench.exe list`: the Windows suites and contenders, and nothing that needs fork.
    if "$wine" "$pkbench" list >"$out/list.txt" 2>&1 && grep -q '^phases ' "$out/list.txt" &&
        grep -q '^createprocess (baseline, control)' "$out/list.txt" &&
        ! grep -q -e '^forkathon' -e '^posix_spawn' "$out/list.txt"; then
        echo "ok - pkbench.exe list: the Windows suites and contenders"
    else
        echo "not ok - pkbench.exe list"
        sed 's/^/#   /' "$out/list.txt"
        status=1
    fi
    for suite in scenarios phases; do
        json=$out/$suite.json
        filter='^(spawn_capture_small|stream_large_stdout|spawn_only)/'
        [ $suite = phases ] && filter='^(phase|primitive)/'
        # A short settle: the file's schema and report are checked here, not the settling. Under
        # load Wine's CreateProcessW now and then fails with its internal error (Win32 error 1359)
        # and the run exits 4 naming the series: that run is said and taken once more.
        for attempt in 1 2; do
            rc=0
            "$wine" "$pkbench" run --suite $suite --profile quick --no-prime --filter "$filter" \
                --settle 0.01 --out "$(printf 'Z:%s' "$json" | tr / '\\')" \
                >"$out/$suite.log" 2>&1 || rc=$?
            [ $attempt = 1 ] && [ $rc = 4 ] && grep -q 'Win32 error 1359' "$out/$suite.log" || break
            echo "# pkbench.exe run --suite $suite: Wine's internal error 1359 failed a series; once more"
            mv "$out/$suite.log" "$out/$suite-attempt1.log"
        done
        if [ $rc = 0 ] &&
            /usr/bin/python3 - "$here/harness/results/schema.json" "$json" <<'PY' &&
import json, sys
import jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
PY
            "$wine" "$pkbench" report "$(printf 'Z:%s' "$json" | tr / '\\')" \
                --out "$(printf 'Z:%s' "$out/report" | tr / '\\')" --no-plots \
                >>"$out/$suite.log" 2>&1 &&
            [ -s "$out/report/$suite.md" ]; then
            echo "ok - pkbench.exe run --suite $suite: validates and renders ($out/report/$suite.md)"
        else
            echo "not ok - pkbench.exe run --suite $suite (log: $out/$suite.log)"
            tail -n 20 "$out/$suite.log" | sed 's/^/#   /'
            status=1
        fi
    done
    # One table of a Linux file of this VM (committed) and the Wine file just written, by the
    # Linux pkbench (`pkbench report FILE...`): a column per platform, same-host ratios, and the
    # keys that differ between them named.
    linux_pkbench=""
    for b in "$here/build/dev" "$here/build/release"; do
        [ -x "$b/harness/pkbench" ] && linux_pkbench=$b/harness/pkbench && break
    done
    table=$out/table/linux-and-wine.md
    if [ -z "$linux_pkbench" ]; then
        echo "ok - # SKIP [build] no Linux pkbench (build/dev): the Linux and Wine table is not checked"
    elif [ -s "$out/scenarios.json" ] &&
        "$linux_pkbench" report "$here/tests/data/table-linux-quick.json" "$out/scenarios.json" \
            --out "$out/table" --name linux-and-wine >"$out/table.log" 2>&1 &&
        grep -q '^| series | vm · Linux | .* · Windows (Wine [^|]*) |$' "$table" &&
        grep -q '^| `spawn_only/processkit` | \(\*\*\)\{0,1\}[0-9.]*×' "$table" &&
        grep -q 'keys differ inside rows' "$table" && grep -q '^> - `kernel`: ' "$table" &&
        grep -q '^> - `spawn`: ' "$table"; then
        echo "ok - pkbench report of a Linux file and a Wine file: one table ($table)"
    else
        echo "not ok - pkbench report of a Linux file and a Wine file (log: $out/table.log)"
        sed 's/^/#   /' "$out/table.log" "$table" 2>/dev/null | tail -n 30
        status=1
    fi
fi
# Our prefix's wineserver lingers a few seconds after the last process; end it now.
"$(dirname "$wine")/wineserver" -k 2>/dev/null || true
exit $status
