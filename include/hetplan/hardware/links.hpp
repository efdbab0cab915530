#pragma once
// Built-in link models.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <variant>

#include <array>

#include "hetplan/concepts/link.hpp"
#include "hetplan/core/error.hpp"
#include "hetplan/core/units.hpp"

namespace hetplan {

/// Latency-bandwidth (Hockney) model: t(n) = alpha + n / beta.
struct alpha_beta_link {
    seconds latency{};
    bytes_per_second peak{};

    alpha_beta_link() = default;
    alpha_beta_link(seconds alpha, bytes_per_second beta) : latency(alpha), peak(beta) {
        if (!(beta.value > 0) || !std::isfinite(beta.value))
            throw input_error("alpha-beta link: bandwidth must be positive and finite, got " +
                              std::to_string(beta.value) + " B/s");
        if (!(alpha.value >= 0) || !std::isfinite(alpha.value))
            throw input_error("alpha-beta link: latency must be >= 0 and finite");
    }

    [[nodiscard]] seconds transfer_time(bytes n) const {
        return n.value <= 0 ? seconds{0} : latency + n / peak;
    }
    [[nodiscard]] bytes_per_second bandwidth(bytes n) const {
        return n.value <= 0 ? peak : n / transfer_time(n);
    }
};

/// Sailor's measured link (§4.1, data: network/*.json): bandwidth in GB/s is a polynomial in
/// x = log2(n / 1 MB), capped by the measured maximum.
///
/// Departure from the public implementation, which evaluates the raw polynomial: x is clamped
/// to [x_min, x_max] (default 1 MB .. 16 GB) and, for a concave quadratic, to its vertex, so
/// bandwidth never decreases with message size and never turns negative for tiny or huge
/// messages. Inside the range the two agree exactly (up to the ceiling).
struct polynomial_link {
    static constexpr std::size_t max_degree = 5;
    std::array<double, max_degree + 1> coeff{};  ///< highest degree first, GB/s
    std::size_t degree_plus_one = 0;              ///< number of coefficients used
    bytes_per_second ceiling = bytes_per_second::infinity();
    double x_min = 0.0;   ///< log2(MB): 1 MB
    double x_max = 14.0;  ///< log2(MB): 16 GB

    polynomial_link() = default;
    template <class Range>
    polynomial_link(const Range& coeffs, bytes_per_second cap, double lo = 0.0, double hi = 14.0)
        : ceiling(cap), x_min(lo), x_max(hi) {
        if (std::size(coeffs) == 0 || std::size(coeffs) > max_degree + 1)
            throw input_error("polynomial link: needs 1 to " + std::to_string(max_degree + 1) +
                              " coefficients, got " + std::to_string(std::size(coeffs)));
        for (double c : coeffs) {
            if (!std::isfinite(c)) throw input_error("polynomial link: coefficient is not finite");
            coeff[degree_plus_one++] = c;
        }
        if (!(cap.value > 0)) throw input_error("polynomial link: maximum bandwidth must be positive");
        if (!(x_min <= x_max)) throw input_error("polynomial link: empty message-size range");
        if (degree_plus_one == 3 && coeff[0] < 0) {
            const double vertex = -coeff[1] / (2.0 * coeff[0]);
            if (vertex < x_max) x_max = std::max(vertex, x_min);
        }
        // Reject fits that give no positive bandwidth somewhere in their range.
        for (int i = 0; i <= 64; ++i) {
            const double x = x_min + (x_max - x_min) * i / 64.0;
            if (!(raw_gbps(x) > 0))
                throw input_error("polynomial link: bandwidth is not positive for a " +
                                  std::to_string(std::exp2(x)) + " MB message (fit gives " +
                                  std::to_string(raw_gbps(x)) + " GB/s)");
        }
    }

    [[nodiscard]] double raw_gbps(double x) const {
        double v = 0.0;
        for (std::size_t i = 0; i < degree_plus_one; ++i) v = v * x + coeff[i];
        return v;
    }

    [[nodiscard]] bytes_per_second bandwidth(bytes n) const {
        const double x = n.value > 0 ? std::log2(n.value / 1e6) : x_min;
        const double gbps = raw_gbps(std::clamp(x, x_min, x_max));
        return min(bytes_per_second{gbps * 1e9}, ceiling);
    }
    [[nodiscard]] seconds transfer_time(bytes n) const {
        return n.value <= 0 ? seconds{0} : n / bandwidth(n);
    }
};

/// Any user type modelling concepts::link, behind one virtual call: how a link model of your
/// own enters a network_model (and so every simulator) without templating the cluster on it.
class any_link {
public:
    template <concepts::link L>
    explicit any_link(L l) : p_(std::make_shared<const model<L>>(std::move(l))) {}
    [[nodiscard]] seconds transfer_time(bytes n) const { return p_->transfer_time(n); }
    [[nodiscard]] bytes_per_second bandwidth(bytes n) const { return p_->bandwidth(n); }

private:
    struct base {
        virtual ~base() = default;
        [[nodiscard]] virtual seconds transfer_time(bytes n) const = 0;
        [[nodiscard]] virtual bytes_per_second bandwidth(bytes n) const = 0;
    };
    template <class L>
    struct model final : base {
        explicit model(L x) : l(std::move(x)) {}
        [[nodiscard]] seconds transfer_time(bytes n) const override { return l.transfer_time(n); }
        [[nodiscard]] bytes_per_second bandwidth(bytes n) const override { return l.bandwidth(n); }
        L l;
    };
    std::shared_ptr<const base> p_;
};

/// The built-in models, or a user's (as any_link), for containers that hold links of all kinds.
/// The built-in ones are dispatched without virtual calls.
class builtin_link {
public:
    builtin_link() = default;
    builtin_link(alpha_beta_link l) : impl_(l) {}    // NOLINT: implicit by design
    builtin_link(polynomial_link l) : impl_(std::move(l)) {}  // NOLINT
    builtin_link(any_link l) : impl_(std::move(l)) {}  // NOLINT
    /// A user's link model, wrapped.
    template <concepts::link L>
        requires(!std::same_as<L, builtin_link> && !std::same_as<L, alpha_beta_link> && !std::same_as<L, polynomial_link> &&
                 !std::same_as<L, any_link>)
    builtin_link(L l) : impl_(any_link(std::move(l))) {}  // NOLINT

    [[nodiscard]] seconds transfer_time(bytes n) const {
        return std::visit([n](const auto& l) { return l.transfer_time(n); }, impl_);
    }
    [[nodiscard]] bytes_per_second bandwidth(bytes n) const {
        return std::visit([n](const auto& l) { return l.bandwidth(n); }, impl_);
    }
    template <class L>
    [[nodiscard]] const L* get_if() const { return std::get_if<L>(&impl_); }

private:
    std::variant<alpha_beta_link, polynomial_link, any_link> impl_;
};

static_assert(concepts::check_link<alpha_beta_link>());
static_assert(concepts::check_link<polynomial_link>());
static_assert(concepts::check_link<builtin_link>());

}  // namespace hetplan
