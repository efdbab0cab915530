#pragma once
// Reading JSON with errors that say which file, which JSON path and what was wrong.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/core/error.hpp"
#include "hetplan/core/limits.hpp"

namespace hetplan::io {

using json = nlohmann::json;

/// The largest input file read (docs/reliability.md): a 100,000-GPU cluster with per-pair links
/// or a profile of 1,000 layers x 64 points x 8 TPs stays far below it; reading more would only
/// exhaust memory (a 100 MB array took 2.4 GB).
inline constexpr std::uintmax_t max_input_bytes = std::uintmax_t{64} << 20;

namespace detail {

/// Parse callback that refuses an object holding the same key twice (nlohmann keeps the last
/// one silently), naming the JSON path.
class duplicate_keys {
public:
    explicit duplicate_keys(std::string source) : source_(std::move(source)) {}

    bool operator()(int, json::parse_event_t event, json& parsed) {
        switch (event) {
        case json::parse_event_t::object_start: frames_.emplace_back().array = false; break;
        case json::parse_event_t::array_start: frames_.emplace_back().array = true; break;
        case json::parse_event_t::key: {
            frame& f = frames_.back();
            std::string k = parsed.get<std::string>();
            if (std::find(f.keys.begin(), f.keys.end(), k) != f.keys.end())
                throw input_error(source_, path() + "." + k, "duplicate key '" + k + "' (JSON would keep only the last)");
            f.keys.push_back(k);
            f.key = std::move(k);
            break;
        }
        case json::parse_event_t::object_end:
        case json::parse_event_t::array_end:
            frames_.pop_back();
            element_done();
            break;
        case json::parse_event_t::value: element_done(); break;
        }
        return true;
    }

private:
    struct frame {
        bool array = false;
        std::size_t index = 0;
        std::string key;
        std::vector<std::string> keys;
    };
    void element_done() {
        if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    }
    [[nodiscard]] std::string path() const {
        std::string p = "$";
        for (std::size_t i = 0; i + 1 < frames_.size(); ++i)
            p += frames_[i].array ? "[" + std::to_string(frames_[i].index) + "]" : "." + frames_[i].key;
        return p;
    }
    std::string source_;
    std::vector<frame> frames_;
};

}  // namespace detail

inline json parse_text(std::string_view text, const std::string& source) {
    try {
        return json::parse(text, detail::duplicate_keys(source));
    } catch (const json::exception& e) {  // syntax errors and out-of-range numbers alike
        throw input_error(source, {}, std::string("malformed JSON: ") + e.what());
    }
}

/// Reads and parses a file; malformed JSON reports the byte offset. Directories, devices and
/// files over max_input_bytes are refused before reading.
inline json parse_file(const std::filesystem::path& file) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(file, ec);
    if (ec || !fs::exists(st)) throw input_error(file.string(), {}, "cannot open file (it does not exist)");
    if (fs::is_directory(st)) throw input_error(file.string(), {}, "is a directory, not a JSON file");
    if (!fs::is_regular_file(st)) throw input_error(file.string(), {}, "is not a regular file (a device or a pipe?)");
    if (const auto size = fs::file_size(file, ec); !ec && size > max_input_bytes)
        throw input_error(file.string(), {}, "file is " + std::to_string(size >> 20) + " MiB, above the " +
                                                 std::to_string(max_input_bytes >> 20) + " MiB hetplan reads");
    std::ifstream in(file, std::ios::binary);
    if (!in) throw input_error(file.string(), {}, "cannot open file");
    std::stringstream buf;
    buf << in.rdbuf();
    return parse_text(buf.str(), file.string());
}

/// Levenshtein distance, for "did you mean".
[[nodiscard]] inline std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

/// The known name nearest to `key` when it looks like a typo of it (few edits, or one is a
/// prefix of the other: "zero" for "zero_stage").
[[nodiscard]] inline std::optional<std::string_view> nearest_name(std::string_view key, std::span<const std::string_view> known) {
    std::optional<std::string_view> best;
    std::size_t best_d = std::max<std::size_t>(2, key.size() / 3) + 1;
    for (std::string_view k : known) {
        std::size_t d = edit_distance(key, k);
        if (k.starts_with(key) || key.starts_with(k)) d = std::min<std::size_t>(d, 1);
        if (d < best_d) best_d = d, best = k;
    }
    return best;
}

/// A position inside a JSON document that knows its file and path.
class cursor {
public:
    cursor(const json& j, std::string source, std::string path = "$")
        : j_(&j), source_(std::move(source)), path_(std::move(path)) {}

    [[noreturn]] void fail(const std::string& what) const { throw input_error(source_, path_, what); }

    [[nodiscard]] const json& raw() const { return *j_; }
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] const std::string& source() const { return source_; }

    [[nodiscard]] bool is_object() const { return j_->is_object(); }
    [[nodiscard]] bool is_array() const { return j_->is_array(); }
    [[nodiscard]] bool is_number() const { return j_->is_number(); }

    [[nodiscard]] std::optional<cursor> find(std::string_view key) const {
        expect_object();
        auto it = j_->find(key);
        if (it == j_->end()) return std::nullopt;
        return cursor(*it, source_, path_ + "." + std::string(key));
    }
    [[nodiscard]] cursor operator[](std::string_view key) const {
        if (auto c = find(key)) return *c;
        fail("missing field '" + std::string(key) + "'");
    }
    [[nodiscard]] cursor at(std::size_t i) const {
        expect_array();
        if (i >= j_->size()) fail("index " + std::to_string(i) + " out of range");
        return cursor((*j_)[i], source_, path_ + "[" + std::to_string(i) + "]");
    }
    [[nodiscard]] std::size_t size() const {
        if (!j_->is_array() && !j_->is_object()) fail("expected an array or object");
        return j_->size();
    }

    template <class F>
    void for_each_item(F&& f) const {
        expect_array();
        for (std::size_t i = 0; i < j_->size(); ++i) f(at(i));
    }
    template <class F>
    void for_each_member(F&& f) const {
        expect_object();
        for (auto it = j_->begin(); it != j_->end(); ++it) f(it.key(), cursor(*it, source_, path_ + "." + it.key()));
    }

    [[nodiscard]] double number() const {
        if (!j_->is_number()) fail("expected a number, got " + std::string(j_->type_name()));
        const double v = j_->get<double>();
        if (!std::isfinite(v)) fail("number is not finite");
        return v;
    }
    [[nodiscard]] double positive() const {
        const double v = number();
        if (!(v > 0)) fail("must be positive, got " + std::to_string(v));
        return v;
    }
    [[nodiscard]] double non_negative() const {
        const double v = number();
        if (!(v >= 0)) fail("must be >= 0, got " + std::to_string(v));
        return v;
    }
    /// The same, at most `max` (a limit of core/limits.hpp, so that no unit overflows).
    [[nodiscard]] double positive(double max) const { return at_most(positive(), max); }
    [[nodiscard]] double non_negative(double max) const { return at_most(non_negative(), max); }
    /// 0 (unknown), or in [min, max].
    [[nodiscard]] double zero_or_within(double min, double max) const {
        const double v = non_negative(max);
        if (v > 0 && v < min) {
            std::ostringstream m;
            m << v << " is below the limit " << min << " (0 means unknown; docs/formats.md, limits)";
            fail(m.str());
        }
        return v;
    }
    /// A number of magnitude at most `max` (fits, whose terms may be negative).
    [[nodiscard]] double bounded(double max) const {
        const double v = number();
        return v < 0 ? -at_most(-v, max) : at_most(v, max);
    }
    [[nodiscard]] int integer(int min = INT_MIN, int max = INT_MAX) const {
        const double v = number();
        if (v != std::floor(v) || v < min || v > max)
            fail("expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + j_->dump());
        return static_cast<int>(v);
    }
    [[nodiscard]] std::string string() const {
        if (!j_->is_string()) fail("expected a string, got " + std::string(j_->type_name()));
        return j_->get<std::string>();
    }
    [[nodiscard]] bool boolean() const {
        if (!j_->is_boolean()) fail("expected true or false, got " + std::string(j_->type_name()));
        return j_->get<bool>();
    }
    /// Integer-valued key of an object member (published formats key sizes by "1", "2", ...).
    [[nodiscard]] static int integer_key(const std::string& key, const cursor& owner) {
        try {
            std::size_t used = 0;
            const int v = std::stoi(key, &used);
            if (used == key.size()) return v;
        } catch (const std::exception&) {
        }
        owner.fail("key '" + key + "' is not an integer");
    }

    /// Every member of this object is one of `known` (or starts with '_', a comment): an unknown
    /// key is a typo or a field this reader does not honour, so it is refused, naming the
    /// nearest known field.
    void known_fields(std::initializer_list<std::string_view> known, std::span<const std::string_view> more = {}) const {
        expect_object();
        std::vector<std::string_view> all(known);
        all.insert(all.end(), more.begin(), more.end());
        for (auto it = j_->begin(); it != j_->end(); ++it) {
            const std::string& key = it.key();
            if (key.starts_with('_') || std::find(all.begin(), all.end(), key) != all.end()) continue;
            std::string msg = "unknown field '" + key + "'";
            if (auto n = nearest_name(key, all)) {
                msg += " (did you mean '" + std::string(*n) + "'?)";
            } else {
                msg += "; this object takes";
                for (std::string_view k : all) msg += " '" + std::string(k) + "'";
            }
            cursor(*it, source_, path_ + "." + key).fail(msg);
        }
    }

    void expect_object() const {
        if (!j_->is_object()) fail("expected an object, got " + std::string(j_->type_name()));
    }
    void expect_array() const {
        if (!j_->is_array()) fail("expected an array, got " + std::string(j_->type_name()));
    }

private:
    [[nodiscard]] double at_most(double v, double max) const {
        if (v > max) {
            std::ostringstream m;
            m << v << " is beyond the limit " << max << " (docs/formats.md, limits)";
            fail(m.str());
        }
        return v;
    }
    const json* j_;
    std::string source_, path_;
};

/// Optional field with a default.
inline double number_or(const cursor& c, std::string_view key, double fallback) {
    auto f = c.find(key);
    return f ? f->number() : fallback;
}
inline bool bool_or(const cursor& c, std::string_view key, bool fallback) {
    auto f = c.find(key);
    return f ? f->boolean() : fallback;
}

}  // namespace hetplan::io
