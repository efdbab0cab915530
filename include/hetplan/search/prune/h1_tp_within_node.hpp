#pragma once
// H1 (Sailor §4.2.1): tensor parallelism stays within a node, so a TP group is one GPU type.
// The TP degrees a type can use are the profiled (or estimable) degrees that are powers of two
// dividing its node size: such groups always pack into a zone's nodes when their GPUs do (see
// make_cells), so resources can be counted in GPUs without tracking nodes.
#include <vector>

#include "hetplan/plan/problem.hpp"

namespace hetplan::search {

struct h1_tp_within_node {
    int max_tp = 64;  ///< also the degrees tried with the analytical fallback: 1, 2, 4, ...

    [[nodiscard]] std::vector<int> operator()(const problem& pb, gpu_type_id g) const {
        const int per_node = pb.hw.gpus_per_node(g);
        auto usable = [&](int tp) { return tp >= 1 && tp <= max_tp && (tp & (tp - 1)) == 0 && per_node % tp == 0; };
        std::vector<int> out;
        if (pb.profiles.has_fallback()) {
            for (int tp = 1; tp <= per_node; tp *= 2)
                if (usable(tp)) out.push_back(tp);
        } else {
            for (int tp : pb.profiles.tp_degrees(pb.hw.gpu(g).type_name))
                if (usable(tp)) out.push_back(tp);
        }
        return out;
    }
};

}  // namespace hetplan::search
