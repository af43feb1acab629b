// The tiny configurations a training step is verified on (verify.hpp), apart from the
// verification itself: the planner needs them too (train_suite.cpp checks that fp8 can run the
// tiny model), in every build, the fuzz build included.
#include <algorithm>

#include "bench/suites/train/train.hpp"
#include "bench/suites/train/verify.hpp"

namespace gpubench::suites::train {

using kernels::train::ModelConfig;
using kernels::train::ModelKind;

ModelConfig tiny_config(const ModelConfig& c) {
  ModelConfig t = c;
  t.layers = std::min<std::int64_t>(c.layers, 2);
  t.hidden = 16;
  t.heads = 2;
  t.ffn_mult = std::min<std::int64_t>(c.ffn_mult, 4);
  t.seq = 8;
  t.batch = 2;
  t.vocab = std::min<std::int64_t>(c.vocab, 64);
  t.accum = std::min<std::int64_t>(c.accum, 2);
  return t;
}

ModelConfig tiny_config(const ModelConfig& c, Precision p) {
  ModelConfig t = tiny_config(c);
  // fp8 GEMMs take rows in multiples of 16 (fp8_dims_error): the mlp's 2 rows become 16 (a
  // transformer's 2 x 8 already are).
  if (p == Precision::FP8 && t.kind == ModelKind::Mlp) t.batch = 16;
  return t;
}

}  // namespace gpubench::suites::train
