// lab.json's fields checked when a lab is loaded (internal.h): each field a check or the lab
// reads has a kind and a range, so a field of the wrong type or out of range is a set-up
// error naming it ("checks[1].max: a whole number from 0 up, not -5"), never a check that
// passes anything (issue 32: a negative `max` passed every program). Fields nobody reads
// (a check's "look", notes for the teacher) are left alone.
#include <set>

#include "labs/runner/internal.h"

namespace descent::labs {
namespace {

enum class Kind { String, Strings, Bool, Int, Number, Engines, Hidden, Dims };

struct Field {
  const char* name;
  Kind kind;
  double min = 0;  // Int and Number: the smallest allowed (Number: exclusive when `above`)
  bool above = false;
  bool required = false;
};

// What each check type reads (docs/labs.md's table of checks), beyond name, type and points.
const std::map<std::string, std::vector<Field>>& check_fields() {
  static const std::map<std::string, std::vector<Field>> t = {
      {"output", {{"file", Kind::String}, {"engines", Kind::Engines}, {"expect", Kind::String},
                  {"driver", Kind::String}, {"reference", Kind::String}, {"hidden", Kind::Hidden}}},
      {"output_close", {{"file", Kind::String}, {"append", Kind::String}, {"reference", Kind::String, 0, false, true},
                        {"reference_dir", Kind::String}, {"engines", Kind::Engines}, {"rtol", Kind::Number}}},
      {"reaches", {{"file", Kind::String}, {"append", Kind::String, 0, false, true}, {"engine", Kind::String},
                   {"device", Kind::String}, {"at_least", Kind::Number, 0, false, true}, {"seconds", Kind::Number, 0, true}}},
      {"max_steps", {{"file", Kind::String}, {"engine", Kind::String}, {"max", Kind::Int, 0, false, true}}},
      {"no_spills", {{"file", Kind::String}, {"registers", Kind::Int, 1}}},
      {"schedule_runs", {{"file", Kind::String}, {"devices", Kind::Strings}}},
      {"nest_equals", {{"file", Kind::String}, {"target", Kind::String}}},
      {"source_lacks", {{"file", Kind::String}, {"words", Kind::Strings}}},
      {"answer", {{"file", Kind::String}, {"key", Kind::String, 0, false, true}, {"ask", Kind::String},
                  {"unordered", Kind::Bool}, {"opt", Kind::Int}, {"input", Kind::Int, 1}}},
      {"cpp", {{"case", Kind::String, 0, false, true}}},
      {"max_kernels", {{"file", Kind::String}, {"append", Kind::String}, {"max", Kind::Int, 0, false, true}}},
      {"aot_output", {{"file", Kind::String}, {"expect", Kind::String}}},
      {"speed", {{"file", Kind::String}, {"reference", Kind::String}, {"min_ratio", Kind::Number, 0, true},
                 {"rounds", Kind::Int, 1}, {"repeats", Kind::Int, 1}}},
      {"space_samples", {{"file", Kind::String}, {"samples", Kind::Int, 1}, {"seed", Kind::Int}, {"devices", Kind::Strings}}},
      {"space_choices", {{"file", Kind::String}, {"samples", Kind::Int, 1}, {"seed", Kind::Int},
                         {"min_decisions", Kind::Int}, {"min_distinct", Kind::Int}}},
      {"space_reaches", {{"file", Kind::String}, {"target", Kind::String}, {"max_schedules", Kind::Int, 1}}}};
  return t;
}

// The lab's own fields (title, tier, order, files and checks are read by load_labs itself).
const std::vector<Field>& lab_fields() {
  static const std::vector<Field> t = {
      {"kind", Kind::String},          {"concepts", Kind::Strings},   {"hints", Kind::Strings},
      {"program", Kind::String},       {"kernel", Kind::String},      {"dims", Kind::Dims},
      {"libraries", Kind::Strings},    {"harness", Kind::String},     {"harness_args", Kind::Strings},
      {"data", Kind::Strings},         {"extras", Kind::Strings},     {"forbidden_symbols", Kind::Strings},
      {"starter_fails", Kind::Strings}, {"pane", Kind::String}};
  return t;
}

std::string shown(const nlohmann::json& v) {
  std::string s = v.dump();
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

// "" when `v` is a right value for the field, else what it should be.
std::string wrong(const Field& f, const nlohmann::json& v) {
  auto whole = [](const nlohmann::json& x) { return x.is_number_integer() || x.is_number_unsigned(); };
  switch (f.kind) {
    case Kind::String:
      return v.is_string() ? "" : "a string";
    case Kind::Strings: {
      bool ok = v.is_array();
      if (ok)
        for (const auto& x : v) ok = ok && x.is_string();
      return ok ? "" : "a list of strings";
    }
    case Kind::Bool:
      return v.is_boolean() ? "" : "true or false";
    case Kind::Int:
      if (!whole(v) || v.get<double>() < f.min) return fmt::format("a whole number from {:g} up", f.min);
      return "";
    case Kind::Number:
      if (!v.is_number() || (f.above ? v.get<double>() <= f.min : v.get<double>() < f.min))
        return fmt::format("a number {} {:g}", f.above ? "above" : "from", f.min);
      return "";
    case Kind::Engines: {
      static const std::set<std::string> kEngines = {"ast", "stack", "reg", "jit", "native"};
      bool ok = v.is_array() && !v.empty();
      if (ok)
        for (const auto& x : v) ok = ok && x.is_string() && kEngines.count(x.get<std::string>());
      return ok ? "" : "a list of engines (ast, stack, reg, jit, native)";
    }
    case Kind::Hidden: {
      bool ok = v.is_object();
      if (ok)
        for (const auto& [k, r] : v.items())
          ok = ok && r.is_array() && r.size() == 2 && whole(r[0]) && whole(r[1]) &&
               r[0].get<int64_t>() <= r[1].get<int64_t>();
      return ok ? "" : "an object of NAME: [LOW, HIGH] whole numbers, LOW <= HIGH";
    }
    case Kind::Dims: {
      bool ok = v.is_object();
      if (ok)
        for (const auto& [k, d] : v.items()) ok = ok && whole(d) && d.get<int64_t>() > 0;
      return ok ? "" : "an object of NAME: size, each a whole number above 0";
    }
  }
  return "";
}

bool check_fields_of(const nlohmann::json& j, const std::vector<Field>& fields, const std::string& where,
                     std::string* error) {
  for (const auto& f : fields) {
    if (!j.contains(f.name)) {
      if (!f.required) continue;
      *error = fmt::format("{}{} is missing", where, f.name);
      return false;
    }
    std::string want = wrong(f, j.at(f.name));
    if (!want.empty()) {
      *error = fmt::format("{}{}: {}, not {}", where, f.name, want, shown(j.at(f.name)));
      return false;
    }
  }
  return true;
}

}  // namespace

bool validate_lab_json(const nlohmann::json& j, std::string* error) {
  if (!check_fields_of(j, lab_fields(), "", error)) return false;
  if (j.at("files").empty()) {
    *error = "files: a lab needs at least one file the student edits";
    return false;
  }
  const auto& checks = j.at("checks");
  if (!checks.is_array() || checks.empty()) {
    *error = "checks: a list of at least one check";
    return false;
  }
  for (size_t i = 0; i < checks.size(); ++i) {
    const auto& c = checks[i];
    std::string where = fmt::format("checks[{}].", i);
    if (!c.is_object()) {
      *error = fmt::format("checks[{}]: an object with a name and a type", i);
      return false;
    }
    if (c.contains("points") && !wrong(Field{"points", Kind::Int, 0}, c.at("points")).empty()) {
      *error = fmt::format("{}points: a whole number from 0 up, not {}", where, shown(c.at("points")));
      return false;
    }
    if (!c.contains("type") || !c.at("type").is_string()) continue;  // load_labs names it
    auto it = check_fields().find(c.at("type").get<std::string>());
    if (it != check_fields().end() && !check_fields_of(c, it->second, where, error)) return false;
  }
  return true;
}

}  // namespace descent::labs
