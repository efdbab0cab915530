#pragma once
// The reference planners by name, type-erased (planners/any_planner.hpp): what the `hetplan`
// command and bindings choose from at run time.
#include <string>
#include <vector>

#include "hetplan/core/error.hpp"
#include "hetplan/core/separate_compilation.hpp"
#include "hetplan/planners/any_planner.hpp"
#include "hetplan/planners/autohet.hpp"
#include "hetplan/planners/cephalo.hpp"
#include "hetplan/planners/metis.hpp"
#include "hetplan/planners/sailor.hpp"
#include "hetplan/planners/zorse.hpp"

namespace hetplan {

/// Every reference planner, in the order of the papers' index.
#if HETPLAN_HEADER_BODIES
[[nodiscard]] HETPLAN_DECL std::vector<any_planner> builtin_planners() {
    std::vector<any_planner> out;
    out.emplace_back(sailor_planner<>{}, "Sailor (shared/papers/000), §4.2");
    out.emplace_back(zorse_planner<>{}, "Zorse (shared/papers/001), §3");
    out.emplace_back(autohet_planner<>{}, "AutoHet (shared/papers/002), §III");
    out.emplace_back(metis_planner<>{}, "Metis (USENIX ATC '24), §4-5");
    out.emplace_back(memory_aware_metis_planner{}, "memory-aware Metis (shared/papers/003), §3.4");
    out.emplace_back(cephalo_planner<>{}, "Cephalo (shared/papers/004), §2-3");
    return out;
}
#else
[[nodiscard]] std::vector<any_planner> builtin_planners();  // src/registry_functions.cpp
#endif

[[nodiscard]] inline any_planner planner_named(const std::string& name) {
    std::string known;
    for (auto& p : builtin_planners()) {
        if (p.name() == name) return p;
        known += (known.empty() ? "" : ", ") + p.name();
    }
    throw input_error("unknown planner '" + name + "' (known: " + known + ")");
}

}  // namespace hetplan
