// The Document owns the kernel under the microscope across re-runs: each edit re-runs the
// program on a fresh Session, and the Document moves the schedule object there from the
// Session before it (Session::adopt_schedule: its steps run again only when the edit changed
// the kernel); the loop-nest pane only reads it. No window is needed for these.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "viz/document.h"

using descent::viz::Document;

namespace {

const char* kWithKernel =
    "kernel twice(A: f32[n]) -> f32[n] {\n"
    "  B[i] = A[i] * 2.0\n"
    "  return B\n"
    "}\n"
    "print(1)\n";

void run(Document& doc, const std::string& text) {
  doc.set_text(text, /*debounce=*/false);
  doc.wait();
}

}  // namespace

TEST_CASE("the document carries the kernel, its dims and its schedule into each re-run") {
  Document doc;
  run(doc, "print(1)\n");
  std::string err;
  REQUIRE_MESSAGE(doc.choose_kernel("matmul", "n=32 m=16 k=8", &err), err);
  REQUIRE_MESSAGE(doc.session().schedule_step("split i 8", &err), err);
  uint64_t g = doc.generation();
  run(doc, "print(2)\n");
  CHECK(doc.generation() == g + 1);
  CHECK(doc.kernel().name == "matmul");
  CHECK(doc.kernel().dims == "n=32 m=16 k=8");
  CHECK(doc.kernel().selected);
  CHECK(doc.kernel().carried);  // the kernel did not change: the object moved, no step re-ran
  CHECK_FALSE(doc.kernel().reapplied);
  CHECK(doc.kernel().note.empty());
  CHECK(doc.session().selected_kernel() == "matmul");
  CHECK(doc.session().schedule_trace() == "split i 8\n");
  CHECK(doc.session().kernel_view("tir").text.find("T.Buffer((32, 8)") != std::string::npos);
  // Undo on the current Session is what the next re-run carries, and its history with it:
  // redo still brings the step back after the edit.
  REQUIRE(doc.session().schedule_undo());
  run(doc, "print(3)\n");
  CHECK(doc.session().schedule_trace().empty());
  CHECK(doc.kernel().carried);
  REQUIRE(doc.session().schedule_redo());
  CHECK(doc.session().schedule_trace() == "split i 8\n");
  CHECK(doc.session().open_schedules().size() == 1);  // one object, moved, not copies
}

TEST_CASE("an edit of the kernel itself applies the schedule's steps to its new nest") {
  Document doc;
  run(doc, kWithKernel);
  std::string err;
  REQUIRE_MESSAGE(doc.choose_kernel("twice", "n=64", &err), err);
  REQUIRE_MESSAGE(doc.session().schedule_step("split i 16", &err), err);
  std::string edited = kWithKernel;
  edited.replace(edited.find("* 2.0"), 5, "* 3.0");
  run(doc, edited);
  CHECK(doc.kernel().selected);
  CHECK_FALSE(doc.kernel().carried);
  CHECK(doc.kernel().reapplied);
  CHECK(doc.session().schedule_trace() == "split i 16\n");
  // A step the new kernel refuses stops there, and says so.
  std::string other = kWithKernel;
  other.replace(other.find("B[i]"), 4, "B[x]");
  other.replace(other.find("A[i]"), 4, "A[x]");
  run(doc, other);
  CHECK(doc.kernel().selected);
  CHECK_FALSE(doc.kernel().reapplied);
  CHECK(doc.kernel().note.find("applied only in part") != std::string::npos);
  CHECK(doc.session().schedule_trace().empty());
}

TEST_CASE("a kernel an edit removes comes back with its schedule") {
  Document doc;
  run(doc, kWithKernel);
  std::string err;
  REQUIRE_MESSAGE(doc.choose_kernel("twice", "n=64", &err), err);
  REQUIRE_MESSAGE(doc.session().schedule_step("split i 16", &err), err);
  run(doc, "print(1)\n");  // twice is gone: the default kernel is shown meanwhile
  CHECK(doc.kernel().name == descent::viz::kDefaultKernel);
  CHECK(doc.kernel().lost == "twice");
  CHECK(doc.kernel().switched);
  CHECK(doc.kernel().note.find("kernel 'twice' is not in the program any more") !=
        std::string::npos);
  CHECK(doc.session().schedule_trace().empty());
  run(doc, kWithKernel);  // and back
  CHECK(doc.kernel().name == "twice");
  CHECK(doc.kernel().lost.empty());
  CHECK(doc.kernel().switched);
  CHECK(doc.session().selected_kernel() == "twice");
  CHECK(doc.session().schedule_trace() == "split i 16\n");
  // Choosing another kernel lets a lost one go.
  run(doc, "print(1)\n");
  REQUIRE(doc.kernel().lost == "twice");
  REQUIRE_MESSAGE(doc.choose_kernel("relu", "n=8", &err), err);
  CHECK(doc.kernel().lost.empty());
  run(doc, kWithKernel);
  CHECK(doc.kernel().name == "relu");
}

TEST_CASE("a directory is not a document: load refuses it and keeps the text it had") {
  std::string dir = std::filesystem::temp_directory_path() / "descent-doc-dir-XXXXXX";
  REQUIRE(mkdtemp(dir.data()));
  Document doc;
  run(doc, "print(1)\n");
  std::string error;
  CHECK_FALSE(doc.load(dir, &error));
  CHECK(error == "'" + dir + "' is a directory, not a file");
  CHECK(doc.text() == "print(1)\n");
  std::filesystem::remove(dir);
}
