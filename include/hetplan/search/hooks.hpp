#pragma once
// Hooks (concepts::hook): how a search tells its observers what happens, and the hooks hetplan
// ships. A search holds its hooks in a Boost.Hana tuple and, for each event, calls the members
// each hook has (detected at compile time; a hook without the member costs nothing); any hook
// returning true stops the search, as ensmallen's callbacks do.
#include <cstddef>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>

#include "hetplan/concepts/hook.hpp"
#include "hetplan/search/result.hpp"

namespace hetplan::search {

namespace detail {
/// Calls f(h) when it compiles; a void result or none reads as "go on".
template <class H, class F>
bool fire(H& h, F&& f) {
    if constexpr (std::is_invocable_v<F&, H&>) {
        if constexpr (std::is_void_v<std::invoke_result_t<F&, H&>>) {
            f(h);
            return false;
        } else {
            return static_cast<bool>(f(h));
        }
    } else {
        return false;
    }
}
/// Every hook sees the event, in order (no short circuit); true when one asks to stop.
template <class Hooks, class F>
bool fire_all(Hooks& hooks, F&& f) {
    return boost::hana::unpack(hooks, [&](auto&... h) {
        bool stop = false;
        ((stop = fire(h, f) || stop), ...);
        return stop;
    });
}
}  // namespace detail

template <class Hooks, class C>
bool notify_candidate(Hooks& hooks, const C& c) {
    return detail::fire_all(hooks, [&](auto& h) -> decltype(h.on_candidate(c)) { return h.on_candidate(c); });
}
template <class Hooks, class C, class P>
bool notify_pruned(Hooks& hooks, const C& c, const P& by) {
    return detail::fire_all(hooks, [&](auto& h) -> decltype(h.on_pruned(c, by)) { return h.on_pruned(c, by); });
}
template <class Hooks, class C, class S>
bool notify_solved(Hooks& hooks, const C& c, const S& s) {
    return detail::fire_all(hooks, [&](auto& h) -> decltype(h.on_solved(c, s)) { return h.on_solved(c, s); });
}
template <class Hooks>
bool notify_incumbent(Hooks& hooks, const ranked_plan& p) {
    return detail::fire_all(hooks, [&](auto& h) -> decltype(h.on_incumbent(p)) { return h.on_incumbent(p); });
}
template <class Hooks>
bool notify_step(Hooks& hooks, const search_progress& p) {
    return detail::fire_all(hooks, [&](auto& h) -> decltype(h.on_step(p)) { return h.on_step(p); });
}

template <class Hooks>
bool notify_moves(Hooks& hooks, std::size_t n) {
    return detail::fire_all(hooks, [&](auto& h) -> decltype(h.on_moves(n)) { return h.on_moves(n); });
}

/// Whether any hook of the tuple type watches pruning of candidates of kind C by pruner P: the
/// inner loops skip the bookkeeping otherwise.
template <class Hooks, class C, class P>
inline constexpr bool watches_pruning = false;
template <class... Hs, class C, class P>
inline constexpr bool watches_pruning<boost::hana::tuple<Hs...>, C, P> = (concepts::pruned_hook<Hs, C, P> || ...);

/// Tells `f` the progress after every candidate priced (the `hetplan` command's progress line).
template <class F>
struct progress_to {
    F f;
    void on_step(const search_progress& p) { f(p); }
};
template <class F>
progress_to(F) -> progress_to<F>;

/// Counts candidates priced (steps) into *out; stops the search after `limit` of them.
struct count_steps {
    std::size_t* out = nullptr;
    std::size_t limit = static_cast<std::size_t>(-1);
    bool on_step(const search_progress&) { return out && ++*out >= limit; }
};

/// Counts Metis' search steps (memory-aware Metis Table 1: DP/TP moves and failed partition
/// attempts of walks that end in a plan) into *out; stops the search once `limit` are counted.
struct count_moves {
    std::size_t* out = nullptr;
    std::size_t limit = static_cast<std::size_t>(-1);
    bool on_moves(std::size_t n) { return out && (*out += n) >= limit; }
};

/// Counts plans that became the best so far into *out.
struct count_incumbents {
    std::size_t* out = nullptr;
    void on_incumbent(const ranked_plan&) {
        if (out) ++*out;
    }
};

/// Counts, per pruner, the candidates it dropped (keyed by the pruner's name() or type name).
struct count_pruned {
    std::map<std::string, std::size_t>* out = nullptr;
    template <class C, class P>
    void on_pruned(const C&, const P& by) {
        if (!out) return;
        if constexpr (requires { std::string(by.name()); }) ++(*out)[std::string(by.name())];
        else ++(*out)[typeid(P).name()];
    }
};

static_assert(concepts::check_hook<progress_to<void (*)(const search_progress&)>>());
static_assert(concepts::check_hook<count_steps>());
static_assert(concepts::check_hook<count_moves>());
static_assert(concepts::check_hook<count_incumbents>());
static_assert(concepts::check_hook<count_pruned>());

}  // namespace hetplan::search
