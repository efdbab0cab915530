// The non-template functions hetplan::compiled defines once (core/separate_compilation.hpp): the
// planner registry (every reference planner type-erased: a consumer that chooses planners at run
// time, as the hetplan command and the Python module do, compiles none of their searches), the
// JSON file readers and the built-in examples. The only translation unit built with
// HETPLAN_SOURCE, so that each is defined exactly once.
#define HETPLAN_SOURCE
#include "hetplan/fixtures/example.hpp"
#include "hetplan/io/cluster_json.hpp"
#include "hetplan/io/consistency.hpp"
#include "hetplan/io/job_json.hpp"
#include "hetplan/io/model_json.hpp"
#include "hetplan/io/plan_json.hpp"
#include "hetplan/io/profile_json.hpp"
#include "hetplan/planners/registry.hpp"
