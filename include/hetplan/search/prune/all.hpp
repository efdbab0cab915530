#pragma once
// Pruners composed at compile time: a Boost.Hana tuple of pruners, asked about a candidate of
// some kind with &&, left to right, short-circuiting. Only the pruners that accept that kind of
// candidate take part, so one tuple serves every level of a search (Sailor: H2 on worker
// options, a user's pruner on stage typings, H5 on stage placements). No virtual call, no
// allocation.
//
//   auto pruners = search::prune::all{h2_memory_fit<>{}, h5_one_region{}, single_gpu_type{}};
#include <type_traits>
#include <utility>

#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>

#include "hetplan/concepts/pruner.hpp"
#include "hetplan/search/hooks.hpp"

namespace hetplan::search::prune {

template <class... Ps>
struct all {
    boost::hana::tuple<Ps...> ps;

    all() = default;
    explicit all(Ps... p)
        requires(sizeof...(Ps) > 0)
        : ps(std::move(p)...) {}

    /// Whether some pruner of the tuple judges candidates of kind C.
    template <class C>
    static constexpr bool judges = (concepts::pruner<Ps, C> || ...);

    /// True: keep. Pruners that do not accept C are not asked.
    template <class C>
    [[nodiscard]] bool operator()(const problem& pb, const C& c) const {
        return boost::hana::unpack(ps, [&](const auto&... p) { return (keeps(p, pb, c) && ...); });
    }

    /// The same, telling the hooks which pruner dropped the candidate.
    template <class C, class Hooks>
    [[nodiscard]] bool keep(const problem& pb, const C& c, Hooks& hooks) const {
        return boost::hana::unpack(ps, [&](const auto&... p) {
            return ([&] {
                if (keeps(p, pb, c)) return true;
                if constexpr (watches_pruning<Hooks, C, std::remove_cvref_t<decltype(p)>>) (void)notify_pruned(hooks, c, p);
                return false;
            }() && ...);
        });
    }

    /// Tells the pruners that have a begin(problem) (memoising ones) that a search starts.
    void begin(const problem& pb) const {
        boost::hana::for_each(ps, [&](const auto& p) {
            if constexpr (requires { p.begin(pb); }) p.begin(pb);
        });
    }

    /// The tuple with one more pruner.
    template <class P>
    [[nodiscard]] all<Ps..., P> with(P p) const {
        return boost::hana::unpack(ps, [&](const auto&... q) { return all<Ps..., P>(q..., std::move(p)); });
    }

private:
    template <class P, class C>
    static bool keeps(const P& p, const problem& pb, const C& c) {
        if constexpr (concepts::pruner<P, C>) return static_cast<bool>(p(pb, c));
        else return true;
    }
};

template <class... Ps>
all(Ps...) -> all<Ps...>;

/// Whether every pruner of the tuple judges at least one of the candidate kinds Cs (what a
/// planner generates); a pruner that judges none would never be asked.
template <class P, class... Cs>
inline constexpr bool judges_one_of = (concepts::pruner<P, Cs> || ...);
template <class Tuple, class... Cs>
inline constexpr bool judges_any = false;
template <class... Ps, class... Cs>
inline constexpr bool judges_any<all<Ps...>, Cs...> = (judges_one_of<Ps, Cs...> && ...);

}  // namespace hetplan::search::prune
