// The command line's option parser: arguments separated by NUL bytes, first the subcommand's
// option list is the union of every subcommand's. Only hetplan errors may come out.
#include <string>
#include <vector>

#include "../apps/hetplan/commands.hpp"
#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace hetplan;
    std::vector<std::string> args;
    std::string_view t = fuzz::text(data, size);
    while (!t.empty()) {
        const std::size_t nul = std::min(t.find('\0'), t.size());
        args.emplace_back(t.substr(0, nul));
        t.remove_prefix(std::min(nul + 1, t.size()));
    }
    fuzz::refuse_cleanly([&] {
        static_cast<void>(app::parse(args, {"--cluster", "--model", "--job", "--profiles", "--plan", "--planner", "--planners", "--objective",
                                            "--max-cost", "--min-throughput", "--top", "--json", "--svg", "--timing", "--deadline", "--gpu",
                                            "--mbs", "--tp", "--repeats", "--steps"}));
    });
    return 0;
}
