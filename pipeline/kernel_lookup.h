// Finding a kernel of the module by name, for the Session's files (not a front end's): one
// message for a name that is no kernel, listing the kernels there are.
#pragma once
#include <string>

#include "lang/module.h"

namespace descent {

// The kernel called `name`, or null with *error "no kernel named 'x' (kernels: ...)".
const KernelDecl* find_kernel_or_error(const Module& module, const std::string& name,
                                       std::string* error);

}  // namespace descent
