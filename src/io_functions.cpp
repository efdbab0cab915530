// The JSON file readers and the cross-file check, defined once for every consumer that links
// hetplan::compiled (core/separate_compilation.hpp): a consumer that reads files does not
// compile the readers, and a program that reads no file does not link them.
#define HETPLAN_SOURCE
#include "hetplan/io/cluster_json.hpp"
#include "hetplan/io/consistency.hpp"
#include "hetplan/io/job_json.hpp"
#include "hetplan/io/model_json.hpp"
#include "hetplan/io/plan_json.hpp"
#include "hetplan/io/profile_json.hpp"
