// Example 2: a GPU type and a link model of your own, plugged into the simulator. The link
// slows down as messages grow past what its switch buffers (a made-up congestion curve); the
// same plan is priced on the datasheet link and on it.
#include <algorithm>
#include <cstdio>
#include <string_view>

#include "hetplan/hetplan.hpp"

/// A device type of your own: anything with a name, memory, peak FLOP/s per dtype and a price.
struct lab_accelerator {
    [[nodiscard]] std::string_view name() const { return "LabAccel-48"; }
    [[nodiscard]] hetplan::bytes memory() const { return hetplan::gibibytes(48); }
    [[nodiscard]] hetplan::flop_per_second peak_flops(hetplan::dtype t) const {
        return hetplan::teraflops(t == hetplan::dtype::fp32 ? 40 : 160);
    }
    [[nodiscard]] hetplan::usd_per_hour price_per_hour() const { return hetplan::usd_per_hour{1.9}; }
};

/// A link of your own: full bandwidth up to 16 MB, then it halves with every 4x in size.
struct congested_link {
    hetplan::bytes_per_second peak = hetplan::gigabits_per_second(100);
    [[nodiscard]] hetplan::bytes_per_second bandwidth(hetplan::bytes n) const {
        const double over = std::max(1.0, n.value / 16e6);
        return peak * (1.0 / std::sqrt(over));
    }
    [[nodiscard]] hetplan::seconds transfer_time(hetplan::bytes n) const { return n.value <= 0 ? hetplan::seconds{0} : n / bandwidth(n); }
};

static_assert(hetplan::concepts::check_device<lab_accelerator>());
static_assert(hetplan::concepts::check_link<congested_link>());

int main() {
    using namespace hetplan;
    auto in = fixtures::default_example();  // OPT-350 on 8 A100-40 + 8 V100-16, two stages
    // Swap the V100s for our accelerator: same nodes of 4, same plan shape.
    const gpu_type_id lab = in.hw.add_gpu(to_gpu_spec(lab_accelerator{}), 4);
    const gpu_type_id v100 = *in.hw.find_gpu("V100-16");
    in.hw.pool.set(lab, in.example_plan.pipelines[0].stages[0].workers[0].zone, 8);
    in.hw.pool.set(v100, in.example_plan.pipelines[0].stages[0].workers[0].zone, 0);
    for (auto& w : in.example_plan.pipelines[0].stages[0].workers) w.gpu = lab;

    const auto datasheet = simulator<>{}.run(in.as_problem(), in.example_plan);
    in.hw.network.set_default(congested_link{});  // wrapped as any_link: one virtual call per lookup
    const auto congested = simulator<>{}.run(in.as_problem(), in.example_plan);
    std::printf("valid: %s\n", validate(in.as_problem(), in.example_plan, sailor_memory_model{}).ok() ? "yes" : "no");
    std::printf("datasheet link: %.3f s/iteration (sync %.3f s)\n", datasheet.time.iteration.value, datasheet.time.sync.value);
    std::printf("congested link: %.3f s/iteration (sync %.3f s)\n", congested.time.iteration.value, congested.time.sync.value);
    std::printf("congestion costs time: %s\n", congested.time.iteration > datasheet.time.iteration ? "yes" : "no");
}
