// Grading a class (lab.h): the grade CSV, a job array's share of the students, and merging
// the shares back into one CSV.
#include <algorithm>
#include <map>
#include <set>

#include "labs/runner/internal.h"
#include "lang/text.h"

namespace descent::labs {
namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string csv_row(const std::vector<std::string>& fields) {
  std::string row;
  for (size_t i = 0; i < fields.size(); ++i) row += (i ? "," : "") + csv_field(fields[i]);
  return row + "\n";
}

// The CSV's rows as fields (RFC 4180: quoted fields may hold commas, quotes and newlines).
// False for a quote left open.
bool parse_csv(const std::string& text, std::vector<std::vector<std::string>>* rows) {
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (quoted) {
      if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        field += ch;
      }
      continue;
    }
    if (ch == '"') {
      quoted = any = true;
    } else if (ch == ',') {
      row.push_back(field);
      field.clear();
      any = true;
    } else if (ch == '\n') {
      row.push_back(field);
      rows->push_back(row);
      row.clear();
      field.clear();
      any = false;
    } else if (ch != '\r') {
      field += ch;
      any = true;
    }
  }
  if (quoted) return false;
  if (any) {
    row.push_back(field);
    rows->push_back(row);
  }
  return true;
}

std::string first_line(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

std::string student_name(const std::string& dir) {
  fs::path p(dir);
  std::string name = p.filename().string();
  if (name.empty()) name = p.parent_path().filename().string();
  return name;
}

// The students in the order every grade run uses: by folder name, then by path.
std::vector<std::string> ordered(const std::vector<std::string>& dirs) {
  std::vector<std::string> out = dirs;
  std::stable_sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    std::string x = student_name(a), y = student_name(b);
    return x != y ? x < y : a < b;
  });
  return out;
}

// A student's rows: per lab found, one per check and a total; a folder that is no lab, one.
std::string grade_student(const std::vector<Lab>& labs, const std::string& dir, const CheckOptions& opts) {
  std::string student = student_name(dir), csv;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return csv_row({student, "", "", "0", "0", "not a lab", dir + ": no such folder", "", "", "", "", ""});
  std::set<std::string> names;
  for (const auto& lab : labs) names.insert(lab.name);
  // What the student's folder holds that is not a lab: said, not skipped.
  std::vector<std::string> others;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (!e.is_directory() || names.count(name) || name[0] == '.') continue;
    others.push_back(name);
  }
  std::sort(others.begin(), others.end());
  int found = 0;
  for (const auto& lab : labs) {
    fs::path work = fs::path(dir) / lab.name;
    if (!fs::is_directory(work, ec)) continue;
    ++found;
    LabReport r = check_lab(lab, work.string(), opts);
    for (const auto& c : r.checks)
      csv += csv_row({student, lab.name, c.name, std::to_string(c.points), std::to_string(c.max_points), c.status,
                      first_line(c.reason), c.measured, "", "", "", ""});
    std::string status = !r.setup_error.empty() ? "error" : r.passed() ? "pass" : "fail";
    csv += csv_row({student, lab.name, "total", std::to_string(r.points), std::to_string(r.max_points), status,
                    first_line(r.setup_error), "", std::to_string(r.hints_taken), std::to_string(r.attempts),
                    r.sandbox, std::to_string(r.seed)});
  }
  std::vector<std::string> lab_names(names.begin(), names.end());
  for (const auto& o : others) {
    std::string near = closest_name(o, lab_names);
    csv += csv_row({student, o, "", "0", "0", "not a lab",
                    fmt::format("no lab is called '{}'{}", o, near.empty() ? "" : "; did you mean '" + near + "'?"),
                    "", "", "", "", ""});
  }
  if (found == 0 && others.empty())
    csv += csv_row({student, "", "", "0", "0", "not a lab",
                    "the folder holds no lab's folder (`descent lab start NAME --dir " + dir + "/NAME` makes one)",
                    "", "", "", "", ""});
  return csv;
}

}  // namespace

std::string grade_csv_header() {
  return "student,lab,check,points,max_points,status,reason,measured,hints,attempts,sandbox,seed\n";
}

std::vector<std::string> shard_of(const std::vector<std::string>& student_dirs, int index, int count) {
  std::vector<std::string> all = ordered(student_dirs), out;
  if (count < 1) count = 1;
  for (size_t i = 0; i < all.size(); ++i)
    if (int(i % size_t(count)) == index) out.push_back(all[i]);
  return out;
}

std::string grade_csv(const std::vector<Lab>& labs, const std::vector<std::string>& student_dirs,
                      const GradeOptions& options) {
  std::string csv = grade_csv_header();
  CheckOptions opts = options.check;
  opts.log_attempts = false;  // grading is not an attempt of the student's
  for (const auto& dir : shard_of(student_dirs, options.shard_index, options.shard_count))
    csv += grade_student(labs, dir, opts);
  return csv;
}

std::string grade_csv(const std::vector<Lab>& labs, const std::vector<std::string>& student_dirs) {
  GradeOptions o;
  o.check.speed_tries = 3;
  return grade_csv(labs, student_dirs, o);
}

bool merge_grade_csvs(const std::vector<std::string>& csv_texts, std::string* out, std::string* error) {
  std::vector<std::vector<std::string>> header_rows;
  parse_csv(grade_csv_header(), &header_rows);
  const std::vector<std::string>& header = header_rows[0];
  std::map<std::string, std::pair<size_t, std::string>> students;  // name -> (file, rows)
  for (size_t k = 0; k < csv_texts.size(); ++k) {
    std::vector<std::vector<std::string>> rows;
    if (!parse_csv(csv_texts[k], &rows)) {
      *error = fmt::format("file {}: a quoted field is never closed", k + 1);
      return false;
    }
    if (rows.empty() || rows[0] != header) {
      *error = fmt::format("file {}: not a grade CSV of `descent lab grade` (its first line should be: {})", k + 1,
                           first_line(grade_csv_header()));
      return false;
    }
    std::string last;
    for (size_t i = 1; i < rows.size(); ++i) {
      const auto& row = rows[i];
      if (row.size() != header.size()) {
        *error = fmt::format("file {}, line {}: {} fields where the header has {}", k + 1, i + 1, row.size(),
                             header.size());
        return false;
      }
      auto it = students.find(row[0]);
      if (it != students.end() && it->second.first != k) {
        *error = fmt::format("student '{}' is in file {} and in file {}: were two shards given the same index?",
                             row[0], it->second.first + 1, k + 1);
        return false;
      }
      auto& entry = students[row[0]];
      entry.first = k;
      entry.second += csv_row(row);
    }
  }
  *out = grade_csv_header();
  for (const auto& [name, entry] : students) *out += entry.second;
  return true;
}

}  // namespace descent::labs
