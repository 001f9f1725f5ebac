#!/bin/sh
# Runs the Windows test runner (the `windows` preset's pk_tests.exe) under Wine: a private
# WINEPREFIX inside the build tree (created on first use, a few seconds), WINEDEBUG=-all, and the
# timeouts scaled for Wine's slower process start. Arguments go to pk_tests.exe (test names).
# Exit status: pk_tests.exe's (0 all passed, 1 a test failed, 2 bad usage); 1 when Wine is missing.
set -eu
build=${1:?usage: tests/windows/run.sh BUILD_DIR [TEST...]}
shift
wine=/usr/lib/wine/wine64
if [ ! -x "$wine" ]; then
    wine=$(command -v wine64 || command -v wine || true)
fi
if [ -z "$wine" ] || [ ! -x "$wine" ]; then
    echo "tests/windows/run.sh: Wine not found (Debian package wine64)" >&2
    exit 1
fi
WINEPREFIX=$(cd "$build" && pwd)/wine
WINEDEBUG=-all
PK_TEST_TIMEOUT_MULTIPLIER=${PK_TEST_TIMEOUT_MULTIPLIER:-3}
export WINEPREFIX WINEDEBUG PK_TEST_TIMEOUT_MULTIPLIER
"$wine" --version
status=0
"$wine" "$build/tests/windows/pk_tests.exe" "$@" || status=$?
# Our prefix's wineserver lingers a few seconds after the last process; end it now.
"$(dirname "$wine")/wineserver" -k 2>/dev/null || true
exit $status
