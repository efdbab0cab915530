// Must not compile: a link without bandwidth(). The diagnostic names the missing member.
#include "hetplan/hetplan.hpp"

struct half_a_link {
    [[nodiscard]] hetplan::seconds transfer_time(hetplan::bytes n) const { return hetplan::seconds{n.value / 1e9}; }
};
static_assert(hetplan::concepts::check_link<half_a_link>());

int main() {}
