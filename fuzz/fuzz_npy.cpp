// fuzz_npy: the bytes are a .npy file given to tensor::parse_npy (the reader behind `load`).
// Any bytes must give a tensor or an error, never a crash, a sanitizer report or a huge
// allocation for a short file. When they give a tensor, serialize_npy then parse_npy must
// give back the identical tensor (shape and every float bit for bit, NaN payloads too), and
// serializing that again the identical bytes: `save` then `load` loses nothing.
#include <cstring>
#include <string>

#include "fuzz/fuzz_common.h"
#include "tensor/tensor.h"

using namespace descent;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tensor::Tensor t;
  std::string error;
  if (!tensor::parse_npy(std::string(reinterpret_cast<const char*>(data), size), &t, &error)) {
    if (error.empty()) fuzz::fail("parse_npy failed without saying why");
    return 0;
  }
  if (t.shape.empty() || size_t(t.numel()) != t.data.size())
    fuzz::fail("parse_npy gave an inconsistent tensor " + tensor::shape_text(t.shape) + " with " +
               std::to_string(t.data.size()) + " floats");
  std::string bytes = tensor::serialize_npy(t);
  tensor::Tensor back;
  if (!tensor::parse_npy(bytes, &back, &error))
    fuzz::fail("parse_npy refuses what serialize_npy wrote: " + error);
  if (back.shape != t.shape)
    fuzz::fail("the round trip changed the shape", tensor::shape_text(t.shape),
               tensor::shape_text(back.shape));
  if (back.data.size() != t.data.size() ||
      std::memcmp(back.data.data(), t.data.data(), t.data.size() * sizeof(float)) != 0)
    fuzz::fail("the round trip changed the data", tensor::format_tensor(t), tensor::format_tensor(back));
  if (tensor::serialize_npy(back) != bytes) fuzz::fail("serialize_npy is not stable");
  return 0;
}
