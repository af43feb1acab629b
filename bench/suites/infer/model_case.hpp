#pragma once
// What the infer suite's CPU cases share (prefill, decode, serve): the weights, the paged
// cache, the engine, the host pool and the reference comparison. Internal to the suite.
#include <memory>
#include <vector>

#include "bench/suites/infer/infer.hpp"
#include "kernels/memory/host_pool.hpp"

namespace gpubench::suites::infer {

class ModelCase : public HostCase {
 public:
  explicit ModelCase(const InferSpec& spec) : s_(spec) {}
  ~ModelCase() override;

 protected:
  // Weights, a cache of `sequences` sequences of up to `tokens` tokens each (pages interleaved
  // over the sequences, so each one's pages are scattered through the pool; `extra_pages` more
  // left free), the engine, the pool; OpenBLAS set to the case's threads. `step_rows`: the most
  // rows a step will hold (activations). Skipped when it would not fit in the free memory.
  void build(kernels::infer::idx tokens, kernels::infer::idx sequences, kernels::infer::idx step_rows,
             kernels::infer::idx extra_pages = 0);
  // Runs f over the host pool, carrying an exception back (empty without a pool).
  kernels::infer::Parallel parallel();
  // The reference logits of the last position of `tokens`, in double from the same weights.
  std::vector<double> reference_last(const std::vector<std::int32_t>& tokens);
  void add_common(Metrics& m) const;

  InferSpec s_;
  int threads_ = 1, blas_threads_ = 0;
  std::vector<float> weights_;
  std::vector<double> weights_d_;
  std::unique_ptr<kernels::infer::KvCache<float>> cache_;
  std::unique_ptr<kernels::infer::Engine<float>> engine_;
  std::unique_ptr<kernels::HostPool> pool_;
  std::vector<int> seqs_;
};

}  // namespace gpubench::suites::infer
