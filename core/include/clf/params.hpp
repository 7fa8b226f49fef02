// Filter parameters: what a filter accepts (ParamSpec, data a plugin returns), the values after
// validation (Params), matrix literals, and the --filter text syntax.
#pragma once
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace clf {

enum class ParamType { float_, int_, bool_, enum_, matrix, string };
const char* param_type_name(ParamType type);

// One parameter, best written with the named setters:
//   ParamSpec::number("sigma", "standard deviation in pixels").fallback("1").above(0).at_most(128)
// Bounds are for float and int parameters; without one, that side is open.
struct ParamSpec {
  std::string name;
  ParamType type = ParamType::float_;
  std::string default_value;  // "" = no default (optional unless required)
  std::string help;
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;  // enum values
  bool min_exclusive = false, max_exclusive = false;

  static ParamSpec number(std::string name, std::string help) {
    return make(name, ParamType::float_, help);
  }
  static ParamSpec integer(std::string name, std::string help) {
    return make(name, ParamType::int_, help);
  }
  static ParamSpec flag(std::string name, std::string help) {
    return make(name, ParamType::bool_, help);
  }
  static ParamSpec text(std::string name, std::string help) {
    return make(name, ParamType::string, help);
  }
  static ParamSpec matrix_of(std::string name, std::string help) {
    return make(name, ParamType::matrix, help);
  }
  static ParamSpec one_of(std::string name, std::vector<std::string> values, std::string help) {
    ParamSpec spec = make(name, ParamType::enum_, help);
    spec.choices = std::move(values);
    return spec;
  }
  ParamSpec& fallback(std::string value) { return default_value = std::move(value), *this; }
  ParamSpec& at_least(double v) { return min = v, min_exclusive = false, *this; }
  ParamSpec& above(double v) { return min = v, min_exclusive = true, *this; }
  ParamSpec& at_most(double v) { return max = v, max_exclusive = false, *this; }
  ParamSpec& below(double v) { return max = v, max_exclusive = true, *this; }
  bool in_range(double v) const {
    return (min_exclusive ? v > min : v >= min) && (max_exclusive ? v < max : v <= max);
  }
  // "> 0 and <= 128", ">= 1", "any" (for --list-filters and errors).
  std::string range_text() const;

 private:
  static ParamSpec make(std::string& name, ParamType type, std::string& help) {
    ParamSpec spec;
    spec.name = std::move(name);
    spec.type = type;
    spec.help = std::move(help);
    return spec;
  }
};

// A matrix literal "1,2,1;2,4,2;1,2,1": rows separated by ';', values by ',' or spaces, each a
// finite number that fits a 32-bit float. Errors quote the offending text unless !quote (text read
// from a file the user named: its contents are not echoed).
struct Matrix {
  int rows = 0, cols = 0;
  std::vector<double> values;  // row-major
  double at(int r, int c) const { return values[size_t(r) * cols + c]; }
};
Matrix parse_matrix(const std::string& text, const std::string& what, bool quote = true);

// Parameters after validation against their specs: every value parsed, in range, defaulted.
class Params {
 public:
  bool given(const std::string& name) const;  // set by the user, not defaulted
  bool has(const std::string& name) const;    // given or defaulted
  double get_float(const std::string& name) const;
  int get_int(const std::string& name) const;
  bool get_bool(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;  // enum and string values
  Matrix get_matrix(const std::string& name) const;
  const std::map<std::string, std::string>& raw() const { return values_; }

 private:
  friend Params validate_params(const std::string&, const std::vector<ParamSpec>&,
                                const std::map<std::string, std::string>&);
  std::string filter_;
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> given_;
};

// Checks every given value against its spec (unknown names, bad numbers, NaN/inf, numbers past a
// 32-bit float or, for ints, a 32-bit int, ranges, enum choices, matrix syntax) and fills defaults.
// Errors (Error(usage)) name the filter and the parameter.
Params validate_params(const std::string& filter, const std::vector<ParamSpec>& specs,
                       const std::map<std::string, std::string>& given);

// "gaussian:sigma=2,border=wrap" -> name + key/value map. A comma-separated piece without '=' is
// part of the previous value, so matrix literals need no quoting: "convolve:kernel=1,2,1;2,4,2".
struct FilterSpec {
  std::string name;
  std::map<std::string, std::string> params;
};
FilterSpec parse_filter_spec(const std::string& text);

}  // namespace clf
