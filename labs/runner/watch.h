// Watch mode (`descent lab watch`, docs/labs.md): a lab's files in its work folder, polled so
// that the front end checks again each time the student saves. Like the rest of descent_labs
// it never prints: the caller runs check_lab and shows the report whenever this says so.
//
//   LabWatch watch(lab, work);                        // the files as they are now
//   show(check_lab(lab, work, options));
//   while (watch.wait_for_change(stop)) show(check_lab(lab, work, options));
//
// Apart from lab.h because it is the one part of the runner that waits on the clock.
#pragma once
#include <atomic>
#include <string>
#include <vector>

#include "labs/runner/lab.h"

namespace descent::labs {

class LabWatch {
 public:
  // Notes each of the lab's files in `work_dir`: its modification time, or that it is missing.
  LabWatch(const Lab& lab, std::string work_dir);
  // Polls the files twice a second until one changes (a new modification time, a file made or
  // removed): true, check again. False once `stop` is set (Ctrl-C), without waiting for a change.
  bool wait_for_change(const std::atomic<bool>& stop);

 private:
  std::string stamp() const;  // every file's state, as one string to compare

  std::vector<std::string> files_;
  std::string work_dir_;
  std::string seen_;  // the stamp last seen
};

}  // namespace descent::labs
