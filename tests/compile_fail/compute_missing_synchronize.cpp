// Must not compile: a compute without synchronize(). The diagnostic names the missing member.
#include <map>
#include <span>
#include <vector>

#include "hetplan/concepts/compute.hpp"

struct no_synchronize {
    struct cache {
        [[nodiscard]] double bytes_kept() const { return 0; }
    };
    using activation = std::vector<float>;
    template <class Reduce>
    void forward(int, int, int, std::span<const int>, std::span<const int>, activation&, std::vector<cache>&, double, double&, Reduce&&) {}
    template <class Reduce>
    void backward(int, int, int, activation&, std::vector<cache>&, Reduce&&) {}
    void load(std::span<const float>, activation&) {}
    void store(const activation&, std::vector<float>&) {}
    activation copy(const activation& x) { return x; }
    void zero_grad() {}
    void sgd_step(float) {}
    void sgd_step_layer(int, float) {}
    std::map<int, int>& tensors() { return t; }
    void pull() {}
    void push() {}
    std::map<int, int> t;
};
static_assert(hetplan::concepts::check_compute<no_synchronize>());

int main() {}
