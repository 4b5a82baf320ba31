// The tuning database: every measured candidate as one line of JSON (JSON Lines), appended
// as it is measured, so a search that is stopped (Ctrl-C, a crash) keeps what it measured and
// a later search resumes from it. The best record for a kernel, its shapes and a device is
// what `descent kernel --tuned` and the graph runtime will use (issue 17).
//
//   {"kernel":"matmul","shape":"64x64 64x64","device":"cpu","ok":true,"seconds":0.00012,
//    "trace":"split i 16\n...","decisions":[4,1,0],"error":"","features":[...]}
//
// A kernel is known by its name and the shapes of its inputs (shape_key): a kernel that
// graph fusion made has no named dims, only the shapes it was lowered for.
#pragma once
#include <string>
#include <vector>

#include "tensor/tir.h"

namespace descent::tune {

struct Record {
  std::string kernel;   // the kernel's name ("matmul", a fused "linear_relu")
  std::string shape;    // its inputs' shapes: shape_key(f), "64x64 64x64"
  std::string device;   // "cpu", "opencl"
  bool ok = false;
  double seconds = 0;   // ok only
  std::string trace;    // the schedule
  std::vector<int> decisions;
  std::string error;    // why it failed
  std::vector<float> features;  // the loop nest's features (features.h), what a model learns
  std::string file;     // where load_database read it ("" and 0: measured in this session)
  int line = 0;
};

// The shapes of f's inputs, in parameter order: "1x784 128x784".
std::string shape_key(const tir::PrimFunc& f);

// One line of JSON, without the newline.
std::string record_line(const Record& r);
// Appends one record (and a newline) to the file, created if missing.
bool append_record(const std::string& path, const Record& r, std::string* error);

struct Database {
  std::string path;  // the file it was read from ("" when none)
  std::vector<Record> records;
  // Lines that are not records, each with its line and why: "db.jsonl:3: not JSON (number
  // overflow ...)", "db.jsonl:7: an ok record has no \"trace\"" (skipped, the others kept).
  std::vector<std::string> problems;
};
// The records of a file; a missing file is an empty database, not an error. Every record is
// validated: the fields a record needs, of their types, a time that is a finite number above
// 0 for an ok one, and a schedule ("trace") for an ok one (an empty trace is the nest as
// lowered, written out as "").
Database load_database(const std::string& path);

// The ok records for this kernel, shape and device, fastest first (the first that still
// applies is "the tuned schedule").
std::vector<const Record*> ranked_records(const Database& db, const std::string& kernel,
                                          const std::string& shape, const std::string& device);
// The fastest of them; null when there is none.
const Record* best_record(const Database& db, const std::string& kernel, const std::string& shape,
                          const std::string& device);
// "db.jsonl:12" (or "measured in this session"), for messages.
std::string record_place(const Record& r);

}  // namespace descent::tune
