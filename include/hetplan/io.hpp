#pragma once
// The JSON layer: hetplan's own formats and importers for the published ones.
#include "hetplan/io/cluster_json.hpp"
#include "hetplan/io/consistency.hpp"
#include "hetplan/io/import/cephalo.hpp"
#include "hetplan/io/import/cephalo_world.hpp"
#include "hetplan/io/import/sailor.hpp"
#include "hetplan/io/import/sailor_world.hpp"
#include "hetplan/io/job_json.hpp"
#include "hetplan/io/json_reader.hpp"
#include "hetplan/io/link_json.hpp"
#include "hetplan/io/model_json.hpp"
#include "hetplan/io/plan_json.hpp"
#include "hetplan/io/profile_json.hpp"
