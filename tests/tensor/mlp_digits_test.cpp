// The digits MLP (issue 15): examples/mlp_digits/mlp_digits.ds, a 64-32-10 network trained
// by scikit-learn, must give NumPy's logits (committed beside it, logits.npy) to 1e-4 on
// every device, and print NumPy's accuracy.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "lang/text.h"
#include "lang/value.h"
#include "pipeline/pipeline.h"
#include "tensor/tensor.h"

using namespace descent;

namespace {

const std::string kDir = std::string(DESCENT_SOURCE_DIR) + "/examples/mlp_digits/";

// The example, its load paths made absolute (it expects to run from the project root), and
// a save of its logits.
std::string program_saving_logits(const std::string& out_path) {
  std::string text, error;
  REQUIRE_MESSAGE(read_file(kDir + "mlp_digits.ds", &text, &error), error);
  std::string rooted;
  for (size_t at = 0;;) {
    size_t hit = text.find("\"examples/", at);
    if (hit == std::string::npos) {
      rooted += text.substr(at);
      break;
    }
    rooted += text.substr(at, hit - at) + "\"" + std::string(DESCENT_SOURCE_DIR) + "/";
    at = hit + 1;
  }
  return rooted + "save(logits, \"" + out_path + "\")\n";
}

}  // namespace

TEST_CASE("the digits MLP gives NumPy's logits on every device") {
  tensor::Tensor expected;
  std::string error;
  REQUIRE_MESSAGE(tensor::load_npy(kDir + "logits.npy", &expected, &error), error);
  REQUIRE(expected.shape == std::vector<int64_t>{360, 10});

  for (const std::string& device : Session::devices()) {
    CAPTURE(device);
    Session s;
    if (!s.set_device(device, &error)) {
      MESSAGE("device " << device << " not available here: " << error);
      continue;
    }
    std::string out_path =
        (std::filesystem::temp_directory_path() / ("descent-digits-" + device + ".npy")).string();
    std::string printed;
    RunOptions opts;
    opts.out = [&printed](std::string_view t) { printed += t; };
    Outcome o = s.submit(program_saving_logits(out_path), "mlp_digits.ds", opts);
    REQUIRE_MESSAGE(o.status == Outcome::Ok, o.message);
    // NumPy's accuracy (make_data.py printed it): 349 of 360.
    CHECK(printed == "[360, 10]\naccuracy " + format_value(Value::of_float(349.0 / 360.0), Type::Float) + "\n");

    tensor::Tensor got;
    REQUIRE_MESSAGE(tensor::load_npy(out_path, &got, &error), error);
    std::filesystem::remove(out_path);
    REQUIRE(got.shape == expected.shape);
    double worst = 0;
    int agree = 0;  // rows whose argmax is NumPy's
    for (int64_t r = 0; r < 360; ++r) {
      int64_t mine = 0, theirs = 0;
      for (int64_t c = 0; c < 10; ++c) {
        size_t i = size_t(r * 10 + c);
        worst = std::max(worst, std::fabs(double(got.data[i]) - double(expected.data[i])));
        if (got.data[i] > got.data[size_t(r * 10 + mine)]) mine = c;
        if (expected.data[i] > expected.data[size_t(r * 10 + theirs)]) theirs = c;
      }
      agree += mine == theirs;
    }
    CHECK(worst <= 1e-4);
    CHECK(agree == 360);
  }
}
