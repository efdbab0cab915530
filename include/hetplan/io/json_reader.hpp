#pragma once
// Reading JSON with errors that say which file, which JSON path and what was wrong.
#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hetplan/core/error.hpp"

namespace hetplan::io {

using json = nlohmann::json;

/// Reads and parses a file; malformed JSON reports the byte offset.
inline json parse_file(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw input_error(file.string(), {}, "cannot open file");
    std::stringstream buf;
    buf << in.rdbuf();
    try {
        return json::parse(buf.str());
    } catch (const json::exception& e) {  // syntax errors and out-of-range numbers alike
        throw input_error(file.string(), {}, std::string("malformed JSON: ") + e.what());
    }
}
inline json parse_text(std::string_view text, const std::string& source) {
    try {
        return json::parse(text);
    } catch (const json::exception& e) {
        throw input_error(source, {}, std::string("malformed JSON: ") + e.what());
    }
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

    void expect_object() const {
        if (!j_->is_object()) fail("expected an object, got " + std::string(j_->type_name()));
    }
    void expect_array() const {
        if (!j_->is_array()) fail("expected an array, got " + std::string(j_->type_name()));
    }

private:
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
