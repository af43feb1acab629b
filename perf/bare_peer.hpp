#pragma once
// What the bare GPU peers (memcpy_bare.cpp, chase_bare.cu) share: a CUDA error ends the program
// with exit status 1, bad usage with 2, and the two timing options every peer takes. Only the
// CUDA runtime and the standard library: no gpubench code, so a harness mistake cannot hide on
// both sides of a comparison.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace bare_peer {

// The program's name in its messages ("memcpy-bare") and its usage line.
struct Program {
  const char* name;
  const char* synopsis;
};

[[noreturn]] inline void fail(const Program& p, const char* what, cudaError_t e) {
  std::fprintf(stderr, "%s: %s: %s\n", p.name, what, cudaGetErrorString(e));
  std::exit(1);
}

[[noreturn]] inline void usage(const Program& p, const std::string& why) {
  std::fprintf(stderr, "%s: %s (usage: %s)\n", p.name, why.c_str(), p.synopsis);
  std::exit(2);
}

// --min-time S: 0 < S <= 600.
inline double parse_min_time(const Program& p, const std::string& v) {
  char* end = nullptr;
  const double s = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(s > 0) || s > 600) usage(p, "--min-time " + v + ": expected 0 < S <= 600");
  return s;
}

// --rounds N: 1 to 100.
inline int parse_rounds(const Program& p, const std::string& v) {
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < 1 || n > 100) usage(p, "--rounds " + v + ": expected 1 to 100");
  return static_cast<int>(n);
}

}  // namespace bare_peer

// Every CUDA call of a peer: `kProgram` names the program in the message.
#define BARE_CHECK(call)                                         \
  do {                                                           \
    const cudaError_t e_ = (call);                               \
    if (e_ != cudaSuccess) bare_peer::fail(kProgram, #call, e_); \
  } while (0)
