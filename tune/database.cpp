// The tuning database: JSON Lines read and written with nlohmann-json.
#include "tune/database.h"

#include <nlohmann/json.hpp>

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
  std::ifstream in(path);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string where = path + ":" + std::to_string(number) + ": ";
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      db.problems.push_back(where + "not a JSON object (a line cut short when a search was stopped?)");
      continue;
    }
    try {
      Record r;
      r.kernel = j.at("kernel").get<std::string>();
      r.shape = j.at("shape").get<std::string>();
      r.device = j.at("device").get<std::string>();
      r.ok = j.at("ok").get<bool>();
      r.seconds = j.value("seconds", 0.0);
      r.trace = j.value("trace", std::string());
      r.decisions = j.value("decisions", std::vector<int>{});
      r.error = j.value("error", std::string());
      r.features = j.value("features", std::vector<float>{});
      if (r.ok && !(r.seconds > 0)) {
        db.problems.push_back(where + "an ok record needs a time above 0");
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

const Record* best_record(const Database& db, const std::string& kernel, const std::string& shape,
                          const std::string& device) {
  const Record* best = nullptr;
  for (const auto& r : db.records)
    if (r.ok && r.kernel == kernel && r.shape == shape && r.device == device &&
        (!best || r.seconds < best->seconds))
      best = &r;
  return best;
}

}  // namespace descent::tune
