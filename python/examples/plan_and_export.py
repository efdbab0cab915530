"""A session with hetplan from Python, cell by cell (run: PYTHONPATH=build/default/python python3 this.py).

1. plan the built-in example (GPT-Neo-2.7 on 32 A100-40 + 96 V100-16 over two zones), watching the search;
2. the cheapest plan at >= 0.05 iterations/s, next to the fastest;
3. price the fastest plan with each planner's models;
4. hand it to a framework: Megatron-LM cannot express it (TP differs per GPU type), so the ranks format."""
import hetplan

# %% 1. Plan, with progress (return True from the callback to stop early).
steps = []
fastest = hetplan.plan(top=3, progress=lambda candidates, best: steps.append((candidates, best)) and False)
print(f"{len(steps)} progress reports; best plans:")
for p in fastest["plans"]:
    print(f"  {p['iteration_s']:.3f} s/iteration, {p['cost_usd']:.3f} USD/iteration on {p['gpus']} GPUs")

# %% 2. Money: the cheapest plan that still makes 0.05 iterations/s.
cheap = hetplan.plan(objective="cost", min_throughput=0.05)
best = cheap["plans"][0]
print(f"cheapest at >= 0.05 it/s: {best['cost_usd']:.3f} USD/iteration ({best['throughput_it_s']:.3f} it/s, {best['gpus']} GPUs)")

# %% 3. The fastest plan priced by another planner's models (a model may not price every shape).
for planner in ("sailor", "zorse"):
    try:
        priced = hetplan.simulate(None, fastest, planner=planner)
        print(f"under {planner}'s models: valid {priced['valid']}, {priced.get('iteration_s', float('nan')):.3f} s/iteration")
    except hetplan.Error as e:
        print(f"{planner}'s models cannot price it: {e}")

# %% 4. Launch: Megatron-LM arguments if it can, else one entry per rank.
out = hetplan.export(None, fastest, "megatron")
if "text" in out:
    print(out["text"])
else:
    print("Megatron-LM lacks:", "; ".join(out["missing"]))
    ranks = out["ranks"]
    r0 = ranks["ranks"][0]
    print(f"ranks format: {ranks['world_size']} ranks; rank 0 is a {r0['gpu']} in {r0['zone']}, stage {r0['stage']}, "
          f"layers {r0['layers']}, TP group {r0['groups']['tp']}")
