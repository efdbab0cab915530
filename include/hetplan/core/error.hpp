#pragma once
// Errors. Bad input is reported with where it came from (file, JSON path) and what was wrong,
// never by a crash or a silently wrong plan.
#include <stdexcept>
#include <string>
#include <utility>

#include "hetplan/core/endpoint.hpp"

namespace hetplan {

/// Base of every exception hetplan throws on purpose.
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Malformed or inconsistent input. `where()` names the file and JSON path when known.
class input_error : public error {
public:
    input_error(std::string source, std::string path, std::string what)
        : error(format(source, path, what)), source_(std::move(source)), path_(std::move(path)),
          what_(std::move(what)) {}
    explicit input_error(std::string what) : input_error({}, {}, std::move(what)) {}

    [[nodiscard]] const std::string& source() const noexcept { return source_; }
    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    [[nodiscard]] const std::string& problem() const noexcept { return what_; }

private:
    static std::string format(const std::string& source, const std::string& path,
                              const std::string& what) {
        std::string s;
        if (!source.empty()) s += source;
        if (!path.empty()) s += (s.empty() ? "" : ": ") + path;
        if (!s.empty()) s += ": ";
        return s + what;
    }
    std::string source_, path_, what_;
};

/// A query the models cannot answer (e.g. no profile for a GPU type and TP degree).
class model_error : public error {
public:
    using error::error;
};

/// The network has no link between two endpoints a plan would use. Searches treat the
/// placement as unusable (skipped, with a note) rather than failing the whole search.
/// No link between two endpoints: which ones, so a caller can name them.
class missing_link : public model_error {
public:
    missing_link(const std::string& what, endpoint from, endpoint to) : model_error(what), from_(from), to_(to) {}
    [[nodiscard]] endpoint from() const { return from_; }
    [[nodiscard]] endpoint to() const { return to_; }

private:
    endpoint from_, to_;
};

}  // namespace hetplan
