#pragma once
// A small exact integer linear program solver, for the sub-problems of a search that are too
// irregular for a flow and too small for an external solver (tens of variables and rows): a
// dense two-phase simplex with Bland's rule (no cycling), and depth-first branch and bound on
// the variables' integrality with the LP value as the bound.
//
//   minimise c'x  subject to  A x (<=, =, >=) b,  0 <= x <= upper,  x integer
//
// Used by extras_flow.hpp when stages give one cell different GPUs per replica (a generalized
// transportation problem: not a flow, so not integral by itself). Buffers are kept between
// calls: after the largest problem, solving allocates nothing.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <vector>

namespace hetplan::search {

class small_ilp {
public:
    enum class sense : unsigned char { le, eq, ge };

    /// Starts a problem of n variables, each in [0, upper] (integer; no bound row when upper is
    /// infinite), objective all zero.
    void reset(std::size_t n, double upper = std::numeric_limits<double>::infinity()) {
        n_ = n;
        rows_ = 0;
        cost_.assign(n, 0.0);
        a_.clear();
        sense_.clear();
        rhs_.clear();
        lo_.assign(n, 0.0);
        hi_.assign(n, upper);
    }
    void set_cost(std::size_t j, double c) { cost_[j] = c; }
    /// Appends a row; returns its index. Coefficients are set with coef().
    std::size_t add_row(sense s, double rhs) {
        a_.resize(a_.size() + n_, 0.0);
        sense_.push_back(s);
        rhs_.push_back(rhs);
        return rows_++;
    }
    void coef(std::size_t row, std::size_t j, double v) { a_[row * n_ + j] = v; }

    /// The least-cost integer solution (stop at the first one found when `first` is set: a
    /// feasibility question), or none when there is no integer solution. `nodes` bounds the
    /// branch and bound: past it the answer is none and exhausted() says so.
    [[nodiscard]] std::optional<double> solve(bool first = false, std::size_t nodes = 100000) {
        best_ = std::numeric_limits<double>::infinity();
        found_ = exhausted_ = false;
        budget_ = nodes;
        first_ = first;
        branch();
        if (!found_) return std::nullopt;
        return best_;
    }
    [[nodiscard]] std::span<const double> solution() const { return best_x_; }
    [[nodiscard]] bool exhausted() const { return exhausted_; }

    /// The LP relaxation's value (bounds included), or none when it is infeasible.
    [[nodiscard]] std::optional<double> relaxation() { return lp(); }
    /// After relaxation() found an optimum: the shadow price of inequality row r, the rate at
    /// which the optimum changes with its right-hand side (<= 0 for a `le` row of this
    /// minimisation, >= 0 for a `ge` row), read from the slack's reduced cost. A caller may take
    /// it as a Lagrange multiplier: any multipliers of the right sign give a floor of the
    /// optimum (weak duality), these the tightest. 0 for an equality row (it has no slack).
    [[nodiscard]] double shadow_price(std::size_t r) const {
        if (r >= rows_ || sense_[r] == sense::eq || slack_.size() != rows_) return 0.0;
        const double reduced = t_[rows_with_bounds_ * width_ + slack_[r]];
        const double v = sense_[r] == sense::le ? -reduced : reduced;
        return flipped_[r] ? -v : v;
    }

private:
    static constexpr double eps = 1e-9;

    void branch() {
        if ((found_ && first_) || exhausted_) return;
        if (budget_-- == 0) {
            exhausted_ = true;
            return;
        }
        const auto v = lp();
        if (!v || (found_ && *v >= best_ - 1e-9 * std::max(1.0, std::abs(best_)))) return;
        // The most fractional variable; none: an integer solution.
        std::size_t pick = n_;
        double frac = 0;
        for (std::size_t j = 0; j < n_; ++j) {
            const double f = x_[j] - std::floor(x_[j] + eps);
            const double d = std::min(f, 1 - f);
            if (d > 1e-7 && d > frac) frac = d, pick = j;
        }
        if (pick == n_) {
            found_ = true;
            best_ = *v;
            best_x_.assign(x_.begin(), x_.begin() + static_cast<std::ptrdiff_t>(n_));
            for (double& x : best_x_) x = std::round(x);
            return;
        }
        const double down = std::floor(x_[pick]), lo = lo_[pick], hi = hi_[pick];
        // The nearer side first: the LP leans that way.
        const bool up_first = x_[pick] - down > 0.5;
        for (int side = 0; side < 2; ++side) {
            if ((side == 0) == up_first) lo_[pick] = down + 1;
            else hi_[pick] = down;
            if (lo_[pick] <= hi_[pick]) branch();
            lo_[pick] = lo, hi_[pick] = hi;
        }
    }

    /// Two-phase simplex on the current bounds; fills x_ and returns the objective.
    std::optional<double> lp() {
        // Columns: n structural (shifted by their lower bounds), one slack or surplus per
        // inequality row, the upper-bound rows' slacks, one artificial per row; then the rhs.
        bounded_.clear();
        for (std::size_t j = 0; j < n_; ++j)
            if (hi_[j] < std::numeric_limits<double>::infinity()) bounded_.push_back(j);
        const std::size_t ub = bounded_.size(), m = rows_ + ub;
        std::size_t slacks = 0;
        for (std::size_t r = 0; r < rows_; ++r) slacks += sense_[r] != sense::eq;
        const std::size_t nvar = n_ + slacks + ub, W = nvar + m + 1;
        t_.assign((m + 1) * W, 0.0);
        basis_.assign(m, 0);
        auto T = [&](std::size_t r, std::size_t c) -> double& { return t_[r * W + c]; };
        std::size_t s = n_;
        slack_.assign(rows_, 0);
        flipped_.assign(rows_, false);
        rows_with_bounds_ = m, width_ = W;
        for (std::size_t r = 0; r < rows_; ++r) {
            double rhs = rhs_[r];
            for (std::size_t j = 0; j < n_; ++j) T(r, j) = a_[r * n_ + j], rhs -= a_[r * n_ + j] * lo_[j];
            if (sense_[r] != sense::eq) slack_[r] = s;
            if (sense_[r] == sense::le) T(r, s++) = 1;
            else if (sense_[r] == sense::ge) T(r, s++) = -1;
            T(r, W - 1) = rhs;
            flipped_[r] = rhs < 0;
        }
        for (std::size_t q = 0; q < ub; ++q) {
            const std::size_t r = rows_ + q, j = bounded_[q];
            T(r, j) = 1;
            T(r, s++) = 1;
            T(r, W - 1) = hi_[j] - lo_[j];
        }
        for (std::size_t r = 0; r < m; ++r) {
            if (T(r, W - 1) < 0)
                for (std::size_t c = 0; c < nvar; ++c) T(r, c) = -T(r, c);
            T(r, W - 1) = std::abs(T(r, W - 1));
            T(r, nvar + r) = 1;
            basis_[r] = nvar + r;
        }
        // Phase 1: minimise the artificials (objective row m, as reduced costs).
        for (std::size_t c = 0; c < W; ++c) {
            double v = 0;
            if (c < nvar || c == W - 1)
                for (std::size_t r = 0; r < m; ++r) v -= T(r, c);
            T(m, c) = v;
        }
        if (!pivot_until_optimal(m, W, W - 1)) return std::nullopt;
        if (-T(m, W - 1) > 1e-7) return std::nullopt;
        // Drive artificials out of the basis where a structural column can replace them.
        for (std::size_t r = 0; r < m; ++r) {
            if (basis_[r] < nvar) continue;
            for (std::size_t c = 0; c < nvar; ++c)
                if (std::abs(T(r, c)) > eps) {
                    pivot(r, c, m, W);
                    break;
                }
        }
        // Phase 2: the real objective over the structural and slack columns only.
        for (std::size_t c = 0; c < W; ++c) T(m, c) = c < n_ ? cost_[c] : 0.0;
        for (std::size_t r = 0; r < m; ++r) {
            const std::size_t b = basis_[r];
            if (b < n_ && cost_[b] != 0)
                for (std::size_t c = 0; c < W; ++c) T(m, c) -= cost_[b] * T(r, c);
        }
        if (!pivot_until_optimal(m, W, nvar)) return std::nullopt;  // unbounded: the callers' problems are bounded
        x_.assign(n_, 0.0);
        for (std::size_t r = 0; r < m; ++r)
            if (basis_[r] < n_) x_[basis_[r]] = T(r, W - 1);
        double v = 0;
        for (std::size_t j = 0; j < n_; ++j) x_[j] += lo_[j], v += cost_[j] * x_[j];
        return v;
    }

    /// Bland's rule over the columns before `limit`; false when unbounded.
    bool pivot_until_optimal(std::size_t m, std::size_t W, std::size_t limit) {
        for (;;) {
            std::size_t enter = limit;
            for (std::size_t c = 0; c < limit; ++c)
                if (t_[m * W + c] < -eps) {
                    enter = c;
                    break;
                }
            if (enter == limit) return true;
            std::size_t leave = m;
            double ratio = std::numeric_limits<double>::infinity();
            for (std::size_t r = 0; r < m; ++r) {
                const double a = t_[r * W + enter];
                if (a <= eps) continue;
                const double q = t_[r * W + W - 1] / a;
                if (q < ratio - eps || (q <= ratio + eps && leave < m && basis_[r] < basis_[leave])) ratio = q, leave = r;
            }
            if (leave == m) return false;
            pivot(leave, enter, m, W);
        }
    }

    void pivot(std::size_t r, std::size_t c, std::size_t m, std::size_t W) {
        double* row = &t_[r * W];
        const double p = row[c];
        for (std::size_t k = 0; k < W; ++k) row[k] /= p;
        for (std::size_t i = 0; i <= m; ++i) {
            if (i == r) continue;
            double* other = &t_[i * W];
            const double f = other[c];
            if (std::abs(f) <= 1e-15) continue;
            for (std::size_t k = 0; k < W; ++k) other[k] -= f * row[k];
        }
        basis_[r] = c;
    }

    std::size_t n_ = 0, rows_ = 0;
    std::vector<double> cost_, a_, rhs_, lo_, hi_, x_, best_x_, t_;
    std::vector<sense> sense_;
    std::vector<std::size_t> basis_, bounded_;
    std::vector<std::size_t> slack_;  ///< each row's slack column in the last tableau
    std::vector<bool> flipped_;       ///< rows negated for a non-negative right-hand side
    std::size_t rows_with_bounds_ = 0, width_ = 0;  ///< the last tableau's objective row and width
    double best_ = 0;
    std::size_t budget_ = 0;
    bool found_ = false, exhausted_ = false, first_ = false;
};

}  // namespace hetplan::search
