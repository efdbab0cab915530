#pragma once
// Forward declarations of the value types the concepts talk about (as range-v3's range_fwd.hpp
// and Boost.Hana's fwd/ do): concepts/ names them without including the layers that define them
// (plan/, search/), so it sits just above core/ (docs/architecture.md). A concept is checked
// where a model is defined, after the full types are in scope.
namespace hetplan {

struct problem;          // plan/problem.hpp
struct plan;             // plan/plan.hpp
struct memory_report;    // plan/estimate.hpp
struct time_report;      // plan/estimate.hpp
struct money_report;     // plan/estimate.hpp
struct estimate;         // plan/estimate.hpp
struct worker_memory;    // plan/estimate.hpp
struct worker_probe;     // plan/probe.hpp
struct worker_times;     // plan/probe.hpp

struct max_throughput;   // search/objective.hpp
template <class Objective = max_throughput, class... Hooks>
struct plan_request;     // search/request.hpp
struct plan_result;      // search/result.hpp
struct ranked_plan;      // search/result.hpp
struct search_progress;  // search/result.hpp

}  // namespace hetplan
