#pragma once
// Type erasure at the edge (as pagmo2's `problem` wraps a user's problem): any_planner holds any
// model of concepts::planner — a reference planner or a user's composition — behind one
// virtual call per plan(), none inside a search. The objective is chosen at run time by kind
// (maximum throughput or minimum cost, either under constraints) and handed to the planner as
// the policy type it was written for; progress reaches a callback through a hook.
//
//   hetplan::any_planner p(hetplan::sailor_planner<>{});
//   auto out = p.plan(problem, {.target = hetplan::objective_kind::cost, .top = 3});
//   if (auto* s = p.extract<hetplan::sailor_planner<>>()) ...   // the planner inside
//
// Capabilities are detected (pagmo's has_*): price() and check() need the planner's models()
// (a simulator); a planner without them cannot price plans of others.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>

#include "hetplan/concepts/planner.hpp"
#include "hetplan/plan/validator.hpp"
#include "hetplan/search/hooks.hpp"
#include "hetplan/search/objective.hpp"
#include "hetplan/search/request.hpp"
#include "hetplan/search/result.hpp"

namespace hetplan {

/// The built-in objectives, by name: what a command line or a binding chooses at run time.
enum class objective_kind { throughput, cost };

/// The request of a type-erased planner: the objective by kind with its constraints, and the
/// rest of plan_request; progress as a callback.
struct planning_request {
    objective_kind target = objective_kind::throughput;
    constraints limits{};
    std::size_t top = 1;
    stop_condition stop{};
    std::function<void(const search_progress&)> progress{};
};

class any_planner {
    /// The request's progress callback as a hook.
    struct callback_progress {
        const std::function<void(const search_progress&)>* f = nullptr;
        void on_step(const search_progress& p) const {
            if (f && *f) (*f)(p);
        }
    };

public:
    template <concepts::planner P>
        requires(!std::same_as<std::remove_cvref_t<P>, any_planner>)
    explicit any_planner(P p, std::string paper = {}) : self_(std::make_unique<model<P>>(std::move(p))), paper_(std::move(paper)) {}
    any_planner(const any_planner& o) : self_(o.self_->clone()), paper_(o.paper_) {}
    any_planner(any_planner&&) noexcept = default;
    any_planner& operator=(any_planner o) noexcept {
        std::swap(self_, o.self_);
        std::swap(paper_, o.paper_);
        return *this;
    }

    [[nodiscard]] std::string name() const { return std::string(self_->name()); }
    [[nodiscard]] const std::string& paper() const { return paper_; }
    [[nodiscard]] bool has_models() const { return self_->has_models(); }

    [[nodiscard]] plan_result plan(const problem& pb, const planning_request& rq = {}) { return self_->plan(pb, rq); }
    /// Prices a plan with the planner's models (throws model_error when it has none).
    [[nodiscard]] estimate price(const problem& pb, const hetplan::plan& pl) const { return self_->price(pb, pl); }
    /// Validates a plan against the planner's memory model.
    [[nodiscard]] validation_report check(const problem& pb, const hetplan::plan& pl) const { return self_->check(pb, pl); }

    template <class T>
    [[nodiscard]] bool is() const {
        return self_->type() == typeid(T);
    }
    template <class T>
    [[nodiscard]] T* extract() {
        return is<T>() ? static_cast<T*>(self_->get()) : nullptr;
    }
    template <class T>
    [[nodiscard]] const T* extract() const {
        return is<T>() ? static_cast<const T*>(self_->get()) : nullptr;
    }

private:
    struct base {
        virtual ~base() = default;
        virtual std::string_view name() const = 0;
        virtual plan_result plan(const problem&, const planning_request&) = 0;
        virtual estimate price(const problem&, const hetplan::plan&) const = 0;
        virtual validation_report check(const problem&, const hetplan::plan&) const = 0;
        virtual bool has_models() const = 0;
        virtual std::unique_ptr<base> clone() const = 0;
        virtual const std::type_info& type() const = 0;
        virtual void* get() = 0;
    };

    template <class P>
    struct model final : base {
        P p;
        explicit model(P x) : p(std::move(x)) {}
        std::string_view name() const override { return p.name(); }
        plan_result plan(const problem& pb, const planning_request& rq) override {
            if (rq.target == objective_kind::cost) return p.plan(pb, request(min_cost{rq.limits}, rq));
            return p.plan(pb, request(max_throughput{rq.limits}, rq));
        }
        // models() or, where they depend on the problem (Cephalo's compute-memory fit), models(pb).
        estimate price(const problem& pb, const hetplan::plan& pl) const override {
            if constexpr (requires { p.models().run(pb, pl); }) return p.models().run(pb, pl);
            else if constexpr (requires { p.models(pb).run(pb, pl); }) return p.models(pb).run(pb, pl);
            else throw model_error("planner " + std::string(p.name()) + " has no models to price a plan with");
        }
        validation_report check(const problem& pb, const hetplan::plan& pl) const override {
            if constexpr (requires { p.models().memory; }) return validate(pb, pl, p.models().memory);
            else if constexpr (requires { p.models(pb).memory; }) return validate(pb, pl, p.models(pb).memory);
            else throw model_error("planner " + std::string(p.name()) + " has no memory model to validate a plan with");
        }
        bool has_models() const override { return requires { p.models(); } || requires(const problem& q) { p.models(q); }; }
        std::unique_ptr<base> clone() const override { return std::make_unique<model>(p); }
        const std::type_info& type() const override { return typeid(P); }
        void* get() override { return &p; }

        template <class O>
        static plan_request<O, callback_progress> request(O o, const planning_request& rq) {
            return {std::move(o), rq.top, 0.05, rq.stop, boost::hana::make_tuple(callback_progress{&rq.progress})};
        }
    };

    std::unique_ptr<base> self_;
    std::string paper_;
};

}  // namespace hetplan
