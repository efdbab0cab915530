#pragma once
// Umbrella header of the reference planners (each a composition of search pieces) and their
// type-erased front end.
#include "hetplan/planners/any_planner.hpp"
#include "hetplan/planners/autohet.hpp"
#include "hetplan/planners/metis.hpp"
#include "hetplan/planners/cephalo.hpp"
#include "hetplan/planners/cephalo_baselines.hpp"
#include "hetplan/planners/cross_price.hpp"
#include "hetplan/planners/registry.hpp"
#include "hetplan/planners/sailor.hpp"
#include "hetplan/planners/zorse.hpp"
