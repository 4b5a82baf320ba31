// Checks on tensor and shape values that every engine makes the same way, with the same
// messages: declared tensor shapes of function parameters and results, element and shape
// indexing, shape literals and arange. Each returns what is wrong as a one-line message
// (no location: the engine knows where the expression is, and which of its parts to blame).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "lang/ast.h"

namespace descent {

class TensorRuntime;

// The sizes named dims took in one call: {"n", 4}, in binding order.
using BoundDims = std::vector<std::pair<std::string, int64_t>>;

// Does a tensor of shape `dims` have the declared shape? Named dims take the size `bound`
// gave them, or bind it there.
bool fits_declared(const TensorType& declared, const std::vector<int64_t>& dims, BoundDims& bound);
// How a declared shape is written: "[1, n]".
std::string declared_shape(const TensorType& t);

// fn f(x: f32[1, 784]): the tensor arguments (args[i] for parameter i; other parameters'
// entries are ignored) against the declared shapes, binding named dims into *bound. Returns
// the index of the first argument that does not fit (its message in *message), or -1.
int check_tensor_args(TensorRuntime& rt, const FnDecl& fn, const std::vector<int64_t>& args,
                      BoundDims* bound, std::string* message);
// fn f(...) -> f32[1, 3]: the returned tensor against the declared shape, with the dims the
// arguments bound. False (and *message) when it does not fit.
bool check_tensor_result(TensorRuntime& rt, const FnDecl& fn, int64_t result, BoundDims bound,
                         std::string* message);

// t[i, j] on a tensor of shape `dims` (`name`: the variable). Returns -1 when the index is
// in range; 0 when the number of indices is wrong (blame the whole expression); k + 1 when
// index k is out of range (blame that index). *message says what.
int check_element_index(const std::vector<int64_t>& dims, const std::vector<int64_t>& index,
                        const std::string& name, std::string* message);
// s[i] on a shape of `rank` dims: "" when in range, else the message.
std::string check_shape_index(int64_t index, size_t rank);
// A dim of a shape literal [a, b]: "" when >= 1, else the message.
std::string check_shape_dim(int64_t dim);
// arange(n): "" when n >= 1, else the message.
std::string check_arange(int64_t n);

}  // namespace descent
