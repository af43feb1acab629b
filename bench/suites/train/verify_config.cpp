// The tiny configurations a training step is verified on (verify.hpp), apart from the
// verification itself: the planner needs them too (train_suite.cpp checks that fp8 can run the
// tiny model), in every build, the fuzz build included.
#include <fmt/format.h>

#include <algorithm>

#include "bench/suites/train/train.hpp"
#include "bench/suites/train/verify.hpp"

namespace gpubench::suites::train {

using kernels::train::Attention;
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
  // Fused attention on CUDA is cuDNN's SDPA, whose engines are built and tested for head
  // dimensions from 32 up: the tiny model's 16 / 2 = 8 and seq 8 may have no engine, which would
  // turn every fused case into a skip. It is verified at the benchmark's own head dimension
  // (two heads of it) and kFusedVerifySeq tokens, a shape the benchmark's graph builds for too.
  if (c.kind == ModelKind::Transformer && c.attention == Attention::Fused) {
    t.hidden = 2 * c.head_dim();
    t.seq = kFusedVerifySeq;
  }
  // fp8 GEMMs take rows in multiples of 16 (fp8_dims_error): the mlp's 2 rows become 16 (a
  // transformer's 2 x 8 already are).
  if (p == Precision::FP8 && t.kind == ModelKind::Mlp) t.batch = 16;
  return t;
}

FusedRefusal on_fused_refused(bool attention_given, const std::string& why) {
  FusedRefusal r;
  r.fall_back = !attention_given;
  r.note = r.fall_back ? fmt::format("cuDNN refused the fused attention graph ({}): the step runs attention=unfused, "
                                     "attention having been left to the preset or default",
                                     why)
                       : why;
  return r;
}

}  // namespace gpubench::suites::train
