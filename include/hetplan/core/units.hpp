#pragma once
// Strong unit types. A quantity is a double tagged with its unit, so bytes cannot be added to
// seconds and a price per hour cannot be passed where a price per byte is expected. Only the
// products and quotients that have a physical meaning are defined.
#include <cmath>
#include <compare>
#include <limits>

namespace hetplan {

template <class Tag>
struct quantity {
    double value = 0.0;

    constexpr quantity() = default;
    constexpr explicit quantity(double v) : value(v) {}

    [[nodiscard]] constexpr double count() const { return value; }

    constexpr quantity& operator+=(quantity o) { value += o.value; return *this; }
    constexpr quantity& operator-=(quantity o) { value -= o.value; return *this; }
    constexpr quantity& operator*=(double k) { value *= k; return *this; }
    constexpr quantity& operator/=(double k) { value /= k; return *this; }

    friend constexpr quantity operator+(quantity a, quantity b) { return quantity{a.value + b.value}; }
    friend constexpr quantity operator-(quantity a, quantity b) { return quantity{a.value - b.value}; }
    friend constexpr quantity operator-(quantity a) { return quantity{-a.value}; }
    friend constexpr quantity operator*(quantity a, double k) { return quantity{a.value * k}; }
    friend constexpr quantity operator*(double k, quantity a) { return quantity{a.value * k}; }
    friend constexpr quantity operator/(quantity a, double k) { return quantity{a.value / k}; }
    // Ratio of two quantities of the same unit is a plain number.
    friend constexpr double operator/(quantity a, quantity b) { return a.value / b.value; }

    friend constexpr auto operator<=>(quantity a, quantity b) = default;
    friend constexpr bool operator==(quantity a, quantity b) = default;

    [[nodiscard]] static constexpr quantity infinity() {
        return quantity{std::numeric_limits<double>::infinity()};
    }
};

struct bytes_tag {};
struct seconds_tag {};
struct flop_tag {};
struct flop_per_second_tag {};
struct bytes_per_second_tag {};
struct usd_tag {};
struct usd_per_hour_tag {};
struct usd_per_byte_tag {};

using bytes = quantity<bytes_tag>;                      ///< memory or message size
using seconds = quantity<seconds_tag>;                  ///< time
using flop = quantity<flop_tag>;                        ///< floating-point operations
using flop_per_second = quantity<flop_per_second_tag>;  ///< compute rate (FLOP/s)
using bytes_per_second = quantity<bytes_per_second_tag>;///< bandwidth
using usd = quantity<usd_tag>;                          ///< money
using usd_per_hour = quantity<usd_per_hour_tag>;        ///< rental price of one GPU
using usd_per_byte = quantity<usd_per_byte_tag>;        ///< data-transfer price

// Physically meaningful cross-unit arithmetic.
constexpr seconds operator/(bytes b, bytes_per_second bw) { return seconds{b.value / bw.value}; }
constexpr bytes operator*(bytes_per_second bw, seconds t) { return bytes{bw.value * t.value}; }
constexpr bytes_per_second operator/(bytes b, seconds t) { return bytes_per_second{b.value / t.value}; }
constexpr seconds operator/(flop f, flop_per_second r) { return seconds{f.value / r.value}; }
constexpr usd operator*(usd_per_hour p, seconds t) { return usd{p.value * t.value / 3600.0}; }
constexpr usd operator*(seconds t, usd_per_hour p) { return p * t; }
constexpr usd operator*(usd_per_byte p, bytes b) { return usd{p.value * b.value}; }
constexpr usd operator*(bytes b, usd_per_byte p) { return p * b; }

// Constructors with units in the name, for readable literals in code and tests.
constexpr bytes gigabytes(double v) { return bytes{v * 1e9}; }
constexpr bytes gibibytes(double v) { return bytes{v * 1073741824.0}; }
constexpr bytes megabytes(double v) { return bytes{v * 1e6}; }
constexpr bytes_per_second gigabytes_per_second(double v) { return bytes_per_second{v * 1e9}; }
constexpr bytes_per_second gigabits_per_second(double v) { return bytes_per_second{v * 1e9 / 8.0}; }
constexpr flop_per_second teraflops(double v) { return flop_per_second{v * 1e12}; }
constexpr seconds milliseconds(double v) { return seconds{v * 1e-3}; }
constexpr usd_per_byte usd_per_gigabyte(double v) { return usd_per_byte{v / 1e9}; }

template <class Tag>
constexpr quantity<Tag> max(quantity<Tag> a, quantity<Tag> b) { return a < b ? b : a; }
template <class Tag>
constexpr quantity<Tag> min(quantity<Tag> a, quantity<Tag> b) { return b < a ? b : a; }
template <class Tag>
inline bool is_finite(quantity<Tag> q) { return std::isfinite(q.value); }

}  // namespace hetplan
