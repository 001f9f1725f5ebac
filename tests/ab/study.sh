#!/usr/bin/env bash
# The ab study (`just ab-study`): how well `pkbench ab` decides, against what separate runs decide
# on the same builds in the same time. summarize.py turns the results into summary.json and the
# dated note (reports/notes/<date>-ab-study.md), and puts the done-when and the verdicts per kind
# into METHODOLOGY.md's ab-study block ("Two builds in one run"; `just fmt-check` fails when that
# block is not what its summary.json renders); `summarize.py DIR --from-summary` renders them all
# again from summary.json alone.
#
# The builds are revisions of a scratch repository, DIR/repo, made from this tree's
# CMakeLists.txt and lib/: `base`; `slow3` and `slow1`, base with lib/CMakeLists.txt's
# PK_INJECT_EXTRA_RUN_PCT set to 3 and 1 (lib/src/inject_run.c: every (100/N)-th pk_run whose
# streams are no pipe first runs its command once more, so spawn_only/processkit, whose streams are
# inherited, does N% more of the same work on any host, and the series with pipes do not); and a
# history h1..h16 on top of base, each commit a line in NOTES, h11 also the 5% slowdown.
# (The study's first builds spun N% of each run's time instead, which measured about 3N on some
# hosts: their pairs are kept apart in DIR/spin, see results/ab-injection-20261206.)
#
# Per pair p = 1..N and kind in aa (base against itself), slow3, slow1, in an order rotated every
# pair:
#   ab/KIND-p.json      pkbench ab base KIND --filter '^spawn_only/' (--max-time, default 5m)
#   sep/KIND-p-base.json, sep/KIND-p-new.json
#                       two separate quick runs of the scenarios suite's spawn_only, base's build
#                       then KIND's (`pkbench run --build`: the very workers ab measures, one
#                       build per run), --repetitions sized so the two take about ab's budget
#                       (--sep-repetitions, default 100)
# ab first in odd pairs, the separate runs first in even ones. Then `pkbench bisect base h16
# --series '^spawn_only/processkit$'` (bisect/). Then every separate pair is compared
# (drift-corrected, compare/KIND-p.json) and every ab file replayed (compare/ab-KIND-p.json).
#
# Resumable: a results file that is complete is never measured again (`--out DIR` continues a
# study); progress and the load average before every run go to DIR/study.log. Exit status: 0
# done; 1 bad arguments or a failed build, run or comparison (named on stderr); 130 interrupted.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: tests/ab/study.sh [--pairs N] [--max-time DURATION] [--kinds LIST] [--sep-repetitions N]
                         [--no-separate] [--no-bisect] [--out DIR] [--note FILE]
                         [--methodology FILE|none]
                         [--max-load L] [--max-wait S] [--analyse-only]

  --pairs N            pairs per kind (default 20)
  --max-time D         ab's budget per pair and per bisect step (default 5m)
  --kinds LIST         of aa,slow3,slow1 (default all three)
  --sep-repetitions N  rounds of each separate run (default 100: two runs in about 5 minutes)
  --no-separate        only ab (the separate runs are the contrast: leave them in for the note)
  --no-bisect          no bisect
  --out DIR            where the files go (default results/ab-study-<UTC time>); an existing
                       study directory is continued: complete runs are kept, the rest measured
  --note FILE          the dated note to write (default reports/notes/<study date>-ab-study.md)
  --methodology FILE   whose ab-study block gets the done-when and the verdicts per kind
                       (default the tree's METHODOLOGY.md; none: no such block is written)
  --max-load L         before each run, wait until the 1-minute load average is at most L ...
  --max-wait S         ... but never longer than S seconds (default 600), then run anyway (logged)
  --analyse-only       measure nothing: compare what DIR holds and write the summary and note
  --help               this text

Relative paths (--out, --note, --methodology) are from the tree's top directory.
PKBENCH=PATH uses that pkbench instead of building build/release (a quick check of the study).
USAGE
}

die() {
    printf 'ab-study: %s\n' "$*" >&2
    exit 1
}

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
is_number() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; }

pairs=20 max_time=5m kinds=aa,slow3,slow1 sep_reps=100 separate=true bisect=true out= note=
methodology=METHODOLOGY.md
max_load= max_wait=600 analyse_only=false
while [ $# -gt 0 ]; do
    opt=$1
    case $opt in
    --help | -h)
        usage
        exit 0
        ;;
    --analyse-only | --no-separate | --no-bisect)
        case $opt in
        --analyse-only) analyse_only=true ;;
        --no-separate) separate=false ;;
        --no-bisect) bisect=false ;;
        esac
        shift
        continue
        ;;
    --pairs | --max-time | --kinds | --sep-repetitions | --out | --note | --max-load | --max-wait | --methodology) ;;
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
    --max-time) [[ $val =~ ^[0-9]+(\.[0-9]+)?(ms|s|m|h)?$ ]] ||
        die "--max-time needs a duration (300, 90s, 5m), got '$val'"
        max_time=$val ;;
    --kinds) [[ $val =~ ^(aa|slow3|slow1)(,(aa|slow3|slow1))*$ ]] ||
        die "--kinds needs a comma list of aa, slow3 and slow1, got '$val'"
        kinds=$val ;;
    --sep-repetitions) is_uint "$val" && [ "$val" -ge 6 ] && [ "$val" -le 1000 ] ||
        die "--sep-repetitions needs a count from 6 to 1000, got '$val'"
        sep_reps=$val ;;
    --out) [ -n "$val" ] || die "--out needs a directory"
        out=$val ;;
    --note) [ -n "$val" ] || die "--note needs a file"
        note=$val ;;
    --methodology) [ -n "$val" ] || die "--methodology needs a file, or none"
        methodology=$val ;;
    --max-load) is_number "$val" || die "--max-load needs a load average (e.g. 4 or 2.5), got '$val'"
        max_load=$val ;;
    --max-wait) is_uint "$val" || die "--max-wait needs seconds, got '$val'"
        max_wait=$val ;;
    esac
done
IFS=, read -r -a kind_list <<<"$kinds"

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
if [ -z "$out" ]; then
    $analyse_only && die "--analyse-only needs --out DIR (the study to analyse)"
    out=results/ab-study-$(date -u +%Y%m%dT%H%M%SZ)
fi
mkdir -p "$out/ab" "$out/sep" "$out/compare" "$out/bisect" || die "cannot create $out"
out=$(cd "$out" && pwd)
log=$out/study.log
say() {
    printf '%s %s\n' "$(date -u +%H:%M:%SZ)" "$*" | tee -a "$log" >&2
}
# The harness: build/release's (built below), or $PKBENCH (a quick check of the study itself).
pkbench=${PKBENCH:-$root/build/release/harness/pkbench}

# The scratch repository: base, slow3, slow1, h1..h16 (h11 the 5% slowdown).
git_q() { git -C "$out/repo" -c user.name=ab-study -c user.email=ab-study@invalid "$@"; }
slowed() { sed -i "s/set(PK_INJECT_EXTRA_RUN_PCT [0-9]* CACHE/set(PK_INJECT_EXTRA_RUN_PCT $1 CACHE/" \
    "$out/repo/lib/CMakeLists.txt"; }
make_repo() {
    [ -f "$out/repo/.complete" ] && return 0
    say "making the scratch repository $out/repo"
    rm -rf "$out/repo"
    mkdir -p "$out/repo"
    cp -r CMakeLists.txt lib "$out/repo/"
    grep -q 'set(PK_INJECT_EXTRA_RUN_PCT 0 CACHE' "$out/repo/lib/CMakeLists.txt" ||
        die "lib/CMakeLists.txt has no PK_INJECT_EXTRA_RUN_PCT to set"
    git_q init -q
    git_q add -A
    git_q commit -q -m base
    git_q tag base
    local pct
    for pct in 3 1; do
        git_q checkout -q -b "slow$pct" base
        slowed "$pct"
        git_q commit -q -am "spawn_only $pct% slower (PK_INJECT_EXTRA_RUN_PCT=$pct)"
    done
    git_q checkout -q -b history base
    local k
    for ((k = 1; k <= 16; k++)); do
        echo "step $k" >>"$out/repo/NOTES"
        [ "$k" -eq 11 ] && slowed 5
        git_q add -A
        git_q commit -q -m "h$k$([ "$k" -eq 11 ] && echo ': spawn_only 5% slower')"
        git_q tag "h$k"
    done
    touch "$out/repo/.complete"
}

# ---- measuring --------------------------------------------------------------------------------
interrupted() {
    say "interrupted; complete runs are kept in $out (run again with --out $out to continue)"
    exit 130
}
trap interrupted INT TERM

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

# ab KIND P: pkbench ab base KIND (aa: base), its exit status and seconds beside the file.
run_ab() {
    local kind=$1 p=$2 file=$out/ab/$1-$2.json rev=$1 rc=0 start=$SECONDS
    complete "$file" && [ -f "$file.status" ] && return 0
    [ "$kind" = aa ] && rev=base
    wait_for_quiet
    say "ab $kind pair $p: load $(cut -d' ' -f1-3 /proc/loadavg)"
    (cd "$out/repo" && "$pkbench" ab base "$rev" --filter '^spawn_only/' --max-time "$max_time" \
        --out "$file" >"$file.txt" 2>>"$out/ab.log") || rc=$?
    [ "$rc" -eq 130 ] && interrupted
    [ "$rc" -eq 0 ] || [ "$rc" -eq 2 ] || [ "$rc" -eq 3 ] ||
        die "pkbench ab base $rev exited $rc (see $out/ab.log)"
    echo "$rc" >"$file.status"
    echo $((SECONDS - start)) >"$file.seconds"
    say "ab $kind pair $p: exit $rc in $((SECONDS - start)) s"
}

# sep KIND P: the two separate runs, base's build then KIND's (aa: base's again).
run_sep() {
    local kind=$1 p=$2 which build file rc
    for which in base new; do
        file=$out/sep/$kind-$p-$which.json
        complete "$file" && continue
        build=base
        [ "$which" = new ] && [ "$kind" != aa ] && build=$kind
        wait_for_quiet
        say "separate $kind pair $p ($which, build $build): load $(cut -d' ' -f1-3 /proc/loadavg)"
        rc=0
        (cd "$out/repo" && "$pkbench" run --build "$build" --suite scenarios --profile quick \
            --filter '^spawn_only/' --repetitions "$sep_reps" --out "$file" \
            >/dev/null 2>>"$out/sep.log") || rc=$?
        [ "$rc" -eq 130 ] && interrupted
        [ "$rc" -eq 0 ] || die "pkbench run ($build) for $file exited $rc (see $out/sep.log)"
    done
}

run_bisect() {
    [ -f "$out/bisect/status" ] && return 0
    wait_for_quiet
    say "bisect base h16 --series ^spawn_only/processkit$ (h11 is the 5% slowdown)"
    local rc=0 start=$SECONDS
    (cd "$out/repo" &&
        "$pkbench" bisect base h16 --series '^spawn_only/processkit$' --max-time "$max_time" \
            --out "$out/bisect" >"$out/bisect/bisect.out" 2>>"$out/bisect/bisect.log") || rc=$?
    [ "$rc" -eq 130 ] && interrupted
    echo "$rc" >"$out/bisect/status"
    echo $((SECONDS - start)) >"$out/bisect/seconds"
    say "bisect: exit $rc in $((SECONDS - start)) s"
}

if ! $analyse_only; then
    if [ -z "${PKBENCH:-}" ]; then
        say "building the harness (build/release; the revisions' workers are ab's, build/ab/)"
        cmake --preset release >"$out/build.log" 2>&1 || die "configuring build/release failed"
        cmake --build --preset release --target pkbench >>"$out/build.log" 2>&1 ||
            die "building build/release failed (log: $out/build.log)"
    fi
    [ -x "$pkbench" ] || die "no pkbench at $pkbench"
    make_repo
    say "study in $out: $pairs pairs of ${kinds}, ab --max-time $max_time, separate runs" \
        "$($separate && echo "of $sep_reps rounds" || echo none), bisect $($bisect && echo yes || echo no)"
    n=${#kind_list[@]}
    for ((p = 1; p <= pairs; p++)); do
        for ((k = 0; k < n; k++)); do
            kind=${kind_list[$(((k + p) % n))]}
            say "pair $p/$pairs, $kind"
            if ((p % 2 == 1)) || ! $separate; then
                run_ab "$kind" "$p"
                $separate && run_sep "$kind" "$p"
            else
                run_sep "$kind" "$p"
                run_ab "$kind" "$p"
            fi
        done
    done
    $bisect && run_bisect
fi

# ---- comparing --------------------------------------------------------------------------------
say "comparing: every ab file replayed, every pair of separate runs drift-corrected"
for file in "$out"/ab/*.json; do
    [ -e "$file" ] || continue
    complete "$file" || continue
    stem=$(basename "$file" .json)
    rc=0
    "$pkbench" compare "$file" --format json --out "$out/compare/ab-$stem.json" \
        2>"$out/compare/ab-$stem.stderr" || rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 2 ] || [ "$rc" -eq 3 ] ||
        die "pkbench compare $file exited $rc: $(cat "$out/compare/ab-$stem.stderr")"
done
for base in "$out"/sep/*-base.json; do
    [ -e "$base" ] || continue
    stem=$(basename "$base" -base.json)
    new=$out/sep/$stem-new.json
    complete "$base" && complete "$new" || continue
    rc=0
    "$pkbench" compare "$base" "$new" --format json --out "$out/compare/sep-$stem.json" \
        2>"$out/compare/sep-$stem.stderr" || rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 2 ] || [ "$rc" -eq 3 ] ||
        die "pkbench compare $base $new exited $rc: $(cat "$out/compare/sep-$stem.stderr")"
    echo "$rc" >"$out/compare/sep-$stem.status"
done
args=("$out")
[ -n "$note" ] && args+=(--note "$note")
[ "$methodology" = none ] || args+=(--methodology "$methodology")
/usr/bin/python3 tests/ab/summarize.py "${args[@]}" --max-time "$max_time"
say "summary: $out/summary.md and $out/summary.json"
