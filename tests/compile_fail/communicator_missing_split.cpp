// Must not compile: a communicator without split(). The diagnostic names the missing member.
#include <span>

#include "hetplan/concepts/communicator.hpp"

struct no_split {
    [[nodiscard]] int rank() const { return 0; }
    [[nodiscard]] int size() const { return 1; }
    void send(std::span<const float>, int, int) {}
    void recv(std::span<float>, int, int) {}
    void all_reduce(std::span<float>) {}
    void all_gather(std::span<const float>, std::span<float>, std::span<const int>) {}
    void reduce_scatter(std::span<const float>, std::span<float>, std::span<const int>) {}
    void broadcast(std::span<float>, int) {}
    void barrier() {}
};
static_assert(hetplan::concepts::check_communicator<no_split>());

int main() {}
