#pragma once
// The `hetplan` command's subcommands: plan, simulate, compare, recover, export, list, profile, run, bandwidth.
// main() only calls run().
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include <unistd.h>  // isatty
#include <vector>

#if HETPLAN_WITH_MPI
#include "hetplan/exec/mpi_communicator.hpp"
#endif
#include "hetplan/exec/bandwidth.hpp"
#include "hetplan/exec/plan_runner.hpp"
#include "hetplan/exec/profiler.hpp"
#include "hetplan/fixtures/example.hpp"
#include "hetplan/hetplan.hpp"
#include "hetplan/io.hpp"
#include "hetplan/planners/autohet_recovery.hpp"
#include "hetplan/planners/cross_price.hpp"
#include "hetplan/planners/pareto.hpp"
#include "hetplan/planners/registry.hpp"
#include "hetplan/render/pareto_svg.hpp"
#include "hetplan/render/plan_svg.hpp"
#include "gpu_module.hpp"
#include "report.hpp"
#include "run_rank.hpp"

namespace hetplan::app {

inline constexpr const char* usage_text =
    "usage:\n"
    "  hetplan plan     [INPUT] [--planner sailor|zorse|autohet|metis|metis-memory-aware|cephalo] [--objective throughput|cost]\n"
    "                   [--max-cost USD] [--min-throughput IT_PER_S] [--max-gpus N] [--top K] [--json OUT] [--svg OUT]\n"
    "                   [--deadline S] [--timing on|off]\n"
    "  hetplan simulate [INPUT] [--plan PLAN.json] [--planner NAME] [--json OUT] [--svg OUT]\n"
    "  hetplan compare  [INPUT] [--planners a,b,...] [--price-with a,b,...|all] [--objective ...] [--deadline S] [--json OUT]\n"
    "                   [--timing on|off] (--price-with: every plan priced by those planners' models too)\n"
    "  hetplan pareto   [INPUT] [--planner NAME] [--against usd|gpus] [--objective throughput|cost] [--max-cost USD]\n"
    "                   [--min-throughput IT_PER_S] [--max-gpus N] [--points N] [--deadline S] [--json OUT] [--svg OUT]\n"
    "                   (the Pareto front of throughput against USD per iteration, or against GPUs: the fastest plan, then\n"
    "                   the fastest strictly cheaper one (on strictly fewer GPUs), ...; --objective marks the plan it would\n"
    "                   choose; --deadline for the whole front)\n"
    "  hetplan recover  INPUT --from OLD.json --to NEW.json [--json OUT]   (AutoHet §IV: checkpoint transfers)\n"
    "  hetplan import   sailor|zorse|cephalo DIR SELECTION --out OUTDIR\n"
    "                   (a published data folder as hetplan's cluster/model/job/profiles JSON)\n"
    "  hetplan export   [INPUT] [--plan PLAN.json] --format megatron|deepspeed|torchtitan|ranks [--out FILE]\n"
    "                   (launch configuration of a plan; a plan the framework cannot express is written in the\n"
    "                   ranks format, with what the framework lacks on stderr and exit status 3)\n"
    "  hetplan list\n"
    "  hetplan profile  --model M.json [--gpu NAME] [--mbs 1,2,4] [--tp 1,2] [--repeats N] [--device D] --json P.json\n"
    "                   (times every layer of a transformer model on this machine: a profile the planners read;\n"
    "                   D: cpu (default), cuda, cuda-bf16 or cuda-own-gemm when built with CUDA)\n"
    "  hetplan bandwidth [--repeats N] [--json LINKS.json]\n"
    "                   (ping-pong between ranks 0 and 1, 1 KB to 64 MB, fitted to an alpha-beta link and Sailor's\n"
    "                   polynomial; over MPI under mpirun, else between two threads)\n"
    "  hetplan run      INPUT --plan PLAN.json [--steps N] [--planner NAME] [--device D]\n"
    "                   (trains the transformer model of INPUT under the plan, every rank a thread of this process,\n"
    "                   or one process per rank under mpirun -np N when built with MPI;\n"
    "                   prints the loss per step and the measured step time next to the simulator's)\n"
    "--json writes the same bytes for the same input; --timing on adds each search's elapsed_s.\n"
    "INPUT: --cluster C.json --model M.json --job J.json [--profiles P.json] (docs/formats.md), or a published\n"
    "  data folder read directly: --from sailor:DIR|zorse:DIR|cephalo:DIR SELECTION; with none,\n"
    "  plan and compare use the built-in GPT-Neo-2.7 on 32 A100-40 + 96 V100-16 over two zones, and\n"
    "  simulate uses the built-in OPT-350 example plan (or, with --plan only, the GPT-Neo cluster).\n"
    "SELECTION: --model-name NAME (as the data set names it) [--batch N], and for sailor\n"
    "  --available GPU@ZONE=COUNT,...  (e.g. A100-40@us-central1-a=128,V100-16@us-central1-a=128),\n"
    "  for zorse --cluster-name A|B|C, for cephalo --cluster-name A|B and --batch N.\n"
    "Ctrl-C during a search, or its --deadline (seconds, per planner), stops it and prints the best plan\n"
    "  found so far.\n";

/// Options of every subcommand, parsed once; each subcommand rejects what it does not take.
struct options {
    std::string cluster, model, job, profiles, plan_file, json_out, svg_out, from_file, to_file, format, out_file;
    std::string model_name, available, cluster_name;  ///< a published data set's selection (--from, import)
    int batch = 0;                                     ///< its global batch (0: the data set's)
    std::string planner = "sailor";
    std::vector<std::string> planners;
    std::vector<std::string> price_with;  ///< compare: the planners whose models price every plan
    objective_kind target = objective_kind::throughput;
    std::optional<usd> max_cost;
    std::optional<int> max_gpus;       ///< at most this many GPUs (--max-gpus)
    pareto_axis axis = pareto_axis::money;  ///< pareto: against USD per iteration or GPUs (--against)
    std::optional<double> min_throughput;
    std::size_t top = 1;
    std::size_t points = 64;           ///< pareto: the most points searched
    std::optional<double> deadline_s;  ///< per search (pareto: for the whole front)
    std::string gpu_name = "CPU";      ///< profile: the GPU type the profile is for
    std::string device = "cpu";        ///< profile, run: the compute (cpu or one of gpu_devices())
    std::vector<int> mbs{1, 2, 4}, tps{1};
    int repeats = 5, steps = 3;
    bool timing = false;  ///< elapsed_s in the JSON (which then differs run to run)
    std::vector<std::string> given;  ///< option names seen
};

inline double parse_number(const std::string& opt, const std::string& v) {
    try {
        std::size_t used = 0;
        const double d = std::stod(v, &used);
        if (used == v.size() && std::isfinite(d)) return d;
    } catch (const std::exception&) {
    }
    throw input_error("option " + opt + ": '" + v + "' is not a number");
}

/// The items of a comma-separated option value, empty ones included.
inline std::vector<std::string> split_commas(const std::string& v) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at <= v.size()) {
        const std::size_t comma = std::min(v.find(',', at), v.size());
        out.push_back(v.substr(at, comma - at));
        at = comma + 1;
    }
    return out;
}

inline options parse(const std::vector<std::string>& args, const std::vector<std::string>& allowed) {
    options o;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (std::find(allowed.begin(), allowed.end(), a) == allowed.end()) throw input_error("unknown option '" + a + "' (hetplan --help)");
        if (i + 1 >= args.size()) throw input_error("option " + a + " needs a value");
        const std::string v = args[++i];
        o.given.push_back(a);
        if (a == "--cluster") o.cluster = v;
        else if (a == "--model") o.model = v;
        else if (a == "--job") o.job = v;
        else if (a == "--profiles") o.profiles = v;
        else if (a == "--plan") o.plan_file = v;
        else if (a == "--from") o.from_file = v;
        else if (a == "--to") o.to_file = v;
        else if (a == "--json") o.json_out = v;
        else if (a == "--svg") o.svg_out = v;
        else if (a == "--format") o.format = v;
        else if (a == "--model-name") o.model_name = v;
        else if (a == "--available") o.available = v;
        else if (a == "--device") {
            const auto& gpus = gpu_devices();
            if (v != "cpu" && std::find(gpus.begin(), gpus.end(), v) == gpus.end())
                throw input_error("option --device: '" + v + "' is not cpu, cuda, cuda-bf16 or cuda-own-gemm");
#if !HETPLAN_WITH_CUDA
            if (v != "cpu") throw input_error("option --device " + v + ": this hetplan was built without CUDA (HETPLAN_WITH_CUDA is off)");
#endif
            o.device = v;
        }
        else if (a == "--cluster-name") o.cluster_name = v;
        else if (a == "--batch") {
            const double d = parse_number(a, v);
            if (!(d >= 1 && d <= limits::max_global_batch && d == std::floor(d)))
                throw input_error("option --batch: must be a whole number from 1 to " + std::to_string(limits::max_global_batch));
            o.batch = static_cast<int>(d);
        }
        else if (a == "--out") o.out_file = v;
        else if (a == "--timing") {
            if (v != "on" && v != "off") throw input_error("option --timing: '" + v + "' is not on or off");
            o.timing = v == "on";
        }
        else if (a == "--planner") o.planner = v;
        else if (a == "--planners" || a == "--price-with") {
            auto& list = a == "--planners" ? o.planners : o.price_with;
            for (std::string& name : split_commas(v)) {
                if (name == "all" && a == "--price-with")
                    for (const auto& p : builtin_planners()) list.push_back(p.name());
                else if (!name.empty()) list.push_back(std::move(name));
            }
        } else if (a == "--objective") {
            if (v == "throughput") o.target = objective_kind::throughput;
            else if (v == "cost") o.target = objective_kind::cost;
            else throw input_error("option --objective: '" + v + "' is not throughput or cost");
        } else if (a == "--max-cost") {
            const double d = parse_number(a, v);
            if (!(d > 0)) throw input_error("option --max-cost: must be > 0 USD per iteration");
            o.max_cost = usd{d};
        } else if (a == "--max-gpus") {
            const double d = parse_number(a, v);
            if (!(d >= 1 && d <= limits::max_gpus && d == std::floor(d)))
                throw input_error("option --max-gpus: must be a whole number from 1 to " + std::to_string(limits::max_gpus));
            o.max_gpus = static_cast<int>(d);
        } else if (a == "--against") {
            if (v == "usd") o.axis = pareto_axis::money;
            else if (v == "gpus") o.axis = pareto_axis::gpus;
            else throw input_error("option --against: '" + v + "' is not usd or gpus");
        } else if (a == "--min-throughput") {
            const double d = parse_number(a, v);
            if (!(d > 0)) throw input_error("option --min-throughput: must be > 0 iterations per second");
            o.min_throughput = d;
        } else if (a == "--deadline") {
            const double d = parse_number(a, v);
            if (!(d > 0 && d <= 86400)) throw input_error("option --deadline: must be > 0 and at most 86400 seconds");
            o.deadline_s = d;
        } else if (a == "--gpu") {
            o.gpu_name = v;
        } else if (a == "--mbs" || a == "--tp") {
            std::vector<int>& out = a == "--mbs" ? o.mbs : o.tps;
            out.clear();
            for (const std::string& item : split_commas(v)) {
                const double d = parse_number(a, item);
                if (!(d >= 1 && d <= 4096 && d == std::floor(d))) throw input_error("option " + a + ": '" + v + "' is not a list of whole numbers from 1 to 4096");
                out.push_back(static_cast<int>(d));
            }
        } else if (a == "--repeats" || a == "--steps") {
            const double d = parse_number(a, v);
            if (!(d >= 1 && d <= 10000 && d == std::floor(d))) throw input_error("option " + a + ": must be a whole number from 1 to 10000");
            (a == "--repeats" ? o.repeats : o.steps) = static_cast<int>(d);
        } else if (a == "--top" || a == "--points") {
            const double d = parse_number(a, v);
            if (!(d >= 1 && d <= 1000 && d == std::floor(d))) throw input_error("option " + a + ": must be a whole number from 1 to 1000");
            (a == "--top" ? o.top : o.points) = static_cast<std::size_t>(d);
        }
    }
    return o;
}

/// The problem: from files (all of cluster, model and job), else the built-in planning example.
struct inputs {
    fixtures::planning_example data;
    bool builtin = true;
    [[nodiscard]] problem pb() const { return data.as_problem(); }
};

/// The input files' parsed JSON: load_inputs reads them; the fuzz targets hand them in.
struct parsed_inputs {
    io::json cluster, model, job;
    std::optional<io::json> profiles;  ///< none: layer times are analytical
};

/// Reads, checks and cross-checks the inputs; errors name `src`'s file names.
inline inputs load_parsed(const parsed_inputs& p, const io::input_sources& src) {
    inputs in;
    in.builtin = false;
    in.data.hw = io::read_cluster(io::cursor(p.cluster, src.cluster));
    in.data.model = io::read_model(io::cursor(p.model, src.model));
    in.data.model.check(src.model);
    in.data.job = io::read_job(io::cursor(p.job, src.job));
    in.data.job.check(src.job);
    if (!p.profiles) in.data.profiles.enable_analytical({});
    else io::read_profiles(io::cursor(*p.profiles, src.profiles), in.data.profiles);
    in.data.profiles.check(src.profiles);
    io::check_consistency(in.data.hw, in.data.model, in.data.job, in.data.profiles, src);
    return in;
}

/// The options that select from a published data set, and what reading it noted.
inline constexpr std::initializer_list<const char*> source_options{"--from", "--model-name", "--available", "--cluster-name", "--batch"};
inline std::vector<std::string> with_source_options(std::vector<std::string> allowed) {
    allowed.insert(allowed.end(), source_options.begin(), source_options.end());
    return allowed;
}

/// A published data set read into a problem (io/import/*_world.hpp): `KIND:DIR` with KIND
/// sailor, zorse or cephalo, and the selection options. Notes say what hetplan's files cannot
/// carry or what was priced analytically.
inline inputs import_source(const std::string& from, const options& o, std::vector<std::string>* notes = nullptr) {
    const std::size_t colon = from.find(':');
    const std::string kind = colon == std::string::npos ? std::string{} : from.substr(0, colon), dir = colon == std::string::npos ? from : from.substr(colon + 1);
    if (kind != "sailor" && kind != "zorse" && kind != "cephalo")
        throw input_error("'" + kind + "' is not a published data set hetplan reads (sailor:DIR, zorse:DIR or cephalo:DIR; docs/formats.md)");
    if (o.model_name.empty()) throw input_error("option --model-name is needed with " + kind + " data (the model as the data set names it)");
    // An option this data set does not take is an error, not ignored.
    if (kind == "sailor" && !o.cluster_name.empty()) throw input_error("option --cluster-name: Sailor's data takes --available GPU@ZONE=COUNT,... instead");
    if (kind != "sailor" && !o.available.empty()) throw input_error("option --available: " + kind + "'s data takes --cluster-name (its paper's clusters) instead");
    inputs in;
    in.builtin = false;
    auto take = [&in](auto&& w) {
        in.data.hw = std::move(w.hw), in.data.model = std::move(w.model), in.data.job = std::move(w.job), in.data.profiles = std::move(w.profiles);
    };
    if (kind == "sailor") {
        if (o.available.empty()) throw input_error("option --available is needed with --from sailor: GPU@ZONE=COUNT,... (e.g. A100-40@us-central1-a=32)");
        struct entry {
            std::string gpu, zone;
            int count;
        };
        std::vector<entry> pool;
        std::vector<std::string> gpus, zones;
        for (const std::string& item : split_commas(o.available)) {
            const std::size_t a = item.find('@'), e = item.find('=');
            if (a == std::string::npos || e == std::string::npos || e < a || a == 0 || e == a + 1)
                throw input_error("option --available: '" + item + "' is not GPU@ZONE=COUNT");
            const double n = parse_number("--available", item.substr(e + 1));
            if (!(n >= 0 && n <= limits::max_gpus && n == std::floor(n))) throw input_error("option --available: '" + item + "': the count must be a whole number from 0");
            pool.push_back({item.substr(0, a), item.substr(a + 1, e - a - 1), static_cast<int>(n)});
            if (std::find(gpus.begin(), gpus.end(), pool.back().gpu) == gpus.end()) gpus.push_back(pool.back().gpu);
            if (std::find(zones.begin(), zones.end(), pool.back().zone) == zones.end()) zones.push_back(pool.back().zone);
        }
        io::sailor::world w = io::sailor::load_world(dir, o.model_name, gpus, zones, o.batch);
        for (const entry& x : pool) w.hw.pool.set(*w.hw.find_gpu(x.gpu), *w.hw.find_zone(x.zone), x.count);
        take(w);
    } else if (kind == "zorse") {
        const std::string& c = o.cluster_name;
        if (c != "A" && c != "B" && c != "C") throw input_error("option --cluster-name: '" + c + "' is not A, B or C (Zorse §5.1, Table 2)");
        io::zorse::world_spec spec = c == "A" ? io::zorse::cluster_a(o.model_name) : c == "B" ? io::zorse::cluster_b(o.model_name) : io::zorse::cluster_c(o.model_name);
        if (o.batch > 0) spec.global_batch = o.batch;
        io::zorse::world w = io::zorse::load_world(dir, spec);
        if (notes) notes->insert(notes->end(), w.notes.begin(), w.notes.end());
        take(w);
    } else {
        const std::string& c = o.cluster_name;
        if (c != "A" && c != "B") throw input_error("option --cluster-name: '" + c + "' is not A or B (Cephalo §4.1)");
        if (o.batch == 0) throw input_error("option --batch is needed with --from cephalo: (Cephalo's tables use 128-1024)");
        io::cephalo::world w = io::cephalo::load_world(dir, c == "A" ? io::cephalo::cluster_a(o.model_name, o.batch) : io::cephalo::cluster_b(o.model_name, o.batch));
        if (notes)
            notes->push_back("Cephalo's compute-memory fit (model_memory.json) is not part of hetplan's files: the Cephalo planner prices memory with its "
                             "analytical model here (the library's io::cephalo::world carries the fit)");
        take(w);
    }
    in.data.model.check(dir);
    in.data.job.check(dir);
    return in;
}

inline inputs load_inputs(const options& o, bool from_is_source = false) {
    if (!from_is_source || o.from_file.empty())
        for (const char* opt : {"--model-name", "--available", "--cluster-name", "--batch"})
            if (std::find(o.given.begin(), o.given.end(), opt) != o.given.end())
                throw input_error(std::string("option ") + opt + " selects from a published data folder: give --from KIND:DIR with it");
    if (from_is_source && !o.from_file.empty()) {
        if (!o.cluster.empty() || !o.model.empty() || !o.job.empty() || !o.profiles.empty())
            throw input_error("input: give --from or the files (--cluster, --model, --job), not both");
        return import_source(o.from_file, o);
    }
    const bool any = !o.cluster.empty() || !o.model.empty() || !o.job.empty() || !o.profiles.empty();
    if (!any) {
        inputs in;
        in.data = fixtures::default_planning_example();
        return in;
    }
    if (o.cluster.empty() || o.model.empty() || o.job.empty())
        throw input_error("input files: give all of --cluster, --model and --job (and --profiles, else layer times are analytical)");
    parsed_inputs p{io::parse_file(o.cluster), io::parse_file(o.model), io::parse_file(o.job), std::nullopt};
    if (!o.profiles.empty()) p.profiles = io::parse_file(o.profiles);
    return load_parsed(p, {o.cluster, o.model, o.job, o.profiles.empty() ? "the profiles (no --profiles given)" : o.profiles});
}

inline void write_file(const std::string& path, const std::string& text) {
    std::ofstream f(path);
    if (!f) throw input_error(path + ": cannot write file");
    f << text;
    if (!f) throw input_error(path + ": write failed");
}

/// Ctrl-C: the first stops the search (the planner returns its best so far), a second exits.
inline std::atomic<bool>& interrupted() {
    static std::atomic<bool> flag{false};
    return flag;
}
inline std::stop_source& interrupt_source() {
    static std::stop_source s;
    return s;
}
extern "C" inline void on_sigint(int) {
    if (interrupted().exchange(true)) std::_Exit(130);
    interrupt_source().request_stop();  // an atomic store: safe in a signal handler
}

/// Once a search has run for a second, shows on stderr how long, how many candidates it has
/// priced and the best so far (from the planner's progress callback): on a terminal one line
/// redrawn four times a second; otherwise (a log file, a pipe) a line after 1, 3, 7, 15 ... s,
/// so a long search leaves a few lines, not thousands of carriage returns.
class progress_line {
public:
    explicit progress_line(std::string what, bool terminal = ::isatty(::fileno(stderr)) == 1)
        : what_(std::move(what)), terminal_(terminal), t0_(std::chrono::steady_clock::now()), th_([this] { loop(); }) {}
    ~progress_line() {
        {
            std::lock_guard<std::mutex> l(m_);
            done_ = true;
        }
        cv_.notify_all();
        th_.join();
        if (shown_) std::fprintf(stderr, "\r%*s\r", 100, "");
    }
    /// The planner's callback: three relaxed stores, nothing else.
    [[nodiscard]] std::function<void(const search_progress&)> callback() {
        return [this](const search_progress& p) {
            candidates_.store(p.candidates, std::memory_order_relaxed);
            best_.store(p.best, std::memory_order_relaxed);
            unit_.store(p.unit, std::memory_order_relaxed);
        };
    }

private:
    void loop() {
        std::unique_lock<std::mutex> l(m_);
        std::chrono::milliseconds wait{1000};
        if (cv_.wait_for(l, wait, [this] { return done_; })) return;
        do {
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
            const double best = best_.load(std::memory_order_relaxed);
            std::fprintf(stderr, "%s%s: %.1f s, %zu candidates, best %s %s%s", terminal_ ? "\r" : "", what_.c_str(), s,
                         candidates_.load(std::memory_order_relaxed), std::isfinite(best) ? std::to_string(best).c_str() : "none yet",
                         std::isfinite(best) ? unit_.load(std::memory_order_relaxed) : "", terminal_ ? " (Ctrl-C: stop, keep the best)" : "\n");
            std::fflush(stderr);
            shown_ = terminal_;
            wait = terminal_ ? std::chrono::milliseconds(250) : std::chrono::milliseconds(1000) * (1 << std::min(++lines_, 12));
        } while (!cv_.wait_for(l, wait, [this] { return done_; }));
    }
    std::string what_;
    bool terminal_;
    int lines_ = 0;
    std::chrono::steady_clock::time_point t0_;
    std::atomic<std::size_t> candidates_{0};
    std::atomic<double> best_{std::numeric_limits<double>::infinity()};
    std::atomic<const char*> unit_{""};
    std::mutex m_;
    std::condition_variable cv_;
    bool done_ = false, shown_ = false;
    std::thread th_;
};

inline plan_result run_planner(any_planner& p, const problem& pb, const options& o, std::size_t top) {
    planning_request req;
    req.target = o.target;
    if (o.max_cost) req.limits.max_usd = o.max_cost->value;
    req.limits.min_throughput = o.min_throughput;
    req.limits.max_gpus = o.max_gpus;
    req.top = top;
    req.stop.token = interrupt_source().get_token();
    if (o.deadline_s)
        req.stop.deadline = stop_condition::clock::now() + std::chrono::duration_cast<stop_condition::clock::duration>(std::chrono::duration<double>(*o.deadline_s));
    auto prev = std::signal(SIGINT, on_sigint);
    plan_result out;
    {
        progress_line line(p.name());
        req.progress = line.callback();
        out = p.plan(pb, req);
    }
    std::signal(SIGINT, prev);
    // Says why the search stopped, in place of the search's generic note.
    const char* why = interrupted().load() ? "stopped by Ctrl-C: the best plan found so far"
                      : out.stopped && o.deadline_s ? "stopped at the --deadline: the best plan found so far" : nullptr;
    if (why) {  // in the generic note's place, before what the search proved (plan_result::bound)
        const auto it = std::find(out.notes.begin(), out.notes.end(), std::string(search::stopped_note));
        if (it != out.notes.end()) *it = why;
        else out.notes.push_back(why);
    }
    return out;
}

inline double worst_headroom_gb(const estimate& e) { return e.memory.worst_headroom().value / 1e9; }

inline io::json choice_json(const ranked_plan& c, const cluster& hw) {
    return {{"plan", io::write_plan(c.pl, hw)},
            {"iteration_s", c.est.time.iteration.value},
            {"throughput_it_s", c.est.time.throughput()},
            {"cost_usd", c.est.money.total.value},
            {"gpus", c.pl.total_gpus()},
            {"worst_headroom_gb", worst_headroom_gb(c.est)}};
}

/// What `hetplan plan --json` writes (and the Python module returns): the planner, its notes,
/// the ranked plans; elapsed_s only when asked (it differs run to run).
inline io::json result_json(const std::string& planner, const plan_result& out, const cluster& hw, bool timing) {
    io::json j = {{"planner", planner}, {"notes", out.notes}, {"plans", io::json::array()}};
    if (timing) j["elapsed_s"] = out.elapsed.value;
    for (const auto& c : out.plans) j["plans"].push_back(choice_json(c, hw));
    return j;
}

inline void print_notes(std::FILE* out, const std::vector<std::string>& notes) {
    for (const auto& n : notes) std::fprintf(out, "note: %s\n", n.c_str());
}

inline int plan_command(const std::vector<std::string>& args) {
    const auto o = parse(args, with_source_options({"--cluster", "--model", "--job", "--profiles", "--planner", "--objective", "--max-cost", "--min-throughput",
                                                    "--max-gpus", "--top", "--json", "--svg", "--timing", "--deadline"}));
    const auto in = load_inputs(o, true);
    const problem pb = in.pb();
    any_planner p = planner_named(o.planner);
    if (in.builtin)
        std::printf("planning the built-in example: %s, batch %d, on 32 A100-40 + 96 V100-16 over two zones (analytical layer times)\n",
                    pb.model.name.c_str(), pb.job.global_batch);
    const auto out = run_planner(p, pb, o, o.top);
    std::printf("planner %s (%s): %zu plan(s) in %.1f ms\n", p.name().c_str(), p.paper().c_str(), out.plans.size(), out.elapsed.value * 1e3);
    print_notes(stdout, out.notes);
    // The JSON is written either way: with no plan, its notes say why.
    if (!o.json_out.empty()) write_file(o.json_out, result_json(p.name(), out, pb.hw, o.timing).dump(2) + "\n");
    if (out.plans.empty()) {
        std::fprintf(stderr, "hetplan: no plan satisfies the request%s\n", out.notes.empty() ? "" : " (see the notes above)");
        return 1;
    }
    std::printf("\n  %-4s %12s %12s %12s %6s %7s %14s\n", "rank", "s/iteration", "iter/s", "USD/iter", "GPUs", "stages", "min headroom GB");
    for (std::size_t k = 0; k < out.plans.size(); ++k) {
        const auto& c = out.plans[k];
        std::printf("  %-4zu %12.3f %12.4f %12.4f %6d %7zu %14.2f\n", k + 1, c.est.time.iteration.value, c.est.time.throughput(),
                    c.est.money.total.value, c.pl.total_gpus(), c.pl.pipelines.empty() ? 0 : c.pl.pipelines[0].stages.size(),
                    worst_headroom_gb(c.est));
    }
    std::printf("\nbest plan:\n");
    print_estimate(stdout, pb, out.plans[0].pl, out.plans[0].est);
    if (!o.svg_out.empty()) write_file(o.svg_out, plan_svg(pb, out.plans[0].pl, out.plans[0].est));
    return 0;
}

/// Reads a plan file, the output of `hetplan plan --json` (its best plan), or a ranks file
/// (`hetplan export --format ranks`).
inline plan read_plan_file(const std::string& file, const cluster& hw) {
    const io::json j = io::parse_file(file);
    const io::cursor root(j, file);
    if (root.find("plans")) return io::read_plan(root["plans"].at(0)["plan"], hw);
    if (root.find("format") && root.find("ranks")) return io::read_ranks(root, hw);
    return io::read_plan(root, hw);
}

inline int simulate_command(const std::vector<std::string>& args) {
    const auto o = parse(args, with_source_options({"--cluster", "--model", "--job", "--profiles", "--plan", "--planner", "--json", "--svg"}));
    const bool files = !o.cluster.empty() || !o.model.empty() || !o.job.empty() || !o.from_file.empty();
    fixtures::example_inputs ex;
    inputs in;
    plan pl;
    const bool builtin_example = !files && o.plan_file.empty();
    if (builtin_example) {
        ex = fixtures::default_example();
        std::printf("simulating the built-in example (layer times from the analytical fallback: FLOPs at each GPU type's published efficiency)\n");
        pl = ex.example_plan;
    } else {
        in = load_inputs(o, true);
        if (o.plan_file.empty()) throw input_error("simulate: --plan PLAN.json is needed with input files");
        pl = read_plan_file(o.plan_file, in.data.hw);
    }
    const problem pb = builtin_example ? ex.as_problem() : in.pb();
    const any_planner models = planner_named(o.planner);
    const validation_report v = models.check(pb, pl);
    if (!v.priceable) {  // nothing to price: say why (the models would refuse it too)
        std::printf("the plan is NOT valid, and cannot be priced:\n%s", v.summary().c_str());
        return 1;
    }
    const estimate e = models.price(pb, pl);
    std::printf("priced with %s's models\n", models.name().c_str());
    print_estimate(stdout, pb, pl, e);
    if (!v.ok()) std::printf("\nthe plan is NOT valid:\n%s", v.summary().c_str());
    else std::printf("\nvalid plan: every layer placed once, batch conserved, GPUs within the pool, memory fits\n");
    if (!o.json_out.empty()) {
        io::json j = choice_json({pl, e, {}, 0, {}}, pb.hw);
        j["valid"] = v.ok();
        write_file(o.json_out, j.dump(2) + "\n");
    }
    if (!o.svg_out.empty()) write_file(o.svg_out, plan_svg(pb, pl, e));
    return v.ok() ? 0 : 1;
}

/// A published data set written as hetplan's files (docs/formats.md): cluster, model, job and
/// profiles JSON that `hetplan plan --cluster ... --model ... --job ... --profiles ...` reads.
inline int import_command(const std::vector<std::string>& args) {
    if (args.size() < 2 || args[0].starts_with("--")) throw input_error("import: KIND DIR first (sailor, zorse or cephalo, and the published data folder)");
    const auto o = parse({args.begin() + 2, args.end()}, {"--model-name", "--available", "--cluster-name", "--batch", "--out"});
    if (o.out_file.empty()) throw input_error("import: --out DIR is needed (where the four files go)");
    std::vector<std::string> notes;
    const inputs in = import_source(args[0] + ":" + args[1], o, &notes);
    std::filesystem::create_directories(o.out_file);
    const std::filesystem::path out(o.out_file);
    std::vector<std::string> gpu_names;
    for (const gpu_spec& g : in.data.hw.gpus) gpu_names.push_back(g.type_name);
    write_file((out / "cluster.json").string(), io::write_cluster(in.data.hw).dump(2) + "\n");
    write_file((out / "model.json").string(), io::write_model(in.data.model).dump(2) + "\n");
    write_file((out / "job.json").string(), io::write_job(in.data.job).dump(2) + "\n");
    write_file((out / "profiles.json").string(), io::write_profiles(in.data.profiles, gpu_names).dump(2) + "\n");
    std::printf("%s: %s, batch %d, %d GPUs of %zu type(s) in %zu zone(s)\nwrote %s/{cluster,model,job,profiles}.json\n", args[1].c_str(), in.data.model.name.c_str(),
                in.data.job.global_batch, in.data.hw.pool.total(), in.data.hw.gpus.size(), in.data.hw.zones.size(), o.out_file.c_str());
    print_notes(stdout, notes);
    return 0;
}

/// A plan as a framework launches it, or in the ranks format (io/export_*.hpp).
inline int export_command(const std::vector<std::string>& args) {
    const auto o = parse(args, with_source_options({"--cluster", "--model", "--job", "--profiles", "--plan", "--format", "--out"}));
    const std::vector<std::pair<std::string, std::optional<io::framework>>> formats{
        {"megatron", io::framework::megatron}, {"deepspeed", io::framework::deepspeed}, {"torchtitan", io::framework::torchtitan}, {"ranks", std::nullopt}};
    const auto f = std::find_if(formats.begin(), formats.end(), [&](const auto& x) { return x.first == o.format; });
    if (f == formats.end())
        throw input_error(o.format.empty() ? "export: --format megatron|deepspeed|torchtitan|ranks is needed"
                                           : "option --format: '" + o.format + "' is not megatron, deepspeed, torchtitan or ranks");
    const bool files = !o.cluster.empty() || !o.model.empty() || !o.job.empty() || !o.from_file.empty();
    inputs in;
    plan pl;
    if (!files && o.plan_file.empty()) {
        const fixtures::example_inputs ex = fixtures::default_example();
        in.data = ex;
        pl = ex.example_plan;
        std::fprintf(stderr, "hetplan export: the built-in OPT-350 example plan\n");
    } else {
        in = load_inputs(o, true);
        if (o.plan_file.empty()) throw input_error("export: --plan PLAN.json is needed with input files");
        pl = read_plan_file(o.plan_file, in.data.hw);
    }
    const cluster& hw = in.data.hw;
    const model_spec& model = in.data.model;
    const job_spec& job = in.data.job;
    if (const validation_report v = validate(in.pb(), pl, sailor_memory_model{}); !v.priceable)
        throw input_error(o.plan_file.empty() ? std::string("the plan") : o.plan_file, "pipelines", "export: the plan cannot run:\n" + v.summary());
    auto emit = [&](const std::string& text) {
        if (o.out_file.empty()) std::fputs(text.c_str(), stdout);
        else write_file(o.out_file, text);
    };
    if (!f->second) {
        emit(io::write_ranks(pl, hw, model, job).dump(2) + "\n");
        return 0;
    }
    const io::framework_export x = io::export_for(*f->second, pl, model, job);
    if (!x.ok()) {
        std::fprintf(stderr, "hetplan export: %s cannot express this plan:\n", f->first.c_str());
        for (const std::string& m : x.missing) std::fprintf(stderr, "  - %s\n", m.c_str());
        std::fprintf(stderr, "written in the ranks format instead (docs/formats.md)\n");
        emit(io::write_ranks(pl, hw, model, job).dump(2) + "\n");
        return 3;
    }
    for (const std::string& n : x.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
    emit(x.text);
    return 0;
}

/// AutoHet §IV: the transfers that take the training state from one plan to another.
inline int recover_command(const std::vector<std::string>& args) {
    const auto o = parse(args, {"--cluster", "--model", "--job", "--profiles", "--from", "--to", "--json"});
    if (o.from_file.empty() || o.to_file.empty()) throw input_error("recover: --from OLD.json and --to NEW.json are needed");
    const inputs in = load_inputs(o);
    const problem pb = in.pb();
    const plan before = read_plan_file(o.from_file, in.data.hw), after = read_plan_file(o.to_file, in.data.hw);
    for (const auto& [pl, file] : {std::pair{&before, &o.from_file}, std::pair{&after, &o.to_file}}) {
        const validation_report v = validate_structure(pb, *pl);
        if (!v.ok()) throw input_error(*file, "", "the plan is not valid on this cluster:\n" + v.summary());
    }
    const recovery_plan r = plan_recovery(pb, before, after);
    std::printf("recovery from %s to %s (AutoHet §IV; cloud 1,200 MB/s, local NVMe 3,500 MB/s, peers over the cluster's links)\n",
                o.from_file.c_str(), o.to_file.c_str());
    std::printf("  %zu pieces read: %.2f GB from local disks, %.2f GB from peers, %.2f GB from the cloud\n", r.transfers.size(),
                r.local.value / 1e9, r.peer.value / 1e9, r.cloud.value / 1e9);
    std::printf("  predicted recovery %.2f s; cloud-only %.2f s (%.2fx)\n", r.time.value, r.cloud_only_time.value, r.speedup());
    if (!o.json_out.empty()) {
        io::json j = {{"time_s", r.time.value}, {"cloud_only_time_s", r.cloud_only_time.value}, {"transfers", io::json::array()}};
        for (const auto& t : r.transfers) {
            io::json x = {{"pipeline", t.pipeline}, {"stage", t.stage}, {"worker", t.worker}, {"tp_rank", t.tp_rank}, {"layer", t.layer},
                          {"shard", t.shard}, {"shards", t.shards}, {"op", t.op}, {"source", std::string(to_string(t.source))},
                          {"bytes", t.size.value}, {"time_s", t.time.value}, {"shared", t.shared}};
            if (t.from) x["from"] = {{"gpu", pb.hw.gpu(t.from->gpu).type_name}, {"zone", pb.hw.zone(t.from->zone).name}, {"node", t.from->node}};
            j["transfers"].push_back(std::move(x));
        }
        write_file(o.json_out, j.dump(2) + "\n");
    }
    return 0;
}

/// One plan under one planner's models as JSON: its numbers and validity, or why refused.
inline io::json cross_price_json(const cross_price& c) {
    if (!c.priced()) return {{"refused", c.refused}};
    io::json j = {{"iteration_s", c.est->time.iteration.value}, {"cost_usd", c.est->money.total.value}, {"valid", c.check.ok()}};
    if (!c.check.ok()) j["violations"] = c.check.summary();
    return j;
}

/// `compare --price-with`: every planner's best plan under every chosen planner's models, s and
/// USD per iteration, '*' where those models' checks fail (memory, ...), refusals named below.
inline void print_cross_prices(const problem& pb, const std::vector<std::pair<std::string, plan>>& bests, const std::vector<any_planner>& pricers, io::json& j) {
    std::printf("\nthe same plans priced by each planner's models (s/iteration, USD/iteration; * the models' checks fail; - refused)\n  %-9s", "plan of");
    for (const any_planner& m : pricers) std::printf(" %22s", m.name().c_str());
    std::printf("\n");
    std::vector<std::string> why;
    for (const auto& [name, pl] : bests) {
        std::printf("  %-9s", name.c_str());
        io::json by = io::json::object();
        for (const any_planner& m : pricers) {
            const cross_price c = price_with(m, pb, pl);
            by[c.models] = cross_price_json(c);
            if (!c.priced()) {
                std::printf(" %22s", "-");
                why.push_back(name + "'s plan under " + c.models + "'s models: " + c.refused);
                continue;
            }
            char cell[64];
            std::snprintf(cell, sizeof cell, "%.3f s %.4f$%s", c.est->time.iteration.value, c.est->money.total.value, c.check.ok() ? "" : "*");
            std::printf(" %22s", cell);
        }
        std::printf("\n");
        for (io::json& row : j)
            if (row["planner"] == name) row["priced_by"] = by;
    }
    for (const std::string& w : why) std::printf("  %s\n", w.c_str());
}

inline int compare_command(const std::vector<std::string>& args) {
    auto o = parse(args, with_source_options({"--cluster", "--model", "--job", "--profiles", "--planners", "--objective", "--max-cost", "--min-throughput",
                                              "--max-gpus", "--json", "--timing", "--deadline", "--price-with"}));
    if (o.planners.empty())
        for (const auto& p : builtin_planners()) o.planners.push_back(p.name());
    std::vector<any_planner> pricers;
    for (const std::string& name : o.price_with) {
        try {
            pricers.push_back(planner_named(name));
        } catch (const input_error& e) {
            throw input_error(std::string("option --price-with: ") + e.what());
        }
    }
    const auto in = load_inputs(o, true);
    const problem pb = in.pb();
    std::printf("%s, batch %d, %d GPUs in the pool\n\n", pb.model.name.c_str(), pb.job.global_batch, pb.pool().total());
    std::printf("  %-9s %12s %10s %10s %6s %15s %11s\n", "planner", "s/iteration", "iter/s", "USD/iter", "GPUs", "min headroom GB", "search ms");
    io::json j = io::json::array();
    std::vector<std::string> notes;
    std::vector<std::pair<std::string, plan>> bests;  // for --price-with
    for (const auto& name : o.planners) {
        any_planner p = planner_named(name);
        const auto out = run_planner(p, pb, o, 1);
        for (const auto& n : out.notes) notes.push_back(name + ": " + n);
        if (out.plans.empty()) {
            std::printf("  %-9s %12s %10s %10s %6s %15s %11.1f\n", name.c_str(), "no plan", "-", "-", "-", "-", out.elapsed.value * 1e3);
            j.push_back({{"planner", name}, {"plan", nullptr}});
            if (o.timing) j.back()["elapsed_s"] = out.elapsed.value;
            continue;
        }
        const auto& c = out.plans[0];
        std::printf("  %-9s %12.3f %10.4f %10.4f %6d %15.2f %11.1f\n", name.c_str(), c.est.time.iteration.value, c.est.time.throughput(),
                    c.est.money.total.value, c.pl.total_gpus(), worst_headroom_gb(c.est), out.elapsed.value * 1e3);
        auto row = choice_json(c, pb.hw);
        row["planner"] = name;
        if (o.timing) row["elapsed_s"] = out.elapsed.value;
        j.push_back(row);
        bests.emplace_back(name, c.pl);
    }
    std::printf("\neach planner prices its plan with its own paper's models\n");
    if (!pricers.empty()) print_cross_prices(pb, bests, pricers, j);
    print_notes(stdout, notes);
    if (!o.json_out.empty()) write_file(o.json_out, j.dump(2) + "\n");
    return 0;
}

/// A Pareto front as the command line and the Python module report it: the points, the notes
/// (why it is not complete), and the point the objective would choose (-1: none).
struct pareto_report {
    pareto_result front;
    std::vector<std::string> notes;
    std::ptrdiff_t chosen = -1;
};

/// The front of `p` within `limits`, at most `points` points (the option `points_name`); `stop`
/// ends it, and the points so far come back with a note from `why_stopped`.
inline pareto_report run_pareto(any_planner& p, const problem& pb, objective_kind target, const constraints& limits, std::size_t points,
                                const std::string& points_name, const stop_condition& stop, const std::function<std::string()>& why_stopped,
                                pareto_axis axis = pareto_axis::money) {
    pareto_options opt;
    opt.axis = axis;
    opt.max_points = points;
    opt.limits = limits;
    opt.stop = stop;
    pareto_report r;
    r.front = pareto_front(p, pb, opt);
    r.notes = r.front.notes;
    std::erase(r.notes, std::string(search::stopped_note));
    // One search's proven distance: "the best plan" means nothing for a front.
    std::erase_if(r.notes, [](const std::string& n) { return n.starts_with(search::gap_note); });
    if (r.front.stopped) r.notes.push_back(why_stopped() + ": the points found so far");
    else if (!r.front.complete && !r.front.points.empty())
        r.notes.push_back(points_name + " " + std::to_string(points) + " reached: " + (axis == pareto_axis::gpus ? "plans on fewer GPUs" : "cheaper plans") + " may follow");
    // The plan the objective would choose within the range: the fastest, or the cheapest (known
    // only when the front over USD is complete; over GPUs, the cheapest of its points).
    const auto& pts = r.front.points;
    if (!pts.empty()) {
        if (target == objective_kind::throughput) {
            r.chosen = 0;
        } else if (axis == pareto_axis::gpus) {
            r.chosen = std::min_element(pts.begin(), pts.end(), [](const ranked_plan& a, const ranked_plan& b) { return a.cost().value < b.cost().value; }) - pts.begin();
            r.notes.push_back("marked: the cheapest of these points (the cheapest plan need not be on the front over GPUs)");
        } else if (r.front.complete) {
            r.chosen = std::ptrdiff_t(pts.size()) - 1;
        } else {
            r.notes.push_back("the cheapest plan is not known: the front is not complete");
        }
    }
    return r;
}

inline io::json pareto_json(const std::string& planner, const pareto_report& r, const cluster& hw, pareto_axis axis = pareto_axis::money) {
    io::json j = {{"planner", planner}, {"against", axis == pareto_axis::gpus ? "gpus" : "usd"}, {"complete", r.front.complete}, {"searches", r.front.searches}, {"points", io::json::array()}, {"notes", r.notes}};
    for (const ranked_plan& c : r.front.points) j["points"].push_back(choice_json(c, hw));
    j["chosen"] = r.chosen < 0 ? io::json(nullptr) : io::json(r.chosen);
    return j;
}

/// `hetplan pareto`: the front of throughput against USD per iteration or GPUs (planners/pareto.hpp).
inline int pareto_command(const std::vector<std::string>& args) {
    const auto o = parse(args, with_source_options({"--cluster", "--model", "--job", "--profiles", "--planner", "--objective", "--max-cost",
                                                    "--min-throughput", "--max-gpus", "--against", "--points", "--json", "--svg", "--deadline"}));
    const auto in = load_inputs(o, true);
    const problem pb = in.pb();
    any_planner p = planner_named(o.planner);
    constraints limits;
    if (o.max_cost) limits.max_usd = o.max_cost->value;
    limits.min_throughput = o.min_throughput;
    limits.max_gpus = o.max_gpus;
    stop_condition stop;
    stop.token = interrupt_source().get_token();
    if (o.deadline_s)
        stop.deadline = stop_condition::clock::now() + std::chrono::duration_cast<stop_condition::clock::duration>(std::chrono::duration<double>(*o.deadline_s));
    auto prev = std::signal(SIGINT, on_sigint);
    const pareto_report r = run_pareto(p, pb, o.target, limits, o.points, "--points", stop,
                                       [] { return std::string(interrupted().load() ? "stopped by Ctrl-C" : "stopped at the --deadline"); }, o.axis);
    std::signal(SIGINT, prev);
    const pareto_result& f = r.front;
    std::printf("Pareto front of %s (%s), %s, throughput against %s: %zu point(s) from %zu searches%s\n", p.name().c_str(), p.paper().c_str(),
                pb.model.name.c_str(), o.axis == pareto_axis::gpus ? "GPUs" : "USD per iteration", f.points.size(), f.searches, f.complete ? "" : " (not complete)");
    if (!f.points.empty()) {
        std::printf("\n  %-3s %12s %10s %10s %6s %10s\n", "#", "s/iteration", "iter/s", "USD/iter", "GPUs", "pipelines");
        for (std::size_t k = 0; k < f.points.size(); ++k) {
            const ranked_plan& c = f.points[k];
            const std::string shape = std::to_string(c.pl.pipelines.size()) + " x " + std::to_string(c.pl.pipelines.front().stages.size()) + " st";
            const char* mark = std::ptrdiff_t(k) != r.chosen ? "" : o.target == objective_kind::throughput ? "   <- the fastest" : "   <- the cheapest";
            std::printf("  %-3zu %12.3f %10.4f %10.4f %6d %10s%s\n", k + 1, c.est.time.iteration.value, c.est.time.throughput(), c.est.money.total.value,
                        c.pl.total_gpus(), shape.c_str(), mark);
        }
    }
    print_notes(stdout, r.notes);
    if (!o.json_out.empty()) write_file(o.json_out, pareto_json(p.name(), r, pb.hw, o.axis).dump(2) + "\n");
    if (!o.svg_out.empty()) {
        pareto_svg_options so;
        so.chosen = r.chosen;
        so.axis = o.axis;
        write_file(o.svg_out, pareto_svg(pb, f, {}, so));
    }
    if (f.points.empty()) {
        std::fprintf(stderr, "hetplan: no plan satisfies the request%s\n", r.notes.empty() ? "" : " (see the notes above)");
        return 1;
    }
    return 0;
}

inline int list_command(const std::vector<std::string>& args) {
    (void)parse(args, {});
    // e_max: the fraction of peak the analytical fallback reaches on large layers (its published
    // fit, hardware/compute_efficiency.hpp; "-": none, 0.4 of peak is used).
    std::printf("GPU types (fixtures/gpus.hpp):\n  %-10s %8s %12s %12s %10s %12s\n", "name", "memory", "FP16 TFLOP/s", "FP32 TFLOP/s", "USD/hour",
                "e_max 16/32");
    auto e_max = [](const std::string& gpu, dtype t) {
        const auto e = published_efficiency(gpu, t);
        char buf[16];
        std::snprintf(buf, sizeof buf, "%.2f", e ? e->peak_fraction : 0.0);
        return e ? std::string(buf) : std::string("-");
    };
    constexpr const char* gpu_names[] = {"A100-40", "A100-80", "V100-16", "H100-80", "H100-NVL", "GH-96", "H800", "H20", "T4", "A10G", "L4", "A6000", "P40", "P100"};
    for (const char* n : gpu_names) {
        const auto g = fixtures::gpu_named(n);
        std::printf("  %-10s %5.0f GiB %12.1f %12.1f %10.2f %12s\n", n, g->memory_capacity.value / (1024.0 * 1024 * 1024),
                    g->peak_flops(dtype::fp16).value / 1e12, g->peak_flops(dtype::fp32).value / 1e12, g->price.value,
                    (e_max(n, dtype::fp16) + "/" + e_max(n, dtype::fp32)).c_str());
    }
    std::printf("\nnodes (the cluster file's gpus_per_node and network.intra_node are what the models use):\n");
    for (const char* n : gpu_names) {
        const auto node = fixtures::gpu_node(n);
        const std::string size = node->gpus_per_node > 0 ? "up to " + std::to_string(node->gpus_per_node) + " per node" : "node size unknown";
        std::printf("  %-10s %s, %s (%s)\n", n, std::string(node->interconnect).c_str(), size.c_str(), std::string(node->node_from).c_str());
    }
    std::printf("\nprices, USD per GPU-hour on demand (set price_per_hour in a cluster file for yours):\n");
    for (const char* n : gpu_names) {
        const std::string_view src = fixtures::gpu_price_source(n);
        std::printf("  %-10s %s\n", n, src.empty() ? "none found: 0 (set it)" : std::string(src).c_str());
    }
    std::printf("\nmodels (fixtures/example.hpp):\n");
    for (const auto& m : {fixtures::opt_350m(), fixtures::gpt_neo_2_7b(), fixtures::tiny_gpt()})
        std::printf("  %-12s %3d layers, %6.2f B parameters, sequence %d\n", m.name.c_str(), m.num_layers(), m.total_params() / 1e9,
                    m.sequence_length);
    std::printf("\nplanners:\n");
    for (const auto& p : builtin_planners()) std::printf("  %-8s %s\n", p.name().c_str(), p.paper().c_str());
    return 0;
}

/// The GPT shape of a model file given as {"transformer": {...}} (the computes run GPT-style
/// decoders only).
inline exec::gpt_shape transformer_shape_of(const std::string& file, const std::string& device) {
    const io::json j = io::parse_file(file);
    const io::cursor root(j, file);
    const auto t = root.find("transformer");
    if (!t) root.fail("the execution module runs GPT-style models: give the model as {\"transformer\": {\"layers\", \"hidden\", \"heads\", \"vocab\", \"sequence\"}}");
    (void)io::read_model(root);  // every other check of the model format
    exec::gpt_shape s{(*t)["vocab"].integer(2, limits::max_vocab), (*t)["hidden"].integer(1, limits::max_hidden), (*t)["heads"].integer(1, limits::max_hidden),
                      (*t)["layers"].integer(1, limits::max_layers - 2), (*t)["sequence"].integer(1, limits::max_sequence)};
    if (s.hidden % s.heads != 0) (*t)["heads"].fail("must divide hidden");
    // Both computes keep fp32 weights and gradients (the CUDA one also a host copy) and every
    // activation: the CPU's is for models of up to about 10^8 parameters (a few GB per rank), a
    // GPU's for up to 2 x 10^9 (16 GB of state on the device and in host memory).
    const double H = s.hidden, params = double(s.vocab) * H + double(s.sequence) * H + double(s.blocks) * (12 * H * H + 13 * H);
    const double most = device == "cpu" ? 1e8 : 2e9;
    if (params > most)
        root.fail("the " + std::string(device == "cpu" ? "CPU" : "CUDA") + " compute runs models of up to " + (device == "cpu" ? "10^8" : "2 x 10^9") +
                  " parameters; this one has " + std::to_string(params / 1e6) + " million");
    return s;
}

/// `hetplan profile`: per-layer times of the model on this CPU, written as a profile file.
inline int profile_command(const std::vector<std::string>& args) {
    const auto o = parse(args, {"--model", "--gpu", "--mbs", "--tp", "--repeats", "--json", "--device"});
    if (o.model.empty() || o.json_out.empty()) throw input_error("profile: --model M.json and --json OUT.json are needed");
    const exec::gpt_shape shape = transformer_shape_of(o.model, o.device);
    for (int tp : o.tps) {
        if (shape.heads % tp != 0) throw input_error("option --tp: " + std::to_string(tp) + " does not divide the model's " + std::to_string(shape.heads) + " heads");
        if (tp > 1 && o.device != "cpu")
            throw input_error("option --tp: the GPU profiler times TP 1 only (the ranks of a TP group would share one GPU and sum through host memory)");
    }
    exec::profile_options po;
    po.microbatch_sizes = o.mbs, po.tp_degrees = o.tps, po.repeats = o.repeats;
#if HETPLAN_WITH_CUDA
    const auto measured = o.device == "cpu" ? exec::profile_gpt(shape, po) : load_gpu_backend(o.device).profile(shape, po, o.device);
#else
    const auto measured = exec::profile_gpt(shape, po);
#endif
    io::json profiles = io::json::array();
    std::printf("profile of %s on %s as GPU type '%s' (median of %d runs per layer; TP ranks on threads)\n", o.model.c_str(),
                o.device == "cpu" ? "this CPU" : ("the GPU (" + o.device + ")").c_str(), o.gpu_name.c_str(), o.repeats);
    std::printf("  %4s %4s %14s %14s %14s %16s\n", "TP", "mbs", "forward ms", "backward ms", "update ms", "activations MB");
    for (const auto& mp : measured) {
        for (std::size_t i = 0; i < mp.curve.mbs.size(); ++i) {
            double f = 0, b = 0, u = 0, act = 0;
            for (const auto& t : mp.curve.points[i]) f += t.fwd.value, b += t.bwd.value, u += t.update.value;
            for (double a : mp.activation_bytes.at(mp.curve.mbs[i])) act += a;
            std::printf("  %4d %4d %14.3f %14.3f %14.3f %16.3f\n", mp.tp, mp.curve.mbs[i], f * 1e3, b * 1e3, u * 1e3, act / 1e6);
        }
        profiles.push_back(io::write_profile(o.gpu_name, mp.tp, mp.curve));
    }
    write_file(o.json_out, io::json{{"profiles", profiles}}.dump(2) + "\n");
    std::printf("wrote %s\n", o.json_out.c_str());
    return 0;
}

/// Launched by mpirun (OpenMPI's or a PMI launcher's environment)?
inline bool under_mpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE"); }

/// Calls f(communicator) once per rank: built with MPI and launched by mpirun, this process is
/// one MPI rank; otherwise `threads` threads of this process. Returns rank 0's result in the
/// process that has rank 0 (nothing elsewhere); `how` says which world ran.
template <class F>
auto on_every_rank(int threads, F f, std::string& how) -> std::optional<decltype(f(std::declval<exec::thread_communicator>()))> {
    using result = decltype(f(std::declval<exec::thread_communicator>()));
#if HETPLAN_WITH_MPI
    if (under_mpirun()) {
        int argc = 0;
        char** argv = nullptr;
        const exec::mpi_session mpi(&argc, &argv);
        const auto world = exec::mpi_communicator::world();
        how = std::to_string(world.size()) + " MPI processes";
        result r = f(world);
        return world.rank() == 0 ? std::optional<result>(std::move(r)) : std::nullopt;
    }
#endif
    std::optional<result> out;
    std::mutex m;
    exec::thread_world::run(threads, [&](exec::thread_communicator c) {
        result r = f(c);
        std::lock_guard lk(m);
        if (c.rank() == 0) out = std::move(r);
    });
    how = std::to_string(threads) + " threads of this process";
    return out;
}

/// `hetplan run`: trains the model under the plan, every rank a thread (or, built with MPI and
/// launched by mpirun, a process); loss per step, measured step time next to the simulator's
/// prediction (docs/validation.md).
inline int run_command(const std::vector<std::string>& args) {
    const auto o = parse(args, {"--cluster", "--model", "--job", "--profiles", "--plan", "--planner", "--steps", "--device"});
    if (o.plan_file.empty() || o.model.empty()) throw input_error("run: INPUT (--cluster, --model, --job) and --plan PLAN.json are needed");
    const inputs in = load_inputs(o);
    const problem pb = in.pb();
    const plan pl = read_plan_file(o.plan_file, in.data.hw);
    const validation_report v = validate_structure(pb, pl);
    if (!v.ok()) throw input_error(o.plan_file, "", "the plan is not valid on this cluster:\n" + v.summary());
    const exec::gpt_shape shape = transformer_shape_of(o.model, o.device);
    const exec::step_layout layout = exec::layout_step(pl, shape.layers());
#if HETPLAN_WITH_CUDA
    if (o.device != "cpu") load_gpu_backend(o.device);  // its error before any rank starts
#endif
    std::string how;
    const std::optional<run_record> ran = on_every_rank(
        layout.world_size,
        [&](auto world) {
            if (world.size() != layout.world_size)
                throw input_error(o.plan_file, "", "the plan has " + std::to_string(layout.world_size) + " GPUs: launch with mpirun -np " +
                                                       std::to_string(layout.world_size) + " (this run has " + std::to_string(world.size()) + " processes)");
#if HETPLAN_WITH_CUDA
            if (o.device != "cpu") return load_gpu_backend(o.device).run(pl, shape, world, o.steps, o.device);
#endif
            return run_rank(pl, shape, world, o.steps);
        },
        how);
    if (!ran) return 0;  // not rank 0: rank 0 reports
    const run_record& rec = *ran;
    const any_planner models = planner_named(o.planner);
    const estimate e = models.price(pb, pl);
    std::printf("ran %s: %s, %d step(s), global batch %d\n", o.plan_file.c_str(), how.c_str(), o.steps, layout.global_batch);
    for (int t = 0; t < o.steps; ++t)
        std::printf("  step %d: loss %.6f, %.3f ms\n", t, rec.losses[static_cast<std::size_t>(t)], rec.seconds[static_cast<std::size_t>(t)] * 1e3);
    std::vector<double> later(rec.seconds.begin() + (o.steps > 1 ? 1 : 0), rec.seconds.end());
    std::sort(later.begin(), later.end());
    const double measured = later[later.size() / 2];
    const double predicted = e.time.iteration.value;
    std::printf("step time: measured %.3f ms (median%s), predicted %.3f ms by %s's models (%+.1f %%)\n", measured * 1e3, o.steps > 1 ? " after the first" : "",
                predicted * 1e3, models.name().c_str(), (predicted / measured - 1) * 100);
    const worker_memory& w0 = e.memory.workers.front();
    std::printf("rank 0 memory: weights + gradients measured %.3f MB, predicted %.3f MB; activations kept at peak measured %.3f MB, predicted %.3f MB\n",
                rec.state / 1e6, (w0.weights + w0.gradients).value / 1e6, rec.activations / 1e6, w0.activations.value / 1e6);
    if (rec.device_peak > 0)
        std::printf("rank 0 device memory at peak: measured %.3f MB (every buffer of the compute), predicted %.3f MB (the memory model's total)\n",
                    rec.device_peak / 1e6, w0.total.value / 1e6);
    return 0;
}

/// `hetplan bandwidth`: a link profile between ranks 0 and 1, as LINKs for a cluster file.
inline int bandwidth_command(const std::vector<std::string>& args) {
    auto o = parse(args, {"--repeats", "--json"});
    std::vector<double> sizes;
    for (double b = 1024; b <= 64.0 * 1024 * 1024; b *= 4) sizes.push_back(b);
    std::string how;
    const auto measured = on_every_rank(
        2,
        [&](auto world) {
            if (world.size() < 2) throw input_error("bandwidth: launch with mpirun -np 2 (or more; ranks 0 and 1 are measured)");
            return exec::ping_pong_sweep(world, sizes, o.repeats);
        },
        how);
    if (!measured) return 0;  // not rank 0
    const std::vector<exec::bandwidth_point>& pts = *measured;
    if (how.ends_with("threads of this process")) how += " (memory copies, not a network)";
    std::printf("ping-pong between ranks 0 and 1 of %s, median of %d round trips per size\n  %12s %12s %10s\n", how.c_str(), o.repeats, "bytes", "one way us", "GB/s");
    for (const auto& p : pts) std::printf("  %12.0f %12.2f %10.3f\n", p.bytes, p.seconds * 1e6, p.bytes / p.seconds / 1e9);
    const alpha_beta_link ab = exec::fit_alpha_beta(pts);
    std::printf("alpha-beta: latency %.2f us, bandwidth %.3f GB/s\n", ab.latency.value * 1e6, ab.peak.value / 1e9);
    io::json out = {{"alpha_beta", io::write_link(builtin_link{ab})}};
    try {
        const polynomial_link poly = exec::fit_sailor_polynomial(pts);
        std::printf("Sailor's fit: GB/s = %.4g x^2 + %.4g x + %.4g, x = log2(MB) in [%.1f, %.1f], at most %.3f GB/s\n", poly.coeff[0], poly.coeff[1],
                    poly.coeff[2], poly.x_min, poly.x_max, poly.ceiling.value / 1e9);
        out["polynomial"] = io::write_link(builtin_link{poly});
    } catch (const error& e) {
        std::printf("Sailor's fit: none (%s)\n", e.what());
    }
    io::json points = io::json::array();
    for (const auto& p : pts) points.push_back({{"bytes", p.bytes}, {"seconds", p.seconds}});
    out["points"] = std::move(points);
    if (!o.json_out.empty()) write_file(o.json_out, out.dump(2) + "\n");
    return 0;
}

/// Runs the command line; returns the exit status. Errors in input give one line and status 2.
inline int run(const std::vector<std::string>& args) {
    try {
        if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
            std::fputs(usage_text, args.empty() ? stderr : stdout);
            return args.empty() ? 2 : 0;
        }
        const std::vector<std::string> rest(args.begin() + 1, args.end());
        if (std::find(rest.begin(), rest.end(), "--help") != rest.end()) {
            std::fputs(usage_text, stdout);
            return 0;
        }
        if (args[0] == "plan") return plan_command(rest);
        if (args[0] == "simulate") return simulate_command(rest);
        if (args[0] == "compare") return compare_command(rest);
        if (args[0] == "pareto") return pareto_command(rest);
        if (args[0] == "list") return list_command(rest);
        if (args[0] == "recover") return recover_command(rest);
        if (args[0] == "profile") return profile_command(rest);
        if (args[0] == "run") return run_command(rest);
        if (args[0] == "bandwidth") return bandwidth_command(rest);
        if (args[0] == "export") return export_command(rest);
        if (args[0] == "import") return import_command(rest);
        throw input_error("unknown command '" + args[0] + "' (plan, simulate, compare, pareto, recover, import, export, list, profile, run, bandwidth)");
    } catch (const hetplan::error& e) {
        std::fprintf(stderr, "hetplan: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "hetplan: %s\n", e.what());
        return 2;
    }
}

}  // namespace hetplan::app
