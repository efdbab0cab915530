// The published-data suite: runs when HETPLAN_DATA_DIR names shared/data; otherwise it says it is
// skipped and exits with 77, which CTest reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>

#include "data_dir.hpp"

int main(int argc, char** argv) {
    if (hetplan::test::data_dir().empty()) {
        std::printf("published-data suite skipped: HETPLAN_DATA_DIR is not set\n");
        return 77;
    }
    if (!std::filesystem::exists(hetplan::test::data_dir() / "sailor")) {
        std::printf("published-data suite: %s has no sailor/ folder\n", hetplan::test::data_dir().c_str());
        return 1;
    }
    doctest::Context ctx(argc, argv);
    return ctx.run();
}
