#!/usr/bin/env bash
# The drift study (`just drift-study`): how often `pkbench compare` of two separate runs raises a
# false alarm, with and without its drift correction (harness/regress/drift.h), whether it still
# catches a real slowdown of processkit, and what it says when the whole machine slows down.
# reports/notes/2026-12-02-drift-study.md quotes a study's summary (`summarize.py --from-summary`
# regenerates its tables from the committed summary.json); METHODOLOGY.md ("Comparing two separate
# runs: machine drift") links it.
#
# Per pair i = 1..N, separate quick runs of the scenarios suite (each its own pkbench process,
# unpinned, a minute or two apart, as a user makes a "before" and an "after" run):
#
#   pair-i-base.json   the release build                                   (the "before")
#   pair-i-same.json   the same build again                                A/A: every alarm is false
#   pair-i-slow.json   a second build whose processkit spins --slowdown % of every run's lifetime
#                      after the reap (lib/src/inject.c): a real regression no control shares
#   pair-i-hog.json    the release build while --hogs busy loops run        the machine slowed
#                      (pairs 1..--hog-pairs only)
#
# base always runs first; same, slow and hog follow in an order rotated every pair, so none of
# them always runs right after base. Then every pair is compared (the base build's pkbench),
# with the correction and with --no-drift-correction, each with the default cv limit and with
# --cv-limit none (on a loaded machine the limit leaves most series undecidable, and the
# statistics alone are then what a user without it would get), as JSON in compare/, and
# tests/drift/summarize.py writes summary.json and summary.md from those files alone.
#
# Nothing is lost: a run whose file is complete is never repeated, so an interrupted study
# continues where it stopped (`--out DIR` of the study to continue); each run is written
# atomically by pkbench itself. The machine's load average is logged before every run (study.log)
# and each results file records its own at start and end.
#
# Exit status: 0 done; 1 bad arguments or a failed build, run or comparison (named on stderr);
# 130 interrupted.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: tests/drift/study.sh [--pairs N] [--hog-pairs N] [--hogs N] [--slowdown PCT]
                            [--out DIR] [--max-load L] [--max-wait S] [--analyse-only]

  --pairs N       pairs of runs (default 20)
  --hog-pairs N   of those, how many also get a run under a CPU hog (default: all)
  --hogs N        busy loops during a hog run (default 1)
  --slowdown PCT  the slowed build's delay, % of every run's lifetime (default 10)
  --out DIR       where the files go (default results/drift-study-<UTC time>); an existing
                  study directory is continued: complete runs are kept, the rest measured
  --max-load L    before each run, wait until the 1-minute load average is at most L ...
  --max-wait S    ... but never longer than S seconds (default 600), then run anyway (logged)
  --analyse-only  measure nothing: compare what DIR holds and write the summary
  --help          this text
USAGE
}

die() {
    printf 'drift-study: %s\n' "$*" >&2
    exit 1
}

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
is_number() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; }

pairs=20 hog_pairs= hogs=1 slowdown=10 out= max_load= max_wait=600 analyse_only=false
while [ $# -gt 0 ]; do
    opt=$1
    case $opt in
    --help | -h)
        usage
        exit 0
        ;;
    --analyse-only)
        analyse_only=true
        shift
        continue
        ;;
    --pairs | --hog-pairs | --hogs | --slowdown | --out | --max-load | --max-wait) ;;
    --*=*)
        set -- "${opt%%=*}" "${opt#*=}" "${@:2}"
        continue
        ;;
    *)
        usage >&2
        die "unknown argument '$opt'"
        ;;
    esac
    [ $# -ge 2 ] || die "$opt needs a value"
    val=$2
    shift 2
    case $opt in
    --pairs) is_uint "$val" && [ "$val" -ge 1 ] || die "--pairs needs a count of at least 1, got '$val'"
        pairs=$val ;;
    --hog-pairs) is_uint "$val" || die "--hog-pairs needs a count, got '$val'"
        hog_pairs=$val ;;
    --hogs) is_uint "$val" && [ "$val" -ge 1 ] || die "--hogs needs a count of at least 1, got '$val'"
        hogs=$val ;;
    --slowdown) is_uint "$val" && [ "$val" -ge 1 ] && [ "$val" -le 1000 ] ||
        die "--slowdown needs a percentage from 1 to 1000, got '$val'"
        slowdown=$val ;;
    --out) [ -n "$val" ] || die "--out needs a directory"
        out=$val ;;
    --max-load) is_number "$val" || die "--max-load needs a load average (e.g. 4 or 2.5), got '$val'"
        max_load=$val ;;
    --max-wait) is_uint "$val" || die "--max-wait needs seconds, got '$val'"
        max_wait=$val ;;
    esac
done
hog_pairs=${hog_pairs:-$pairs}
[ "$hog_pairs" -le "$pairs" ] || die "--hog-pairs ($hog_pairs) exceeds --pairs ($pairs)"

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
if [ -z "$out" ]; then
    $analyse_only && die "--analyse-only needs --out DIR (the study to analyse)"
    out=results/drift-study-$(date -u +%Y%m%dT%H%M%SZ)
fi
mkdir -p "$out/compare" || die "cannot create $out"
log=$out/study.log
say() {
    printf '%s %s\n' "$(date -u +%H:%M:%SZ)" "$*" | tee -a "$log" >&2
}

# ---- the two builds: identical but for the injected slowdown --------------------------------
build() {
    local dir=$1
    shift
    cmake --preset release -B "$dir" -DPK_BUILD_TESTS=OFF "$@" >"$out/build.log" 2>&1 ||
        { cat "$out/build.log" >&2; die "configuring $dir failed"; }
    cmake --build "$dir" --target pkbench >>"$out/build.log" 2>&1 ||
        { tail -30 "$out/build.log" >&2; die "building $dir failed"; }
}
say "building build/drift-base and build/drift-slow (slowdown $slowdown%)"
build build/drift-base -DPK_INJECT_SLOWDOWN_PCT=0
build build/drift-slow -DPK_INJECT_SLOWDOWN_PCT="$slowdown"
base_bin=build/drift-base/harness/pkbench
slow_bin=build/drift-slow/harness/pkbench

# ---- measuring --------------------------------------------------------------------------------
hog_pids=()
stop_hogs() {
    local pid
    for pid in "${hog_pids[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    hog_pids=()
}
interrupted() {
    stop_hogs
    say "interrupted; complete runs are kept in $out (run again with --out $out to continue)"
    exit 130
}
trap interrupted INT TERM
trap stop_hogs EXIT

complete() { [ -f "$1" ] && grep -q '"complete": true' "$1"; }
load1() { cut -d' ' -f1 /proc/loadavg; }

wait_for_quiet() {
    [ -n "$max_load" ] || return 0
    local waited=0
    while awk -v l="$(load1)" -v m="$max_load" 'BEGIN { exit !(l > m) }'; do
        if [ "$waited" -ge "$max_wait" ]; then
            say "load $(load1) still above $max_load after ${waited}s: running anyway"
            return 0
        fi
        [ "$waited" -eq 0 ] && say "waiting for the load ($(load1)) to fall to $max_load"
        sleep 15
        waited=$((waited + 15))
    done
}

# run_one KIND FILE: one quick run of the scenarios suite.
run_one() {
    local kind=$1 file=$2 bin=$base_bin i
    complete "$file" && return 0
    wait_for_quiet
    [ "$kind" = slow ] && bin=$slow_bin
    if [ "$kind" = hog ]; then
        for ((i = 0; i < hogs; i++)); do
            sh -c 'while :; do :; done' &
            hog_pids+=($!)
        done
    fi
    say "$(basename "$file" .json): load $(cut -d' ' -f1-3 /proc/loadavg)${hog_pids[*]:+, $hogs hog(s) running}"
    local start=$SECONDS rc=0
    "$bin" run --suite scenarios --profile quick --out "$file" 2>>"$out/runs.log" || rc=$?
    stop_hogs
    [ "$rc" -eq 130 ] && interrupted
    [ "$rc" -eq 0 ] || die "pkbench run for $file exited $rc (see $out/runs.log)"
    say "$(basename "$file" .json): done in $((SECONDS - start)) s"
}

if ! $analyse_only; then
    say "study in $out: $pairs pairs, $hog_pairs with $hogs hog(s), slowdown $slowdown%"
    for ((p = 1; p <= pairs; p++)); do
        kinds=(same slow)
        [ "$p" -le "$hog_pairs" ] && kinds+=(hog)
        run_one base "$out/pair-$p-base.json"
        n=${#kinds[@]}
        for ((k = 0; k < n; k++)); do
            kind=${kinds[$(((k + p) % n))]}
            run_one "$kind" "$out/pair-$p-$kind.json"
        done
    done
fi

# ---- comparing --------------------------------------------------------------------------------
say "comparing every pair (with and without the drift correction)"
for base in "$out"/pair-*-base.json; do
    [ -e "$base" ] || die "no pair in $out"
    stem=${base%-base.json}
    p=${stem##*/pair-}
    for kind in same slow hog; do
        new=$stem-$kind.json
        complete "$base" && complete "$new" || continue
        for mode in corrected raw corrected-nocv raw-nocv; do
            extra=()
            [[ $mode == raw* ]] && extra+=(--no-drift-correction)
            [[ $mode == *-nocv ]] && extra+=(--cv-limit none)
            dest=$out/compare/pair-$p-$kind-$mode.json
            rc=0
            "$base_bin" compare "$base" "$new" --format json --out "$dest" "${extra[@]}" \
                2>"$out/compare/pair-$p-$kind-$mode.stderr" || rc=$?
            [ "$rc" -eq 0 ] || [ "$rc" -eq 2 ] || [ "$rc" -eq 3 ] ||
                die "pkbench compare $base $new exited $rc: $(cat "$out/compare/pair-$p-$kind-$mode.stderr")"
        done
    done
done
python3 tests/drift/summarize.py "$out" --slowdown "$slowdown" --hogs "$hogs"
say "summary: $out/summary.md and $out/summary.json"
