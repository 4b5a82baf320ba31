// What `descent bench` writes: CSV and JSON records, and the text tables a terminal shows.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/bench.h"
#include "bench/internal.h"
#include "lang/text.h"

namespace descent::bench {

// ---- shared helpers (bench/internal.h) -----------------------------------------------------

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string seconds_text(double s, int ms_digits) {
  if (std::isnan(s)) return "-";
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.{}f} ms", s * 1e3, ms_digits);
  return fmt::format("{:.3f} s", s);
}

// Left-aligns the first `left` columns and right-aligns the rest.
std::string render(const std::vector<std::vector<std::string>>& rows, size_t left) {
  std::vector<size_t> w;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (w.size() <= c) w.push_back(0);
      w[c] = std::max(w[c], row[c].size());
    }
  std::string s;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) line += "  ";
      line += c < left ? fmt::format("{:<{}}", row[c], w[c]) : fmt::format("{:>{}}", row[c], w[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    s += line + "\n";
  }
  return s;
}

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string format_seconds(double s) { return seconds_text(s, 1); }

std::string format_ratio(double r) { return std::isnan(r) ? "-" : fmt::format("{:.2f}", r); }


}  // namespace

// ---- writers -----------------------------------------------------------------------------

namespace {

std::string csv_number(double v) { return std::isnan(v) ? "" : fmt::format("{:.6g}", v); }

bool write_text(const std::string& path, const std::string& text, std::string* error) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out << text;
  if (!out) {
    if (error) *error = fmt::format("cannot write '{}': {}", path, std::strerror(errno));
    return false;
  }
  return true;
}

// Keys stay in the order written, so the file reads like the CSV.
using Json = nlohmann::ordered_json;

Json number_or_null(double v) { return std::isnan(v) ? Json() : Json(v); }

}  // namespace

std::string to_csv(const std::vector<BenchRecord>& records) {
  std::string s =
      "suite,workload,engine,kind,scale,median_s,min_s,max_s,cpu_s,runs,compile_s,startup_s,"
      "steps,baseline,ratio_vs_baseline,checksum_ok,note,threads,gflops,gbs,roof_fraction,"
      "roof_level,trials,search_s,library\n";
  for (const auto& r : records) {
    s += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(r.suite),
                     csv_field(r.workload), csv_field(r.engine), r.kind, r.scale,
                     csv_number(r.median_s), csv_number(r.min_s), csv_number(r.max_s),
                     csv_number(r.cpu_s), r.runs,
                     csv_number(r.compile_s), csv_number(r.startup_s), r.steps,
                     csv_field(r.baseline),
                     csv_number(r.ratio_vs_baseline), r.checksum_ok ? "true" : "false",
                     csv_field(r.note), r.threads, csv_number(r.gflops), csv_number(r.gbs),
                     csv_number(r.roof_fraction), csv_field(r.roof_level), r.trials,
                     csv_number(r.search_s), csv_field(r.library));
  }
  return s;
}

std::string to_json(const std::vector<BenchRecord>& records) {
  Json doc;
  doc["schema"] = "descent-bench/1";
  doc["host"] = host_description();
  Json list = Json::array();
  for (const auto& r : records) {
    list.push_back({
        {"suite", r.suite},
        {"workload", r.workload},
        {"engine", r.engine},
        {"kind", r.kind},
        {"scale", r.scale},
        {"median_s", r.median_s},
        {"min_s", r.min_s},
        {"max_s", r.max_s},
        {"cpu_s", r.cpu_s},
        {"runs", r.runs},
        {"runs_s", r.runs_s},
        {"compile_s", number_or_null(r.compile_s)},
        {"startup_s", number_or_null(r.startup_s)},
        {"steps", r.steps},
        {"baseline", r.baseline},
        {"ratio_vs_baseline", number_or_null(r.ratio_vs_baseline)},
        {"checksum_ok", r.checksum_ok},
        {"expected", r.expected},
        {"output", r.output},
        {"note", r.note},
        {"threads", r.threads},
        {"gflops", number_or_null(r.gflops)},
        {"gbs", number_or_null(r.gbs)},
        {"roof_fraction", number_or_null(r.roof_fraction)},
        {"roof_level", r.roof_level},
        {"skipped", r.skipped},
        {"trials", r.trials},
        {"search_s", number_or_null(r.search_s)},
        {"library", r.library},
    });
  }
  doc["records"] = std::move(list);
  // Replace invalid UTF-8 (a program's output could hold anything) instead of throwing.
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

bool write_csv(const std::string& path, const std::vector<BenchRecord>& records,
               std::string* error) {
  return write_text(path, to_csv(records), error);
}

bool write_json(const std::string& path, const std::vector<BenchRecord>& records,
                std::string* error) {
  return write_text(path, to_json(records), error);
}

void write_outputs(const BenchOptions& o, const std::vector<BenchRecord>& records,
                   std::string* error) {
  if (o.interrupt && o.interrupt->load()) {
    *error = "interrupted";
    return;
  }
  std::string write_error;
  if (!o.csv.empty() && !write_csv(o.csv, records, &write_error) && error->empty())
    *error = write_error;
  if (!o.json.empty() && !write_json(o.json, records, &write_error) && error->empty())
    *error = write_error;
}

// ---- text tables -------------------------------------------------------------------------

std::string format_table(const std::vector<BenchRecord>& records) {
  std::string base = records.empty() ? "baseline" : records.front().baseline;
  std::vector<std::vector<std::string>> rows = {
      {"suite", "workload", "engine", "median", "min", "cpu", "runs", "time/" + base, "start-up",
       "check"}};
  for (const auto& r : records)
    rows.push_back({r.suite, r.workload, r.engine, r.runs ? format_seconds(r.median_s) : "-",
                    r.runs ? format_seconds(r.min_s) : "-", r.runs ? format_seconds(r.cpu_s) : "-",
                    std::to_string(r.runs),
                    format_ratio(r.ratio_vs_baseline), format_seconds(r.startup_s),
                    r.checksum_ok ? "ok" : "FAILED"});
  std::string s = render(rows, 3);
  for (const auto& r : records)
    if (!r.checksum_ok) s += fmt::format("{} on {}: {}\n", r.workload, r.engine, r.note);
  return s;
}

std::string format_summary(const std::vector<BenchRecord>& records) {
  std::vector<std::string> engines, loads;
  for (const auto& r : records) {
    if (!contains(engines, r.engine)) engines.push_back(r.engine);
    std::string key = r.suite + "/" + r.workload;
    if (!contains(loads, key)) loads.push_back(key);
  }
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"workload"};
  for (const auto& e : engines) head.push_back(e);
  rows.push_back(head);
  for (const auto& key : loads) {
    std::vector<std::string> row = {key};
    for (const auto& e : engines) {
      std::string cell = "-";
      for (const auto& r : records)
        if (r.suite + "/" + r.workload == key && r.engine == e)
          cell = !r.checksum_ok ? "FAILED"
                 : std::isnan(r.ratio_vs_baseline)
                     ? format_seconds(r.median_s)
                     : fmt::format("{} ({}x)", format_seconds(r.median_s),
                                   format_ratio(r.ratio_vs_baseline));
      row.push_back(cell);
    }
    rows.push_back(row);
  }
  std::string base = records.empty() ? "" : records.front().baseline;
  std::string s = render(rows, 1);
  if (!base.empty()) s += fmt::format("median wall time per run (time relative to {})\n", base);
  return s;
}


std::string format_tensor_table(const std::vector<BenchRecord>& records) {
  std::vector<std::vector<std::string>> rows = {{"workload", "engine", "threads", "median",
                                                 "compile", "GFLOP/s", "GB/s", "% roof",
                                                 "time/base", "check"}};
  std::map<std::string, std::string> bases;
  for (const auto& r : records) {
    if (r.suite != "tensor") continue;
    auto num = [](double v, const char* f) {
      return std::isnan(v) ? std::string("-") : fmt::format(fmt::runtime(f), v);
    };
    bases[r.workload] = r.baseline;
    rows.push_back({r.workload, r.engine, std::to_string(r.threads),
                    r.runs ? seconds_text(r.median_s) : "-", seconds_text(r.compile_s),
                    num(r.gflops, "{:.2f}"), num(r.gbs, "{:.1f}"),
                    num(r.roof_fraction * 100, "{:.0f}%") +
                        (std::isnan(r.roof_fraction) ? "" : " " + r.roof_level),
                    num(r.ratio_vs_baseline, "{:.2f}"),
                    r.skipped ? "skipped" : r.checksum_ok ? "ok" : "FAILED"});
  }
  std::string s = render(rows, 2);
  std::map<std::string, std::string> by_base;
  for (const auto& [wl, b] : bases) by_base[b] += (by_base[b].empty() ? "" : ", ") + wl;
  std::string legend;
  for (const auto& [b, wls] : by_base) legend += (legend.empty() ? "" : "; ") + b + " for " + wls;
  if (!legend.empty()) s += "time/base: median / the baseline's median (" + legend + ")\n";
  bool any_roof = false;
  for (const auto& r : records) any_roof = any_roof || (r.suite == "tensor" && !std::isnan(r.roof_fraction));
  if (any_roof)
    s += "% roof: GFLOP/s / min(FMA peak, bandwidth x flop/byte), the bandwidth of the memory "
         "level (L1, L2, L3, DRAM) the kernel's inputs and output fit in\n";
  for (const auto& r : records)
    if (r.suite == "tensor" && !r.checksum_ok)
      s += r.engine.rfind("opencl", 0) == 0
               ? fmt::format("{} on {}: {}\n", r.workload, r.engine, r.note)
               : fmt::format("{} on {} ({} thread{}): {}\n", r.workload, r.engine, r.threads,
                             r.threads == 1 ? "" : "s", r.note);
  return s;
}

}  // namespace descent::bench
