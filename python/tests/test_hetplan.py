"""The hetplan Python module (python/): the command line's operations with dicts in and out."""
import json
import os
import pathlib

import pytest

import hetplan

SOURCE = pathlib.Path(os.environ.get("HETPLAN_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
INPUTS = SOURCE / "tests" / "exec" / "inputs"


def files():
    return {k: json.loads((INPUTS / f).read_text()) for k, f in
            (("cluster", "cpu_cluster.json"), ("model", "tiny_gpt.json"), ("job", "job.json"))}


def test_plan_builtin_example_is_ranked_valid_and_deterministic():
    r = hetplan.plan(top=3)
    assert r["planner"] == "sailor"
    assert 1 <= len(r["plans"]) <= 3
    times = [p["iteration_s"] for p in r["plans"]]
    assert times == sorted(times)
    assert hetplan.plan(top=3) == r  # the same input, the same plans
    best = r["plans"][0]
    priced = hetplan.simulate(None, r)
    assert priced["valid"] and priced["priceable"]
    assert priced["iteration_s"] == pytest.approx(best["iteration_s"], rel=1e-12)
    assert hetplan.validate(None, best["plan"])["valid"]


def test_plan_from_dicts_and_json_text_alike():
    d = files()
    a = hetplan.plan(d)
    b = hetplan.plan({k: json.dumps(v) for k, v in d.items()})
    assert a == b and a["plans"]


def test_objective_cost_and_constraints():
    fast = hetplan.plan()["plans"][0]
    cheap = hetplan.plan(objective="cost")["plans"][0]
    assert cheap["cost_usd"] <= fast["cost_usd"] * (1 + 1e-9)
    assert fast["iteration_s"] <= cheap["iteration_s"] * (1 + 1e-9)
    none = hetplan.plan(max_cost=1e-6)
    assert none["plans"] == [] and any("no plan within the constraints" in n for n in none["notes"])


def test_bad_input_names_the_input_and_field():
    d = files()
    d["cluster"]["gpus"][0]["memory_gib"] = -1
    with pytest.raises(hetplan.InputError) as e:
        hetplan.plan(d)
    assert "inputs['cluster']" in str(e.value) and "memory_gib" in str(e.value)
    assert isinstance(e.value, ValueError)
    with pytest.raises(hetplan.InputError, match="unknown planner 'nope'"):
        hetplan.plan(planner="nope")
    with pytest.raises(hetplan.InputError, match="not throughput or cost"):
        hetplan.plan(objective="speed")


def test_progress_reports_and_stops_the_search():
    seen = []

    def progress(candidates, best):
        seen.append((candidates, best))
        return len(seen) >= 2

    r = hetplan.plan(progress=progress)
    assert len(seen) == 2
    assert any("stopped" in n for n in r["notes"])
    full = hetplan.plan()
    if r["plans"]:
        assert r["plans"][0]["iteration_s"] >= full["plans"][0]["iteration_s"] * (1 - 1e-12)


def test_an_exception_in_progress_reaches_the_caller():
    def progress(candidates, best):
        raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        hetplan.plan(progress=progress)


def test_a_progress_result_that_is_not_a_bool_is_an_error_not_a_crash():
    with pytest.raises(Exception):
        hetplan.plan(progress=lambda candidates, best: object())


def test_compare_runs_each_planner_named():
    out = hetplan.compare(planners=["sailor", "zorse"])
    assert [r["planner"] for r in out] == ["sailor", "zorse"]
    assert {p["name"] for p in hetplan.planners()} >= {"sailor", "zorse", "cephalo", "autohet", "metis"}


def test_compare_prices_each_plan_with_other_models():
    out = hetplan.compare(planners=["sailor", "zorse"], price_with=["sailor", "zorse"])
    sailor, zorse = out[0]["plans"][0], out[1]["plans"][0]
    # Under its own models a plan costs what its planner reported; Zorse's have no TP.
    assert sailor["priced_by"]["sailor"]["iteration_s"] == pytest.approx(sailor["iteration_s"], rel=1e-12)
    assert zorse["priced_by"]["zorse"]["cost_usd"] == pytest.approx(zorse["cost_usd"], rel=1e-12)
    assert "tensor parallelism" in sailor["priced_by"]["zorse"]["refused"]
    with pytest.raises(hetplan.InputError, match="unknown planner 'alpa'"):
        hetplan.compare(planners=["sailor"], price_with=["alpa"])


def test_pareto_front_is_monotone_and_marks_the_choice():
    # The small CPU cluster of the exec tests: a short front, searched whole.
    f = hetplan.pareto(files())
    assert f["planner"] == "sailor" and f["complete"] and f["points"]
    times = [p["iteration_s"] for p in f["points"]]
    costs = [p["cost_usd"] for p in f["points"]]
    assert times == sorted(times) and costs == sorted(costs, reverse=True)
    assert f["chosen"] == 0
    assert f["points"][0]["iteration_s"] == pytest.approx(hetplan.plan(files())["plans"][0]["iteration_s"], rel=1e-12)
    cheapest = hetplan.pareto(files(), objective="cost")
    assert cheapest["chosen"] == len(cheapest["points"]) - 1
    first = hetplan.pareto(None, points=1)
    assert len(first["points"]) == 1 and not first["complete"] and any("points 1 reached" in n for n in first["notes"])
    with pytest.raises(hetplan.InputError, match="points"):
        hetplan.pareto(None, points=0)
    # Against GPUs: each point on fewer GPUs and slower; a GPU limit is honoured by plan().
    g = hetplan.pareto(files(), against="gpus")
    assert g["against"] == "gpus" and g["complete"] and g["points"]
    gpus = [p["gpus"] for p in g["points"]]
    assert gpus == sorted(gpus, reverse=True) and len(set(gpus)) == len(gpus)
    assert [p["iteration_s"] for p in g["points"]] == sorted(p["iteration_s"] for p in g["points"])
    smallest = hetplan.plan(files(), max_gpus=gpus[-1])["plans"][0]
    assert smallest["gpus"] <= gpus[-1] and smallest["iteration_s"] == pytest.approx(g["points"][-1]["iteration_s"], rel=1e-3)
    with pytest.raises(hetplan.InputError, match="against"):
        hetplan.pareto(None, against="watts")


def test_export_frameworks_and_ranks():
    r = hetplan.plan()
    m = hetplan.export(None, r, "megatron")
    # The default plan gives V100 and A100 different TP degrees: not Megatron's shape.
    assert m["missing"] and "text" not in m and m["ranks"]["format"] == "hetplan-ranks"
    ranks = hetplan.export(None, r, "ranks")["ranks"]
    assert ranks["world_size"] == r["plans"][0]["gpus"] == len(ranks["ranks"])
    # A ranks file is a plan too: it prices as the plan it came from.
    assert hetplan.simulate(None, ranks)["iteration_s"] == pytest.approx(r["plans"][0]["iteration_s"], rel=1e-12)
    try:
        import jsonschema
    except ImportError:
        return
    schema = json.loads((SOURCE / "docs" / "schemas" / "ranks.schema.json").read_text())
    jsonschema.validate(ranks, schema, cls=jsonschema.Draft202012Validator)
    with pytest.raises(hetplan.InputError, match="not megatron, deepspeed, torchtitan or ranks"):
        hetplan.export(None, r, "keras")


@pytest.mark.skipif(not os.environ.get("HETPLAN_DATA_DIR"), reason="HETPLAN_DATA_DIR is not set")
def test_import_data_then_plan_equals_planning_from_the_folder():
    data = pathlib.Path(os.environ["HETPLAN_DATA_DIR"])
    if not data.is_absolute():
        data = SOURCE / data
    sel = dict(model_name="GPT-Neo-2.7", available="A100-40@us-central1-a=32,V100-16@us-central1-a=96")
    imported = hetplan.import_data(f"sailor:{data / 'sailor'}", **sel)
    assert set(imported) == {"cluster", "model", "job", "profiles", "notes"}
    a = hetplan.plan(imported)  # its notes pass back in
    b = hetplan.plan({"from": f"sailor:{data / 'sailor'}", **sel})
    assert a["plans"][0]["plan"] == b["plans"][0]["plan"]
    assert a["plans"][0]["iteration_s"] == pytest.approx(b["plans"][0]["iteration_s"], rel=1e-9)
