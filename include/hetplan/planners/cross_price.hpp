#pragma once
// Any plan priced by any planner's models (issue 21): each reference planner prices its plans
// with its own paper's models, so their numbers are not comparable side by side; hetplan's one
// plan model lets every plan be priced by every simulator that can price it. A simulator that
// cannot (Zorse's models have no tensor parallelism, Sailor's no ZeRO-3 traffic) says why instead
// of returning a number it does not mean.
#include <optional>
#include <string>

#include "hetplan/core/error.hpp"
#include "hetplan/plan/estimate.hpp"
#include "hetplan/plan/validator.hpp"
#include "hetplan/planners/any_planner.hpp"

namespace hetplan {

/// One plan under one planner's models.
struct cross_price {
    std::string models;           ///< the planner whose models priced it
    std::optional<estimate> est;  ///< none: refused (see `refused`)
    validation_report check;      ///< those models' checks (memory fits under their memory model, ...)
    std::string refused;          ///< why the models cannot price it

    [[nodiscard]] bool priced() const { return est.has_value(); }
};

/// `pl` priced by the models of `models`; never throws for a plan those models refuse.
[[nodiscard]] inline cross_price price_with(const any_planner& models, const problem& pb, const plan& pl) {
    cross_price out;
    out.models = models.name();
    try {
        out.check = models.check(pb, pl);
        if (!out.check.priceable) {
            const std::string why = out.check.summary();
            out.refused = why.substr(0, why.find('\n'));
            return out;
        }
        out.est = models.price(pb, pl);
    } catch (const error& e) {
        out.est.reset();
        out.refused = e.what();
    }
    return out;
}

}  // namespace hetplan
