#!/usr/bin/env python3
"""make-history — a synthetic history for the site test: N copies of a results file as if one host
had measured it at N revisions, every sample multiplied by its own 1% lognormal noise and one
series' samples by STEP from revision AT on. The site test publishes them to show a history page
with a change point; no number from them is quoted anywhere.

Usage: make-history.py TEMPLATE.json OUTDIR [--revisions N] [--at K] [--step X] [--series NAME]
"""
import argparse
import hashlib
import json
import os
import random
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("template")
    ap.add_argument("outdir")
    ap.add_argument("--revisions", type=int, default=8)
    ap.add_argument("--at", type=int, default=5)
    ap.add_argument("--step", type=float, default=1.10)
    ap.add_argument("--series", default="spawn_only/processkit")
    a = ap.parse_args()
    with open(a.template, encoding="utf-8") as f:
        template = json.load(f)
    if not any(s.get("name") == a.series for s in template["series"]):
        sys.exit(f"make-history: {a.template} has no series {a.series}")
    os.makedirs(a.outdir, exist_ok=True)
    for i in range(a.revisions):
        doc = json.loads(json.dumps(template))
        env = doc["environment"]
        env["host"] = "history-host"
        env["host_id"] = "5173e5000001"
        env["git_commit"] = hashlib.sha1(f"revision {i + 1}".encode()).hexdigest()
        env["git_dirty"] = False
        env["git_commit_time"] = f"2026-01-{i + 1:02d}T00:00:00Z"
        doc["created"] = f"2026-02-{i + 1:02d}T00:00:00Z"
        rng = random.Random(1000 + i)
        for s in doc["series"]:
            if not s.get("samples_ns"):
                continue
            scale = a.step if s["name"] == a.series and i >= a.at else 1.0
            s["samples_ns"] = [x * scale * rng.lognormvariate(0, 0.01) for x in s["samples_ns"]]
        path = os.path.join(a.outdir, f"scenarios-rev{i + 1:02d}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
