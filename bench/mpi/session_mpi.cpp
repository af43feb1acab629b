// The MPI session. Agreement steps are point-to-point on a duplicate of MPI_COMM_WORLD (so they
// never match a benchmark's messages): every rank sends its value to rank 0, rank 0 sends the
// whole list back. Both waits poll with a deadline, so rank 0 can name the ranks that did not
// arrive, and the others can say rank 0 did not answer.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstdlib>
#include <list>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "bench/core/context.hpp"
#include "bench/core/interrupt.hpp"
#include "bench/mpi/session.hpp"

namespace gpubench::mpi {
namespace {

// Tags of the agreement messages; the collectives suite's sendrecv ring uses tag 0.
constexpr int kGatherTag = 7701, kReplyTag = 7702, kBarrierTag = 7703, kRootTag = 7704, kStreamTag = 7705;

class MpiSession final : public Session {
 public:
  explicit MpiSession(double timeout_s) {
    timeout_s_ = timeout_s;
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    // Local rank from the host names (as nccl-tests does by hashing them): the ranks on this
    // host, in rank order. The gather doubles as the join check with its timeout.
    hosts_ = all_gather(host_name(), "joining the run");
    std::map<std::string, int> per_host;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) local_rank_ = per_host[hosts_[static_cast<std::size_t>(r)]];
      ++per_host[hosts_[static_cast<std::size_t>(r)]];
    }
    local_size_ = per_host[hosts_[static_cast<std::size_t>(rank_)]];
    nodes_ = static_cast<int>(per_host.size());
  }

  MPI_Comm comm() const { return comm_; }

  // Waits for `request` until the deadline; false on timeout.
  static bool wait(MPI_Request& request, std::chrono::steady_clock::time_point deadline) {
    int done = 0;
    auto spin_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
    while (true) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (done) return true;
      const auto now = std::chrono::steady_clock::now();
      if (now > deadline) return false;
      // Spin briefly (agreement is usually immediate), then yield the core: ranks may share
      // cores (--oversubscribe on small CI machines).
      if (now > spin_until) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  // Receives one message of unknown length from `source`; nullopt on timeout. `drain`: the
  // stream's messages that arrive meanwhile are taken too (kept for take_posts).
  std::optional<std::string> receive(int source, int tag, std::chrono::steady_clock::time_point deadline,
                                     bool drain = false) {
    int flag = 0;
    MPI_Status status;
    auto spin_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
    while (true) {
      if (drain) drain_stream();
      MPI_Iprobe(source, tag, comm_, &flag, &status);
      if (flag) break;
      const auto now = std::chrono::steady_clock::now();
      if (now > deadline) return std::nullopt;
      if (now > spin_until) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    int count = 0;
    MPI_Get_count(&status, MPI_CHAR, &count);
    std::string text(static_cast<std::size_t>(count), '\0');
    MPI_Recv(text.data(), count, MPI_CHAR, source, tag, comm_, MPI_STATUS_IGNORE);
    return text;
  }

  void send(const std::string& text, int dest, int tag, std::chrono::steady_clock::time_point deadline,
            const std::string& step) {
    MPI_Request request;
    MPI_Isend(text.data(), static_cast<int>(text.size()), MPI_CHAR, dest, tag, comm_, &request);
    if (!wait(request, deadline)) {
      abort_run(fmt::format("rank {} did not take part in {} within {} s", dest, step, timeout_s_));
    }
  }

  // To rank 0 only, and never ending the run: what arrived within `timeout_s` (rank 0), nothing
  // (the others; their send is abandoned at the deadline).
  std::vector<std::optional<std::string>> gather_root(const std::string& text, double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s));
    std::vector<std::optional<std::string>> all(static_cast<std::size_t>(size_));
    if (rank_ == 0) {
      all[0] = text;
      // While waiting, rank 0 keeps taking the stream (so the others' last posts complete).
      for (int r = 1; r < size_; ++r) all[static_cast<std::size_t>(r)] = receive(r, kRootTag, deadline, true);
      return all;
    }
    // The stream's posts first (rank 0 takes them while it waits here), bounded by the deadline.
    for (auto it = posts_.begin(); it != posts_.end(); it = posts_.erase(it)) {
      if (!wait(it->request, deadline)) {
        MPI_Cancel(&it->request);
        MPI_Request_free(&it->request);
      }
    }
    MPI_Request request;
    MPI_Isend(text.data(), static_cast<int>(text.size()), MPI_CHAR, 0, kRootTag, comm_, &request);
    if (!wait(request, deadline)) {
      MPI_Cancel(&request);
      MPI_Request_free(&request);
    }
    return all;
  }

  // Every message carries its step, so ranks that got out of step (one skipped a case the
  // others run) are named instead of exchanging each other's values.
  std::vector<std::string> gather_all(const std::string& text, const std::string& step) {
    const std::vector<std::string> tagged = gather_tagged(
        nlohmann::json::array({step, text}).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), step);
    std::vector<std::string> values;
    for (int r = 0; r < size_; ++r) {
      const nlohmann::json m = nlohmann::json::parse(tagged[static_cast<std::size_t>(r)]);
      const std::string at = m.at(0).get<std::string>();
      if (at != step) abort_run(fmt::format("ranks out of step: rank {} is at {}, rank {} at {}", r, at, rank_, step));
      values.push_back(m.at(1).get<std::string>());
    }
    return values;
  }

  // The barrier before each timed window: a dissemination barrier (in round k each rank sends
  // an empty message to rank + 2^k and waits for one from rank - 2^k: log2 n rounds, where a
  // gather through rank 0 would cost n messages per window), spinning on MPI_Test for its
  // first millisecond (the others are usually there within microseconds).
  // Not MPI_Ibarrier: Open MPI's first non-blocking collective registers coll/libnbc's progress
  // function for good (NBC_Start: opal_progress_register), and every blocking call after it
  // pays for it: +0.04 us on a 0.2 us 2-rank all-reduce here, a fifth of it (issue 17).
  // A barrier cannot say who is missing: ranks other than 0 wait one second longer, so when
  // rank 0 waits at an agreement step (which names the missing ranks) instead, its message
  // comes first.
  void barrier_on(const std::string& step) {
    const double grace_s = rank_ == 0 ? 0.0 : 1.0;
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(timeout_s_ + grace_s));
    for (int k = 1; k < size_; k <<= 1) {
      MPI_Request requests[2];
      MPI_Irecv(nullptr, 0, MPI_BYTE, (rank_ - k + size_) % size_, kBarrierTag, comm_, &requests[0]);
      MPI_Isend(nullptr, 0, MPI_BYTE, (rank_ + k) % size_, kBarrierTag, comm_, &requests[1]);
      if (!wait(requests[0], deadline) || !wait(requests[1], deadline)) {
        abort_run(fmt::format("the ranks did not all reach {} within {} s", step, timeout_s_));
      }
    }
  }

  std::vector<std::string> gather_tagged(const std::string& text, const std::string& step) {
    const auto deadline =
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s_));
    std::vector<std::string> all(static_cast<std::size_t>(size_));
    if (rank_ == 0) {
      all[0] = text;
      std::vector<int> missing;
      for (int r = 1; r < size_; ++r) {
        std::optional<std::string> got = receive(r, kGatherTag, deadline);
        if (!got) {
          missing.push_back(r);
          continue;
        }
        all[static_cast<std::size_t>(r)] = std::move(*got);
      }
      if (!missing.empty()) {
        abort_run(fmt::format("rank{} {} did not reach {} within {} s", missing.size() > 1 ? "s" : "",
                              fmt::join(missing, ", "), step, timeout_s_));
      }
      const std::string reply = nlohmann::json(all).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      for (int r = 1; r < size_; ++r) send(reply, r, kReplyTag, deadline, step);
      return all;
    }
    send(text, 0, kGatherTag, deadline, step);
    std::optional<std::string> reply = receive(0, kReplyTag, deadline);
    if (!reply) abort_run(fmt::format("rank 0 did not answer at {} within {} s", step, timeout_s_));
    return nlohmann::json::parse(*reply).get<std::vector<std::string>>();
  }

  // The stream (Session::post_to_root): a non-blocking send that the buffer outlives; the
  // finished ones are let go at each post.
  void post(const std::string& text) {
    for (auto it = posts_.begin(); it != posts_.end();) {
      int done = 0;
      MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
      it = done ? posts_.erase(it) : std::next(it);
    }
    Post& p = posts_.emplace_back();
    p.text = text;
    MPI_Isend(p.text.data(), static_cast<int>(p.text.size()), MPI_CHAR, 0, kStreamTag, comm_, &p.request);
  }

  std::vector<std::pair<int, std::string>> take() {
    drain_stream();
    return std::exchange(arrived_, {});
  }

 private:
  struct Post {
    std::string text;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  // Every stream message that has arrived (probed, so each receive completes at once).
  void drain_stream() {
    while (true) {
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, kStreamTag, comm_, &flag, &status);
      if (!flag) return;
      int count = 0;
      MPI_Get_count(&status, MPI_CHAR, &count);
      std::string text(static_cast<std::size_t>(count), '\0');
      MPI_Recv(text.data(), count, MPI_CHAR, status.MPI_SOURCE, kStreamTag, comm_, MPI_STATUS_IGNORE);
      arrived_.emplace_back(status.MPI_SOURCE, std::move(text));
    }
  }

  // MPI_COMM_WORLD, not a duplicate (mpi_transport.cpp's bench_comm says why): the agreements
  // are point-to-point messages with tags of their own, which no collective can match.
  MPI_Comm comm_ = MPI_COMM_WORLD;
  std::list<Post> posts_;                          // this rank's stream sends in flight
  std::vector<std::pair<int, std::string>> arrived_;  // rank 0: stream messages taken, not yet handed out
};

std::vector<std::string>& chosen_settings() {
  static std::vector<std::string> s;
  return s;
}

}  // namespace

// Open MPI's non-blocking all-reduce (coll/libnbc, which the data-parallel train step overlaps
// with backward) picks a binomial reduce-then-broadcast below 4 ranks or in place: the whole
// bucket crosses twice, one rank at a time (libnbc's nbc_iallreduce.c, "p < 4 || ... ||
// inplace"). The blocking MPI_Allreduce the collectives suite measures uses recursive doubling
// or Rabenseifner's reduce-scatter + all-gather. Measured with gpubench_perf_dp_comm (perf/),
// 2 ranks: the default was 2-3x the blocking call on one bucket of 1-100 MiB, Rabenseifner
// within 10%. So unless the user set it, the step uses Rabenseifner's algorithm, and the
// projection from the collectives suite's curves (gpubench scaling) models what ran.
// Set in the environment before MPI_Init, where Open MPI reads its MCA parameters.
void choose_library_settings() {
  static bool chosen = false;
  if (chosen) return;
  chosen = true;
#ifdef OPEN_MPI
  const char* name = "OMPI_MCA_coll_libnbc_iallreduce_algorithm";
  if (std::getenv(name) == nullptr && ::setenv(name, "rabenseifner", 0) == 0) {
    chosen_settings().push_back("coll_libnbc_iallreduce_algorithm=rabenseifner (Open MPI's default for fewer than 4 "
                                "ranks or in place is a binomial reduce + broadcast; docs/suite-train.md)");
  }
#endif
}

namespace {

std::unique_ptr<MpiSession>& instance() {
  static std::unique_ptr<MpiSession> s;
  return s;
}

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace

bool built_with_mpi() { return true; }

std::vector<std::string> library_settings() { return chosen_settings(); }

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string s(text, static_cast<std::size_t>(length));
  return s.substr(0, s.find_first_of("\n,"));
}

namespace {

// Joining is bounded by --rank-timeout too: MPI_Init itself waits for every rank of the job
// (a rank that never starts keeps it waiting forever), and no MPI call can time it out. A
// watchdog thread ends this process (exit 1, a line naming the step) when the join has not
// completed in time; mpirun then ends the others.
class JoinWatchdog {
 public:
  explicit JoinWatchdog(double timeout_s) : thread_([this, timeout_s] { watch(timeout_s); }) {}
  ~JoinWatchdog() {
    {
      std::lock_guard lock(mutex_);
      joined_ = true;
    }
    done_.notify_all();
    thread_.join();
  }

 private:
  void watch(double timeout_s) {
    std::unique_lock lock(mutex_);
    if (done_.wait_for(lock, std::chrono::duration<double>(timeout_s), [this] { return joined_; })) return;
    const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
    if (rank == nullptr) rank = std::getenv("PMI_RANK");
    if (rank == nullptr) rank = std::getenv("SLURM_PROCID");
    fmt::print(stderr,
               "gpubench: rank {}: the ranks did not all join the run within {} s (--rank-timeout): a rank never "
               "started, or MPI could not connect them; ending the run\n",
               rank != nullptr ? rank : "?", timeout_s);
    std::fflush(stderr);
    std::_Exit(1);
  }

  std::mutex mutex_;
  std::condition_variable done_;
  bool joined_ = false;
  std::thread thread_;
};

}  // namespace

Session* session(double timeout_s) {
  std::unique_ptr<MpiSession>& s = instance();
  if (!s) {
    JoinWatchdog watchdog(timeout_s);  // covers MPI_Init and the join's all_gather below
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      // SINGLE: only the main thread (the harness's) calls MPI; the watchdog threads call
      // MPI_Abort only once the run is stuck and must end anyway. Not FUNNELED, though that
      // names this use more exactly: Open MPI 4.x turns on its internal locking for every
      // level above SINGLE (ompi_mpi_init: `if (*provided != MPI_THREAD_SINGLE)
      // opal_set_using_threads(true)`), and those mutexes and the threaded request wait
      // took a 2-rank shared-memory all-reduce of 4 B from 0.20 to 0.44 us here, best of 8
      // launches (perf: pthread_mutex_lock/unlock and ompi_sync_wait_mt in every call; issue 17).
      choose_library_settings();
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided);
      std::atexit(finalize_at_exit);
    }
    s = std::make_unique<MpiSession>(timeout_s);
  }
  return s.get();
}

bool active() { return instance() != nullptr; }

std::vector<double> Session::all_gather(double value, const std::string& step) {
  std::vector<double> out;
  for (const std::string& s : all_gather(fmt::format("{:.17g}", value), step)) out.push_back(std::stod(s));
  return out;
}

std::vector<std::string> Session::all_gather(const std::string& text, const std::string& step) {
  return static_cast<MpiSession*>(this)->gather_all(text, step);
}

std::vector<std::optional<std::string>> Session::gather_to_root(const std::string& text, double timeout_s) {
  return static_cast<MpiSession*>(this)->gather_root(text, timeout_s);
}

void Session::barrier(const std::string& step) { static_cast<MpiSession*>(this)->barrier_on(step); }

void Session::post_to_root(const std::string& text) {
  if (rank_ != 0) static_cast<MpiSession*>(this)->post(text);
}

std::vector<std::pair<int, std::string>> Session::take_posts() {
  if (rank_ != 0) return {};
  return static_cast<MpiSession*>(this)->take();
}

std::string Session::broadcast(const std::string& bytes, const std::string& step) {
  // Hex on the wire: the agreement messages are JSON text, and an NCCL id is binary.
  std::string hex;
  if (rank_ == 0) {
    for (unsigned char c : bytes) hex += fmt::format("{:02x}", c);
  }
  const std::string got = all_gather(hex, step)[0];
  std::string out;
  for (std::size_t i = 0; i + 1 < got.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(got.substr(i, 2), nullptr, 16)));
  }
  return out;
}

void Session::abort_run(const std::string& message) const {
  fmt::print(stderr, "gpubench: rank {} of {}: {}; ending the run\n", rank_, size_, message);
  std::fflush(stderr);
  // Settings a sweep changed go back before the launcher kills every rank (best effort).
  run_interrupt_restore();
  run_interrupt_cleanup();  // temporary files and the results file's lock: no unwinding follows
  // Exit status 1, as a single-process run that could not complete (README: exit status).
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

}  // namespace gpubench::mpi
