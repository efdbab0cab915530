// Must not compile: a device without price_per_hour(). The diagnostic names the missing member.
#include <string_view>

#include "hetplan/hetplan.hpp"

struct free_gpu {
    [[nodiscard]] std::string_view name() const { return "free"; }
    [[nodiscard]] hetplan::bytes memory() const { return hetplan::gibibytes(16); }
    [[nodiscard]] hetplan::flop_per_second peak_flops(hetplan::dtype) const { return hetplan::teraflops(10); }
};
static_assert(hetplan::concepts::check_device<free_gpu>());

int main() {}
