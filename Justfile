# Thin recipes over CMake presets (dev = Debug, asan = Debug+ASan+UBSan, release). `./x RECIPE`
# installs what is missing, builds the release tree, then runs the recipe here.
set shell := ["bash", "-euo", "pipefail", "-c"]

sources := "git ls-files --cached --others --exclude-standard '*.c' '*.h' '*.cc'"

# `just` alone lists the recipes (as `./x` and `./x help` do), one line each.
_default:
    @just --list --unsorted

# Run every test: the plain build, the ASan+UBSan build, the format check, the install test,
# 20 s of each fuzz target, and the Windows build's tests under Wine — side by side in three lanes
# after the builds (tests/stages.sh; logs in build/stages/). Names run only those stages, e.g.
# `just test dev fmt` (stages: dev asan windows fuzz install fmt site).
[doc('Every test: Debug, ASan+UBSan, format check, install test, fuzz smoke, Windows under Wine')]
test *stages:
    tests/stages.sh {{stages}}

# Build every preset (what CI compiles), warnings as errors.
build-all: (build "dev") (build "asan") (build "release") (build "fuzz") (build "windows")

# Configure a preset once, then build it.
build preset="dev":
    @[ -f build/{{preset}}/build.ninja ] || cmake --preset {{preset}} >/dev/null
    cmake --build --preset {{preset}}

# The test suite on the Debug build (TAP output, ends with "N passed, N failed, N skipped").
test-dev: (build "dev")
    build/dev/tests/pk_tests -j 2

# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer (timeouts scaled x4).
asan: (build "asan")
    PK_TEST_TIMEOUT_MULTIPLIER=4 \
    ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=0 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    build/asan/tests/pk_tests -j 2

# The Windows build (mingw-w64, the `windows` preset) and its test suite under Wine, in a private
# WINEPREFIX (build/windows/wine). Extra arguments name tests, e.g. `just test-windows win_cancel`.
test-windows *tests: windows-deps (build "windows")
    tests/windows/run.sh build/windows {{tests}}

# Google Benchmark 1.7.1 and jansson for the windows preset, built from Debian's source packages
# into build/windows-deps (once; cmake/windows-deps.sh).
windows-deps:
    cmake/windows-deps.sh build/windows-deps

# Install the Debug build into a temporary prefix and use it as a user would: the files, the
# shared library's exports, pkg-config (shared and --static), find_package, pkrun, the man pages.
[doc('Install the Debug build into a temporary prefix and use it as a user would')]
test-install: (build "dev")
    tests/install/run.sh build/dev

# Every fuzz target for 20 s from its seeds (tests/fuzz/README.md), one per CPU at a time; fails
# on any crash, leak, sanitizer report or failed property, and prints each one's executions.
[doc('Every fuzz target for 20 s from its seeds; fails on any crash, leak or failed property')]
fuzz-smoke: (build "fuzz")
    tests/fuzz/run.sh --time 20

# Every fuzz target for 10 minutes. Extra arguments go to tests/fuzz/run.sh, e.g.
# `just fuzz --runs 10000000 lines` or `just fuzz --time 3600 results parse`.
[doc('Every fuzz target for 10 minutes (args go to tests/fuzz/run.sh)')]
fuzz *args: (build "fuzz")
    tests/fuzz/run.sh --time 600 {{args}}

# Mutation check (not in CI: slow): apply each mutant of tests/mutants/list.txt to a scratch copy
# under build/mutants, build it and run the tests named to catch it; lists survivors, exit 1 when
# any survived or no longer applies. `just mutants ID...` runs some; `just mutants --check` only
# checks that every mutant still applies to the code.
[doc('Mutation check: each curated mutant built and run against its tests (slow, not in CI)')]
mutants *args:
    python3 tests/mutants/run.py {{args}}

# Run selected tests by name on the Debug build, e.g. `just one exit_codes signaled`.
one +names: (build "dev")
    build/dev/tests/pk_tests {{names}}

# The main job: the full scenarios suite (the seed's configuration), then its report and plots.
# `pkbench run` prints a line per finished series with the time left and, at the end, the tables;
# `pkbench report` then prints where the results file, the report and the figures are. A run in
# which a series failed exits 4 (its last line names them): every bench recipe still renders the
# report of what was measured, then exits 4, so neither `./x bench` nor CI passes it off as done.
[doc('The main job: the full scenarios suite (about 8 min), its tables, report and plots')]
bench: bench-scenarios

# The scenarios suite with the full profile (20 samples, 10 s warm-up, 5 s per series), rendered
# to reports/. Extra arguments go to `pkbench run` (e.g. --filter stream_large_stdout).
[doc('The scenarios suite, full profile: tables, report and plots (args go to pkbench run)')]
bench-scenarios *args: (build "release")
    out=results/scenarios-$(date -u +%Y%m%dT%H%M%SZ).json; s=0; \
    build/release/harness/pkbench run --suite scenarios --profile full --out "$out" {{args}} || s=$?; \
    if [ $s -eq 0 ] || [ $s -eq 4 ]; then build/release/harness/pkbench report "$out"; fi; exit $s

# The scenarios suite with the quick profile (a smoke run, about 3 minutes with the fan-out at
# scale's 16, 64 and 256), rendered to reports/.
[doc('The scenarios suite, quick profile (about 3 min): tables, report and plots')]
bench-quick *args: (build "release")
    out=results/scenarios-quick-$(date -u +%Y%m%dT%H%M%SZ).json; s=0; \
    build/release/harness/pkbench run --suite scenarios --profile quick --out "$out" {{args}} || s=$?; \
    if [ $s -eq 0 ] || [ $s -eq 4 ]; then build/release/harness/pkbench report "$out"; fi; exit $s

# The fan-out at scale alone (N = 16, 64, 256, 1024, 4096 cat children, every contender with a
# fan-out, the C ones each in a measuring worker of its own, the language workers in theirs), full
# profile, rendered to reports/: the time per child, its log-log slope, memory and descriptors per
# child in flight, the targets. About 2.5-3.5 hours on a quiet 2-CPU machine: a series at N = 4096
# runs two iterations of 13 s or more a round (reports/notes/2026-12-05-fan-out-at-scale.md);
# pkbench's round 1 line gives the time from the calibration. Extra arguments go to `pkbench run`
# (e.g. --fan-out 16,256).
[doc('The fan-out at scale, full profile (about 3 h): tables, report, log-log plot')]
bench-fan-out *args: (build "release")
    out=results/fan-out-$(date -u +%Y%m%dT%H%M%SZ).json; \
    build/release/harness/pkbench run --suite scenarios --profile full --filter '^fan_out_[0-9]+/' \
        --out "$out" {{args}} && build/release/harness/pkbench report "$out"

# The fan-out at scale before and after issue 36's library changes: this tree's pkbench against
# the same tree with the library of `git merge-base HEAD main`, the C contenders
# (tests/scale/before-after.sh; about 2.5 hours on a quiet machine, 75 minutes a run, both runs and
# their comparison in results/fan-out-study-<UTC time>/). Extra arguments go to the script (e.g.
# --sizes 16,64,256 for minutes).
[doc('The fan-out at scale before and after the library changes (about 2.5 h; args to the script)')]
fan-out-study *args:
    tests/scale/before-after.sh {{args}}

# Its report states the targets (processkit within 1.10× of vfork_exec, at or below posix_spawn,
# ahead of libuv and GLib). The scenarios suite's spawn_only alone, full profile, unpinned.
bench-spawn-only *args: (build "release")
    out=results/spawn-only-$(date -u +%Y%m%dT%H%M%SZ).json; s=0; \
    build/release/harness/pkbench run --suite scenarios --profile full --filter '^spawn_only/' \
        --out "$out" {{args}} || s=$?; \
    if [ $s -eq 0 ] || [ $s -eq 4 ]; then build/release/harness/pkbench report "$out"; fi; exit $s

# The same, pinned to CPU 1 (`taskset -c 1`), as pk_floor --pin is.
bench-spawn-only-pinned *args: (build "release")
    out=results/spawn-only-pinned-$(date -u +%Y%m%dT%H%M%SZ).json; s=0; \
    taskset -c 1 build/release/harness/pkbench run --suite scenarios --profile full \
        --filter '^spawn_only/' --out "$out" {{args}} || s=$?; \
    if [ $s -eq 0 ] || [ $s -eq 4 ]; then build/release/harness/pkbench report "$out"; fi; exit $s

# Check for regressions against a baseline file: run (quick, interleaved), compare, confirm by a re-run.
# Exit 0 ok, 2 regressed, 3 too noisy to decide, 1 bad input. Extra arguments go to `pkbench check`
# (e.g. --filter spawn_only --profile full); pin both runs on a small VM (taskset -c 1 just check ...).
[doc('Check for regressions against a baseline results file (exit 2: regressed, 3: undecidable)')]
check base *args: (build "release")
    build/release/harness/pkbench check --baseline {{base}} {{args}}

# Compare two results files (a table; --format md|json). Same exit codes as `check`.
compare base new *args: (build "release")
    build/release/harness/pkbench compare {{base}} {{new}} {{args}}

# The fork/vfork study with the full profile: Wemm's 100,000-iteration fork and vfork loops, static
# and dynamic, then spawn cost against the parent's RSS up to 4 GiB, THP off and on (a few
# minutes), rendered to reports/. Extra arguments go to `pkbench run` (e.g. --iterations 20000).
[doc('The fork/vfork study, full profile: its time(1), ratio and slope tables, report and plots')]
bench-forkathon *args: (build "release")
    out=results/forkathon-$(date -u +%Y%m%dT%H%M%SZ).json; s=0; \
    build/release/harness/pkbench run --suite forkathon --profile full --out "$out" {{args}} || s=$?; \
    if [ $s -eq 0 ] || [ $s -eq 4 ]; then build/release/harness/pkbench report "$out"; fi; exit $s

# Where a start goes: the phases suite, full profile, then its report and reconciliation plots.
# Extra arguments go to `pkbench run` (e.g. --filter '^primitive/').
[doc('Where a start goes: the phases suite, its phase and reconciliation tables, report and plots')]
bench-phases *args: (build "release")
    out=results/phases-$(date -u +%Y%m%dT%H%M%SZ).json; s=0; \
    build/release/harness/pkbench run --suite phases --profile full --out "$out" {{args}} || s=$?; \
    if [ $s -eq 0 ] || [ $s -eq 4 ]; then build/release/harness/pkbench report "$out"; fi; exit $s

# What watching connections costs: the observe suite, full profile (0/50/200/500 connections/s ×
# hold 0 and 250 ms, 20 s per cell, 5 repetitions interleaved across the six observers: about
# 85 minutes), then its report. Needs root for the network namespaces and the eBPF observers
# (without, those SKIP with the reason). Extra arguments go to `pkbench run` (e.g. --filter rate500).
[doc('What watching costs: the observe suite, full profile (about 85 min): report and plots')]
bench-observe *args: (build "release")
    out=results/observe-$(date -u +%Y%m%dT%H%M%SZ).json; s=0; \
    build/release/harness/pkbench run --suite observe --profile full --out "$out" {{args}} || s=$?; \
    if [ $s -eq 0 ] || [ $s -eq 4 ]; then build/release/harness/pkbench report "$out"; fi; exit $s

# The observe suite's quick profile (0/200 connections/s × 0/250 ms, 1.5 s cells, 2 repetitions:
# about 80 s), then its report.
[doc('The observe suite, quick profile (about 80 s): report and plots')]
bench-observe-quick *args: (build "release")
    out=results/observe-quick-$(date -u +%Y%m%dT%H%M%SZ).json; s=0; \
    build/release/harness/pkbench run --suite observe --profile quick --out "$out" {{args}} || s=$?; \
    if [ $s -eq 0 ] || [ $s -eq 4 ]; then build/release/harness/pkbench report "$out"; fi; exit $s

# Render a results file (reports/<name>.md and plots), print its tables and where the files are.
report file: (build "release")
    build/release/harness/pkbench report {{file}} --print

# Publish every results file under DIR (default results/) as a static site in SITE (default
# build/site): open SITE/index.html in a browser. Extra arguments go to pkbench publish.
[doc('Publish the results files under DIR as a static site in SITE (open SITE/index.html)')]
publish dir="results" site="build/site" *args: (build "release")
    build/release/harness/pkbench publish {{dir}} --out {{site}} {{args}}

# The spawn floor, unpinned: spawn+wait by method (processkit, the raw clone3 ladder, vfork,
# posix_spawn, fork; the capture path against a raw vfork+pipes+poll loop), interleaved, with the
# migration census and the targets stated. Extra arguments go to pk_floor (e.g. --rounds 30).
bench-floor *args: (build "release")
    build/release/phases/pk_floor {{args}}

# Line streaming throughput: processkit's line APIs against raw reads of the same pipe.
bench-stream *args: (build "release")
    build/release/phases/pk_stream_rate {{args}}

# pkrun's forwarding cost: 1 GiB of short lines and of one long line, directly, under coreutils
# timeout and under pkrun (inherited, spliced, teed), interleaved. Extra arguments go to
# pk_forward_rate (e.g. --size 256M --rounds 3).
bench-forward *args: (build "release")
    build/release/phases/pk_forward_rate {{args}}

# The spawn floor, pinned to one CPU (the last one: CPU 1 here, as `taskset -c 1`).
bench-floor-pinned *args: (build "release")
    build/release/phases/pk_floor --pin {{args}}

# The drift study (METHODOLOGY.md, "Comparing two separate runs: machine drift"): pairs of
# separate quick runs of one build, of a build with an injected slowdown, and under a CPU hog,
# compared with and without the drift correction. Continue an interrupted one with --out DIR.
drift-study *ARGS:
    tests/drift/study.sh {{ARGS}}

# The ab study (METHODOLOGY.md, "Checking a change for regressions"; its note in reports/notes/):
# about 10 hours; continue an interrupted one with --out DIR.
# pkbench ab on 20 pairs each of A/A, 3% and 1% slower spawn_only, separate runs beside, a bisect.
ab-study *ARGS:
    tests/ab/study.sh {{ARGS}}

# Reformat every C source in place.
fmt:
    {{sources}} | xargs clang-format -i

# Fail when any C source is not formatted, or METHODOLOGY.md's generated ab-study tables are not
# what the summary.json they name renders (hand-edited, or the summary changed without them).
fmt-check:
    {{sources}} | xargs clang-format --dry-run -Werror
    /usr/bin/python3 tests/ab/summarize.py --check-methodology METHODOLOGY.md

# Remove every build tree (build/).
clean:
    rm -rf build
