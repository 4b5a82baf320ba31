// What the files of the Python module's C++ half share (module.cpp binds the Session,
// tensors and bench; labs.cpp the labs).
#pragma once
#include <pybind11/pybind11.h>

#include <string>

namespace descent::python {

// Raises the Python exception `cls` of descent/errors.py with `text` (and attributes).
[[noreturn]] void raise(const char* cls, const std::string& text, pybind11::dict attrs = {});

// descent._descent.labs, lab_start, lab_check and lab_hint (labs.cpp).
void bind_labs(pybind11::module_& m);

}  // namespace descent::python
