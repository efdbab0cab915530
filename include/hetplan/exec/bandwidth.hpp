#pragma once
// Link profiling: a ping-pong sweep over message sizes between two ranks of a communicator, and
// the two link models the planners read fitted to it: alpha-beta (t = alpha + n / beta, least
// squares) and Sailor's fit (§4.1: bandwidth in GB/s as a quadratic in log2 of the message size
// in MB, least squares over the measured sizes of at least 1 MB, capped at the best measured
// bandwidth). The result goes into a cluster file's "network" section as a LINK.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <vector>

#include "hetplan/concepts/communicator.hpp"
#include "hetplan/exec/comm_error.hpp"
#include "hetplan/hardware/links.hpp"

namespace hetplan::exec {

struct bandwidth_point {
    double bytes = 0;
    double seconds = 0;  ///< one way: half the median round trip
};

/// Ping-pong between ranks `a` and `b` (the others only take part in the barriers): for each
/// size, `repeats` round trips after one warm-up; returns the points on every rank.
template <concepts::communicator C>
std::vector<bandwidth_point> ping_pong_sweep(C& comm, const std::vector<double>& sizes_bytes, int repeats, int a = 0, int b = 1) {
    if (comm.size() < 2 || a == b || a < 0 || b < 0 || a >= comm.size() || b >= comm.size())
        throw comm_error("bandwidth sweep: needs two distinct ranks of a group of at least 2");
    if (repeats < 1) throw comm_error("bandwidth sweep: repeats must be >= 1");
    std::vector<bandwidth_point> out;
    for (double size : sizes_bytes) {
        const auto n = static_cast<std::size_t>(std::max(1.0, std::ceil(size / sizeof(float))));
        std::vector<float> buf(n, 1.0f);
        std::vector<float> times;
        comm.barrier();
        for (int rep = 0; rep <= repeats; ++rep) {
            const auto t0 = std::chrono::steady_clock::now();
            if (comm.rank() == a) {
                comm.send(buf, b, 1);
                comm.recv(buf, b, 2);
            } else if (comm.rank() == b) {
                comm.recv(buf, a, 1);
                comm.send(buf, a, 2);
            }
            const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (rep > 0) times.push_back(static_cast<float>(dt));
        }
        std::sort(times.begin(), times.end());
        std::vector<float> median{comm.rank() == a ? times[times.size() / 2] : 0.0f};
        comm.all_reduce(median);  // rank a's measurement, everywhere
        out.push_back({double(n * sizeof(float)), 0.5 * double(median[0])});
    }
    return out;
}

/// Least-squares alpha-beta fit (latency >= 0; bandwidth from the slope).
inline alpha_beta_link fit_alpha_beta(const std::vector<bandwidth_point>& pts) {
    if (pts.size() < 2) throw comm_error("alpha-beta fit: needs at least two message sizes");
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const double k = double(pts.size());
    for (const auto& p : pts) sx += p.bytes, sy += p.seconds, sxx += p.bytes * p.bytes, sxy += p.bytes * p.seconds;
    const double den = k * sxx - sx * sx;
    if (!(den > 0)) throw comm_error("alpha-beta fit: needs at least two different message sizes");
    const double slope = (k * sxy - sx * sy) / den;
    double alpha = (sy - slope * sx) / k;
    if (!(slope > 0)) throw comm_error("alpha-beta fit: time does not grow with message size (measurement too noisy)");
    alpha = std::max(alpha, 0.0);
    return alpha_beta_link{seconds{alpha}, bytes_per_second{1.0 / slope}};
}

/// Sailor's fit: GB/s = c2 x^2 + c1 x + c0, x = log2(MB), over the points of at least 1 MB.
inline polynomial_link fit_sailor_polynomial(const std::vector<bandwidth_point>& pts) {
    std::vector<std::pair<double, double>> xy;  // (log2 MB, GB/s)
    double best = 0, lo = 1e300, hi = -1e300;
    for (const auto& p : pts) {
        const double mb = p.bytes / 1e6;
        if (mb < 1.0 || !(p.seconds > 0)) continue;
        const double x = std::log2(mb), gbs = p.bytes / p.seconds / 1e9;
        xy.emplace_back(x, gbs);
        best = std::max(best, gbs), lo = std::min(lo, x), hi = std::max(hi, x);
    }
    if (xy.size() < 3) throw comm_error("Sailor's bandwidth fit: needs at least three message sizes of 1 MB or more");
    // Normal equations of the quadratic, solved by Cramer's rule on the 3x3 system.
    std::array<double, 5> s{};  // sums of x^0..x^4
    std::array<double, 3> t{};  // sums of y x^0..x^2
    for (const auto& [x, y] : xy) {
        double p = 1;
        for (int i = 0; i < 5; ++i) {
            s[static_cast<std::size_t>(i)] += p;
            if (i < 3) t[static_cast<std::size_t>(i)] += y * p;
            p *= x;
        }
    }
    auto det3 = [](double a, double b, double c, double d, double e, double f, double g, double h, double i) {
        return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g);
    };
    // unknowns (c0, c1, c2): [s0 s1 s2; s1 s2 s3; s2 s3 s4] c = t
    const double D = det3(s[0], s[1], s[2], s[1], s[2], s[3], s[2], s[3], s[4]);
    if (!(std::abs(D) > 1e-12)) throw comm_error("Sailor's bandwidth fit: needs at least three different message sizes");
    const double c0 = det3(t[0], s[1], s[2], t[1], s[2], s[3], t[2], s[3], s[4]) / D;
    const double c1 = det3(s[0], t[0], s[2], s[1], t[1], s[3], s[2], t[2], s[4]) / D;
    const double c2 = det3(s[0], s[1], t[0], s[1], s[2], t[1], s[2], s[3], t[2]) / D;
    return polynomial_link(std::array<double, 3>{c2, c1, c0}, bytes_per_second{best * 1e9}, lo, hi);
}

}  // namespace hetplan::exec
