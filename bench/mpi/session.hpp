#pragma once
// The MPI session of a multi-process run: MPI initialised once, this rank's place (rank, size,
// local rank from the host names, node count), and the Team the harness keeps ranks in step
// with. Every agreement step is bounded by a timeout: a rank that does not arrive ends the run
// with a message naming it and the step, instead of hanging it.
//
// Built without MPI (CMake option GPUBENCH_WITH_MPI off), session() returns null and
// built_with_mpi() is false.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/core/team.hpp"

namespace gpubench::mpi {

bool built_with_mpi();
std::string library_version();  // MPI_Get_library_version's first line; empty without MPI
// The MPI library settings gpubench chose for the run ("NAME=VALUE (why)"), recorded in the
// results' context; empty when it chose none (another MPI than Open MPI, the user's own
// setting kept, or a build without MPI).
std::vector<std::string> library_settings();
// Makes those choices (session() calls it before MPI_Init; so does a program of its own that
// initialises MPI, such as perf/dp_comm_overhead.cpp, to measure what gpubench runs).
void choose_library_settings();

class Session : public Team {
 public:
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const { return local_rank_; }  // among the ranks on this host
  int local_size() const { return local_size_; }
  int nodes() const { return nodes_; }
  const std::vector<std::string>& hosts() const { return hosts_; }  // per rank
  double timeout_s() const { return timeout_s_; }

  std::vector<double> all_gather(double value, const std::string& step) override;
  std::vector<std::string> all_gather(const std::string& text, const std::string& step) override;
  // A dissemination barrier of point-to-point messages on the agreement communicator, polled
  // until the timeout (then the run ends); session_mpi.cpp says why not MPI_Ibarrier.
  void barrier(const std::string& step) override;
  // Every rank's text to rank 0, waiting at most `timeout_s` and never ending the run: on rank 0
  // the texts by rank, nullopt for a rank that did not send in time (killed, stopped); on the
  // others an empty vector. For handing over what a rank measured at the end (soak), where a
  // missing rank must not cost rank 0 its own results.
  std::vector<std::optional<std::string>> gather_to_root(const std::string& text, double timeout_s);
  // A stream to rank 0 while the ranks work (soak): post_to_root sends `text` without waiting
  // (ranks other than 0; nothing on rank 0), take_posts returns on rank 0 what has arrived since
  // the last call, as (rank, text) in each rank's order (empty elsewhere). Never blocks, never
  // ends the run: a rank killed later has handed over what it posted. gather_to_root completes
  // a rank's posts (within its timeout) before its own message, and rank 0 keeps taking them
  // while it waits there.
  void post_to_root(const std::string& text);
  std::vector<std::pair<int, std::string>> take_posts();
  // Rank 0's bytes on every rank (the NCCL unique id), bounded by the timeout.
  std::string broadcast(const std::string& bytes, const std::string& step);

  // Ends every rank of the run: prints `message` (prefixed with this rank) and calls MPI_Abort.
  [[noreturn]] void abort_run(const std::string& message) const;

 protected:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, nodes_ = 1;
  std::vector<std::string> hosts_;
  double timeout_s_ = 300;
};

// Initialises MPI on first call (MPI_Init_thread, SINGLE: see session_mpi.cpp; finalised at exit) and joins the
// ranks (an all_gather of host names, bounded by `timeout_s`). Null without MPI support.
Session* session(double timeout_s = 300);
// Whether session() has been initialised (it is not in a plain single-process run until a case
// needs it).
bool active();

}  // namespace gpubench::mpi
