// Conformance from both sides: the shipped models and minimal user types model the concepts;
// near-misses (wrong return type, missing const) do not.
#include <doctest/doctest.h>

#include <string_view>

#include "../support.hpp"

using namespace hetplan;

namespace {
struct my_gpu {  // a user type standing in for gpu_spec
    [[nodiscard]] std::string_view name() const { return "npu"; }
    [[nodiscard]] bytes memory() const { return gigabytes(32); }
    [[nodiscard]] flop_per_second peak_flops(dtype) const { return teraflops(100); }
    [[nodiscard]] usd_per_hour price_per_hour() const { return usd_per_hour{1}; }
};
struct gpu_without_price {
    [[nodiscard]] std::string_view name() const { return "x"; }
    [[nodiscard]] bytes memory() const { return bytes{1}; }
    [[nodiscard]] flop_per_second peak_flops(dtype) const { return teraflops(1); }
};
struct constant_link {  // archetype: the least a link must offer
    [[nodiscard]] seconds transfer_time(bytes n) const { return seconds{n.value * 1e-9}; }
    [[nodiscard]] bytes_per_second bandwidth(bytes) const { return bytes_per_second{1e9}; }
};
struct link_returning_double {
    [[nodiscard]] double transfer_time(bytes n) const { return n.value; }
    [[nodiscard]] bytes_per_second bandwidth(bytes) const { return bytes_per_second{1}; }
};
struct link_not_const {
    seconds transfer_time(bytes) { return seconds{0}; }
    bytes_per_second bandwidth(bytes) { return bytes_per_second{1}; }
};
struct flat_memory {  // a user memory model: every GPU needs 1 GB
    [[nodiscard]] memory_report estimate(const problem& pb, const plan& pl) const {
        memory_report r;
        pl.for_each_worker([&](std::size_t p, std::size_t s, std::size_t w, const worker_group& wg) {
            worker_memory m;
            m.pipeline = p; m.stage = s; m.worker = w;
            m.total = gigabytes(1);
            m.capacity = pb.hw.gpu(wg.gpu).memory();
            r.workers.push_back(m);
        });
        return r;
    }
};
struct memory_model_taking_copy {
    [[nodiscard]] memory_report estimate(problem, plan&) const { return {}; }
};
}  // namespace

TEST_CASE("concepts accept models and reject near-misses") {
    static_assert(concepts::device<gpu_spec>);
    static_assert(concepts::check_device<my_gpu>());
    static_assert(!concepts::device<gpu_without_price>);
    static_assert(concepts::check_link<constant_link>());
    static_assert(!concepts::link<link_returning_double>);
    static_assert(!concepts::link<link_not_const>);
    static_assert(concepts::network<network_model>);
    static_assert(concepts::network<basic_network_model<constant_link>>);
    static_assert(concepts::check_memory_model<flat_memory>());
    static_assert(!concepts::memory_model<memory_model_taking_copy>);
    static_assert(concepts::time_model<sailor_time_model>);
    static_assert(concepts::cost_model<sailor_money_model>);
    static_assert(!concepts::time_model<sailor_memory_model>);

    // The validator and the simulator run on a user memory model (archetype use).
    test::small_world big;
    for (auto& l : big.model.layers) l.params = 2e8;  // Sailor's model says: out of memory
    plan pl;
    pipeline p;
    p.stages.push_back({{layer_range{0, 4}}, {test::worker(big.a, big.z1, 1, 2, 16)}});
    pl.pipelines.push_back(p);
    CHECK(!validate(big.pb(), pl, sailor_memory_model{}).ok());
    CHECK(validate(big.pb(), pl, flat_memory{}).ok());
    const simulator<flat_memory> sim;
    CHECK(sim.run(big.pb(), pl).memory.workers[0].total == gigabytes(1));
    // A network of user links.
    basic_network_model<constant_link> net;
    net.set_default(constant_link{});
    CHECK(net.between({}, {}).transfer_time(bytes{1e9}).value == doctest::Approx(1.0));
}
