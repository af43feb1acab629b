#pragma once
// The processes of one run, when a run spans several (MPI ranks, one per GPU). The harness
// keeps them in step through this interface and knows nothing else about the transport:
// - Google Benchmark and the measurement policy decide run counts from each process's own
//   timings, so ranks would disagree and a collective would hang. Warm-up decisions are made
//   on the slowest rank's time (every rank then plans the same runs), and a case's outcome
//   (setup, verification) is agreed before any rank goes on.
// - Only rank 0 writes results; the others report their times to it.
// A run in one process has no team (HarnessOptions::team is null).
#include <string>
#include <vector>

namespace gpubench {

class Team {
 public:
  virtual ~Team() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Collective: every rank calls these in the same order. Each returns, on every rank, the
  // values of all ranks indexed by rank. `step` names the step for the message printed when a
  // rank does not arrive within the team's timeout (the implementation then ends the run).
  virtual std::vector<double> all_gather(double value, const std::string& step) = 0;
  virtual std::vector<std::string> all_gather(const std::string& text, const std::string& step) = 0;
  // Returns once every rank has called it (bounded by the same timeout). The default is an
  // all_gather; a transport with a cheaper barrier overrides it (it runs before every timed
  // window of a case whose SamplingPolicy asks for one).
  virtual void barrier(const std::string& step) { (void)all_gather(0.0, step); }
};

// Helpers over all_gather.
double team_max(Team& team, double value, const std::string& step);
double team_sum(Team& team, double value, const std::string& step);

}  // namespace gpubench
