"""Tune the co-change lift offline, on the tuning set only (click commits 41-120).

For each commit (checked out at its parent, the message as the task), one
builder pass with the co-change lift switched off records the ranking it
would lift and every walked file's token costs; the repository's history at
that parent is read as the builder reads it. Each (TOP, WEIGHT, MAX_FILES)
of a small grid is then replayed offline: the lift, the first 80
candidates, the shared fitter, recall of the commit's files. The builder's
last step (rendering the package and stepping files down until it fits) is
not replayed, so figures differ a little from ``context_eval.py``'s.

    python bench/cochange_tune.py --repo click.bundle --skip 40 --commits 80
"""

from __future__ import annotations

import argparse
import itertools
import os
import pickle
import shutil
import statistics
import subprocess
import tempfile

from context_eval import click_bundle, sample_commits

from tooldeck.context import builder as builder_module
from tooldeck.context import cochange
from tooldeck.context.builder import CANDIDATES, ContextBuilder
from tooldeck.context.cochange import History, parse_name_only
from tooldeck.context.fit import fit
from tooldeck.context.pairs import best_first
from tooldeck.context.query import parse_query
from tooldeck.runtime import Runtime
from tooldeck.workspace.ignore import IgnoreRules


def collect(repo: str, commits: int, skip: int, budget: int) -> list[dict]:
    work = tempfile.mkdtemp(prefix="tdk-tune-")
    wt = os.path.join(work, "tree")
    subprocess.run(["git", "clone", "-q", "--no-checkout", repo, wt], check=True)
    out = []
    seen: dict = {}

    def capture(_cc, ranked, roots, files, candidates):  # type: ignore[no-untyped-def]
        seen["ranked"], seen["files"] = ranked, files
        return ranked, {}

    builder_module.lift_cochanged = capture  # type: ignore[assignment]
    try:
        for case in sample_commits(wt, commits, skip=skip):
            subprocess.run(["git", "-C", wt, "checkout", "-q", "--detach", "-f", f"{case.sha}^"], check=True)
            subprocess.run(["git", "-C", wt, "clean", "-qfdx"], check=True)
            rules = IgnoreRules(wt)
            truth = [p for p in case.truth if not rules.is_ignored(p)]
            if not truth:
                continue
            state = os.path.join(work, "state")
            b = ContextBuilder(Runtime.for_dirs([wt], state_dir=state))
            b.build(case.message, budget, apply=False)
            query = parse_query(case.message)
            cm = builder_module.codemap_service(b.rt)
            by_abs = {f.abs: f for f in seen["files"]}
            pend = [b._measure(k, 0.0, None, query, cm, by_abs=by_abs) for k in by_abs]
            cands = {c.key: c for c in b._count([p for p in pend if p is not None])}
            log = subprocess.run(
                ["git", "-C", wt, "log", "--no-merges", "--no-renames", "--name-only", "-z", "--format=%x1e",
                 f"--max-count={cochange.COMMITS}", "HEAD"],
                capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            top = os.path.realpath(wt) + os.sep
            out.append({
                "ranked": seen["ranked"], "cands": cands, "commits": parse_name_only(log), "top": top,
                "truth": {top + p for p in truth}, "sha": case.sha[:10],
            })  # fmt: skip
            shutil.rmtree(state, ignore_errors=True)
            print(f"  collected {case.sha[:10]} ({len(out)})", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def replay(cases: list[dict], top: int, weight: float, max_files: int, budget: int) -> float:
    recalls = []
    for c in cases:
        cochange.MAX_FILES = max_files
        hist = History(c["commits"])
        ranked = c["ranked"]
        scores = dict(ranked)
        if weight > 0:
            inside = [(k[len(c["top"]) :], s) for k, s in ranked[:top] if k.startswith(c["top"])]
            for rel, (b, _p) in hist.lift(inside, top=top, weight=weight).items():
                k = c["top"] + rel
                if k in c["cands"]:
                    scores[k] = scores.get(k, 0.0) + b
        order = [k for k, _ in best_first(scores)][:CANDIDATES]
        chosen = {ch.candidate.key for ch in fit([c["cands"][k] for k in order if k in c["cands"]], budget)
                  if ch.mode != "omitted"}  # fmt: skip
        recalls.append(len(chosen & c["truth"]) / len(c["truth"]))
    return statistics.mean(recalls)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default=None)
    ap.add_argument("--commits", type=int, default=80)
    ap.add_argument("--skip", type=int, default=40)
    ap.add_argument("--budget", type=int, default=30_000)
    ap.add_argument("--cases", help="a pickle of the collected commits: read if it exists, else written")
    args = ap.parse_args()
    if args.cases and os.path.exists(args.cases):
        with open(args.cases, "rb") as fh:
            cases = pickle.load(fh)
    else:
        cases = collect(args.repo or click_bundle(), args.commits, args.skip, args.budget)
        if args.cases:
            with open(args.cases, "wb") as fh:
                pickle.dump(cases, fh)
    print(f"{len(cases)} commits; no lift: {replay(cases, 8, 0.0, 20, args.budget):.3f}", flush=True)
    grid = itertools.product((3, 5, 8, 12), (0.1, 0.15, 0.25, 0.4, 1.0), (10, 20, 40))
    for top, weight, mf in grid:
        r = replay(cases, top, weight, mf, args.budget)
        print(f"top {top:>2} weight {weight:<4} max_files {mf:>2}: {r:.3f}", flush=True)


if __name__ == "__main__":
    main()
