// Must not compile: a memory model whose estimate() takes the plan by value and returns bytes.
// The diagnostic names the member and the signature it needs.
#include "hetplan/hetplan.hpp"

struct rough_memory {
    [[nodiscard]] hetplan::bytes estimate(const hetplan::problem&, hetplan::plan) const { return hetplan::bytes{0}; }
};
static_assert(hetplan::concepts::check_memory_model<rough_memory>());

int main() {}
