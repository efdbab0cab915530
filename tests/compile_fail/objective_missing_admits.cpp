// Must not compile: an objective without admits() (its constraints); the request names it.
#include "hetplan/search/request.hpp"

struct fastest_only {
    [[nodiscard]] double value(const hetplan::objective_terms& t) const { return t.iteration; }
};

int main() {
    hetplan::plan_request<fastest_only> rq;
    (void)rq;
}
