"""hetplan: plan distributed training of large models on heterogeneous, geo-distributed GPU clusters.

Every function takes and returns plain Python values (dicts, lists, strings): the same JSON the
command line reads and writes (docs/formats.md). Inputs are either

  * None: the built-in example (GPT-Neo-2.7 on 32 A100-40 + 96 V100-16 over two zones);
  * {"cluster": {...}, "model": {...}, "job": {...}, "profiles": {...}} (profiles optional:
    analytical layer times), each a dict or JSON text;
  * {"from": "sailor:DIR" | "zorse:DIR" | "cephalo:DIR", "model_name": ..., and "available"
    (Sailor: "GPU@ZONE=COUNT,..."), "cluster_name" (Zorse A|B|C, Cephalo A|B), "batch"}.

Bad input raises hetplan.InputError (a ValueError) with the command line's message.
"""
import json as _json

from . import _hetplan
from ._hetplan import Error, InputError

__all__ = ["plan", "compare", "pareto", "simulate", "validate", "export", "import_data", "planners", "InputError", "Error"]


def _text(value, what):
    if value is None:
        return "{}"
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return _json.dumps({k: (_json.loads(v) if isinstance(v, str) and k in ("cluster", "model", "job", "profiles") else v)
                            for k, v in value.items()})
    raise TypeError(f"hetplan: {what} must be a dict, JSON text or None, not {type(value).__name__}")


def _plan_text(plan):
    if isinstance(plan, str):
        return plan
    if isinstance(plan, dict):
        return _json.dumps(plan)
    raise TypeError(f"hetplan: plan must be a dict or JSON text, not {type(plan).__name__}")


def plan(inputs=None, planner="sailor", objective="throughput", max_cost=None, min_throughput=None, top=1,
         deadline=None, progress=None, max_gpus=None):
    """Plans with one planner. Returns {"planner", "notes", "plans": [{"plan", "iteration_s",
    "throughput_it_s", "cost_usd", "gpus", "worst_headroom_gb"}, ...]}, best first.

    progress(candidates, best) is called as the search goes; returning True stops it (the best
    plans so far come back, with a note). deadline: seconds. max_gpus: at most this many GPUs."""
    options = {"planner": planner, "objective": objective, "max_cost": max_cost, "min_throughput": min_throughput,
               "max_gpus": max_gpus, "top": top, "deadline": deadline}
    return _json.loads(_hetplan.plan(_text(inputs, "inputs"), _json.dumps(options), progress))


def compare(inputs=None, planners=None, objective="throughput", max_cost=None, min_throughput=None, deadline=None, price_with=None,
            max_gpus=None):
    """Every planner (or those named) on the same inputs: a list of plan() results. price_with:
    planner names whose models price each best plan too (its "priced_by": iteration_s, cost_usd,
    valid, or "refused" with the reason)."""
    options = {"objective": objective, "max_cost": max_cost, "min_throughput": min_throughput, "max_gpus": max_gpus,
               "deadline": deadline}
    if planners is not None:
        options["planners"] = list(planners)
    if price_with is not None:
        options["price_with"] = list(price_with)
    return _json.loads(_hetplan.compare(_text(inputs, "inputs"), _json.dumps(options)))


def pareto(inputs=None, planner="sailor", objective="throughput", max_cost=None, min_throughput=None, points=64, deadline=None,
           against="usd", max_gpus=None):
    """The Pareto front of throughput against USD per iteration (against="usd") or GPUs
    (against="gpus"): the fastest plan, then the fastest strictly cheaper one (on strictly fewer
    GPUs), and so on. Returns {"planner", "against", "complete", "searches", "notes", "chosen",
    "points": [like plan()'s "plans"]}, fastest first; "chosen" is the point the objective picks
    within max_cost / min_throughput / max_gpus. deadline: seconds, for the whole front."""
    options = {"planner": planner, "objective": objective, "max_cost": max_cost, "min_throughput": min_throughput,
               "max_gpus": max_gpus, "points": points, "deadline": deadline, "against": against}
    return _json.loads(_hetplan.pareto(_text(inputs, "inputs"), _json.dumps(options)))


def simulate(inputs, plan, planner="sailor"):
    """Prices a plan (a plan dict, or a plan() result: its best plan) with a planner's models:
    {"valid", "priceable", "violations", and when priceable "iteration_s", "cost_usd", ...}."""
    return _json.loads(_hetplan.simulate(_text(inputs, "inputs"), _plan_text(plan), planner))


def validate(inputs, plan, planner="sailor"):
    """Whether a plan is valid under a planner's memory model: {"valid", "priceable", "violations"}."""
    out = simulate(inputs, plan, planner)
    return {k: out[k] for k in ("valid", "priceable", "violations")}


def export(inputs, plan, format="ranks"):
    """A plan as a framework launches it: {"format", "text"} (Megatron-LM arguments, DeepSpeed
    JSON, TorchTitan TOML), or, for "ranks" and for a plan the framework cannot express,
    {"ranks": {...}, "missing": [what the framework lacks]}; "notes" say what is set elsewhere."""
    return _json.loads(_hetplan.export(_text(inputs, "inputs"), _plan_text(plan), format))


def import_data(source, model_name, available=None, cluster_name=None, batch=None):
    """A published data folder ("sailor:DIR", "zorse:DIR", "cephalo:DIR") as hetplan's inputs:
    {"cluster", "model", "job", "profiles", "notes"} (pass it to plan() as inputs)."""
    sel = {"from": source, "model_name": model_name}
    if available is not None:
        sel["available"] = available
    if cluster_name is not None:
        sel["cluster_name"] = cluster_name
    if batch is not None:
        sel["batch"] = batch
    return _json.loads(_hetplan.import_data(_json.dumps(sel)))


def planners():
    """The built-in planners: [{"name", "paper"}]."""
    return _json.loads(_hetplan.planners())
