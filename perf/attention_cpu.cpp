// Checks the attention suite's CPU goals (issue 28), one thread throughout:
//  - the tiled `flash` forward (fp32, b=1, h=8, s=2048, d=64) reaches at least 0.5x OpenBLAS
//    sgemm's rate at 2048^3 measured in the same run;
//  - it is faster than `naive` (materialised scores) from s=2048 up (2048 and 4096 here);
//  - its memory stays O(s*d): the peak RSS above the inputs' own is a few tiles, where the
//    naive kernel's holds a [s x s] score matrix.
// Each measurement runs in a child process of its own (this binary re-executed with --child), so
// each peak RSS (getrusage's ru_maxrss) is that algorithm's alone. Best of ROUNDS runs each.
// Exit status 1 when a goal is missed.
//   build/<preset>/perf/gpubench_perf_attention [ROUNDS]
#include <cblas.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/attention/attention_host.hpp"
#include "kernels/common/random.hpp"

extern char** environ;

namespace ka = gpubench::kernels::attention;

namespace {

struct Result {
  double seconds = 0;
  double rss_kib = 0;
};

std::vector<float> random(std::size_t n, std::uint64_t seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = gpubench::kernels::uniform_value(seed, i);
  return v;
}

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// In the child: "inputs" only allocates and fills (the RSS baseline), "sgemm" times a 2048^3
// product, "flash"/"naive" one forward at seq `s`.
Result child(const std::string& what, std::int64_t s, int rounds) {
  openblas_set_num_threads(1);
  Result r;
  double best = 1e30;
  if (what == "sgemm") {
    const std::size_t n = 2048;
    auto a = random(n * n, 1), b = random(n * n, 2);
    std::vector<float> c(n * n);
    for (int i = 0; i <= rounds; ++i) {
      const double t0 = now_s();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
      if (i > 0) best = std::min(best, now_s() - t0);  // the first call warms up
    }
  } else {
    ka::Shape sh;
    sh.batch = 1;
    sh.heads = sh.kv_heads = 8;
    sh.seq_q = sh.seq_kv = s;
    sh.head_dim = 64;
    auto q = random(static_cast<std::size_t>(sh.q_elements()), 1), k = random(static_cast<std::size_t>(sh.kv_elements()), 2);
    auto v = random(static_cast<std::size_t>(sh.kv_elements()), 3);
    std::vector<float> o(q.size(), 0.0f), lse(static_cast<std::size_t>(sh.lse_elements()), 0.0f);
    if (what != "inputs") {
      ka::Tensors t;
      t.q = q.data();
      t.k = k.data();
      t.v = v.data();
      t.o = o.data();
      t.lse = lse.data();
      const ka::Algorithm a = what == "flash" ? ka::Algorithm::Flash : ka::Algorithm::Naive;
      const ka::Parallel serial = [](int n, const std::function<void(int)>& f) {
        for (int i = 0; i < n; ++i) f(i);
      };
      for (int i = 0; i <= rounds; ++i) {
        const double t0 = now_s();
        ka::forward(a, sh, t, 1, serial);
        if (i > 0) best = std::min(best, now_s() - t0);
      }
    }
  }
  r.seconds = best;
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  r.rss_kib = static_cast<double>(u.ru_maxrss);
  return r;
}

Result spawn_child(const std::string& what, std::int64_t s, int rounds) {
  int fd[2];
  if (pipe(fd) != 0) std::exit(2);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fd[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fd[0]);
  const std::string seq = std::to_string(s), n = std::to_string(rounds);
  std::vector<char*> argv{const_cast<char*>("gpubench_perf_attention"), const_cast<char*>("--child"),
                          const_cast<char*>(what.c_str()), const_cast<char*>(seq.c_str()), const_cast<char*>(n.c_str()),
                          nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ) != 0) std::exit(2);
  close(fd[1]);
  std::string text;
  char buf[256];
  for (ssize_t got; (got = read(fd[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(got));
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  Result r;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || std::sscanf(text.c_str(), "%lf %lf", &r.seconds, &r.rss_kib) != 2) {
    fmt::print(stderr, "gpubench_perf_attention: the {} child failed\n", what);
    std::exit(2);
  }
  posix_spawn_file_actions_destroy(&actions);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--child") {
    const Result r = child(argv[2], std::atoll(argv[3]), std::atoi(argv[4]));
    std::printf("%.9g %.0f\n", r.seconds, r.rss_kib);
    return 0;
  }
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const Result sgemm = spawn_child("sgemm", 0, rounds);
  const double sgemm_gflops = 2.0 * 2048.0 * 2048.0 * 2048.0 / sgemm.seconds / 1e9;
  fmt::print("OpenBLAS sgemm 2048^3, 1 thread: {:.1f} GFLOP/s\n", sgemm_gflops);
  bool ok = true;
  for (std::int64_t s : {2048, 4096}) {
    ka::Shape sh;
    sh.heads = sh.kv_heads = 8;
    sh.seq_q = sh.seq_kv = s;
    sh.head_dim = 64;
    const double flops = ka::forward_flops(sh);
    const Result base = spawn_child("inputs", s, rounds), flash = spawn_child("flash", s, rounds),
                 naive = spawn_child("naive", s, rounds);
    const double fg = flops / flash.seconds / 1e9, ng = flops / naive.seconds / 1e9;
    const double scores_mib = static_cast<double>(s) * static_cast<double>(s) * 4 / 1048576.0;
    const double flash_extra = (flash.rss_kib - base.rss_kib) / 1024, naive_extra = (naive.rss_kib - base.rss_kib) / 1024;
    const bool rate_ok = s != 2048 || fg >= 0.5 * sgemm_gflops;
    const bool faster = fg > ng;
    const bool memory_ok = flash_extra < scores_mib / 8;
    ok = ok && rate_ok && faster && memory_ok;
    fmt::print(
        "s={:5}: flash {:.1f} GFLOP/s ({:.2f}x sgemm{}), naive {:.1f} GFLOP/s: flash {:.2f}x naive (goal > 1) {}; "
        "peak RSS above the inputs: flash {:.1f} MiB, naive {:.1f} MiB, one head's scores {:.0f} MiB (goal: flash < "
        "1/8 of it) {}\n",
        s, fg, fg / sgemm_gflops, s == 2048 ? ", goal >= 0.5" : "", ng, fg / ng, rate_ok && faster ? "PASS" : "FAIL",
        flash_extra, naive_extra, scores_mib, memory_ok ? "PASS" : "FAIL");
  }
  return ok ? 0 : 1;
}
