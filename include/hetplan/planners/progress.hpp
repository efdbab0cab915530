#pragma once
// What a long search reports as it goes (the `hetplan` command shows it on stderr): how many
// candidates it has priced and the best objective so far, in the planner's objective unit.
#include <cstddef>
#include <functional>
#include <limits>

namespace hetplan {

struct search_progress {
    std::size_t candidates = 0;                                 ///< instances or configurations priced
    double best = std::numeric_limits<double>::infinity();      ///< best objective so far (+inf: none yet)
    const char* unit = "s/iteration";                           ///< or "USD/iteration"
};

/// Called from the searching thread; keep it cheap (it runs once per candidate).
using progress_callback = std::function<void(const search_progress&)>;

}  // namespace hetplan
