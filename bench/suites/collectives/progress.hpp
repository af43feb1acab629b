#pragma once
// Waiting until NCCL has really done what a call on non-blocking communicators asked, as plain
// logic the CPU tests can drive: the communicators' state, the clock and the pause between polls
// are passed in (nccl_transport.cpp passes ncclCommGetAsyncError, steady_clock and a yield).
//
// Why it matters: a non-blocking communicator (ncclConfig_t::blocking = 0, or NCCL_COMM_BLOCKING=0
// in the environment) may answer any call (ncclCommInitRankConfig, ncclGroupEnd and the
// collectives it ends, ncclCommFinalize) with ncclInProgress before the work is on the stream.
// NCCL's rule (user guide, "Fault Tolerance", and the communicator status reference,
// docs.nvidia.com/deeplearning/nccl/user-guide/docs/nccl4py/communicator/status.html): then poll
// ncclCommGetAsyncError until it no longer says ncclInProgress before the next NCCL call or any
// use of the stream; an error there means the communicator must be aborted. A stream queried
// before that is idle: a timer around it reads the enqueue time, not the collective's, and a
// check reads the buffers from before the collective.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpubench::suites::collectives {

enum class CommState { Ready, InProgress, Failed };

struct CommStatus {
  CommState state = CommState::Ready;
  int code = 0;  // the library's status code (an ncclResult_t), for the message
};

struct Settled {
  enum class Outcome { Ready, Failed, TimedOut };
  Outcome outcome = Outcome::Ready;
  std::size_t comm = 0;     // the first communicator that failed, or was still in progress at the deadline
  int code = 0;             // its status code
  std::int64_t rounds = 0;  // polling rounds (each polls every communicator not yet ready)
};

// Polls `status(i)` for communicators 0..count-1 until none is in progress: Ready when every
// one is, Failed at the first that reports an error, TimedOut when the deadline passes with one
// still in progress. A communicator found ready is not polled again. Every round polls before it
// looks at the clock, so work that completes right at the deadline counts as completed.
// `pause(rounds)` runs between rounds (a yield first, a sleep after a while).
template <class Status, class Now, class Pause>
Settled wait_until_settled(std::size_t count, Status&& status, std::chrono::steady_clock::time_point deadline,
                           Now&& now, Pause&& pause) {
  std::vector<bool> ready(count, false);
  Settled out;
  while (true) {
    ++out.rounds;
    bool pending = false;
    std::size_t first_pending = 0;
    for (std::size_t i = 0; i < count; ++i) {
      if (ready[i]) continue;
      const CommStatus s = status(i);
      if (s.state == CommState::Failed) {
        out.outcome = Settled::Outcome::Failed;
        out.comm = i;
        out.code = s.code;
        return out;
      }
      if (s.state == CommState::Ready) {
        ready[i] = true;
      } else if (!pending) {
        pending = true;
        first_pending = i;
        out.code = s.code;
      }
    }
    if (!pending) {
      out.code = 0;
      return out;
    }
    if (now() > deadline) {
      out.outcome = Settled::Outcome::TimedOut;
      out.comm = first_pending;
      return out;
    }
    pause(out.rounds);
  }
}

}  // namespace gpubench::suites::collectives
