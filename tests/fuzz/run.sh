#!/usr/bin/env bash
# tests/fuzz/run.sh — runs the libFuzzer targets built by the fuzz preset (`just fuzz-smoke`,
# `just fuzz`; README.md here explains the targets).
#
#   tests/fuzz/run.sh [--time SECONDS | --runs N] [--jobs J] [TARGET...]
#
# Defaults: 20 seconds per target, as many targets at once as there are CPUs, every target.
# Each target starts from its committed seeds (tests/fuzz/corpus/<name>, all replayed first, so a
# regression input kept there fails the run) plus what earlier runs found (build/fuzz/corpus/
# <name>, where new inputs go), with tests/fuzz/<name>.dict when there is one. A crash, leak,
# sanitizer report, timeout or failed property stops that target, leaves the input in
# build/fuzz/artifacts/ and makes the run exit 1. One line per target gives its executions.
set -euo pipefail
cd "$(dirname "$0")/../.."

limit=(-max_total_time=20)
jobs=$(nproc 2>/dev/null || echo 2)
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
    --time) limit=(-max_total_time="$2"); shift 2 ;;
    --runs) limit=(-runs="$2"); shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("${1#fuzz_}"); shift ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=(lines capture results parse)

bin=build/fuzz/tests/fuzz
mkdir -p build/fuzz/artifacts build/fuzz/logs
for t in "${targets[@]}"; do
    if [ ! -x "$bin/fuzz_$t" ]; then
        echo "run.sh: $bin/fuzz_$t is missing (build it: cmake --build --preset fuzz)" >&2
        exit 2
    fi
done

# A 64 MiB quarantine (not 256) still holds a freed block for thousands of executions, and
# halves the page faults of fresh memory: about a third more executions per second.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:quarantine_size_mb=64}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

run_one() {
    local t=$1 log=build/fuzz/logs/$1.log
    local opts=()
    [ -f "tests/fuzz/$t.dict" ] && opts+=(-dict="tests/fuzz/$t.dict")
    # The line targets repeat short payloads into long lines themselves (feed.h); long inputs
    # would only make every execution slower.
    case "$t" in
    lines | capture) opts+=(-max_len=1024) ;;
    parse) opts+=(-max_len=256) ;;
    esac
    mkdir -p "build/fuzz/corpus/$t"
    local t0 rc=0
    t0=$(date +%s.%N)
    "$bin/fuzz_$t" "${limit[@]}" "${opts[@]}" -timeout=25 -print_final_stats=1 \
        -artifact_prefix="build/fuzz/artifacts/$t-" "build/fuzz/corpus/$t" "tests/fuzz/corpus/$t" \
        >"$log" 2>&1 || rc=$?
    echo "$rc $(date +%s.%N) $t0" >"build/fuzz/logs/$t.status"
}

running=0
for t in "${targets[@]}"; do
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait

failed=0
for t in "${targets[@]}"; do
    log=build/fuzz/logs/$t.log
    read -r rc t1 t0 <"build/fuzz/logs/$t.status"
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    corpus=$(grep -o 'corp: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    if [ "$rc" = 0 ]; then
        printf 'fuzz_%-8s ok      %10s executions in %6s s, corpus %s\n' "$t" "${execs:-?}" \
            "$secs" "${corpus:-?}"
    else
        failed=1
        printf 'fuzz_%-8s FAILED  (exit %s after %s s, %s executions)\n' "$t" "$rc" "$secs" \
            "${execs:-?}"
        { grep -E -A3 'property failed|ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error' \
            "$log" || tail -5 "$log"; } | head -20 | sed 's/^/    /'
        grep -E 'Test unit written to' "$log" | sed 's/^/    /' || true
        echo "    full log: $log"
    fi
done
exit "$failed"
