#pragma once
// When a search must stop: a std::stop_token (Ctrl-C, a scheduler cancelling) or a deadline,
// whichever comes first. Searches poll it between steps and every few thousand inner
// iterations; a stopped search returns the best plan found so far and says so.
#include <chrono>
#include <stop_token>

namespace hetplan {

struct stop_condition {
    using clock = std::chrono::steady_clock;
    std::stop_token token{};
    clock::time_point deadline = clock::time_point::max();

    [[nodiscard]] bool requested() const {
        return token.stop_requested() || (deadline != clock::time_point::max() && clock::now() >= deadline);
    }
    /// A deadline `d` from now.
    [[nodiscard]] static stop_condition after(clock::duration d, std::stop_token t = {}) { return {std::move(t), clock::now() + d}; }
};

/// Polls a stop_condition every `period` calls, so an inner loop pays one counter increment per
/// iteration and a clock read every `period`.
class stop_poll {
public:
    explicit stop_poll(const stop_condition* s, unsigned period = 4096) : s_(s), period_(period) {}
    [[nodiscard]] bool operator()() {
        if (!s_) return false;
        if (stopped_) return true;
        if (++n_ < period_) return false;
        n_ = 0;
        return stopped_ = s_->requested();
    }
    [[nodiscard]] bool stopped() const { return stopped_; }
    /// Stops from inside (a budget spent): every later call answers true.
    void halt() { stopped_ = true; }

private:
    const stop_condition* s_;
    unsigned period_, n_ = 0;
    bool stopped_ = false;
};

}  // namespace hetplan
