#!/usr/bin/env python3
"""Mutation check: does the test suite notice when the code is wrong?

Each mutant in tests/mutants/list.txt is one small, deliberate bug: a line of a source file (found
by a pattern that must occur exactly once in that file) with a piece replaced, plus the tests
expected to catch it. For every mutant this script

  1. applies it to a scratch copy of the working tree (build/mutants/src: the files git tracks
     or would track, copied as they are now, uncommitted changes included; nothing in the real
     tree is touched),
  2. builds the scratch copy (the dev preset: Debug, warnings as errors),
  3. runs the named tests with the scratch build's pk_tests,
  4. puts the file back.

A mutant is KILLED when a named test fails, SURVIVED when they all pass (a gap: the bug goes
unnoticed), and INVALID when it does not apply (its pattern is gone or ambiguous: update the list
as the code moves) or does not build (a mutant must be a bug, not a syntax error). Before any
mutant the named tests must pass on the unmutated copy, or nothing would mean anything.

usage: tests/mutants/run.py [--list FILE] [--scratch DIR] [--keep-going] [ID...]

  ID...          only these mutants (default: all)
  --list FILE    the mutant list (default: tests/mutants/list.txt)
  --scratch DIR  where the copy and its build live (default: build/mutants)
  --check        only check that every mutant applies to the working tree (no build)

Exit status: 0 every mutant killed; 1 a mutant survived or was invalid; 2 bad usage or the suite
fails without any mutant.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIELDS = ("id", "file", "find", "replace", "tests", "why")


class Mutant:
    def __init__(self, fields, line):
        self.line = line
        for f in FIELDS:
            setattr(self, f, fields.get(f))
        self.tests = (self.tests or "").split()


def parse_list(path):
    """Blocks of `key: value` lines separated by blank lines; '#' starts a comment line."""
    mutants, fields, start = [], {}, 0
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for no, raw in enumerate(lines + [""], 1):
        if raw.strip() == "":
            if fields:
                missing = [k for k in FIELDS if k not in fields]
                if missing:
                    sys.exit(f"{path}:{start}: mutant lacks {', '.join(missing)}")
                mutants.append(Mutant(fields, start))
                fields = {}
            continue
        if raw.lstrip().startswith("#"):
            continue
        m = re.match(r"^(\w+):\s?(.*)$", raw)
        if m is None or m.group(1) not in FIELDS:
            sys.exit(f"{path}:{no}: expected one of {', '.join(FIELDS)} followed by ':'")
        if not fields:
            start = no
        if m.group(1) in fields:
            sys.exit(f"{path}:{no}: {m.group(1)} given twice")
        fields[m.group(1)] = m.group(2).strip()
    ids = [m.id for m in mutants]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        sys.exit(f"{path}: duplicate ids: {', '.join(sorted(dup))}")
    return mutants


def apply(text, m):
    """The mutated text, or (None, why) when the pattern does not occur exactly once."""
    n = text.count(m.find)
    if n != 1:
        return None, f"pattern occurs {n} times in {m.file}" if n else f"pattern not in {m.file}"
    if m.find == m.replace:
        return None, "the replacement is the pattern itself"
    return text.replace(m.find, m.replace, 1), None


def tracked_files():
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, check=True, capture_output=True).stdout
    return [p for p in out.decode().split("\0") if p and os.path.isfile(os.path.join(ROOT, p))]


def sync_scratch(src):
    """Makes src a copy of the working tree, rewriting only files whose bytes differ (so the
    scratch build stays incremental) and removing files the tree no longer has."""
    files = set(tracked_files())
    for rel in files:
        a, b = os.path.join(ROOT, rel), os.path.join(src, rel)
        with open(a, "rb") as f:
            data = f.read()
        try:
            with open(b, "rb") as f:
                same = f.read() == data
        except OSError:
            same = False
        if not same:
            os.makedirs(os.path.dirname(b), exist_ok=True)
            with open(b, "wb") as f:
                f.write(data)
            shutil.copymode(a, b)
    for dirpath, dirnames, filenames in os.walk(src):
        rel_dir = os.path.relpath(dirpath, src)
        if rel_dir == "build" or rel_dir.startswith("build" + os.sep):
            dirnames[:] = []
            continue
        dirnames[:] = [d for d in dirnames if not (rel_dir == "." and d == "build")]
        for name in filenames:
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if rel not in files:
                os.remove(os.path.join(dirpath, name))


def build(src, log):
    """Configures once and builds the dev preset's test binary (and what it runs: pkrun, pkbench,
    the helpers) in the scratch copy; True when it built."""
    steps = []
    if not os.path.exists(os.path.join(src, "build", "dev", "build.ninja")):
        steps.append(["cmake", "--preset", "dev"])
    steps.append(["cmake", "--build", "--preset", "dev", "--target", "pk_tests"])
    for cmd in steps:
        r = subprocess.run(cmd, cwd=src, stdout=log, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            return False
    return True


def run_tests(src, tests, log):
    """Runs the named tests; returns (passed, names of the tests that failed)."""
    r = subprocess.run([os.path.join(src, "build", "dev", "tests", "pk_tests")] + tests,
                       cwd=src, capture_output=True, text=True, errors="replace")
    log.write(r.stdout + r.stderr)
    log.flush()
    failed = re.findall(r"^not ok \d+ - (\S+)", r.stdout, re.M)
    return r.returncode == 0, failed


def main():
    ap = argparse.ArgumentParser(description="Mutation check of the test suite (see the file).")
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--list", default=os.path.join(ROOT, "tests", "mutants", "list.txt"))
    ap.add_argument("--scratch", default=os.path.join(ROOT, "build", "mutants"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()

    mutants = parse_list(a.list)
    known = {m.id for m in mutants}
    unknown = [i for i in a.ids if i not in known]
    if unknown:
        print(f"mutants: no mutant named {', '.join(unknown)} in {a.list}", file=sys.stderr)
        return 2
    if a.ids:
        mutants = [m for m in mutants if m.id in a.ids]

    # Every mutant must apply to the tree as it is now: a stale list is an error, found at once.
    stale = []
    for m in mutants:
        path = os.path.join(ROOT, m.file)
        if not os.path.isfile(path):
            stale.append((m, f"{m.file} does not exist"))
            continue
        with open(path, encoding="utf-8") as f:
            _, why = apply(f.read(), m)
        if why:
            stale.append((m, why))
    for m, why in stale:
        print(f"INVALID  {m.id}: {why} (list line {m.line})")
    if a.check:
        print(f"{len(mutants) - len(stale)} of {len(mutants)} mutants apply")
        return 1 if stale else 0

    src = os.path.join(a.scratch, "src")
    os.makedirs(src, exist_ok=True)
    log_path = os.path.join(a.scratch, "log.txt")
    log = open(log_path, "w", encoding="utf-8")
    print(f"mutants: scratch copy in {src}, build log in {log_path}", flush=True)
    sync_scratch(src)
    if not build(src, log):
        print("mutants: the unmutated copy does not build (see the log)", file=sys.stderr)
        return 2
    named = sorted({t for m in mutants for t in m.tests})
    ok, failed = run_tests(src, named, log)
    if not ok:
        print(f"mutants: the named tests fail without any mutant: {', '.join(failed) or '?'}",
              file=sys.stderr)
        return 2
    print(f"mutants: {len(named)} named tests pass unmutated; {len(mutants)} mutants", flush=True)

    results = []
    stale_ids = {m.id for m, _ in stale}
    for k, m in enumerate(mutants, 1):
        if m.id in stale_ids:
            results.append((m, "INVALID", "does not apply"))
            continue
        path = os.path.join(src, m.file)
        with open(path, encoding="utf-8") as f:
            original = f.read()
        mutated, _ = apply(original, m)
        t0 = time.monotonic()
        log.write(f"\n==== {m.id}: {m.file}: {m.find!r} -> {m.replace!r}\n")
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(mutated)
            if not build(src, log):
                verdict, detail = "INVALID", "does not build"
            else:
                ok, failed = run_tests(src, m.tests, log)
                verdict = "SURVIVED" if ok else "KILLED"
                detail = "by " + ", ".join(failed) if failed else ("" if ok else "(runner)")
        finally:
            with open(path, "w", encoding="utf-8") as f:
                f.write(original)
        secs = time.monotonic() - t0
        results.append((m, verdict, detail))
        print(f"[{k}/{len(mutants)}] {verdict:8} {m.id} ({secs:.0f} s) {detail}", flush=True)
    build(src, log)  # leave the copy built unmutated
    log.close()

    counts = {v: sum(1 for _, r, _ in results if r == v) for v in ("KILLED", "SURVIVED", "INVALID")}
    print()
    for m, v, d in results:
        if v != "KILLED":
            print(f"{v}: {m.id} — {m.why}\n    {m.file}: {m.find}\n    -> {m.replace}\n    {d}")
    print(f"{len(results)} mutants: {counts['KILLED']} killed, {counts['SURVIVED']} survived, "
          f"{counts['INVALID']} invalid")
    return 0 if counts["KILLED"] == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
