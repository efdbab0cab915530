#pragma once
// An exact 64-bit digest of what a problem's answers depend on besides availability: which
// objects it refers to (their identity) and the bits of the GPU types, the model's layers and
// the job. Caches that survive re-planning (Sailor's H2) key on it, so a new pool keeps them and
// a changed model or a reused address clears them. Not a float fingerprint: every field enters
// by its bit pattern (FNV-1a).
#include <bit>
#include <cstdint>
#include <cstring>

#include "hetplan/plan/problem.hpp"

namespace hetplan::search {

class digest {
public:
    template <class T>
        requires std::is_trivially_copyable_v<T>
    digest& add(const T& v) {
        unsigned char b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));
        for (unsigned char c : b) h_ = (h_ ^ c) * 1099511628211ull;
        return *this;
    }
    [[nodiscard]] std::uint64_t value() const { return h_; }

private:
    std::uint64_t h_ = 1469598103934665603ull;
};

/// Identity and content of the cluster's GPU types, the model and the job (not the pool, not
/// the network, not the profiles' values: memory models read none of them).
[[nodiscard]] inline std::uint64_t problem_digest(const problem& pb) {
    digest d;
    d.add(&pb.hw).add(&pb.model).add(&pb.job).add(&pb.profiles);
    for (std::size_t g = 0; g < pb.hw.gpus.size(); ++g)
        d.add(pb.hw.gpus[g].memory_capacity.value).add(pb.hw.nodes[g].gpus_per_node);
    for (const auto& l : pb.model.layers) {
        d.add(l.params).add(l.act_output_elems).add(l.act_input_elems).add(l.act_mem_elems).add(l.flops_fwd);
        for (const auto& [tp, s] : l.per_tp) d.add(tp).add(s.params).add(s.act_mem_elems);
    }
    d.add(pb.job.global_batch).add(pb.job.sequence_length).add(pb.job.prec).add(pb.job.optimizer);
    return d.value();
}

}  // namespace hetplan::search
