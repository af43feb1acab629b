#include "bench/suites/collectives/nccl_comm.hpp"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>

#include "bench/core/cuda.hpp"

namespace gpubench::suites::collectives {
namespace {

// Keyed by the GPUs they span. Aborted ones are dropped. None is finalized or destroyed before
// exit (as a process that ends may leave them to the driver); code that adds ncclCommFinalize
// must poll it with settle() like init, since it too answers ncclInProgress on a non-blocking
// communicator.
std::map<std::string, std::vector<ncclComm_t>>& comm_cache() {
  static std::map<std::string, std::vector<ncclComm_t>> cache;
  return cache;
}

}  // namespace

void nccl_check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess && r != ncclInProgress) {
    throw std::runtime_error(fmt::format("{}: {}", what, ncclGetErrorString(r)));
  }
}

std::chrono::steady_clock::time_point deadline_after(double seconds) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

CommStatus comm_status(ncclComm_t comm) {
  ncclResult_t state = ncclSuccess;
  const ncclResult_t r = ncclCommGetAsyncError(comm, &state);
  if (r != ncclSuccess) return {CommState::Failed, static_cast<int>(r)};
  if (state == ncclInProgress) return {CommState::InProgress, static_cast<int>(state)};
  if (state != ncclSuccess) return {CommState::Failed, static_cast<int>(state)};
  return {CommState::Ready, 0};
}

Settled settle(const std::vector<ncclComm_t>& comms, std::chrono::steady_clock::time_point deadline) {
  return wait_until_settled(
      comms.size(), [&](std::size_t i) { return comm_status(comms[i]); }, deadline,
      [] { return std::chrono::steady_clock::now(); },
      [](std::int64_t rounds) {
        if (rounds < 10000) std::this_thread::yield();
        else std::this_thread::sleep_for(std::chrono::microseconds(100));
      });
}

void abort_all_comms() {
  for (auto it = comm_cache().begin(); it != comm_cache().end();) {
    for (ncclComm_t c : it->second) (void)ncclCommAbort(c);
    it = comm_cache().erase(it);
  }
}

std::vector<ncclComm_t> process_comms(int first_gpu, int gpus, double timeout_s) {
  const std::string key = fmt::format("process:{}+{}", first_gpu, gpus);
  auto it = comm_cache().find(key);
  if (it != comm_cache().end()) return it->second;
  std::vector<int> devices;
  for (int g = 0; g < gpus; ++g) devices.push_back(first_gpu + g);
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(gpus));
  GPUBENCH_NCCL_CHECK(ncclCommInitAll(comms.data(), gpus, devices.data()));
  // Blocking by default; NCCL_COMM_BLOCKING=0 in the environment makes them non-blocking.
  const Settled s = settle(comms, deadline_after(timeout_s));
  if (s.outcome != Settled::Outcome::Ready) {
    for (ncclComm_t c : comms) (void)ncclCommAbort(c);
    throw std::runtime_error(fmt::format(
        "ncclCommInitAll over GPUs {}..{}: {}", first_gpu, first_gpu + gpus - 1,
        s.outcome == Settled::Outcome::Failed ? ncclGetErrorString(static_cast<ncclResult_t>(s.code))
                                              : fmt::format("not ready within {} s", timeout_s)));
  }
  comm_cache()[key] = comms;
  return comms;
}

// Rank 0 creates the id; every rank joins within the timeout (non-blocking init, polled).
ncclComm_t mpi_comm(mpi::Session& session, int device, double timeout_s) {
  const std::string key = fmt::format("mpi:{}", device);
  auto it = comm_cache().find(key);
  if (it != comm_cache().end()) return it->second.front();
  ncclUniqueId id;
  std::string bytes;
  if (session.rank() == 0) {
    GPUBENCH_NCCL_CHECK(ncclGetUniqueId(&id));
    bytes.assign(reinterpret_cast<const char*>(&id), sizeof id);
  }
  bytes = session.broadcast(bytes, "the NCCL unique id broadcast");
  std::memcpy(&id, bytes.data(), std::min(bytes.size(), sizeof id));
  cuda::ScopedDevice on(device);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  GPUBENCH_NCCL_CHECK(ncclCommInitRankConfig(&comm, session.size(), id, session.rank(), &config));
  const Settled s = settle({comm}, deadline_after(timeout_s));
  if (s.outcome == Settled::Outcome::Failed) {
    const std::string why = fmt::format("ncclCommInitRank (rank {} of {}, GPU {}): {} ({})", session.rank(),
                                        session.size(), device, ncclGetErrorString(static_cast<ncclResult_t>(s.code)),
                                        ncclGetLastError(comm));
    (void)ncclCommAbort(comm);
    throw std::runtime_error(why);
  }
  if (s.outcome == Settled::Outcome::TimedOut) {
    (void)ncclCommAbort(comm);
    session.abort_run(
        fmt::format("ncclCommInitRank (rank {} of {}, GPU {}) did not complete within {} s: a rank "
                    "did not join",
                    session.rank(), session.size(), device, timeout_s));
  }
  // Every rank confirms it joined, so rank 0 can name the ranks that did not.
  (void)session.all_gather(1.0, "NCCL communicator creation");
  comm_cache()[key] = {comm};
  return comm;
}

}  // namespace gpubench::suites::collectives
