#pragma once
// NCCL communicators for every suite that runs NCCL (the collectives suite's transport, the
// train suite's data-parallel step), created one way: one process driving several GPUs
// (ncclCommInitAll), or one rank per GPU under MPI (rank 0 creates the unique id, the MPI
// session broadcasts it, ncclCommInitRankConfig non-blocking, polled with a deadline so a rank
// that never joins ends the run naming it). Communicators are cached for the process: creating
// one costs far more than a case. Compiled only with NCCL (GPUBENCH_WITH_NCCL).
#include <nccl.h>

#include <chrono>
#include <vector>

#include "bench/mpi/session.hpp"
#include "bench/suites/collectives/progress.hpp"

#ifndef NCCL_VERSION
#define NCCL_VERSION(X, Y, Z) ((X)*10000 + (Y)*100 + (Z))
#endif

namespace gpubench::suites::collectives {

// Throws std::runtime_error naming `what` for any result but ncclSuccess and ncclInProgress
// (the latter is settled with settle()).
void nccl_check(ncclResult_t r, const char* what);
#define GPUBENCH_NCCL_CHECK(expr) ::gpubench::suites::collectives::nccl_check((expr), #expr)

std::chrono::steady_clock::time_point deadline_after(double seconds);
// NCCL's state of a communicator: ready, still working on the last call, or failed.
CommStatus comm_status(ncclComm_t comm);
// Waits until none of `comms` is in progress, or the deadline (progress.hpp). The first rounds
// only yield: this wait sits inside timed calls, and an enqueue finishes in microseconds.
Settled settle(const std::vector<ncclComm_t>& comms, std::chrono::steady_clock::time_point deadline);

// One communicator per GPU first_gpu .. first_gpu+gpus-1, driven by this process.
std::vector<ncclComm_t> process_comms(int first_gpu, int gpus, double timeout_s);
// This rank's communicator over every rank of `session`, on `device` (non-blocking).
ncclComm_t mpi_comm(mpi::Session& session, int device, double timeout_s);
// Aborts every cached communicator and forgets them (after an error or a timeout).
void abort_all_comms();

}  // namespace gpubench::suites::collectives
