// Tuning's fields by name: one table gives each field's name, its text and how it is parsed, for
// overrides (clfilter-bench --tuning) and for printing a device's tuning.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <sstream>

#include "clf/device.hpp"
#include "clf/error.hpp"

namespace clf {
namespace {

struct Field {
  const char* name;
  const char* form;  // what a value looks like, for errors
  std::function<std::string(const Tuning&)> get;
  std::function<void(Tuning&, const std::string&)> set;
};

Error bad_value(const std::string& name, const std::string& value, const char* form) {
  return Error(ErrorKind::usage,
               "tuning " + name + ": expected " + form + " (got '" + value + "')");
}

long whole(const std::string& name, const std::string& value, long min) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end || errno || v < min || v > (1 << 20))
    throw bad_value(name, value, min < 0 ? "a whole number" : "a whole number >= 0");
  return v;
}

// "4:8 9:16" and back: entries of whole numbers joined by ':', separated by spaces.
std::vector<std::vector<int>> entries(const std::string& name, const std::string& value,
                                      size_t parts, const char* form) {
  std::vector<std::vector<int>> all;
  std::istringstream words(value);
  for (std::string word; words >> word;) {
    std::vector<int> entry;
    std::istringstream numbers(word);
    for (std::string n; std::getline(numbers, n, ':');) entry.push_back(int(whole(name, n, 0)));
    if (entry.size() != parts) throw bad_value(name, value, form);
    all.push_back(entry);
  }
  return all;
}

template <class T>
Field int_field(const char* name, T Tuning::*member, long min = 0) {
  return {
      name, min < 0 ? "a whole number" : "a whole number >= 0",
      [member](const Tuning& t) { return std::to_string(t.*member); },
      [name, member, min](Tuning& t, const std::string& v) { t.*member = T(whole(name, v, min)); }};
}

Field bool_field(const char* name, bool Tuning::*member) {
  return {name, "0 or 1", [member](const Tuning& t) { return std::string(t.*member ? "1" : "0"); },
          [name, member](Tuning& t, const std::string& v) {
            if (v != "0" && v != "1") throw bad_value(name, v, "0 or 1");
            t.*member = v == "1";
          }};
}

Field variant_field(const char* name, Variant Tuning::*member) {
  return {name, "direct or tiled",
          [member](const Tuning& t) { return std::string(variant_name(t.*member)); },
          [name, member](Tuning& t, const std::string& v) {
            if (v != "direct" && v != "tiled") throw bad_value(name, v, "direct or tiled");
            t.*member = v == "tiled" ? Variant::tiled : Variant::direct;
          }};
}

// A finite number, the whole of `text`.
bool number(const std::string& text, double& value) {
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return !text.empty() && !*end && std::isfinite(value);
}

Field double_field(const char* name, double Tuning::*member) {
  return {name, "a number >= 0",
          [member](const Tuning& t) {
            std::ostringstream text;
            text << t.*member;
            return text.str();
          },
          [name, member](Tuning& t, const std::string& v) {
            double d = 0;
            if (!number(v, d) || d < 0) throw bad_value(name, v, "a number >= 0");
            t.*member = d;
          }};
}

// A table of entries whose whole-number members `parts` are joined by ':', entries by spaces.
template <class Entry>
Field table_field(const char* name, const char* form, std::vector<Entry> Tuning::*member,
                  std::vector<int Entry::*> parts) {
  return {name, form,
          [member, parts](const Tuning& t) {
            std::string text;
            for (const Entry& e : t.*member) {
              std::string entry;
              for (int Entry::*part : parts)
                entry += (entry.empty() ? "" : ":") + std::to_string(e.*part);
              text += (text.empty() ? "" : " ") + entry;
            }
            return text;
          },
          [name, form, member, parts](Tuning& t, const std::string& v) {
            std::vector<Entry> table;
            for (const auto& numbers : entries(name, v, parts.size(), form)) {
              Entry e{};
              for (size_t i = 0; i < parts.size(); ++i) e.*parts[i] = numbers[i];
              table.push_back(e);
            }
            t.*member = table;
          }};
}

const std::vector<Field>& fields() {
  static const std::vector<Field> all = {
      variant_field("variant", &Tuning::variant),
      int_field("tile_width", &Tuning::tile_width),
      int_field("tile_height", &Tuning::tile_height),
      int_field("group_width", &Tuning::group_width),
      int_field("vector_width", &Tuning::vector_width),
      int_field("vectors", &Tuning::vectors),
      int_field("vectors_min_taps", &Tuning::vectors_min_taps),
      int_field("radius_arg_above", &Tuning::radius_arg_above, -1),
      int_field("blocked_max_radius", &Tuning::blocked_max_radius),
      table_field("block_rows", "entries MIN_RADIUS:ROWS, e.g. '4:8 9:16'", &Tuning::block_rows,
                  {&Tuning::BlockRows::min_radius, &Tuning::BlockRows::rows}),
      int_field("extremum_block_rows", &Tuning::extremum_block_rows),
      int_field("separable_rows", &Tuning::separable_rows),
      int_field("separable_max_radius", &Tuning::separable_max_radius),
      variant_field("separable_variant", &Tuning::separable_variant),
      int_field("separable_tile_width", &Tuning::separable_tile_width),
      int_field("separable_tile_rows", &Tuning::separable_tile_rows),
      int_field("separable_block_rows", &Tuning::separable_block_rows),
      int_field("separable_literal_tile_rows", &Tuning::separable_literal_tile_rows),
      int_field("separable_arg_block_rows", &Tuning::separable_arg_block_rows),
      int_field("separable_min_tile_width", &Tuning::separable_min_tile_width),
      int_field("separable_steps", &Tuning::separable_steps),
      table_field("separable_columns", "entries MIN_RADIUS:WIDTH:ROWS, e.g. '5:256:16 21:0:0'",
                  &Tuning::separable_columns,
                  {&Tuning::SeparableColumns::min_radius, &Tuning::SeparableColumns::width,
                   &Tuning::SeparableColumns::rows}),
      int_field("separable_columns_tile_rows", &Tuning::separable_columns_tile_rows),
      bool_field("taps_by_value", &Tuning::taps_by_value),
      bool_field("stage_with_loads", &Tuning::stage_with_loads),
      double_field("fft_tap_cost", &Tuning::fft_tap_cost),
  };
  return all;
}

const Field& field(const std::string& name) {
  for (const Field& f : fields())
    if (name == f.name) return f;
  std::string names;
  for (const Field& f : fields()) names += (names.empty() ? "" : ", ") + std::string(f.name);
  throw Error(ErrorKind::usage, "unknown tuning field '" + name + "' (fields: " + names + ")");
}

bool is_knob(const std::string& name) { return name.find('.') != std::string::npos; }

}  // namespace

std::vector<std::string> tuning_field_names() {
  std::vector<std::string> names;
  for (const Field& f : fields()) names.push_back(f.name);
  return names;
}

std::string tuning_field(const Tuning& tuning, const std::string& name) {
  if (!is_knob(name)) return field(name).get(tuning);
  const auto knob = tuning.knobs.find(name);
  if (knob == tuning.knobs.end())
    throw Error(ErrorKind::usage, "no tuning knob '" + name + "' is set");
  return knob->second;
}

void set_tuning_field(Tuning& tuning, const std::string& name, const std::string& value) {
  if (!is_knob(name)) return field(name).set(tuning, value);
  double d = 0;  // a plugin's knob: a number, any sign
  if (!number(value, d)) throw bad_value(name, value, "a number");
  tuning.knobs[name] = value;
}

std::string tuning_value(const Tuning& tuning, const std::string& name,
                         const std::string& fallback) {
  if (is_knob(name) && !tuning.knobs.count(name)) return fallback;
  return tuning_field(tuning, name);
}

double tuning_number(const Tuning& tuning, const std::string& name, double fallback) {
  const std::string text = tuning_value(tuning, name);
  if (text.empty()) return fallback;
  double value = 0;
  if (!number(text, value))
    throw Error(ErrorKind::usage, "tuning " + name + " is '" + text + "', not a number");
  return value;
}

void apply_tuning_text(Tuning& tuning, const std::string& text) {
  std::istringstream pairs(text);
  for (std::string pair; std::getline(pairs, pair, ',');) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos)
      throw Error(ErrorKind::usage, "tuning: expected NAME=VALUE (got '" + pair + "')");
    set_tuning_field(tuning, pair.substr(0, eq), pair.substr(eq + 1));
  }
}

std::string tuning_text(const Tuning& tuning) {
  std::string text;
  for (const Field& f : fields())
    text += (text.empty() ? "" : ",") + std::string(f.name) + "=" + f.get(tuning);
  for (const auto& [name, value] : tuning.knobs) text += "," + name + "=" + value;
  return text;
}

}  // namespace clf
