// The tuning database: JSON Lines read and written with nlohmann-json.
#include "tune/database.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace descent::tune {

std::string record_line(const Record& r) {
  nlohmann::json j = {{"kernel", r.kernel}, {"shape", r.shape}, {"device", r.device},
                      {"ok", r.ok},         {"seconds", r.seconds}, {"trace", r.trace},
                      {"decisions", r.decisions}, {"error", r.error}};
  if (!r.features.empty()) j["features"] = r.features;
  return j.dump();
}

bool append_record(const std::string& path, const Record& r, std::string* error) {
  std::ofstream out(path, std::ios::app);
  if (out) out << record_line(r) << '\n';
  out.flush();
  if (!out) {
    *error = path + ": cannot append to the tuning database";
    return false;
  }
  return true;
}

Database load_database(const std::string& path) {
  Database db;
  db.path = path;
  std::ifstream in(path);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string where = path + ":" + std::to_string(number) + ": ";
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {  // parse_error; out_of_range for 1e400
      // Only a line that ends too early is what a stopped search leaves behind.
      bool cut = std::string(e.what()).find("unexpected end of input") != std::string::npos;
      db.problems.push_back(where + (cut ? "a line cut short (a search stopped while writing it?)"
                                         : "not JSON (" + std::string(e.what()) + ")"));
      continue;
    }
    if (!j.is_object()) {
      db.problems.push_back(where + "not a record (a JSON object)");
      continue;
    }
    try {
      Record r;
      r.file = path;
      r.line = number;
      r.kernel = j.at("kernel").get<std::string>();
      r.shape = j.at("shape").get<std::string>();
      r.device = j.at("device").get<std::string>();
      r.ok = j.at("ok").get<bool>();
      r.seconds = j.value("seconds", 0.0);
      r.trace = j.value("trace", std::string());
      r.decisions = j.value("decisions", std::vector<int>{});
      r.error = j.value("error", std::string());
      r.features = j.value("features", std::vector<float>{});
      std::string why;
      if (r.kernel.empty() || r.shape.empty() || r.device.empty())
        why = "an empty kernel, shape or device";
      else if (r.ok && !(r.seconds > 0 && std::isfinite(r.seconds)))
        why = "an ok record needs a time above 0 (\"seconds\")";
      else if (r.ok && !j.contains("trace"))
        why = "an ok record has no schedule (\"trace\"); it would run unscheduled";
      if (!why.empty()) {
        db.problems.push_back(where + why);
        continue;
      }
      db.records.push_back(std::move(r));
    } catch (const nlohmann::json::exception& e) {
      db.problems.push_back(where + "not a record (" + std::string(e.what()) + ")");
    }
  }
  return db;
}

std::string shape_key(const tir::PrimFunc& f) {
  std::string key;
  for (int p : f.params) {
    if (!key.empty()) key += ' ';
    const auto& shape = f.buffers[size_t(p)].shape;
    for (size_t d = 0; d < shape.size(); ++d) key += (d ? "x" : "") + std::to_string(shape[d]);
  }
  return key;
}

std::vector<const Record*> ranked_records(const Database& db, const std::string& kernel,
                                          const std::string& shape, const std::string& device) {
  std::vector<const Record*> out;
  for (const auto& r : db.records)
    if (r.ok && r.kernel == kernel && r.shape == shape && r.device == device) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(),
                   [](const Record* a, const Record* b) { return a->seconds < b->seconds; });
  return out;
}

const Record* best_record(const Database& db, const std::string& kernel, const std::string& shape,
                          const std::string& device) {
  auto ranked = ranked_records(db, kernel, shape, device);
  return ranked.empty() ? nullptr : ranked.front();
}

std::string record_place(const Record& r) {
  if (r.file.empty()) return "measured in this session";
  return r.file + ":" + std::to_string(r.line);
}

}  // namespace descent::tune
