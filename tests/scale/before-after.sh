#!/usr/bin/env bash
# The fan-out at scale, before and after issue 36's library changes (`just fan-out-study`):
# reports/notes/2026-12-05-fan-out-at-scale.md quotes it.
#
# Builds a second pkbench from this tree with the library (lib/) of --base (default: the commit
# this branch left main at), so both binaries run the same harness, contenders and measuring
# worker and differ in processkit only; then runs the fan-out at scale with each, one after the
# other, renders both reports and compares the two files (`pkbench compare BEFORE AFTER`: per
# series the ratio with its bootstrap CI, judged against the machine's drift that the control
# series measure: the raw posix_spawn threads run no processkit code).
#
#   DIR/before.json, DIR/after.json     the two runs (pkbench writes each atomically)
#   DIR/report/                         their reports, with the log-log figures
#   DIR/compare.md, DIR/compare.json    after against before
#   DIR/study.log                       the load average before each run, the commands
#
# Nothing is lost: a complete results file is kept and not measured again, so an interrupted study
# continues where it stopped (--out DIR). Exit status: 0 done; 1 bad arguments, a failed build or
# run (named on stderr); 130 interrupted.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: tests/scale/before-after.sh [--base REF] [--sizes LIST] [--profile full|quick]
                                   [--filter REGEX] [--out DIR] [-- PKBENCH-RUN-OPTIONS...]

  --base REF      the library before (default: git merge-base HEAD main)
  --sizes LIST    the fan-out sizes (default 16,64,256,1024,4096)
  --profile P     pkbench's profile (default full). A run takes about 75 minutes on a quiet
                  2-CPU VM with either: 20 rounds of about 3.5 minutes, each series of N = 4096
                  running two iterations of 13-29 s a round (its settling and its sample),
                  longer than either profile's min_time; --sizes 16,64,256 makes it minutes
  --filter REGEX  the series (default the C contenders, whose code the library changes:
                  '^fan_out_[0-9]+/(processkit|posix_spawn|libuv|glib)$'; the language
                  workers call none of it)
  --out DIR       where the files go (default results/fan-out-study-<UTC time>); an existing
                  study directory is continued
  --help          this text
  -- ...          the rest goes to both `pkbench run`s (e.g. -- --repetitions 10)
USAGE
}

die() {
    printf 'fan-out-study: %s\n' "$*" >&2
    exit 1
}

root=$(cd "$(dirname "$0")/../.." && pwd)
base="" sizes=16,64,256,1024,4096 profile=full filter='^fan_out_[0-9]+/(processkit|posix_spawn|libuv|glib)$' out=""
extra=()
while [ $# -gt 0 ]; do
    case $1 in
    --) shift; extra=("$@"); break ;;
    --base) base=${2:?--base needs a git revision}; shift 2 ;;
    --sizes) sizes=${2:?--sizes needs a list}; shift 2 ;;
    --profile) profile=${2:?--profile needs full or quick}; shift 2 ;;
    --filter) filter=${2:?--filter needs a regular expression}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --help | -h) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
    esac
done
case $profile in full | quick) ;; *) die "--profile needs full or quick, got '$profile'" ;; esac
[[ $sizes =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--sizes needs comma-separated counts, got '$sizes'"
cd "$root"
if [ -z "$base" ]; then
    base=$(git merge-base HEAD main) || die "no merge base with main: give --base"
fi
git rev-parse --verify -q "$base^{commit}" >/dev/null || die "--base: '$base' is not a commit"
[ -n "$out" ] || out=results/fan-out-study-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out/report"
out=$(cd "$out" && pwd)
log=$out/study.log
trap 'echo "fan-out-study: interrupted; continue with --out $out" >&2; exit 130' INT TERM

say() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$log" >&2; }

# The "after" build is this tree's release build; the "before" one, this tree with lib/ at $base.
say "building the release build (after)"
cmake --preset release >/dev/null && cmake --build --preset release >>"$log" 2>&1 ||
    die "the release build failed (see $log)"
src=$out/before-src
if [ ! -x "$out/before-build/harness/pkbench" ]; then
    say "building the library of $base into a copy of this tree (before)"
    rm -rf "$src" && mkdir -p "$src"
    git archive HEAD | tar -x -C "$src"
    rm -rf "$src/lib" && git archive "$base" lib | tar -x -C "$src"
    cmake -S "$src" -B "$out/before-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DPK_BUILD_TESTS=OFF >>"$log" 2>&1 &&
        cmake --build "$out/before-build" --target pkbench >>"$log" 2>&1 ||
        die "the before build failed (see $log)"
fi

complete() { [ -f "$1" ] && python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])).get("complete") else 1)' "$1"; }

run() { # name pkbench
    if complete "$out/$1.json"; then
        say "$1.json is complete: kept"
        return
    fi
    say "running $1 (load average $(cut -d' ' -f1-3 /proc/loadavg)): $2 run --profile $profile --filter '$filter' --fan-out $sizes"
    "$2" run --suite scenarios --profile "$profile" --filter "$filter" --fan-out "$sizes" \
        --out "$out/$1.json" "${extra[@]}" 2>>"$log" || die "the $1 run failed (see $log)"
}
run before "$out/before-build/harness/pkbench"
run after build/release/harness/pkbench

after=build/release/harness/pkbench
"$after" report "$out/before.json" --out "$out/report" >/dev/null
"$after" report "$out/after.json" --out "$out/report" >/dev/null
set +e
"$after" compare "$out/before.json" "$out/after.json" --format md --out "$out/compare.md"
"$after" compare "$out/before.json" "$out/after.json" --format json --out "$out/compare.json"
set -e
say "done: $out/compare.md, $out/report/before.md, $out/report/after.md"
