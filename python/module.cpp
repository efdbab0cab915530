// The `hetplan._hetplan` extension (pybind11): the command line's operations with JSON text in
// and out; python/hetplan/__init__.py turns dicts into JSON and back. Errors in the input raise
// hetplan.InputError (a ValueError) with the command line's message, naming the input and field.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <exception>
#include <optional>
#include <stop_token>
#include <string>

#include "../apps/hetplan/commands.hpp"

namespace py = pybind11;
using namespace hetplan;

namespace {

/// The problem: {} for the built-in example; {"cluster", "model", "job"[, "profiles"]} as JSON
/// values; or {"from": "sailor:DIR", "model_name": ..., "available": ..., "cluster_name": ...,
/// "batch": N} for a published data folder.
app::inputs read_inputs(const std::string& text, std::vector<std::string>* notes = nullptr) {
    const io::json j = io::parse_text(text, "inputs");
    const io::cursor root(j, "inputs");
    // "notes": import_data's result passes back in as it is.
    root.known_fields({"cluster", "model", "job", "profiles", "from", "model_name", "available", "cluster_name", "batch", "notes"});
    if (auto from = root.find("from")) {
        app::options o;
        if (auto m = root.find("model_name")) o.model_name = m->string();
        if (auto a = root.find("available")) o.available = a->string();
        if (auto c = root.find("cluster_name")) o.cluster_name = c->string();
        if (auto b = root.find("batch")) o.batch = b->integer(1, limits::max_global_batch);
        return app::import_source(from->string(), o, notes);
    }
    if (!root.find("cluster") && !root.find("model") && !root.find("job")) {
        app::inputs in;
        in.data = fixtures::default_planning_example();
        return in;
    }
    app::parsed_inputs p{root["cluster"].raw(), root["model"].raw(), root["job"].raw(), std::nullopt};
    if (auto pr = root.find("profiles")) p.profiles = pr->raw();
    return app::load_parsed(p, {"inputs['cluster']", "inputs['model']", "inputs['job']", p.profiles ? "inputs['profiles']" : "the profiles (none given)"});
}

/// A plan: a plan object, the result of plan() (its best plan), or a ranks file.
plan read_plan_text(const std::string& text, const cluster& hw) {
    const io::json j = io::parse_text(text, "plan");
    const io::cursor root(j, "plan");
    if (root.find("plans")) return io::read_plan(root["plans"].at(0)["plan"], hw);
    if (root.find("format") && root.find("ranks")) return io::read_ranks(root, hw);
    return io::read_plan(root, hw);
}

/// {"planner", "objective": "throughput"|"cost", "max_cost", "min_throughput", "max_gpus", "top", "deadline"}
/// (compare: "planners" and "price_with" instead of "planner"); the deadline (seconds, per
/// planner) is set when each search starts (run_plan).
planning_request read_request(const io::cursor& o, std::string& planner, std::optional<double>& deadline_s, bool compare = false) {
    if (compare) o.known_fields({"planners", "price_with", "objective", "max_cost", "min_throughput", "max_gpus", "top", "deadline", "timing"});
    else o.known_fields({"planner", "objective", "max_cost", "min_throughput", "max_gpus", "top", "deadline", "timing"});
    planning_request rq;
    if (auto p = o.find("planner")) planner = p->string();
    if (auto t = o.find("objective")) {
        const std::string v = t->string();
        if (v == "throughput") rq.target = objective_kind::throughput;
        else if (v == "cost") rq.target = objective_kind::cost;
        else t->fail("'" + v + "' is not throughput or cost");
    }
    if (auto c = o.find("max_cost"); c && !c->raw().is_null()) rq.limits.max_usd = c->positive();
    if (auto c = o.find("min_throughput"); c && !c->raw().is_null()) rq.limits.min_throughput = c->positive();
    if (auto c = o.find("max_gpus"); c && !c->raw().is_null()) rq.limits.max_gpus = c->integer(1, limits::max_gpus);
    if (auto t = o.find("top")) rq.top = static_cast<std::size_t>(t->integer(1, 1000));
    if (auto d = o.find("deadline"); d && !d->raw().is_null()) deadline_s = d->positive(86400);
    return rq;
}

/// Runs one planner; `progress(candidates, best)` is called as the search goes, and a true
/// return stops it (the best plans so far come back, with a note).
io::json run_plan(const app::inputs& in, const std::string& planner, planning_request rq, std::optional<double> deadline_s,
                  const std::optional<py::function>& progress, bool timing) {
    const problem pb = in.pb();
    any_planner p = planner_named(planner);
    std::stop_source stop;
    rq.stop.token = stop.get_token();
    if (deadline_s)
        rq.stop.deadline = stop_condition::clock::now() + std::chrono::duration_cast<stop_condition::clock::duration>(std::chrono::duration<double>(*deadline_s));
    // Whatever the callback throws (a Python error, a result that is not a bool) stops the
    // search and reaches the caller once the planner has returned.
    std::exception_ptr failed;
    if (progress)
        rq.progress = [&](const search_progress& s) {
            if (failed) return;
            try {
                if (py::cast<bool>((*progress)(s.candidates, s.best))) stop.request_stop();
            } catch (...) {
                failed = std::current_exception();
                stop.request_stop();
            }
        };
    const plan_result out = p.plan(pb, rq);
    if (failed) std::rethrow_exception(failed);
    return app::result_json(p.name(), out, pb.hw, timing);
}

}  // namespace

PYBIND11_MODULE(_hetplan, m) {
    m.doc() = "hetplan: plan distributed training on heterogeneous GPU clusters (JSON text in and out; use the hetplan package)";
    // Translators are tried newest first: the derived input_error after its base.
    py::register_exception<hetplan::error>(m, "Error", PyExc_RuntimeError);
    py::register_exception<input_error>(m, "InputError", PyExc_ValueError);

    m.def("plan", [](const std::string& inputs, const std::string& options, std::optional<py::function> progress) {
        const io::json j = io::parse_text(options, "options");
        std::string planner = "sailor";
        std::optional<double> deadline_s;
        planning_request rq = read_request(io::cursor(j, "options"), planner, deadline_s);
        const bool timing = j.contains("timing") && j["timing"].is_boolean() && j["timing"].get<bool>();
        return run_plan(read_inputs(inputs), planner, std::move(rq), deadline_s, progress, timing).dump();
    }, py::arg("inputs"), py::arg("options"), py::arg("progress") = py::none());

    m.def("compare", [](const std::string& inputs, const std::string& options) {
        const io::json j = io::parse_text(options, "options");
        const io::cursor o(j, "options");
        std::string ignored;
        std::optional<double> deadline_s;
        const planning_request rq = read_request(o, ignored, deadline_s, true);
        std::vector<std::string> names;
        if (auto ps = o.find("planners")) ps->for_each_item([&](const io::cursor& c) { names.push_back(c.string()); });
        else
            for (const auto& p : builtin_planners()) names.push_back(p.name());
        std::vector<any_planner> pricers;  // price_with: each best plan under those planners' models too
        if (auto pw = o.find("price_with")) pw->for_each_item([&](const io::cursor& c) { pricers.push_back(planner_named(c.string())); });
        const app::inputs in = read_inputs(inputs);
        const problem pb = in.pb();
        io::json out = io::json::array();
        for (const std::string& n : names) {
            io::json r = run_plan(in, n, rq, deadline_s, std::nullopt, false);
            if (!pricers.empty() && !r["plans"].empty()) {
                const plan best = io::read_plan(io::cursor(r["plans"][0]["plan"], "compare"), pb.hw);
                for (const any_planner& models : pricers) r["plans"][0]["priced_by"][models.name()] = app::cross_price_json(price_with(models, pb, best));
            }
            out.push_back(std::move(r));
        }
        return out.dump();
    }, py::arg("inputs"), py::arg("options"));

    m.def("pareto", [](const std::string& inputs, const std::string& options) {
        const io::json j = io::parse_text(options, "options");
        const io::cursor o(j, "options");
        std::string planner = "sailor";
        std::optional<double> deadline_s;
        std::size_t points = 64;
        if (auto n = o.find("points")) points = static_cast<std::size_t>(n->integer(1, 1000));
        pareto_axis axis = pareto_axis::money;
        if (auto a = o.find("against")) {
            const std::string v = a->string();
            if (v == "gpus") axis = pareto_axis::gpus;
            else if (v != "usd") a->fail("'" + v + "' is not usd or gpus");
        }
        io::json rest = j;  // the request's fields, checked by read_request
        rest.erase("points");
        rest.erase("against");
        const planning_request rq = read_request(io::cursor(rest, "options"), planner, deadline_s);
        const app::inputs in = read_inputs(inputs);
        const problem pb = in.pb();
        any_planner p = planner_named(planner);
        stop_condition stop;
        if (deadline_s)
            stop.deadline = stop_condition::clock::now() + std::chrono::duration_cast<stop_condition::clock::duration>(std::chrono::duration<double>(*deadline_s));
        const app::pareto_report r =
            app::run_pareto(p, pb, rq.target, rq.limits, points, "points", stop, [] { return std::string("stopped at the deadline"); }, axis);
        return app::pareto_json(p.name(), r, pb.hw, axis).dump();
    }, py::arg("inputs"), py::arg("options"));

    m.def("simulate", [](const std::string& inputs, const std::string& plan_text, const std::string& planner) {
        const app::inputs in = read_inputs(inputs);
        const problem pb = in.pb();
        const plan pl = read_plan_text(plan_text, pb.hw);
        const any_planner models = planner_named(planner);
        const validation_report v = models.check(pb, pl);
        io::json out = {{"valid", v.ok()}, {"priceable", v.priceable}, {"violations", v.summary()}};
        if (v.priceable) {
            const estimate e = models.price(pb, pl);
            out.update(app::choice_json({pl, e, {}, 0, {}}, pb.hw));
        }
        return out.dump();
    }, py::arg("inputs"), py::arg("plan"), py::arg("planner"));

    m.def("export", [](const std::string& inputs, const std::string& plan_text, const std::string& format) {
        const app::inputs in = read_inputs(inputs);
        const plan pl = read_plan_text(plan_text, in.data.hw);
        if (const validation_report v = validate(in.pb(), pl, sailor_memory_model{}); !v.priceable)
            throw input_error("plan", "pipelines", "export: the plan cannot run:\n" + v.summary());
        io::json out = {{"format", format}, {"missing", io::json::array()}, {"notes", io::json::array()}};
        if (format == "ranks") {
            out["ranks"] = io::write_ranks(pl, in.data.hw, in.data.model, in.data.job);
            return out.dump();
        }
        const io::framework f = format == "megatron"     ? io::framework::megatron
                                : format == "deepspeed"  ? io::framework::deepspeed
                                : format == "torchtitan" ? io::framework::torchtitan
                                                         : throw input_error("format", "", "'" + format + "' is not megatron, deepspeed, torchtitan or ranks");
        const io::framework_export x = io::export_for(f, pl, in.data.model, in.data.job);
        out["missing"] = x.missing;
        out["notes"] = x.notes;
        if (x.ok()) out["text"] = x.text;
        else out["ranks"] = io::write_ranks(pl, in.data.hw, in.data.model, in.data.job);
        return out.dump();
    }, py::arg("inputs"), py::arg("plan"), py::arg("format"));

    m.def("import_data", [](const std::string& inputs) {
        std::vector<std::string> notes;
        const app::inputs in = read_inputs(inputs, &notes);
        std::vector<std::string> gpu_names;
        for (const gpu_spec& g : in.data.hw.gpus) gpu_names.push_back(g.type_name);
        const io::json out = {{"cluster", io::write_cluster(in.data.hw)},
                              {"model", io::write_model(in.data.model)},
                              {"job", io::write_job(in.data.job)},
                              {"profiles", io::write_profiles(in.data.profiles, gpu_names)},
                              {"notes", notes}};
        return out.dump();
    }, py::arg("inputs"));

    m.def("planners", [] {
        io::json out = io::json::array();
        for (const auto& p : builtin_planners()) out.push_back({{"name", p.name()}, {"paper", p.paper()}});
        return out.dump();
    });
}
