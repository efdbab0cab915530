#!/usr/bin/env python3
"""The summary lines of `hetplan plan` agree with the numbers below them (issue 21): for every
planner, the iteration is pipeline + sync + update, the pipeline term is the slowest pipeline's
total, each pipeline's total is its warm-up+cool-down plus its steady part (and the steady part
is (microbatches - 1) x the straggler where one is printed), the iteration's sync and update are
the slowest stage's, and the cost is compute + communication. Numbers are compared to the
precision they are printed with.
usage: summary_consistent.py HETPLAN_BINARY [PLANNER ...]"""
import re
import subprocess
import sys

def check(binary, planner):
    out = subprocess.run([binary, "plan", "--planner", planner], capture_output=True, text=True, check=True).stdout
    errors = []

    def near(a, b, tol, what):
        if abs(a - b) > tol:
            errors.append(f"{planner}: {what}: {a} vs {b}")

    it = re.search(r"^iteration: ([0-9.]+) s = pipeline ([0-9.]+) \+ sync ([0-9.]+) \+ update ([0-9.]+)", out, re.M)
    cost = re.search(r"^cost per iteration: ([0-9.]+) USD = compute ([0-9.]+) \+ communication ([0-9.]+)", out, re.M)
    if not it or not cost:
        return [f"{planner}: no iteration or cost line in:\n{out}"]
    total, pipeline, sync, update = map(float, it.groups())
    near(total, pipeline + sync + update, 0.0021, "iteration = pipeline + sync + update")
    usd, compute, comm = map(float, cost.groups())
    near(usd, compute + comm, 0.00025, "cost = compute + communication")
    totals = []
    for m in re.finditer(r"^  pipeline \d+: (\d+) microbatches, (.*)$", out, re.M):
        mbs, rest = int(m.group(1)), m.group(2)
        s = re.fullmatch(r"straggler ([0-9.]+) s, warm-up\+cool-down ([0-9.]+) s, steady ([0-9.]+) s", rest)
        r = re.fullmatch(r"warm-up\+cool-down ([0-9.]+) s, steady ([0-9.]+) s", rest)
        t = re.fullmatch(r"([0-9.]+) s", rest)
        if s:
            straggler, ramp, steady = map(float, s.groups())
            near(steady, (mbs - 1) * straggler, 0.0006 + 0.00005 * mbs, "steady = (microbatches - 1) x straggler")
            totals.append(ramp + steady)
        elif r:
            totals.append(sum(map(float, r.groups())))
        elif t:
            totals.append(float(t.group(1)))
        else:
            errors.append(f"{planner}: unreadable pipeline line: {m.group(0)}")
    if not totals:
        errors.append(f"{planner}: no pipeline line")
    else:
        near(pipeline, max(totals), 0.0021, "pipeline = the slowest pipeline's total")
    layered = "sync*" in out
    stages = re.findall(r"^  \d+ +\d+ +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+)$", out, re.M)
    if not stages:
        errors.append(f"{planner}: no stage rows")
    elif not layered:  # sync* (Cephalo's, Zorse's) lies inside the pipeline time (said under the table)
        near(sync, max(float(r[3]) for r in stages), 0.0006, "sync = the slowest stage's")
    if stages:
        near(update, max(float(r[4]) for r in stages), 0.0006, "update = the slowest stage's")
    return errors

binary, planners = sys.argv[1], sys.argv[2:] or ["sailor", "zorse", "cephalo", "autohet", "metis", "metis-memory-aware"]
problems = [e for p in planners for e in check(binary, p)]
for e in problems:
    print(e)
print("summary lines consistent" if not problems else f"{len(problems)} inconsistencies")
sys.exit(1 if problems else 0)
