// The labs pane (issue 16): the list with status, Start, Check with every check's result,
// Hint, and Open, which loads the lab's file and brings up the stage pane it is about.
// Work folders go to a scratch directory (the pane uses ./descent-labs, as `descent lab`).
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "helpers.h"
#include "labs/runner/lab.h"
#include "viz/app.h"

using namespace descent::viz;
using namespace descent::viz::testing;
namespace fs = std::filesystem;

namespace {
// Runs the test in a scratch folder, and goes back after.
struct InScratch {
  fs::path old = fs::current_path();
  explicit InScratch(const std::string& name) {
    fs::path p = fs::temp_directory_path() / ("descent-viz-labs-" + std::to_string(::getpid())) / name;
    fs::remove_all(p);
    fs::create_directories(p);
    fs::current_path(p);
  }
  ~InScratch() { fs::current_path(old); }
};
}  // namespace

TEST_CASE("labs pane: select, start, check, hint; the picture and the caption follow") {
  InScratch here("pane");
  auto app = make_app("sample.ds");
  Image list = show(*app, "labs");
  Pane* labs = app->pane("labs");
  CHECK(labs->caption() == "lab read_syntax: not started");
  act(*app, "labs select no_spill");
  CHECK(labs->caption() == "lab no_spill: not started");
  Image chosen = app->capture();
  CHECK(difference(list, chosen) > 0.001);  // another README
  act(*app, "labs start");
  CHECK(fs::exists("descent-labs/no_spill/poly.ds"));
  CHECK(labs->caption() == "lab no_spill: started");
  act(*app, "labs check");
  CHECK(labs->caption() == "lab no_spill: 2/5 points");
  Image checked = app->capture();
  CHECK(difference(chosen, checked) > 0.001);  // the results drawn
  act(*app, "labs hint");
  CHECK(difference(checked, app->capture()) > 0.001);
  // Fixing the file is seen without a second Check: the list says "edited", and the pane
  // checks a quick lab again on its own (issue 31: it used to keep "failing").
  fs::copy_file(fs::path(DESCENT_SOURCE_DIR) / "labs/solutions/no_spill/poly.ds", "descent-labs/no_spill/poly.ds",
                fs::copy_options::overwrite_existing);
  // Just after the last verdict (not in the future: the next verdict must be newer again).
  fs::last_write_time("descent-labs/no_spill/poly.ds",
                      fs::last_write_time("descent-labs/no_spill/.descent-lab-status") + std::chrono::milliseconds(1));
  std::vector<descent::labs::Lab> all;
  std::string load_error;
  REQUIRE(descent::labs::load_labs(descent::labs::default_labs_dir(), &all, &load_error));
  const descent::labs::Lab* no_spill = nullptr;
  REQUIRE(descent::labs::find_lab(all, "no_spill", &no_spill, &load_error));
  CHECK(descent::labs::lab_status(*no_spill, "descent-labs/no_spill") == "edited");
  app->settle();  // frames: the pane sees the new file and checks it
  CHECK(labs->caption() == "lab no_spill: 5/5 points");
  CHECK(descent::labs::lab_status(*no_spill, "descent-labs/no_spill") == "passed");
  std::string err;
  CHECK_FALSE(app->act("labs select nospill", &err));
  CHECK(err.find("did you mean 'no_spill'?") != std::string::npos);
}

TEST_CASE("labs pane: Open loads the lab's file and shows the stage it is about") {
  InScratch here("open");
  auto app = make_app("sample.ds");
  show(*app, "labs");
  act(*app, "labs select no_spill");
  act(*app, "labs start");
  act(*app, "labs open");
  CHECK(app->selected_pane() == "reg");
  CHECK(app->document().text().find("fn poly(x: int) -> int") != std::string::npos);

  // A schedule lab: its kernel in the editor, the loop-nest pane in front, with the
  // student's schedule applied.
  act(*app, "labs select mm_relu_mlc");
  act(*app, "labs start");
  fs::copy_file(fs::path(DESCENT_SOURCE_DIR) / "labs/solutions/mm_relu_mlc/mm_relu.sched",
                "descent-labs/mm_relu_mlc/mm_relu.sched", fs::copy_options::overwrite_existing);
  act(*app, "labs open");
  CHECK(app->selected_pane() == "loops");
  std::string nest = app->document().session().kernel_view("tir").text;
  CHECK(nest.find("for k, j_1 in T.grid(128, 4):") != std::string::npos);

  // A search-space lab: its kernel selected (not the space: it is no one schedule), the
  // tuner pane in front.
  act(*app, "labs select tune_space");
  act(*app, "labs start");
  act(*app, "labs open");
  CHECK(app->selected_pane() == "tune");
  CHECK(app->document().session().selected_kernel() == "matmul");
  CHECK(app->document().session().selected_kernel_dims().at("n") == 128);
  CHECK(app->document().session().schedule_trace().empty());
}
