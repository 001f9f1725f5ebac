#!/usr/bin/env python3
"""The drift study's summary (tests/drift/study.sh): what `pkbench compare` concluded about every
pair of separate runs, with its drift correction and without it, read from the comparison files
alone (compare/pair-P-KIND-{corrected,raw}.json, `pkbench compare --format json`) and the runs'
own results files (their load averages).

Writes DIR/summary.json (every number, per pair and in total) and DIR/summary.md (its tables,
rendered from summary.json alone). With --from-summary it reads DIR/summary.json instead of the
comparisons, which are not committed, and renders the tables again: that is how a note in
reports/notes/ that quotes a study regenerates them from the committed summary.json. Exit status:
0 written; 1 bad arguments, a directory without a single complete comparison, or a bad
summary.json (named on stderr).

Definitions (per comparison; a "series" is a non-control row — controls never get a verdict):
  decided      a series with a verdict: regressed, improved or unchanged (not undecidable)
  same (A/A)   both runs of one build: every "regressed" or "improved" is a false alarm;
               the false-regression rate is regressed / decided over all pairs
  slow         the second build spins --slowdown % of every processkit run: caught when at least
               one processkit* series is regressed (and the comparison exits 2); the detection
               rate per series is regressed / decided over the processkit* series; any other
               series regressed is a false alarm
  hog          the base build again, under --hogs busy loops: the machine slowed; the drift line
               should say so and the series should not be reported regressed
"""

import argparse
import glob
import json
import os
import re
import sys


def die(msg):
    print(f"summarize: {msg}", file=sys.stderr)
    sys.exit(1)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        die(f"{path}: {e}")


def is_processkit(name):
    return name.split("/", 1)[-1].startswith("processkit")


MODES = ("corrected", "raw", "corrected-nocv", "raw-nocv")
HEAD = ("with the drift correction", "without (--no-drift-correction)",
        "corrected, --cv-limit none", "without, --cv-limit none")


def tally(cmp):
    """Counts over the non-control rows of one comparison: the verdicts its gate used."""
    t = {"regressed": 0, "improved": 0, "unchanged": 0, "undecidable": 0, "machine_changed": 0,
         "pk_regressed": 0, "pk_decided": 0, "other_regressed": 0, "other_decided": 0}
    for row in cmp["series"]:
        if row.get("control"):
            continue
        v = row["verdict"]
        key = {"regressed": "regressed", "improved": "improved", "~": "unchanged"}.get(v, "undecidable")
        t[key] += 1
        if row.get("machine_changed"):
            t["machine_changed"] += 1
        decided = key != "undecidable"
        side = "pk" if is_processkit(row["name"]) else "other"
        t[f"{side}_decided"] += decided
        t[f"{side}_regressed"] += key == "regressed"
    t["decided"] = t["regressed"] + t["improved"] + t["unchanged"]
    # every delta the gate saw (corrected or raw), for the medians over the study
    t["pk_deltas"] = [r["delta"] for r in cmp["series"]
                      if not r.get("control") and is_processkit(r["name"]) and r["delta"] is not None]
    t["other_deltas"] = [r["delta"] for r in cmp["series"]
                         if not r.get("control") and not is_processkit(r["name"]) and r["delta"] is not None]
    return t


def drift_of(cmp):
    d = cmp.get("drift") or {}
    e = d.get("estimate")
    if not d.get("available") or not e:
        return None
    groups = {g["name"]: g["state"] for g in d.get("groups", [])}
    return {"ratio": e["ratio"], "ci": e["ratio_ci"], "groups": groups}


def load_of(results):
    env = results.get("environment", {})
    start, end = env.get("loadavg_start"), env.get("loadavg_end")
    return {"start": start[0] if start else None, "end": end[0] if end else None}


def pct(x):
    return "n/a" if x is None else f"{100 * x:+.1f}%"


def rate(a, b):
    return None if b == 0 else a / b


def fmt_rate(a, b):
    r = rate(a, b)
    return f"{a}/{b}" + ("" if r is None else f" ({100 * r:.1f}%)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--slowdown", type=float, default=10)
    ap.add_argument("--hogs", type=int, default=1)
    ap.add_argument("--from-summary", action="store_true",
                    help="read DIR/summary.json (written before) instead of DIR/compare/, and "
                         "only render: summary.md, and FILE with --into")
    ap.add_argument("--into", metavar="FILE",
                    help="also put the totals' tables (not the per-pair one) into FILE "
                         "(a note in reports/notes/) between the lines <!-- TAG --> and "
                         "<!-- /TAG -->, headings demoted to ####")
    ap.add_argument("--tag", default="drift-study-results",
                    help="the markers' name for --into (default drift-study-results), so one "
                         "file can quote several studies")
    a = ap.parse_args()
    if not re.fullmatch(r"[a-z0-9-]+", a.tag):
        die(f"--tag {a.tag!r}: use lower-case letters, digits and '-'")
    if not os.path.isdir(a.dir):
        die(f"{a.dir}: not a directory")

    if a.from_summary:
        summary = load(os.path.join(a.dir, "summary.json"))
        if summary.get("schema") != "pkbench-drift-study" or "totals" not in summary:
            die(f"{a.dir}/summary.json: not a drift study's summary")
    else:
        summary = measure(a)
    md = render(summary)
    tmp = os.path.join(a.dir, "summary.md.tmp")
    with open(tmp, "w") as f:
        f.write("\n".join(md) + "\n")
    os.replace(tmp, os.path.join(a.dir, "summary.md"))
    if a.into:
        into(a.into, md, a.tag)


def measure(a):
    """summary.json from the comparison files in a.dir/compare and the runs' results files."""
    pairs = {}
    for path in sorted(glob.glob(os.path.join(a.dir, "compare", "pair-*-corrected.json"))):
        m = re.match(r"pair-(\d+)-(same|slow|hog)-corrected\.json$", os.path.basename(path))
        if not m:
            continue
        p, kind = int(m.group(1)), m.group(2)
        cmps = {}
        for mode in MODES:
            mpath = path.replace("-corrected.json", f"-{mode}.json")
            if not os.path.exists(mpath):
                die(f"{mpath} is missing (the study compares every pair in every mode)")
            cmps[mode] = load(mpath)
        base = load(os.path.join(a.dir, f"pair-{p}-base.json"))
        new = load(os.path.join(a.dir, f"pair-{p}-{kind}.json"))
        entry = {mode: {"status": c["status"], **tally(c)} for mode, c in cmps.items()}
        entry.update({
            "drift": drift_of(cmps["corrected"]),
            "load": {"base": load_of(base), "new": load_of(new)},
            "created": {"base": base.get("created"), "new": new.get("created")},
        })
        pairs.setdefault(p, {})[kind] = entry
    if not pairs:
        die(f"no complete comparison in {a.dir}/compare")

    totals = {}
    for kind in ("same", "slow", "hog"):
        rows = [pairs[p][kind] for p in sorted(pairs) if kind in pairs[p]]
        if not rows:
            continue
        t = {"pairs": len(rows)}
        for mode in MODES:
            s = {k: sum(r[mode][k] for r in rows) for k in rows[0][mode]
                 if k not in ("status", "pk_deltas", "other_deltas")}
            for k in ("pk_deltas", "other_deltas"):
                v = sorted(x for r in rows for x in r[mode][k])
                s[k.replace("deltas", "delta_median")] = v[len(v) // 2] if v else None
            s["exit"] = {str(c): sum(r[mode]["status"] == c for r in rows) for c in (0, 2, 3)}
            s["false_regressed_rate"] = rate(s["regressed"], s["decided"])
            s["pairs_caught"] = sum(r[mode]["pk_regressed"] > 0 and r[mode]["status"] == 2 for r in rows)
            s["pk_detection_rate"] = rate(s["pk_regressed"], s["pk_decided"])
            s["other_false_regressed_rate"] = rate(s["other_regressed"], s["other_decided"])
            t[mode] = s
        drifts = [r["drift"]["ratio"] for r in rows if r["drift"]]
        t["drift_median"] = sorted(drifts)[len(drifts) // 2] if drifts else None
        t["drift_min"] = min(drifts) if drifts else None
        t["drift_max"] = max(drifts) if drifts else None
        loads = [r["load"]["new"]["start"] for r in rows if r["load"]["new"]["start"] is not None]
        t["load1_at_start_median"] = sorted(loads)[len(loads) // 2] if loads else None
        totals[kind] = t

    summary = {"schema": "pkbench-drift-study", "schema_version": 1, "dir": a.dir,
               "slowdown_pct": a.slowdown, "hogs": a.hogs, "pairs": len(pairs),
               "totals": totals, "per_pair": {str(p): pairs[p] for p in sorted(pairs)}}
    tmp = os.path.join(a.dir, "summary.json.tmp")
    with open(tmp, "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    os.replace(tmp, os.path.join(a.dir, "summary.json"))
    return summary


def render(summary):
    """summary.md's lines, from summary.json's content alone."""
    totals = summary["totals"]
    pairs = {int(p): v for p, v in summary["per_pair"].items()}
    md = [f"# Drift study: {summary['pairs']} pairs of separate quick runs\n",
          f"From `{summary['dir']}` (tests/drift/study.sh; tests/drift/summarize.py). Series = non-control "
          "rows; decided = regressed, improved or unchanged. Each pair is compared four ways: "
          "with and without the drift correction, each with compare's default 10% cv limit and "
          "with none.\n"]

    def table(t, lines):
        out = ["| | " + " | ".join(HEAD) + " |", "|---|" + "---:|" * len(MODES)]
        for label, f in lines:
            out.append(f"| {label} | " + " | ".join(f(t[m]) for m in MODES) + " |")
        return out

    exits = ("pairs exiting 0 / 2 / 3", lambda m: f"{m['exit']['0']} / {m['exit']['2']} / {m['exit']['3']}")
    undec = ("undecidable (of which machine changed)", lambda m: f"{m['undecidable']} ({m['machine_changed']})")

    def drift_sentence(t):
        f = lambda x: pct(None if x is None else x - 1)
        return (f"\nMeasured drift (new / base, all controls): median {f(t['drift_median'])}, "
                f"from {f(t['drift_min'])} to {f(t['drift_max'])}; median 1-minute load average at "
                f"the start of the new run: {t['load1_at_start_median']}.\n")

    if "same" in totals:
        t = totals["same"]
        md += [f"## A/A: two runs of one build, {t['pairs']} pairs (every alarm is false)\n"]
        md += table(t, [("false regressed / decided", lambda m: fmt_rate(m["regressed"], m["decided"])),
                        ("false improved", lambda m: str(m["improved"])), undec, exits])
        md.append(drift_sentence(t))
    if "slow" in totals:
        t = totals["slow"]
        md += [f"## processkit {summary['slowdown_pct']:g}% slower (a separate build), {t['pairs']} pairs\n"]
        md += table(t, [("pairs caught (a processkit series regressed, exit 2)", lambda m: f"{m['pairs_caught']}/{t['pairs']}"),
                        ("processkit series regressed / decided", lambda m: fmt_rate(m["pk_regressed"], m["pk_decided"])),
                        ("other series regressed / decided (false)", lambda m: fmt_rate(m["other_regressed"], m["other_decided"])),
                        ("median delta of the processkit series", lambda m: pct(m["pk_delta_median"])),
                        ("median delta of the other series", lambda m: pct(m["other_delta_median"])),
                        undec, exits])
        md.append(drift_sentence(t))
    if "hog" in totals:
        t = totals["hog"]
        md += [f"## The whole machine slowed: {summary['hogs']} busy loop(s) during the new run, {t['pairs']} pairs\n"]
        md += table(t, [("series regressed / decided", lambda m: fmt_rate(m["regressed"], m["decided"])),
                        ("series improved", lambda m: str(m["improved"])), undec, exits])
        md.append(drift_sentence(t))
    md += ["## Per pair\n",
           "| pair | kind | drift [95% CI] | corrected: regressed/decided, exit | raw | corrected, no cv limit | raw, no cv limit | load (new run) |",
           "|---:|---|---|---|---|---|---|---:|"]
    for p in sorted(pairs):
        for kind in ("same", "slow", "hog"):
            r = pairs[p].get(kind)
            if r is None:
                continue
            d = r["drift"]
            dr = "not measured" if d is None else f"{pct(d['ratio'] - 1)} [{pct(d['ci'][0] - 1)}, {pct(d['ci'][1] - 1)}]"
            bad = [g for g, s in (d or {}).get("groups", {}).items() if s != "corrected"]
            if bad:
                dr += " (cannot correct: " + ", ".join(bad) + ")"
            cells = " | ".join(f"{r[m]['regressed']}/{r[m]['decided']}, {r[m]['status']}" for m in MODES)
            md.append(f"| {p} | {kind} | {dr} | {cells} | {r['load']['new']['start']} |")
    return md


def into(path, md, tag):
    """The tables between the markers of `path`, written atomically; the rest untouched."""
    start, end = f"<!-- {tag} -->", f"<!-- /{tag} -->"
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        die(f"{path}: {e}")
    if start not in text:
        die(f"{path}: no line {start}")
    head, rest = text.split(start, 1)
    tail = rest.split(end, 1)[1] if end in rest else rest
    body = []
    cut = next((i for i, line in enumerate(md) if line.startswith("## Per pair")), len(md))
    md = md[:cut]  # the per-pair table stays in summary.md
    for line in md:
        if line.startswith("#"):
            line = "#### " + line.lstrip("# ")
        body.append(line)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(head + start + "\n" + "\n".join(body) + "\n" + end + tail)
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
