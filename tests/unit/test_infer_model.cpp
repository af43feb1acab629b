// The infer model (kernels/infer/model.hpp): its Llama layers against hand-computed values, the
// paged KV cache against a contiguous one, the cached and batched forward against the
// reference's recompute, the GPT configuration against the train suite's reference model, and
// the counts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <optional>

#include "bench/core/device.hpp"
#include "bench/suites/infer/infer.hpp"
#include "kernels/infer/model.hpp"
#include "kernels/train/model_reference.hpp"

namespace ki = gpubench::kernels::infer;
namespace kt = gpubench::kernels::train;
using ki::idx;

namespace {

ki::ModelSpec tiny(ki::Arch arch) {
  ki::ModelSpec s;
  s.name = arch == ki::Arch::Gpt ? "gpt-tiny" : "llama-tiny";
  s.arch = arch;
  s.layers = 2, s.hidden = 32, s.heads = 4, s.kv_heads = arch == ki::Arch::Gpt ? 4 : 2, s.ffn = 48, s.vocab = 64;
  s.max_positions = 64;
  return s;
}

double max_rel(const std::vector<float>& got, const std::vector<double>& want, std::size_t offset = 0) {
  double ss = 0, worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) ss += want[offset + i] * want[offset + i];
  const double rms = std::sqrt(ss / static_cast<double>(got.size()));
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[offset + i]) / rms);
  return worst;
}

}  // namespace

TEST(InferOps, RmsNormByHand) {
  // x = (3, 4): mean of squares 12.5, 1/sqrt(12.5) = 0.28284; g = (1, 2).
  const double x[2] = {3, 4}, g[2] = {1, 2};
  double y[2];
  ki::rmsnorm(x, g, y, 1, 2, 0.0);
  EXPECT_NEAR(y[0], 3 * 0.282842712, 1e-8);
  EXPECT_NEAR(y[1], 2 * 4 * 0.282842712, 1e-8);
}

TEST(InferOps, RopeByHandAndRelative) {
  // D = 4 at position 1, theta 10000: pair (0, 2) turns by 1 rad, pair (1, 3) by 10000^-0.5 = 0.01.
  double v[4] = {1, 2, 3, 4};
  ki::rope(v, 4, 1, 10000.0);
  EXPECT_NEAR(v[0], std::cos(1.0) - 3 * std::sin(1.0), 1e-12);
  EXPECT_NEAR(v[2], 3 * std::cos(1.0) + std::sin(1.0), 1e-12);
  EXPECT_NEAR(v[1], 2 * std::cos(0.01) - 4 * std::sin(0.01), 1e-12);
  EXPECT_NEAR(v[3], 4 * std::cos(0.01) + 2 * std::sin(0.01), 1e-12);
  // The point of RoPE: q at m and k at n meet in a dot product that depends on m - n only.
  auto dot_at = [](idx m, idx n) {
    double q[8] = {0.3, -1, 2, 0.5, 1, 1, -0.2, 0.7}, k[8] = {1, 0.1, -0.4, 2, 0.3, -1, 0.6, 0.2};
    ki::rope(q, 8, m, 500000.0);
    ki::rope(k, 8, n, 500000.0);
    return std::inner_product(q, q + 8, k, 0.0);
  };
  EXPECT_NEAR(dot_at(7, 3), dot_at(104, 100), 1e-9);
  EXPECT_GT(std::abs(dot_at(7, 3) - dot_at(7, 6)), 1e-3);
}

TEST(InferOps, SwigluByHand) {
  // gate 1, up 2: silu(1) = 1 / (1 + e^-1) = 0.731058579, times 2; gate -2, up 3: -2 / (1 + e^2) * 3.
  const double gu[4] = {1, -2, 2, 3};
  double out[2];
  ki::swiglu(gu, out, 1, 2);
  EXPECT_NEAR(out[0], 2 * 0.731058579, 1e-8);
  EXPECT_NEAR(out[1], -2 / (1 + std::exp(2.0)) * 3, 1e-12);
}

TEST(InferModel, NamedConfigurations) {
  for (const std::string& n : ki::model_names()) {
    const auto s = ki::named_model(n);
    ASSERT_TRUE(s) << n;
    EXPECT_FALSE(ki::spec_error(*s)) << n;
  }
  EXPECT_FALSE(ki::named_model("llama3-9b"));
  // Llama 3 8B holds ~8.03e9 parameters (Meta): layers, final norm and LM head here, the
  // embedding apart.
  const ki::ModelSpec l8 = *ki::named_model("llama3-8b");
  EXPECT_NEAR((ki::matmul_weight_elements(l8) + ki::embedding_elements(l8)) / 1e9, 8.03, 0.01);
  // KV per token: 2 x 32 layers x 8 heads x 128 = 65536 elements (128 KiB in bf16).
  EXPECT_EQ(ki::kv_elements_per_token(l8), 65536);
  ki::ModelSpec shard = l8;
  shard.tp = 8;
  EXPECT_FALSE(ki::spec_error(shard));
  EXPECT_EQ(shard.kv_dim(), 128);
  shard.tp = 3;
  EXPECT_NE(ki::spec_error(shard).value_or("").find("tp=3 does not divide heads=32"), std::string::npos);
}

TEST(InferModel, FlopsCountTheCausalPairs) {
  ki::ModelSpec s = tiny(ki::Arch::Llama);
  // Decode of one token after 9 cached: 10 pairs; a prefill of 10 tokens: 55 pairs.
  const double dense = 2 * s.layers * (s.hidden * s.qkv_dim() + s.q_dim() * s.hidden + 3 * s.hidden * s.ffn);
  const double head = 2 * s.hidden * s.vocab;
  EXPECT_DOUBLE_EQ(ki::forward_flops(s, 9, 1), dense + 4 * s.layers * s.q_dim() * 10 + head);
  EXPECT_DOUBLE_EQ(ki::forward_flops(s, 0, 10), 10 * dense + 4 * s.layers * s.q_dim() * 55 + head);
  // A prefill chunk over cached context (the attention suite's seq_q < seq_kv, bottom-right):
  // new query i sees cached + i + 1 keys, counted here one pair at a time.
  for (ki::idx cached : {0, 1, 7, 100}) {
    for (ki::idx n : {1, 2, 13, 64}) {
      double pairs = 0;
      for (ki::idx i = 0; i < n; ++i)
        for (ki::idx j = 0; j < cached + n; ++j) pairs += j <= cached + i ? 1 : 0;
      EXPECT_DOUBLE_EQ(ki::forward_flops(s, cached, n),
                       static_cast<double>(n) * dense + 4 * static_cast<double>(s.layers * s.q_dim()) * pairs + head)
          << cached << " + " << n;
    }
  }
}

// Prefill then decode through the cache and the engine, against recomputing every token.
void check_against_reference(ki::Arch arch, idx page) {
  const ki::ModelSpec s = tiny(arch);
  const std::vector<float> w = ki::random_weights<float>(s, 3);
  const std::vector<double> wd(w.begin(), w.end());
  ki::KvCache<float> cache(s, page, 64);
  ki::Engine<float> engine(s, w, cache);
  std::vector<std::int32_t> tokens = ki::prompt_tokens(s, 1, 0, 11);
  const int seq = cache.open();
  ASSERT_TRUE(cache.reserve(seq, 20));
  engine.set_all_logits(true);
  std::vector<float> got = engine.forward({{seq, 0, tokens.data(), 11}});
  std::vector<double> want = ki::reference_logits(s, wd, tokens);
  EXPECT_LT(max_rel(got, want), 1e-4);
  engine.set_all_logits(false);
  for (int step = 0; step < 4; ++step) {
    const std::int32_t next = ki::argmax_rows(got, static_cast<idx>(got.size()) / s.vocab, s.vocab).back();
    tokens.push_back(next);
    got = engine.forward({{seq, static_cast<idx>(tokens.size()) - 1, &tokens.back(), 1}});
    want = ki::reference_logits(s, wd, tokens);
    EXPECT_LT(max_rel(got, want, want.size() - static_cast<std::size_t>(s.vocab)), 1e-4) << "decode step " << step;
  }
  EXPECT_EQ(cache.length(seq), 15);
}

TEST(InferModel, LlamaPrefillAndDecodeMatchTheReference) { check_against_reference(ki::Arch::Llama, 4); }
TEST(InferModel, GptPrefillAndDecodeMatchTheReference) { check_against_reference(ki::Arch::Gpt, 16); }

TEST(InferModel, PagedGatherEqualsContiguous) {
  // Two sequences whose pages interleave (page 4) against one region each (page 32): the same
  // logits bit for bit, prefill and decode in one mixed step.
  const ki::ModelSpec s = tiny(ki::Arch::Llama);
  const std::vector<float> w = ki::random_weights<float>(s, 5);
  std::vector<std::vector<float>> results;
  for (idx page : {idx{4}, idx{32}}) {
    ki::KvCache<float> cache(s, page, 64 / page * 2);
    ki::Engine<float> engine(s, w, cache);
    const int a = cache.open(), b = cache.open();
    for (idx t = page; t <= 32; t += page) {
      ASSERT_TRUE(cache.reserve(a, t));
      ASSERT_TRUE(cache.reserve(b, t));
    }
    if (page == 4) {
      EXPECT_EQ(cache.pages(a)[1], cache.pages(a)[0] + 2);  // interleaved: a's pages are not adjacent
    }
    const std::vector<std::int32_t> pa = ki::prompt_tokens(s, 9, 0, 13), pb = ki::prompt_tokens(s, 9, 1, 6);
    (void)engine.forward({{a, 0, pa.data(), 13}});
    const std::int32_t ta = 5, tb = 17;
    std::vector<float> out = engine.forward({{a, 13, &ta, 1}, {b, 0, pb.data(), 6}});
    (void)tb;
    results.push_back(out);
  }
  EXPECT_EQ(results[0], results[1]);
}

TEST(InferModel, KvCacheReservesAndFrees) {
  const ki::ModelSpec s = tiny(ki::Arch::Llama);
  ki::KvCache<float> cache(s, 8, 4);
  const int a = cache.open();
  EXPECT_TRUE(cache.reserve(a, 17));  // 3 pages
  EXPECT_EQ(cache.free_pages(), 1);
  const int b = cache.open();
  EXPECT_FALSE(cache.reserve(b, 9));  // 2 pages: refused, nothing taken
  EXPECT_EQ(cache.free_pages(), 1);
  cache.release(a);
  EXPECT_EQ(cache.free_pages(), 4);
  EXPECT_TRUE(cache.reserve(b, 9));
}

TEST(InferModel, BatchedStepEqualsSeparateSteps) {
  // A decode of one sequence and the prefill of another in one step give each the logits it
  // gets alone (to float rounding: the products see other row counts).
  const ki::ModelSpec s = tiny(ki::Arch::Llama);
  const std::vector<float> w = ki::random_weights<float>(s, 8);
  const std::vector<std::int32_t> pa = ki::prompt_tokens(s, 2, 0, 9), pb = ki::prompt_tokens(s, 2, 1, 5);
  const std::int32_t next = 3;
  auto run = [&](bool together) {
    ki::KvCache<float> cache(s, 4, 16);
    ki::Engine<float> engine(s, w, cache);
    const int a = cache.open(), b = cache.open();
    EXPECT_TRUE(cache.reserve(a, 16));
    EXPECT_TRUE(cache.reserve(b, 16));
    (void)engine.forward({{a, 0, pa.data(), 9}});
    if (together) return engine.forward({{a, 9, &next, 1}, {b, 0, pb.data(), 5}});
    std::vector<float> out = engine.forward({{a, 9, &next, 1}});
    const std::vector<float> second = engine.forward({{b, 0, pb.data(), 5}});
    out.insert(out.end(), second.begin(), second.end());
    return out;
  };
  const std::vector<float> one = run(true), two = run(false);
  ASSERT_EQ(one.size(), two.size());
  for (std::size_t i = 0; i < one.size(); ++i) EXPECT_NEAR(one[i], two[i], 1e-5 * (1 + std::abs(two[i])));
}

TEST(InferModel, GptMatchesTheTrainSuitesReferenceModel) {
  // The train suite's GPT-2 reference (an independent implementation of the same architecture)
  // and the infer engine, given the same weights, compute the same loss on a sequence.
  kt::ModelConfig c;
  c.layers = 2, c.hidden = 32, c.heads = 4, c.ffn_mult = 4, c.seq = 12, c.batch = 1, c.vocab = 64;
  kt::ReferenceModel<double> ref(c, 4);
  const kt::Batch batch = kt::make_batch(c, 6);
  const double want = ref.forward(batch);

  ki::ModelSpec s = tiny(ki::Arch::Gpt);
  s.ffn = 128, s.max_positions = 12;
  const ki::Layout lay = ki::layout(s);
  std::vector<double> w(static_cast<std::size_t>(lay.total));
  auto copy = [&](const std::string& to, const std::string& from) {
    const auto& src = ref.layout().at(from);
    const auto& dst = lay.at(to);
    ASSERT_EQ(src.size, dst.size()) << to;
    std::copy_n(ref.params().begin() + src.offset, src.size, w.begin() + dst.offset);
  };
  copy("wte", "wte");
  copy("wpe", "wpe");
  for (idx l = 0; l < 2; ++l) {
    for (auto [to, from] : {std::pair{"norm1.g", "ln1.g"}, {"norm1.b", "ln1.b"}, {"wqkv", "qkv.w"}, {"bqkv", "qkv.b"},
                            {"wo", "proj.w"}, {"bo", "proj.b"}, {"norm2.g", "ln2.g"}, {"norm2.b", "ln2.b"},
                            {"w1", "fc1.w"}, {"b1", "fc1.b"}, {"w2", "fc2.w"}, {"b2", "fc2.b"}}) {
      copy(ki::layer_tensor(l, to), kt::names::layer(l, from));
    }
  }
  copy("normf.g", "lnf.g");
  copy("normf.b", "lnf.b");
  const std::vector<double> logits = ki::reference_logits(s, w, batch.tokens);
  ki::KvCache<double> cache(s, 4, 3);
  ki::Engine<double> engine(s, w, cache);
  engine.set_all_logits(true);
  const int seq = cache.open();
  ASSERT_TRUE(cache.reserve(seq, 12));
  const std::vector<double> engine_logits = engine.forward({{seq, 0, batch.tokens.data(), 12}});
  auto loss = [&](const std::vector<double>& lg) {
    double sum = 0;
    for (idx t = 0; t < 12; ++t) {
      const double* row = lg.data() + t * 64;
      double m = *std::max_element(row, row + 64), z = 0;
      for (idx v = 0; v < 64; ++v) z += std::exp(row[v] - m);
      sum += m + std::log(z) - row[batch.targets[static_cast<std::size_t>(t)]];
    }
    return sum / 12;
  };
  EXPECT_NEAR(loss(logits), want, 1e-10 * std::abs(want));
  EXPECT_NEAR(loss(engine_logits), want, 1e-10 * std::abs(want));
}

// ---- fp8 weights (dtype=fp8 on CUDA): the counts, the dimension rule and the CPU emulation ----

TEST(InferFp8, LinearWeightsCountedAtOneByte) {
  const ki::ModelSpec l8 = *ki::named_model("llama3-8b");
  // The linear tensors of the layout are exactly what linear_weight_elements counts.
  const ki::Layout lay = ki::layout(l8);
  double linear = 0;
  for (const ki::Tensor& t : lay.tensors)
    if (ki::is_linear_weight(t.name)) linear += static_cast<double>(t.size());
  EXPECT_DOUBLE_EQ(ki::linear_weight_elements(l8), linear);
  EXPECT_TRUE(ki::is_linear_weight("l31.wd"));
  EXPECT_FALSE(ki::is_linear_weight("wlm"));
  EXPECT_FALSE(ki::is_linear_weight("l0.norm1.g"));
  // By hand: per layer 4096 x 6144 (q|k|v, 8 KV heads of 128) + 4096 x 4096 + 3 x 4096 x 14336.
  const double per_layer = 4096.0 * 6144 + 4096.0 * 4096 + 3 * 4096.0 * 14336;
  EXPECT_DOUBLE_EQ(ki::linear_weight_elements(l8), 32 * per_layer);
  // fp8: those at 1 byte, the LM head (4096 x 128256), norms, KV and embedding rows at 2.
  const double head_and_norms = 4096.0 * 128256 + 32 * 2 * 4096.0 + 4096;
  EXPECT_DOUBLE_EQ(ki::matmul_weight_bytes(l8, 2, 1), 32 * per_layer + 2 * head_and_norms);
  EXPECT_DOUBLE_EQ(ki::matmul_weight_bytes(l8, 2, 2), 2 * ki::matmul_weight_elements(l8));
  const double kv = ki::kv_elements_per_token(l8);  // 2 x 32 x 1024
  EXPECT_DOUBLE_EQ(ki::decode_step_bytes(l8, 4, 1000, 2, 1),
                   32 * per_layer + 2 * (head_and_norms + 4 * 1000 * kv + 4 * kv + 4 * 4096.0));
  EXPECT_DOUBLE_EQ(ki::decode_step_bytes(l8, 4, 1000, 2, 2), 2 * ki::decode_step_elements(l8, 4, 1000));
  // About 8.0 GB of fp8 weights plus the 1.05 GB bf16 head read by a batch-1 step of Llama 3 8B.
  EXPECT_NEAR(ki::matmul_weight_bytes(l8, 2, 1) / 1e9, 7.0 + 1.05, 0.05);
}

TEST(InferFp8, DimensionsInMultiplesOf16) {
  EXPECT_EQ(ki::fp8_dims_error(*ki::named_model("llama-small")), std::nullopt);
  EXPECT_EQ(ki::fp8_dims_error(*ki::named_model("llama3-70b")), std::nullopt);
  ki::ModelSpec odd = tiny(ki::Arch::Llama);  // hidden 32, FFN 48: fine
  EXPECT_EQ(ki::fp8_dims_error(odd), std::nullopt);
  odd.ffn = 40;
  const auto why = ki::fp8_dims_error(odd);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("FFN width (40)"), std::string::npos) << *why;
  EXPECT_NE(why->find("multiple of 16"), std::string::npos) << *why;
}

namespace {

// The verification model of the CUDA path for llama-small (1 layer, a 512-token head), weights
// rounded to bf16 as the device holds them.
std::vector<double> bf16_weights(const ki::ModelSpec& s) {
  std::vector<float> w = ki::random_weights<float>(s, 11);
  std::vector<double> out(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) {
    const float x = w[i];
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000u;  // nearest even to bf16
    float r;
    std::memcpy(&r, &u, 4);
    out[i] = r;
  }
  return out;
}

ki::ModelSpec verification_model(const char* name) {
  ki::ModelSpec s = *ki::named_model(name);
  s.layers = 1;
  s.vocab = 512;
  return s;
}

}  // namespace

// Causality holds under the emulation as on the device: a row's logits depend on the rows of its
// own engine step (their amax) and the steps before, not on later steps. So the prefill's last
// row is the same whether the sequence stops there or a decode step follows; and the grouping is
// what the amax is taken over: the first token as a step of its own (its own amax, surely below
// the 13 rows' largest) gives that row other codes than in a 13-row step.
TEST(InferFp8, EmulationQuantisesEachEngineStepOnItsOwn) {
  const ki::ModelSpec s = verification_model("llama-small");
  const std::vector<double> w = bf16_weights(s);
  std::vector<std::int32_t> tokens = ki::prompt_tokens(s, 7, 0, 13);
  const idx v = s.vocab_shard();
  const std::vector<idx> prefill = {13}, first_alone = {1, 12};
  const std::vector<double> alone = ki::reference_logits(s, w, tokens, &prefill);
  const std::vector<double> split = ki::reference_logits(s, w, tokens, &first_alone);
  tokens.push_back(5);
  const std::vector<idx> then_decode = {13, 1};
  const std::vector<double> stepped = ki::reference_logits(s, w, tokens, &then_decode);
  // The 13- and 14-row forwards are different GEMM shapes, which OpenBLAS may block or kernel
  // differently (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE, threads): the same codes give logits equal
  // up to double rounding, a relative 1e-9 of the logits' scale (each dot product has at most
  // a few thousand terms: K x 2^-53 ~ 1e-12, with headroom for the layers between). A different
  // grouping changes fp8 codes, which move a logit by percents of the scale (E4M3: 2^-4
  // relative per input), so the second bound sits far above rounding and far below that.
  double scale = 0;
  for (idx i = 0; i < v; ++i) scale = std::max(scale, std::abs(alone[static_cast<std::size_t>(12 * v + i)]));
  ASSERT_GT(scale, 0.0);
  double same = 0, differs = 0;
  for (idx i = 0; i < v; ++i) {
    const auto at = [&](idx row) { return static_cast<std::size_t>(row * v + i); };
    same = std::max(same, std::abs(alone[at(12)] - stepped[at(12)]));
    differs = std::max(differs, std::abs(alone[at(0)] - split[at(0)]));
  }
  EXPECT_LE(same, 1e-9 * scale);
  EXPECT_GT(differs, 1e-4 * scale);
  // Steps that do not cover the tokens, or a gpt model, are refused.
  EXPECT_THROW((void)ki::reference_logits(s, w, tokens, &prefill), std::invalid_argument);
  const ki::ModelSpec g = tiny(ki::Arch::Gpt);
  const std::vector<idx> one_step = {3};
  EXPECT_THROW((void)ki::reference_logits(g, ki::random_weights<double>(g, 1), {1, 2, 3}, &one_step),
               std::invalid_argument);
}

// What the fp8 codes themselves do to the verification model's logits (the emulated reference
// against the exact one, both from the same bf16 weights), the scale the CUDA path's tolerance
// kFp8Tolerance (0.15 x RMS, bench/suites/infer/infer.hpp) is set against. Measured here: the
// codes move the four returned rows' logits by up to 0.21 x RMS (E4M3 keeps 3 mantissa bits: a
// rounding error of up to 2^-4 relative on each input of each product). The device is checked
// against the emulation, which takes the very same codes; what remains is bf16's own error (the
// bf16 path allows 0.08) and the codes that bf16 roundings before a quantiser push across an
// E4M3 rounding boundary (about 2^-10 / 2^-3, under 1% of the codes, each a whole E4M3 step
// off: about a third of the codes' own effect). A path that skipped a descale, quantised a
// weight without its transpose or took another tensor's scale is off by far more than both.
TEST(InferFp8, EmulationMovesTheLogitsMeasurably) {
  const ki::ModelSpec s = verification_model("llama-small");
  const std::vector<double> w = bf16_weights(s);
  std::vector<std::int32_t> tokens = ki::prompt_tokens(s, 7, 0, 16);
  const std::vector<idx> steps = {13, 1, 1, 1};
  const std::vector<double> exact = ki::reference_logits(s, w, tokens);
  const std::vector<double> fp8 = ki::reference_logits(s, w, tokens, &steps);
  ASSERT_EQ(exact.size(), fp8.size());
  const idx v = s.vocab_shard();
  double worst = 0;
  for (idx row = 12; row < 16; ++row) {  // the rows the device's steps return
    const auto at = [&](idx i) { return static_cast<std::size_t>(row * v + i); };
    double ss = 0, err = 0;
    for (idx i = 0; i < v; ++i) ss += exact[at(i)] * exact[at(i)];
    const double rms = std::sqrt(ss / static_cast<double>(v));
    for (idx i = 0; i < v; ++i) err = std::max(err, std::abs(fp8[at(i)] - exact[at(i)]) / rms);
    worst = std::max(worst, err);
  }
  std::printf("fp8 emulation vs exact, llama-small verification model: max |diff| = %.4f x RMS\n", worst);
  EXPECT_GT(worst, 0.05);  // the emulation does quantise, by E4M3's few bits
  EXPECT_LT(worst, 0.4);   // and by far less than a broken fp8 path would be off
}

// The planner's rule for dtype=fp8 (infer_suite.cpp): fp8 Tensor Cores (sm_89+) and linear
// dimensions in multiples of 16; other dtypes and the CPU are not its business.
TEST(InferFp8, PlannedOnSm89AndNewerWithDimensionsOf16) {
  namespace si = gpubench::suites::infer;
  gpubench::DeviceInfo gpu;
  gpu.kind = gpubench::DeviceKind::Cuda;
  si::InferSpec spec;
  spec.model = *ki::named_model("llama3-8b");
  spec.dtype = "fp8";
  for (auto [major, minor] : {std::pair{8, 9}, std::pair{9, 0}, std::pair{10, 0}, std::pair{12, 0}}) {
    gpu.cc_major = major, gpu.cc_minor = minor;
    EXPECT_EQ(si::fp8_unsupported(gpu, spec), std::nullopt) << major << minor;
  }
  gpu.cc_major = 8, gpu.cc_minor = 6;
  const auto old = si::fp8_unsupported(gpu, spec);
  ASSERT_TRUE(old.has_value());
  EXPECT_NE(old->find("this GPU is sm_86"), std::string::npos) << *old;
  spec.dtype = "bf16";
  EXPECT_EQ(si::fp8_unsupported(gpu, spec), std::nullopt);
  gpu.cc_major = 9, gpu.cc_minor = 0;
  spec.dtype = "fp8";
  spec.model.ffn = 14344;  // 14344 / 16 = 896.5
  const auto dims = si::fp8_unsupported(gpu, spec);
  ASSERT_TRUE(dims.has_value());
  EXPECT_NE(dims->find("FFN width (14344)"), std::string::npos) << *dims;
}

namespace {

// How the GPU step cases check the benchmark engine's own batched step: small models against
// the double reference, large ones (and fp8, whose scales span the whole batch) against each
// chunk run alone, at twice the tolerance; always the first and the last chunk.
TEST(InferBatchedStep, SmallModelsAgainstTheReferenceLargeOnesAgainstTheChunkAlone) {
  namespace si = gpubench::suites::infer;
  const ki::ModelSpec small = *ki::named_model("llama-small");
  const ki::ModelSpec big = *ki::named_model("llama3-8b");

  const si::BatchedStepCheck s = si::batched_step_check(small, "bf16", 8, 65, 8e-2);
  EXPECT_TRUE(s.reference);
  EXPECT_EQ(s.chunks, (std::vector<std::int64_t>{0, 7}));
  EXPECT_DOUBLE_EQ(s.tolerance, 8e-2);

  const si::BatchedStepCheck b = si::batched_step_check(big, "bf16", 16, 4097, 8e-2);
  EXPECT_FALSE(b.reference);  // 8e9 weights: no host reference
  EXPECT_EQ(b.chunks, (std::vector<std::int64_t>{0, 15}));
  EXPECT_DOUBLE_EQ(b.tolerance, 2 * 8e-2);

  EXPECT_FALSE(si::batched_step_check(small, "fp8", 8, 65, 0.15).reference);
  // A small model's long prefill: over the reference budget.
  EXPECT_FALSE(si::batched_step_check(small, "bf16", 2, 1 << 20, 8e-2).reference);

  const si::BatchedStepCheck one = si::batched_step_check(small, "fp16", 1, 33, 2e-2);
  EXPECT_EQ(one.chunks, (std::vector<std::int64_t>{0}));
  EXPECT_TRUE(si::batched_step_check(small, "bf16", 0, 33, 8e-2).chunks.empty());
}

}  // namespace
