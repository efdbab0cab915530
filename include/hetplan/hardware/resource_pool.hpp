#pragma once
// How many GPUs of each type each zone offers: a quota or the current availability (Sailor §4:
// "the maximum number of GPUs for each type and zone"). Dense, so that searches can copy and
// key on it cheaply.
#include <climits>
#include <numeric>
#include <string>
#include <stdexcept>
#include <vector>

#include "hetplan/core/error.hpp"
#include "hetplan/core/ids.hpp"

namespace hetplan {

class resource_pool {
public:
    resource_pool() = default;
    resource_pool(std::size_t gpu_types, std::size_t zones)
        : types_(gpu_types), zones_(zones), counts_(gpu_types * zones, 0) {}

    [[nodiscard]] std::size_t gpu_types() const { return types_; }
    [[nodiscard]] std::size_t zones() const { return zones_; }

    [[nodiscard]] int available(gpu_type_id g, zone_id z) const { return counts_.at(index(g, z)); }
    void set(gpu_type_id g, zone_id z, int count) {
        if (count < 0) throw input_error("resource pool: negative GPU count " + std::to_string(count));
        counts_.at(index(g, z)) = count;
    }
    void add(gpu_type_id g, zone_id z, int count) {
        const long long sum = static_cast<long long>(available(g, z)) + count;  // no int overflow
        if (sum > INT_MAX) throw input_error("resource pool: " + std::to_string(sum) + " GPUs of one type in one zone, more than an int holds");
        set(g, z, static_cast<int>(sum));
    }

    [[nodiscard]] int total(gpu_type_id g) const {
        long long t = 0;
        for (std::size_t z = 0; z < zones_; ++z) t += counts_[index(g, zone_id{z})];
        if (t > INT_MAX) throw input_error("resource pool: " + std::to_string(t) + " GPUs of one type, more than an int holds");
        return static_cast<int>(t);
    }
    [[nodiscard]] int total() const {
        const long long t = std::accumulate(counts_.begin(), counts_.end(), 0LL);
        if (t > INT_MAX) throw input_error("resource pool: " + std::to_string(t) + " GPUs in all, more than an int holds");
        return static_cast<int>(t);
    }

    friend bool operator==(const resource_pool&, const resource_pool&) = default;

private:
    [[nodiscard]] std::size_t index(gpu_type_id g, zone_id z) const {
        if (g.index() >= types_ || z.index() >= zones_) throw std::out_of_range("resource_pool index");
        return g.index() * zones_ + z.index();
    }
    std::size_t types_ = 0, zones_ = 0;
    std::vector<int> counts_;
};

}  // namespace hetplan
