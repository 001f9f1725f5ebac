#!/usr/bin/env bash
# Every test stage of `./x test`, side by side where they can be (the machine has 2 CPUs and most
# of a stage's time is waiting: children, sleeps, Wine): first every build the stages need, two at
# a time, then three lanes at once —
#   lane 1: the Debug suite (pk_tests -j 2), then the site (pkbench publish in headless Chromium,
#           the fleet's workflow through actionlint: tests/site/run.sh)
#   lane 2: the ASan+UBSan suite (pk_tests -j 2, timeouts x4)
#   lane 3: the Windows build under Wine, the fuzz smoke, the install test, the format check, the
#           release build
# The two suites share one machine-wide lock (tests/alone.h: a test that measures time runs with
# no other test beside it, and runs last); lane 3 holds that lock shared while it runs, so such a
# test never runs beside Wine or a fuzzer either.
#
# Each stage writes build/stages/<name>.log; a line per stage says when it starts and how it ended,
# a line a minute says what still runs, and a failed stage's failures and last lines are printed.
# Usage: tests/stages.sh [STAGE...]   (default: every stage; names: dev asan windows fuzz install
# fmt site release). Exit status: 0 every stage passed, 1 a stage failed (named), 2 bad usage.
set -uo pipefail
cd "$(dirname "$0")/.."

all="dev asan windows fuzz install fmt site release"
want=${*:-$all}
for s in $want; do
    case " $all " in *" $s "*) ;; *)
        echo "tests/stages.sh: no stage '$s' (stages: $all)" >&2
        exit 2
        ;;
    esac
done
wants() { case " $want " in *" $1 "*) return 0 ;; esac; return 1; }

logs=build/stages
mkdir -p "$logs"
lock=${PK_TEST_LOCK:-/tmp/pk_tests.$(id -u).lock}
export PK_TEST_LOCK=$lock
t0=$(date +%s)
say() { printf 'stages: [%4ds] %s\n' $(($(date +%s) - t0)) "$*"; }

# Runs one stage's command, its output to its log; records its status in $logs/<name>.rc.
stage() {
    local name=$1
    shift
    say "$name: started"
    local start rc
    start=$(date +%s)
    "$@" >"$logs/$name.log" 2>&1
    rc=$?
    echo "$rc" >"$logs/$name.rc"
    if [ "$rc" = 0 ]; then
        say "$name: passed in $(($(date +%s) - start)) s ($(tail -n 1 "$logs/$name.log"))"
    else
        say "$name: FAILED (exit $rc) in $(($(date +%s) - start)) s; see $logs/$name.log"
    fi
    return "$rc"
}

build() {
    [ -f "build/$1/build.ninja" ] || cmake --preset "$1" >/dev/null || return 1
    cmake --build --preset "$1"
}

rm -f "$logs"/*.rc
# The builds, two at a time (each one's compiler jobs already fill the CPUs; two keep the linker
# and CMake's own steps from leaving them idle).
builds=""
wants dev && builds="$builds dev"
wants install && ! wants dev && builds="$builds dev"
wants site && ! wants dev && ! wants install && builds="$builds dev"
wants asan && builds="$builds asan"
wants fuzz && builds="$builds fuzz"
wants windows && builds="$builds windows"
# The Windows build's libraries (cross-built once, 45 s on a fresh machine) beside the first two
# builds; the Windows build waits for them.
deps=""
if wants windows; then
    stage windows-deps cmake/windows-deps.sh build/windows-deps &
    deps=$!
fi
set -- $builds
while [ $# -gt 0 ]; do
    if [ "$1" = windows ] || [ "${2-}" = windows ]; then
        if [ -n "$deps" ] && ! wait "$deps"; then exit 1; fi
        deps=""
    fi
    stage "build-$1" build "$1" &
    a=$!
    b=""
    if [ $# -gt 1 ]; then
        stage "build-$2" build "$2" &
        b=$!
    fi
    wait "$a" || { wait $b 2>/dev/null; exit 1; }
    if [ -n "$b" ]; then wait "$b" || exit 1; fi
    shift $(($# > 1 ? 2 : 1))
done
if [ -n "$deps" ] && ! wait "$deps"; then exit 1; fi

lane1() {
    local rc=0
    if wants dev; then stage dev build/dev/tests/pk_tests -j 2 || rc=1; fi
    if wants site; then stage site tests/site/run.sh build/dev || rc=1; fi
    return $rc
}
lane2() {
    wants asan || return 0
    PK_TEST_TIMEOUT_MULTIPLIER=4 ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=0 \
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 stage asan build/asan/tests/pk_tests -j 2
}
# Lane 3 holds the tests' lock shared, one stage after another: a test that must be alone waits
# for it. The lock's descriptor is this subshell's, so it is released when the lane ends.
lane3() {
    exec 9>>"$lock"
    flock -s 9
    local rc=0
    if wants windows; then stage windows tests/windows/run.sh build/windows || rc=1; fi
    if wants fuzz; then stage fuzz tests/fuzz/run.sh --time 20 || rc=1; fi
    if wants install; then stage install tests/install/run.sh build/dev || rc=1; fi
    if wants fmt; then stage fmt just fmt-check || rc=1; fi
    # The release build (what `./x bench` measures with) compiles with warnings as errors; its
    # optimizer finds warnings the others do not. Here, where the lane has time to spare; still
    # under the lock, so that no test that must be alone measures beside the compiler.
    if wants release; then stage release build release || rc=1; fi
    return $rc
}

lane1 &
p1=$!
lane2 &
p2=$!
lane3 &
p3=$!
# A line a minute while the lanes run, so a long wait is never silent.
# The sleep is killed with the ticker: left running, it would hold our stdout (a pipe to CI's log)
# open for up to a minute after the last stage.
(
    nap=""
    trap '[ -n "$nap" ] && kill $nap 2>/dev/null; exit 0' TERM
    while :; do
        sleep 60 &
        nap=$!
        wait $nap
        running=""
        for s in $all; do
            if wants "$s" && [ -f "$logs/$s.log" ] && [ ! -f "$logs/$s.rc" ]; then
                running="$running $s"
            fi
        done
        [ -n "$running" ] && say "running:$running"
    done
) &
ticker=$!
status=0
wait $p1 || status=1
wait $p2 || status=1
wait $p3 || status=1
kill $ticker 2>/dev/null
wait $ticker 2>/dev/null

failed=""
for s in $want; do
    rc=$(cat "$logs/$s.rc" 2>/dev/null || echo missing)
    if [ "$rc" != 0 ]; then
        failed="$failed $s"
        echo "---- $s (exit $rc), from $logs/$s.log ----"
        # A suite's failures with their diagnostics, then the end of the log.
        grep -A 30 '^not ok' "$logs/$s.log" 2>/dev/null | grep -E '^(not ok|#|--)' | head -n 200
        tail -n 30 "$logs/$s.log" 2>/dev/null
    fi
done
if [ -n "$failed" ] || [ "$status" != 0 ]; then
    say "FAILED:${failed:- (a lane)}"
    exit 1
fi
say "every stage passed:$(printf ' %s' $want)"
