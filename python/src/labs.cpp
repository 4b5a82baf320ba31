// The Python module's labs: list, start, check and hint, over labs/runner (docs/python.md).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "labs/runner/lab.h"
#include "python/src/bindings.h"

namespace py = pybind11;

namespace descent::python {

void bind_labs(py::module_& m) {
  auto lab = [](const std::string& root, const std::string& name) {
    std::string error;
    std::vector<labs::Lab> all;
    if (!labs::load_labs(root.empty() ? labs::default_labs_dir() : root, &all, &error))
      raise("LabError", error);
    const labs::Lab* found = nullptr;
    if (!labs::find_lab(all, name, &found, &error)) raise("LabError", error);
    return *found;
  };
  m.def("labs", [](const std::string& root) {
          std::string error;
          std::vector<labs::Lab> all;
          if (!labs::load_labs(root.empty() ? labs::default_labs_dir() : root, &all, &error))
            raise("LabError", error);
          py::list out;
          for (const auto& l : all) {
            py::dict d;
            d["name"] = l.name;
            d["title"] = l.title;
            d["tier"] = l.tier;
            d["kind"] = l.kind;
            d["files"] = l.files;
            d["concepts"] = l.concepts;
            d["checks"] = l.checks.size();
            out.append(d);
          }
          return out;
        }, py::arg("root") = "");
  m.def("lab_start", [lab](const std::string& name, const std::string& work_dir, const std::string& root) {
          labs::Lab l = lab(root, name);
          std::string message, error;
          std::string dir = work_dir.empty() ? labs::default_work_dir(l) : work_dir;
          if (!labs::start_lab(l, dir, &message, &error)) raise("LabError", error);
          return py::make_tuple(dir, message);
        }, py::arg("name"), py::arg("work_dir") = "", py::arg("root") = "");
  m.def("lab_check", [lab](const std::string& name, const std::string& work_dir, const std::string& root,
                           double time_limit) {
          labs::Lab l = lab(root, name);
          std::string dir = work_dir.empty() ? labs::default_work_dir(l) : work_dir;
          labs::LabReport r;
          {
            py::gil_scoped_release nogil;
            r = labs::check_lab(l, dir, time_limit);
          }
          py::dict d;
          d["lab"] = r.lab;
          d["work_dir"] = dir;
          d["setup_error"] = r.setup_error;
          d["points"] = r.points;
          d["max_points"] = r.max_points;
          d["passed"] = r.passed();
          d["text"] = labs::format_report(r);
          d["seed"] = r.seed;
          d["sandbox"] = r.sandbox;
          py::list checks;
          for (const auto& c : r.checks) {
            py::dict cd;
            cd["name"] = c.name;
            cd["passed"] = c.passed;
            cd["points"] = c.points;
            cd["max_points"] = c.max_points;
            cd["reason"] = c.reason;
            cd["status"] = c.status;
            cd["measured"] = c.measured;
            checks.append(cd);
          }
          d["checks"] = checks;
          return d;
        }, py::arg("name"), py::arg("work_dir") = "", py::arg("root") = "", py::arg("time_limit") = 10.0);
  m.def("lab_hint", [lab](const std::string& name, const std::string& work_dir, const std::string& root) {
          labs::Lab l = lab(root, name);
          std::string error;
          std::string hint = labs::next_hint(l, work_dir.empty() ? labs::default_work_dir(l) : work_dir, &error);
          if (hint.empty()) raise("LabError", error);
          return hint;
        }, py::arg("name"), py::arg("work_dir") = "", py::arg("root") = "");
}

}  // namespace descent::python
