#pragma once
// Zones, regions and node shapes. Zones of one region share cheap, fast links (Sailor H6);
// regions are far apart (Sailor H5).
#include <string>
#include <vector>

#include "hetplan/core/ids.hpp"

namespace hetplan {

struct region_spec {
    std::string name;  ///< e.g. "us-central1"
};

struct zone_spec {
    std::string name;  ///< e.g. "us-central1-a"
    region_id region{};
};

/// How GPUs of one type are packaged: TP groups never span nodes (Sailor H1).
struct node_shape {
    gpu_type_id gpu{};
    int gpus_per_node = 1;
};

/// The region of a zone name in GCP style ("us-central1-a" -> "us-central1"): everything before
/// the last dash. Names without a dash are their own region.
inline std::string region_of_zone_name(const std::string& zone) {
    const auto dash = zone.rfind('-');
    return dash == std::string::npos || dash == 0 ? zone : zone.substr(0, dash);
}

}  // namespace hetplan
