// Must not compile: a simulator over a type that is not a time model.
#include "hetplan/hetplan.hpp"

struct stopwatch {
    [[nodiscard]] double seconds_per_iteration() const { return 1.0; }
};

int main() {
    const hetplan::simulator<hetplan::sailor_memory_model, stopwatch> sim{};
    (void)sim;
}
