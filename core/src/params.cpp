// Parameter parsing and validation driven by ParamSpec data, and the --filter text syntax.
#include "clf/params.hpp"

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "clf/error.hpp"
#include "nearest_name.hpp"
#include "util.hpp"

namespace clf {
using detail::join;
using detail::trim;
namespace {

Error usage(const std::string& message) { return Error(ErrorKind::usage, message); }

// Parses a whole string as a finite double; false for trailing junk, NaN, inf, empty.
bool parse_double(const std::string& text, double& value) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size() && errno != ERANGE && std::isfinite(value);
}

// Kernels compute in 32-bit float: a value past FLT_MAX would reach them as inf.
bool fits_float(double v) { return std::abs(v) <= double(FLT_MAX); }

std::string format_number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

}  // namespace

const char* param_type_name(ParamType type) {
  switch (type) {
    case ParamType::float_:
      return "float";
    case ParamType::int_:
      return "int";
    case ParamType::bool_:
      return "bool";
    case ParamType::enum_:
      return "enum";
    case ParamType::matrix:
      return "matrix";
    case ParamType::string:
      return "string";
  }
  return "?";
}

std::string ParamSpec::range_text() const {
  std::string text;
  if (std::isfinite(min)) text = (min_exclusive ? "> " : ">= ") + format_number(min);
  if (std::isfinite(max))
    text += (text.empty() ? "" : " and ") + std::string(max_exclusive ? "< " : "<= ") +
            format_number(max);
  return text.empty() ? "any" : text;
}

Matrix parse_matrix(const std::string& text, const std::string& what, bool quote) {
  Matrix m;
  std::vector<std::string> rows;
  std::string row;
  std::istringstream lines(text);
  while (std::getline(lines, row, ';'))
    for (std::istringstream sub(row); std::getline(sub, row, '\n');)
      if (!trim(row).empty()) rows.push_back(row);
  if (rows.empty()) throw usage(what + ": empty matrix (expected rows like 1,2,1;2,4,2;1,2,1)");
  for (size_t r = 0; r < rows.size(); ++r) {
    std::string cleaned = rows[r];
    std::replace(cleaned.begin(), cleaned.end(), ',', ' ');
    std::istringstream cells(cleaned);
    std::string cell;
    int cols = 0;
    while (cells >> cell) {
      double v = 0;
      const std::string where = (quote ? "'" + cell + "'" : "value " + std::to_string(cols + 1)) +
                                " in row " + std::to_string(r + 1);
      if (!parse_double(cell, v)) throw usage(what + ": " + where + " is not a finite number");
      if (!fits_float(v))
        throw usage(what + ": " + where +
                    " does not fit a 32-bit float (magnitude at most 3.4e38)");
      m.values.push_back(v);
      ++cols;
    }
    if (r == 0) m.cols = cols;
    if (cols != m.cols)
      throw usage(what + ": row " + std::to_string(r + 1) + " has " + std::to_string(cols) +
                  " values, row 1 has " + std::to_string(m.cols) +
                  " (a matrix must be rectangular)");
  }
  m.rows = int(rows.size());
  return m;
}

bool Params::given(const std::string& name) const {
  auto it = given_.find(name);
  return it != given_.end() && it->second;
}

bool Params::has(const std::string& name) const { return values_.count(name) != 0; }

const std::string& Params::get_string(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end())
    throw Error(ErrorKind::usage, filter_ + ": parameter '" + name + "' has no value");
  return it->second;
}

double Params::get_float(const std::string& name) const {
  double v = 0;
  parse_double(get_string(name), v);  // validated already
  return v;
}

int Params::get_int(const std::string& name) const {
  const double v = get_float(name);
  if (!(v >= double(INT_MIN) && v <= double(INT_MAX)))  // only a float parameter read as an int
    throw usage(filter_ + ": " + name + " must be a whole number within 32 bits (got " +
                format_number(v) + ")");
  return int(std::lround(v));
}

bool Params::get_bool(const std::string& name) const {
  const std::string& v = get_string(name);
  return v == "true" || v == "1" || v == "yes" || v == "on";
}

Matrix Params::get_matrix(const std::string& name) const {
  return parse_matrix(get_string(name), filter_ + ": " + name);
}

Params validate_params(const std::string& filter, const std::vector<ParamSpec>& specs,
                       const std::map<std::string, std::string>& given) {
  Params params;
  params.filter_ = filter;
  std::vector<std::string> known;
  for (const auto& spec : specs) known.push_back(spec.name);
  for (const auto& [name, value] : given)
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw usage(filter + ": unknown parameter '" + name + "'" + did_you_mean(name, known) +
                  " (known: " + join(known) + ")");

  for (const auto& spec : specs) {
    auto it = given.find(spec.name);
    const bool user = it != given.end();
    if (!user && spec.default_value.empty()) continue;
    const std::string value = user ? trim(it->second) : spec.default_value;
    const std::string where = filter + ": " + spec.name;
    switch (spec.type) {
      case ParamType::float_:
      case ParamType::int_: {
        double v = 0;
        if (!parse_double(value, v))
          throw usage(where + " must be a finite number (got '" + value + "')");
        if (spec.type == ParamType::int_ && v != std::floor(v))
          throw usage(where + " must be a whole number (got '" + value + "')");
        if (spec.type == ParamType::int_ && (v < double(INT_MIN) || v > double(INT_MAX)))
          throw usage(where + " must fit a 32-bit int (got " + value + ")");
        if (!fits_float(v))
          throw usage(where + " must fit a 32-bit float, magnitude at most 3.4e38 (got " + value +
                      ")");
        if (!spec.in_range(v))
          throw usage(where + " must be " + spec.range_text() + " (got " + value + ")");
        break;
      }
      case ParamType::bool_: {
        static const char* ok[] = {"true", "false", "1", "0", "yes", "no", "on", "off"};
        if (std::find(std::begin(ok), std::end(ok), value) == std::end(ok))
          throw usage(where + " must be true or false (got '" + value + "')");
        break;
      }
      case ParamType::enum_:
        if (std::find(spec.choices.begin(), spec.choices.end(), value) == spec.choices.end())
          throw usage(where + " must be one of " + join(spec.choices, "|") + " (got '" + value +
                      "'" + did_you_mean(value, spec.choices) + ")");
        break;
      case ParamType::matrix:
        parse_matrix(value, where);
        break;
      case ParamType::string:
        if (value.empty()) throw usage(where + " must not be empty");
        break;
    }
    params.values_[spec.name] = value;
    params.given_[spec.name] = user;
  }
  return params;
}

FilterSpec parse_filter_spec(const std::string& text) {
  FilterSpec spec;
  const auto colon = text.find(':');
  spec.name = trim(text.substr(0, colon));
  if (spec.name.empty())
    throw usage("--filter '" + text +
                "': expected NAME or NAME:key=value,... (e.g. gaussian:sigma=2)");
  if (colon == std::string::npos) return spec;
  std::string last_key;
  std::istringstream pieces(text.substr(colon + 1));
  std::string piece;
  while (std::getline(pieces, piece, ',')) {
    const auto eq = piece.find('=');
    if (eq == std::string::npos) {
      if (last_key.empty() && trim(piece).empty()) continue;
      if (last_key.empty())
        throw usage("--filter '" + text + "': '" + trim(piece) + "' is not key=value");
      spec.params[last_key] += "," + piece;  // continuation of a matrix value
      continue;
    }
    const std::string key = trim(piece.substr(0, eq));
    if (key.empty()) throw usage("--filter '" + text + "': missing parameter name before '='");
    if (spec.params.count(key))
      throw usage("--filter '" + text + "': parameter '" + key + "' given twice");
    spec.params[key] = piece.substr(eq + 1);
    last_key = key;
  }
  return spec;
}

}  // namespace clf
