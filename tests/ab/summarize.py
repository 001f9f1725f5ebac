#!/usr/bin/env python3
"""The ab study's summary (tests/ab/study.sh): what `pkbench ab` decided about each pair of
builds measured in one run, against what `pkbench compare` of two separate runs of the same builds
decided, and the bisect — read from the comparison files alone (compare/ab-KIND-P.json: the ab
file replayed, `pkbench compare AB.json --format json`; compare/sep-KIND-P.json: the two separate
runs, drift-corrected), the ab files' own "ab" objects (their looks, their time) and bisect/.

Writes DIR/summary.json (every number, per pair and in total), DIR/summary.md (its tables) and
the dated note (--note FILE, default reports/notes/<the study's date>-ab-study.md), both rendered
from summary.json alone. With --from-summary it reads DIR/summary.json instead and renders them
again: a committed summary.json regenerates the note's tables. With --methodology FILE it also
puts the done-when and the verdicts per kind between FILE's two ab-study markers (METHODOLOGY.md),
leaving the rest of FILE as it was. Every file is written beside itself and renamed over the old,
and only onto a regular file. Exit status: 0 written; 1 bad
arguments, nothing to summarize, or a bad file (named on stderr).

Definitions (per pair; "the series" is spawn_only/processkit, the only one the slowdown touches):
  caught       exit 2, the series regressed, and no other series regressed or improved
  false alarm  in aa, any series regressed or improved; in slow3/slow1, any other series
  decided      ab: the rule decided every series before the budget ran out (stopped "decided")
  in budget    ab's measuring (the last look's elapsed time) within --max-time
"""

import argparse
import difflib
import glob
import json
import os
import re
import subprocess
import sys

SERIES = "spawn_only/processkit"
KINDS = ("aa", "slow3", "slow1")
KIND_WORDS = {"aa": "A/A (base against itself)", "slow3": "spawn_only 3% slower",
              "slow1": "spawn_only 1% slower"}


def die(msg):
    print(f"summarize: {msg}", file=sys.stderr)
    sys.exit(1)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        die(f"{path}: {e}")


def read_int(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def seconds(text):
    m = re.fullmatch(r"([0-9.]+)(ms|s|m|h)?", text)
    if not m:
        die(f"--max-time {text!r} is not a duration")
    return float(m.group(1)) * {"ms": 1e-3, "s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]


def row_summary(row):
    ci = row.get("ratio_ci") or [None, None]
    ab = row.get("ab") or {}
    return {"verdict": row["verdict"], "delta": row.get("delta"),
            "ci": [None if c is None else c - 1 for c in ci], "p": row.get("p"),
            "look": ab.get("look"), "rounds": ab.get("rounds"), "level": ab.get("level"),
            "unchanged": ab.get("unchanged"), "reason": row.get("reason")}


def judge(cmp, kind):
    """The pair's verdicts: the series' row, the others' alarms, caught."""
    rows = {r["name"]: r for r in cmp["series"]}
    pk = rows.get(SERIES)
    others = [n for n, r in rows.items() if n != SERIES and not r.get("control")
              and r["verdict"] in ("regressed", "improved")]
    if kind == "aa" and pk is not None and pk["verdict"] in ("regressed", "improved"):
        others.append(SERIES)
    caught = (kind != "aa" and cmp["status"] == 2 and pk is not None
              and pk["verdict"] == "regressed" and not others)
    undecidable = [n for n, r in rows.items() if r["verdict"] == "undecidable"]
    return {"status": cmp["status"], "series": row_summary(pk) if pk else None,
            "false_alarms": sorted(others), "caught": caught, "undecidable": undecidable,
            "rows": len(rows)}


def ab_pair(out, kind, p, budget):
    cmp_path = os.path.join(out, "compare", f"ab-{kind}-{p}.json")
    res_path = os.path.join(out, "ab", f"{kind}-{p}.json")
    if not os.path.exists(cmp_path) or not os.path.exists(res_path):
        return None
    j = judge(load(cmp_path), kind)
    doc = load(res_path)
    section = doc.get("ab") or {}
    la = (doc.get("environment") or {}).get("loadavg_start") or [None]
    j["load_start"] = la[0]
    # The host it ran on (the study spans machines) and the library base was (its git tree).
    j["mhz"] = (doc.get("context") or {}).get("mhz_per_cpu")
    j["base_key"] = (section.get("base") or {}).get("key")
    looks = section.get("looks") or []
    last = looks[-1] if looks else {}
    j.update({"exit": read_int(res_path + ".status"), "wall_s": read_int(res_path + ".seconds"),
              "measuring_s": last.get("elapsed_s"), "rounds": last.get("rounds"),
              "looks": len(looks), "stopped": section.get("stopped")})
    j["in_budget"] = j["measuring_s"] is not None and j["measuring_s"] <= budget + 1
    return j


def sep_pair(out, kind, p):
    path = os.path.join(out, "compare", f"sep-{kind}-{p}.json")
    if not os.path.exists(path):
        return None
    cmp = load(path)
    j = judge(cmp, kind)
    run = os.path.join(out, "sep", f"{kind}-{p}-base.json")
    if os.path.exists(run):
        j["repetitions"] = (load(run).get("settings") or {}).get("repetitions")
    drift = cmp.get("drift") or {}
    j["drift"] = drift.get("line")
    j["undecidable_series"] = len(j["undecidable"])
    return j


def bisect_summary(out):
    status = read_int(os.path.join(out, "bisect", "status"))
    if status is None:
        return None
    text = ""
    try:
        with open(os.path.join(out, "bisect", "bisect.out")) as f:
            text = f.read()
    except OSError:
        pass
    m = re.search(r"^first bad commit: ([0-9a-f]+) (.*)$", text, re.M)
    s = re.search(r"^(\d+) steps? \((\d+) skipped\)", text, re.M)
    e = re.search(r"^  spawn_only/processkit: (.*)$", text, re.M)
    expected = None
    try:
        expected = subprocess.run(["git", "-C", os.path.join(out, "repo"), "rev-parse", "h11"],
                                  capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    found = m.group(1) if m else None
    # Without the scratch repository (a kept, earlier bisect) the commit's subject says it.
    right = bool(found and expected and expected.startswith(found)) if expected else \
        bool(m and m.group(2).startswith("h11:"))
    return {"exit": status, "wall_s": read_int(os.path.join(out, "bisect", "seconds")),
            "first_bad": found, "subject": m.group(2) if m else None,
            "expected": expected[:12] if expected else None,
            "right": right,
            "steps": int(s.group(1)) if s else None, "skipped": int(s.group(2)) if s else None,
            "effect": e.group(1) if e else None}


def count(pairs, pred):
    return sum(1 for x in pairs if x is not None and pred(x))


def totals(pairs, kind):
    got = [x for x in pairs if x is not None]
    t = {"n": len(got), "exit0": count(got, lambda x: x["status"] == 0),
         "exit2": count(got, lambda x: x["status"] == 2),
         "exit3": count(got, lambda x: x["status"] == 3),
         "caught": count(got, lambda x: x["caught"]),
         "false_alarm_pairs": count(got, lambda x: x["false_alarms"]),
         "undecidable_series": sum(len(x["undecidable"]) for x in got),
         "series": sum(x["rows"] for x in got)}
    deltas = sorted(x["series"]["delta"] for x in got
                    if x["series"] and x["series"]["delta"] is not None)
    t["series_delta_median"] = deltas[len(deltas) // 2] if deltas else None
    t["series_delta_range"] = [deltas[0], deltas[-1]] if deltas else None
    if kind != "aa":
        t["series_regressed"] = count(got, lambda x: x["series"] and x["series"]["verdict"] ==
                                      "regressed")
    return t


def summarize(out, budget):
    pairs = {}
    for path in glob.glob(os.path.join(out, "compare", "*-*.json")):
        m = re.fullmatch(r"(ab|sep)-(aa|slow3|slow1)-(\d+)\.json", os.path.basename(path))
        if m:
            pairs.setdefault(m.group(2), set()).add(int(m.group(3)))
    if not pairs:
        die(f"{out}: no comparison in compare/ (run the study, or --analyse-only)")
    s = {"directory": os.path.basename(out.rstrip("/")), "series": SERIES, "max_time_s": budget,
         "kinds": {}, "bisect": bisect_summary(out)}
    loads, reps = [], []
    for kind in KINDS:
        if kind not in pairs:
            continue
        ab = [ab_pair(out, kind, p, budget) for p in sorted(pairs[kind])]
        sep = [sep_pair(out, kind, p) for p in sorted(pairs[kind])]
        abt = totals(ab, kind)
        got = [x for x in ab if x is not None]
        abt["decided"] = count(got, lambda x: x["stopped"] == "decided")
        abt["in_budget"] = count(got, lambda x: x["in_budget"])
        abt["caught_in_budget"] = count(got, lambda x: x["caught"] and x["in_budget"])
        times = sorted(x["measuring_s"] for x in got if x["measuring_s"] is not None)
        abt["measuring_s_median"] = times[len(times) // 2] if times else None
        abt["measuring_s_max"] = times[-1] if times else None
        s["kinds"][kind] = {"pairs": sorted(pairs[kind]), "ab": ab, "sep": sep,
                            "ab_totals": abt, "sep_totals": totals(sep, kind)}
        loads += [x["load_start"] for x in got if x.get("load_start") is not None]
        reps += [x["repetitions"] for x in sep if x is not None and x.get("repetitions")]
    loads.sort()
    s["load_start"] = {"median": loads[len(loads) // 2], "min": loads[0], "max": loads[-1]} \
        if loads else None
    s["sep_repetitions"] = max(reps) if reps else None
    s["pairs_per_kind"] = max(len(k["pairs"]) for k in s["kinds"].values())
    if "aa" in s["kinds"]:
        s["aa_bases"] = by_base(s["kinds"]["aa"])
    spin = os.path.join(out, "spin")
    if os.path.isdir(os.path.join(spin, "compare")):
        s["spin"] = spin_summary(spin, budget)
    return s


def by_base(kind):
    """The A/A pairs grouped by the library they measured (the base's git tree)."""
    groups = {}
    for p, x in zip(kind["pairs"], kind["ab"]):
        if x is not None:
            groups.setdefault(x.get("base_key") or "?", []).append(p)
    return [{"key": k, "pairs": v} for k, v in sorted(groups.items(), key=lambda kv: kv[1][0])]


def spin_summary(spin, budget):
    """The first injection's pairs (a spin: see results/ab-injection-20261206), per host."""
    s = summarize(spin, budget)
    hosts = []
    for kind, k in s["kinds"].items():
        groups = {}
        for x in k["ab"]:
            if x is not None:
                groups.setdefault(x.get("mhz"), []).append(x)
        for mhz, got in sorted(groups.items(), key=lambda kv: kv[0] or 0):
            t = totals(got, kind)
            pairs = [p for p, x in zip(k["pairs"], k["ab"]) if x is not None and x in got]
            hosts.append({"kind": kind, "mhz": mhz, "pairs": pairs, "totals": t})
    return {"hosts": hosts, "bisect": s.get("bisect")}


# ---- rendering (from summary.json alone) ------------------------------------------------------

def pct(x):
    return "n/a" if x is None else f"{100 * x:+.1f}%"


def ci(c):
    return "n/a" if not c or c[0] is None else f"[{pct(c[0])}, {pct(c[1])}]"


def done_when(s):
    """The issue's "done when", read off the numbers."""
    lines = []
    k = s["kinds"]
    if "aa" in k:
        t = k["aa"]["ab_totals"]
        ok = t["n"] > 0 and t["exit0"] >= 0.9 * t["n"] and t["exit2"] <= 0.05 * t["n"]
        lines.append(f"- A/A: {t['exit0']} of {t['n']} pairs exit 0, {t['exit2']} exit 2 "
                     f"(wanted: at least 90% exit 0, at most 5% exit 2): **{'met' if ok else 'not met'}**.")
    if "slow3" in k:
        t = k["slow3"]["ab_totals"]
        ok = t["n"] > 0 and t["caught_in_budget"] >= 0.95 * t["n"]
        lines.append(f"- 3% slower: caught (exit 2, only {SERIES}) in {t['caught']} of {t['n']} "
                     f"pairs, {t['caught_in_budget']} within the {s['max_time_s']:.0f} s budget "
                     f"(wanted: at least 95%): **{'met' if ok else 'not met'}**.")
    if "slow1" in k:
        t = k["slow1"]["ab_totals"]
        lines.append(f"- 1% slower: {SERIES} regressed in {t.get('series_regressed', 0)} of "
                     f"{t['n']} pairs (caught {t['caught']}); its delta's median "
                     f"{pct(t['series_delta_median'])}, range {ci(t['series_delta_range'])} "
                     f"(per pair with its CI below).")
    sep_lines = []
    for kind in KINDS:
        if kind in k:
            t = k[kind]["sep_totals"]
            if t["n"]:
                sep_lines.append(f"{kind}: {t['exit0']} exit 0, {t['exit2']} exit 2, "
                                 f"{t['exit3']} exit 3 of {t['n']}, caught {t['caught']}")
    if sep_lines:
        lines.append("- Separate runs, drift-corrected, on the same pairs: " + "; ".join(sep_lines)
                     + ". " + contrast_words(s))
    b = s.get("bisect")
    if b:
        ok = b["right"] and b["steps"] is not None and b["steps"] <= 5
        steps = "no" if b["steps"] is None else b["steps"]
        skipped = "-" if b["skipped"] is None else b["skipped"]
        lines.append(f"- Bisect over 16 commits (h11 the 5% slowdown): exit {b['exit']}, named "
                     f"{b['first_bad'] or 'none'} ({'h11' if b['right'] else 'not h11'}) in "
                     f"{steps} steps ({skipped} skipped) after the check of BAD "
                     f"(wanted: at most 5 steps): **{'met' if ok else 'not met'}**.")
    return "\n".join(lines)


def contrast_words(s):
    """What the separate runs' answers mean beside ab's and the drift study's, from the counts."""
    k = s["kinds"]
    if "aa" not in k or "slow3" not in k:
        return "(To read beside the drift study's 0 of 20 A/A pairs exit 0.)"
    aa, s3 = k["aa"]["sep_totals"], k["slow3"]["sep_totals"]
    ab3 = k["slow3"]["ab_totals"]
    if not aa["n"] or not s3["n"]:
        return "(To read beside the drift study's 0 of 20 A/A pairs exit 0.)"
    said = (f"The drift study's quick runs said exit 0 to 0 of 20 A/A pairs; these, two runs "
            f"together about as long as one ab run, said it to {aa['exit0']} of {aa['n']}. To the "
            f"3% slower build they said exit 0 in {s3['exit0']} of {s3['n']} pairs and caught it "
            f"in {s3['caught']}, where ab caught it in {ab3['caught']} of {ab3['n']}")
    if s3["exit0"] * 2 >= s3["n"]:
        return (said + ": their \"no regression\" is given to a 3% slowdown as readily as to no "
                "change, so it does not tell the two apart.")
    return said + "."


def totals_table(s):
    out = ["| kind | method | pairs | exit 0 | exit 2 | exit 3 | caught | false-alarm pairs | "
           "undecidable series | series delta, median [range] |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for kind in KINDS:
        if kind not in s["kinds"]:
            continue
        for method, key in (("ab, one run", "ab_totals"), ("two runs, compare", "sep_totals")):
            t = s["kinds"][kind][key]
            if not t["n"]:
                continue
            out.append(f"| {KIND_WORDS[kind]} | {method} | {t['n']} | {t['exit0']} | {t['exit2']} | "
                       f"{t['exit3']} | {t['caught'] if kind != 'aa' else '-'} | "
                       f"{t['false_alarm_pairs']} | {t['undecidable_series']} of {t['series']} | "
                       f"{pct(t['series_delta_median'])} {ci(t['series_delta_range'])} |")
    return "\n".join(out)


def ci_words(s):
    """Why a regressed series' CI can reach below zero: the CI and p are two different tests."""
    reg = [(kind, p, x["series"]) for kind in KINDS if kind in s["kinds"]
           for p, x in zip(s["kinds"][kind]["pairs"], s["kinds"][kind]["ab"])
           if x and x["series"] and x["series"]["verdict"] == "regressed"]
    low = [(kind, p, r) for kind, p, r in reg if r["ci"][0] is not None and r["ci"][0] <= 0]
    if not low:
        return ""
    eg = low[0]
    return (f"Two tests stand behind each verdict: *regressed* needs Wilcoxon's signed-rank p on "
            f"the per-round log ratios below the look's level and the median ratio beyond the "
            f"bar, while the CI shown is a percentile bootstrap of the median per-round ratio at "
            f"that level. They need not agree at the edge: {len(low)} of the {len(reg)} regressed "
            f"verdicts have a CI reaching zero or below (for example {eg[0]} pair {eg[1]}: "
            f"{pct(eg[2]['delta'])} {ci(eg[2]['ci'])}, p {eg[2]['p']:.2g}). The rank test uses "
            f"every round's ratio, the median's CI only the middle ones.")


def time_table(s):
    out = ["| kind | pairs | decided before the budget | within the budget | measuring, median | "
           "longest |", "|---|---:|---:|---:|---:|---:|"]
    for kind in KINDS:
        if kind not in s["kinds"]:
            continue
        t = s["kinds"][kind]["ab_totals"]
        med = t["measuring_s_median"]
        mx = t["measuring_s_max"]
        out.append(f"| {KIND_WORDS[kind]} | {t['n']} | {t['decided']} | {t['in_budget']} | "
                   f"{'n/a' if med is None else f'{med:.0f} s'} | "
                   f"{'n/a' if mx is None else f'{mx:.0f} s'} |")
    return "\n".join(out)


def pair_table(s):
    out = [f"| kind | pair | host MHz | ab exit | ab: {SERIES} | decided at | ab time | "
           f"two runs exit | two runs: {SERIES} | alarms (ab / two runs) |",
           "|---|---:|---:|---:|---|---|---:|---:|---|---|"]

    def cell(x):
        if x is None or x["series"] is None:
            return "-"
        r = x["series"]
        return f"{r['verdict']} {pct(r['delta'])} {ci(r['ci'])}"

    for kind in KINDS:
        if kind not in s["kinds"]:
            continue
        k = s["kinds"][kind]
        for i, p in enumerate(k["pairs"]):
            a, b = k["ab"][i], k["sep"][i]
            when, took = "-", "-"
            if a and a["series"] and a["series"]["look"]:
                when = f"look {a['series']['look']}, {a['series']['rounds']} rounds"
            if a and a["measuring_s"] is not None:
                took = f"{a['measuring_s']:.0f} s"
            alarms = (f"{len(a['false_alarms']) if a else '-'} / "
                      f"{len(b['false_alarms']) if b else '-'}")
            mhz = (a.get("mhz") if a else None) or "?"
            out.append(f"| {kind} | {p} | {mhz} | {a['status'] if a else '-'} | {cell(a)} | {when} | "
                       f"{took} | {b['status'] if b else '-'} | {cell(b)} | {alarms} |")
    return "\n".join(out)


def pair_words(pairs):
    """[1, 2, 3, 5] -> "1–3, 5"."""
    out, start = [], None
    for i, p in enumerate(pairs):
        if start is None:
            start = p
        if i + 1 == len(pairs) or pairs[i + 1] != p + 1:
            out.append(f"{start}" if start == p else f"{start}–{p}")
            start = None
    return ", ".join(out)


def aa_bases_text(s):
    groups = s.get("aa_bases") or []
    if len(groups) < 2:
        return ""
    parts = "; ".join(f"pairs {pair_words(g['pairs'])}: `{g['key']}`" for g in groups)
    return (f"The A/A pairs measured base as the scratch repository held it when they ran, which "
            f"changed with the injection (base itself never holds injected code; ab's build key "
            f"names the library's git tree): {parts}.")


def spin_md(s):
    sp = s.get("spin")
    if not sp:
        return ""
    rows = ["| kind | host (MHz per CPU) | pairs | exit 0 | exit 2 | exit 3 | caught | "
            f"{SERIES} delta, median [range] |", "|---|---:|---|---:|---:|---:|---:|---|"]
    for h in sp["hosts"]:
        t = h["totals"]
        rows.append(f"| {KIND_WORDS[h['kind']]} | {h['mhz'] or '?'} | {pair_words(h['pairs'])} | "
                    f"{t['exit0']} | {t['exit2']} | {t['exit3']} | {t['caught']} | "
                    f"{pct(t['series_delta_median'])} {ci(t['series_delta_range'])} |")
    b = bisect_text({"bisect": sp.get("bisect")}).replace("5% slower is ?", "5% slower is h11")
    return ("The study's first slowed builds spun N% of each run's time after the reap "
            "(`PK_INJECT_SLOWDOWN_PCT`, lib/src/inject.c, which the drift study keeps). On one host "
            "that measured near N, on another about three times N "
            "(results/ab-injection-20261206/README.md), so those pairs tested neither 3% nor 1%. "
            "They are kept in the study's `spin/` and counted nowhere above; here they are per host "
            "(ab's delta with the CI of the look that decided):\n\n" + "\n".join(rows) +
            "\n\nTheir bisect, on the same builds (h11 spun 5%): " + b)


def bisect_text(s):
    b = s.get("bisect")
    if not b:
        return "No bisect in this study."
    took = "n/a" if b["wall_s"] is None else f"{b['wall_s']} s"
    steps = "no" if b["steps"] is None else b["steps"]
    skipped = "-" if b["skipped"] is None else b["skipped"]
    found = (f"first bad commit {b['first_bad']} ({b['subject']})" if b["first_bad"]
             else "no first bad commit named (exit 3: `ab base h16` undecidable, or skipped "
                  "steps hide it)")
    return (f"`pkbench bisect base h16 --series '^{SERIES}$'` exited {b['exit']} after {took}: "
            f"{found}; the commit that made it 5% slower is {b['expected'] or '?'}; {steps} "
            f"steps, {skipped} skipped, after `ab base h16`. Its effect there: "
            f"{b['effect'] or 'n/a'}.")


def summary_md(s):
    return "\n\n".join([
        f"# ab study {s['directory']}",
        "## Done when\n\n" + done_when(s),
        "## Verdicts per kind\n\n" + totals_table(s),
        "## ab's time\n\n" + time_table(s),
        "## Bisect\n\n" + bisect_text(s),
        "## Every pair\n\n" + pair_table(s)]
        + (["## The first injection, kept apart\n\n" + spin_md(s)] if s.get("spin") else [])) + "\n"


def load_words(s):
    la = s.get("load_start")
    if not la:
        return "the machine's load was not recorded"
    return (f"the 1-minute load average at the start of the ab runs: median {la['median']:.2f} "
            f"(from {la['min']:.2f} to {la['max']:.2f})")


def note_md(s, date):
    b = f"results/{s['directory']}/summary.json"
    return f"""# {date}: two builds in one run — the ab study

What was asked: does `pkbench ab` (issue 35) decide what separate runs could not? The drift study
([2026-12-02-drift-study.md](2026-12-02-drift-study.md)) found that two separate quick runs of
one build, drift-corrected, said "no regression" for 0 of 20 pairs. ab measures both builds of the
library in one interleaved run, each in a worker process built against its revision, adds rounds
until every series is decided, and decides with a sequential rule (METHODOLOGY.md, "Checking a
change for regressions").

How: `just ab-study` (tests/ab/study.sh), on this machine, unpinned. A scratch repository made
from the tree's `CMakeLists.txt` and `lib/`: `base`; `slow3` and `slow1`, base with
`PK_INJECT_EXTRA_RUN_PCT` 3 and 1 (lib/src/inject_run.c: every (100/N)-th `pk_run` whose streams
are no pipe first runs its command once more, so `{SERIES}`, whose streams are inherited, does N%
more of the same work on any host, and the series with pipes none); a history of 16 commits, the
11th also 5% slower. {aa_bases_text(s)} Per pair: `pkbench ab base KIND --filter '^spawn_only/'`
(budget {s['max_time_s']:.0f} s), and beside it two separate quick runs of the same two builds
(`pkbench run --build`: the very workers ab measures, one build per run), together about the
same time ({s.get('sep_repetitions') or '?'} rounds each), compared with `pkbench compare`
(drift-corrected). Pairs per kind: {s.get('pairs_per_kind')}; {load_words(s)}. Every number below is generated by tests/ab/summarize.py
from the study's files; `tests/ab/summarize.py results/{s['directory']} --from-summary` renders
them again from `{b}`.

## Done when

{done_when(s)}

## Verdicts per kind

"caught": exit 2 with `{SERIES}` regressed and no other series regressed or improved;
"false-alarm pairs": in A/A any series regressed or improved, otherwise any series but
`{SERIES}`. ab's CIs are at the level of the look that decided (wider than 95% at early looks).

{totals_table(s)}

{ci_words(s)}

## ab's time (measuring, after the builds)

{time_table(s)}

## Bisect

{bisect_text(s)}

## Every pair

{pair_table(s)}
{chr(10) + "## The first injection, kept apart" + chr(10) + chr(10) + spin_md(s) + chr(10) if s.get("spin") else ""}"""


BEGIN = "<!-- ab-study: generated by tests/ab/summarize.py --methodology; do not edit -->"
END = "<!-- /ab-study -->"


def methodology_md(s, note, where):
    """The block METHODOLOGY.md shows: what was met, and the verdicts per kind."""
    link = os.path.relpath(os.path.abspath(note), os.path.dirname(os.path.abspath(where)))
    return (f"From `results/{s['directory']}/summary.json` (`just ab-study`, this kind of VM; "
            f"every pair, the times and the bisect: [{os.path.basename(note)}]({link})):"
            f"\n\n{done_when(s)}\n\n{totals_table(s)}")


def write_atomically(path, text):
    """Into a temporary file beside it, then renamed over it: a reader sees the old or the new."""
    real = os.path.realpath(path)
    if os.path.exists(real) and not os.path.isfile(real):
        die(f"{path}: not a regular file; nothing written")
    tmp = f"{real}.tmp.{os.getpid()}"
    try:
        with open(tmp, "w", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if os.path.exists(real):
            os.chmod(tmp, os.stat(real).st_mode & 0o7777)
        os.replace(tmp, real)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        die(f"{path}: {e}")


def methodology_parts(path, flag):
    """FILE's text split at its two ab-study markers: (before, the block, after). Dies, naming
    the option and the file, when it cannot be read or lacks one BEGIN line followed by one END."""
    try:
        with open(path, newline="") as f:  # every byte outside the markers kept, "\r\n" too
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        die(f"{flag} {path}: {e}")
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        die(f"{flag} {path}: wants one line '{BEGIN}' and, after it, one '{END}'; "
            f"nothing written")
    head, rest = text.split(BEGIN, 1)
    block, tail = rest.split(END, 1)
    return head, block.strip("\n"), tail


def splice_methodology(path, s, note):
    """Replaces what lies between METHODOLOGY.md's two markers; the rest is the user's."""
    head, _, tail = methodology_parts(path, "--methodology")
    write_atomically(path, f"{head}{BEGIN}\n{methodology_md(s, note, path)}\n{END}{tail}")


def check_methodology(path):
    """Is FILE's ab-study block what its summary.json renders? Writes nothing."""
    _, block, _ = methodology_parts(path, "--check-methodology")
    m = re.match(r"From `results/([^/`]+)/summary\.json`.*?\[([^]]+)\]\(([^)]+)\)", block)
    if not m:
        print(f"summarize: {path}'s ab-study block names no study yet: nothing to check")
        return
    top = os.path.dirname(os.path.abspath(path))
    s = load(os.path.join(top, "results", m.group(1), "summary.json"))
    want = methodology_md(s, os.path.join(top, m.group(3)), path)
    if block != want:
        sys.stderr.writelines(difflib.unified_diff(
            block.splitlines(True), want.splitlines(True), f"{path} (ab-study block)",
            f"rendered from results/{m.group(1)}/summary.json"))
        die(f"{path}: the ab-study block is not what summary.json renders (run tests/ab/summarize.py "
            f"results/{m.group(1)} --from-summary --methodology {path})")
    print(f"summarize: {path}'s ab-study block is what results/{m.group(1)}/summary.json renders")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--check-methodology", metavar="FILE",
                    help="only check that FILE's ab-study block is what the summary.json it "
                         "names renders (exit 1 and a diff if not); writes nothing")
    ap.add_argument("--from-summary", action="store_true")
    ap.add_argument("--note", help="the dated note to write")
    ap.add_argument("--methodology", metavar="FILE",
                    help="also put the done-when and the verdicts per kind between FILE's "
                         "ab-study markers (METHODOLOGY.md)")
    ap.add_argument("--max-time", default="5m")
    a = ap.parse_args()
    if a.check_methodology:
        check_methodology(a.check_methodology)
        return
    if not a.dir:
        ap.error("the study's directory is needed")
    out = a.dir.rstrip("/")
    if a.from_summary:
        s = load(os.path.join(out, "summary.json"))
    else:
        s = summarize(out, seconds(a.max_time))
        write_atomically(os.path.join(out, "summary.json"),
                         json.dumps(s, indent=1, sort_keys=True) + "\n")
    write_atomically(os.path.join(out, "summary.md"), summary_md(s))
    m = re.search(r"(\d{4})(\d{2})(\d{2})(?:T|$)", s["directory"])
    date = f"{m.group(1)}-{m.group(2)}-{m.group(3)}" if m else "undated"
    note = a.note or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                  "reports", "notes", f"{date}-ab-study.md")
    write_atomically(note, note_md(s, date))
    if a.methodology:
        splice_methodology(a.methodology, s, note)
    print(f"summarize: {os.path.join(out, 'summary.md')} and {os.path.normpath(note)}"
          + (f", and {a.methodology}'s ab-study tables" if a.methodology else ""))


if __name__ == "__main__":
    main()
