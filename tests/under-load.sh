#!/bin/sh
# Runs tests of pk_tests again and again beside a load, and counts how often each one fails: the
# study behind issue 34's item 18 ("someone who benchmarks while testing must not see red").
#
#   tests/under-load.sh [-n RUNS] [-l LOAD] [-j JOBS] [-b BUILD] [-c] [-o DIR] [TEST...]
#
#   -n RUNS   how many times the tests run (default 5)
#   -l LOAD   what runs beside them (default busy):
#               none     nothing
#               busy     one busy loop per CPU (pure CPU load)
#               pkbench  `pkbench run --suite scenarios --profile quick` in a loop (what ./x bench
#                        does to the machine: spawns, pipes, cgroup leaves, CPU)
#               sweep    `pkrun` as PID 1 of a new PID namespace in a loop (issue 34 item 4: an
#                        instance that cannot see the others' pids sweeps their cgroup leaves)
#   -j JOBS   pk_tests -j (default 2, as ./x test runs the suites)
#   -b BUILD  the build directory (default build/dev)
#   -c        run in a cgroup of its own (a child of this shell's), so the tests' leaves are
#             not beside other processkit instances' on this machine (needs a writable cgroup)
#   -o DIR    keep every run's TAP output in DIR (default: a temporary directory, printed)
#   TEST...   the tests (default: every test, i.e. the whole suite)
#
# Prints one line per test that failed at least once ("NAME  failed K of RUNS") and the total;
# exit 0 when nothing failed, 1 otherwise. Every process it starts is ended by its id when it
# exits.
set -u
runs=5 load=busy jobs=2 build=build/dev cgroup=0 out=
while getopts n:l:j:b:co: opt; do
    case $opt in
    n) runs=$OPTARG ;;
    l) load=$OPTARG ;;
    j) jobs=$OPTARG ;;
    b) build=$OPTARG ;;
    c) cgroup=1 ;;
    o) out=$OPTARG ;;
    *) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
tests=$build/tests/pk_tests pkbench=$build/harness/pkbench pkrun=$build/lib/pkrun
[ -x "$tests" ] || { echo "under-load: $tests is not built" >&2; exit 2; }
case $load in none | busy | pkbench | sweep) ;; *)
    echo "under-load: -l needs none, busy, pkbench or sweep, got '$load'" >&2; exit 2 ;;
esac
[ -n "$out" ] || out=$(mktemp -d /tmp/under-load.XXXXXX)
mkdir -p "$out"

loads=
cg=
stop=$out/stop
rm -f "$stop"
cleanup() {
    # Every load loop ends at its next turn once the stop file exists; each is also a process
    # group of its own (setsid), ended by its id, so that a pkbench run stops at its next
    # iteration rather than at its end.
    : >"$stop"
    for pid in $loads; do kill -TERM "-$pid" 2>/dev/null; done
    for pid in $loads; do wait "$pid" 2>/dev/null; done
    if [ -n "$cg" ]; then
        echo $$ >"$cg/../cgroup.procs" 2>/dev/null
        rmdir "$cg" 2>/dev/null
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$cgroup" = 1 ]; then
    mount=/sys/fs/cgroup
    [ -f $mount/cgroup.procs ] || mount=/sys/fs/cgroup/unified
    own=$(sed -n 's/^0:://p' /proc/self/cgroup)
    cg=$mount${own%/}/under-load-$$
    mkdir "$cg" && echo $$ >"$cg/cgroup.procs" || { echo "under-load: no cgroup of its own" >&2; exit 2; }
fi

start() {
    setsid sh -c "$1" >/dev/null 2>&1 &
    loads="$loads $!"
}
cpus=$(nproc)
case $load in
busy)
    i=0
    while [ $i -lt "$cpus" ]; do start "while [ ! -e $stop ]; do :; done"; i=$((i + 1)); done ;;
pkbench)
    start "while [ ! -e $stop ]; do $pkbench run --suite scenarios --profile quick \
        --out $out/load.json; done" ;;
sweep)
    start "while [ ! -e $stop ]; do unshare --pid --fork --mount-proc $pkrun 1 true; sleep 0.2; done" ;;
esac

echo "under-load: $runs runs of ${*:-every test} (-j $jobs) beside load '$load'; logs in $out"
fails=$out/fails
: >"$fails"
r=1
while [ $r -le "$runs" ]; do
    start_s=$(date +%s)
    "$tests" -j "$jobs" "$@" >"$out/run-$r.tap" 2>&1
    if ! grep -q '^1\.\.[0-9]' "$out/run-$r.tap"; then
        echo "under-load: $tests printed no TAP plan (see $out/run-$r.tap)" >&2
        exit 2
    fi
    grep '^not ok' "$out/run-$r.tap" | sed 's/^not ok [0-9]* - \([^ ]*\).*/\1/' >>"$fails"
    echo "run $r: $(grep -c '^not ok' "$out/run-$r.tap") failed, $(($(date +%s) - start_s)) s"
    r=$((r + 1))
done
sort "$fails" | uniq -c | sort -rn | while read -r k name; do
    printf '%-50s failed %d of %d\n' "$name" "$k" "$runs"
done
total=$(wc -l <"$fails")
echo "under-load: $total failures in $runs runs beside load '$load'"
[ "$total" -eq 0 ]
