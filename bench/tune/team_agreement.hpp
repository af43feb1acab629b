#pragma once
// Keeps a search identical on every rank of a multi-process tune (`gpubench tune train` under
// mpirun/srun). Successive halving (search.hpp) decides from two inputs only: its clock (the
// budget) and each measurement's outcome. Each rank reads its own clock and measures its own
// share of a data-parallel step, so left alone the ranks could take different decisions (one
// thinks the budget allows another measurement, another does not) and then wait for each other
// in different collectives until the session's timeout ends the run. So both inputs are agreed:
//
// - the clock: every reading is rank 0's (an all_gather at each reading; every rank reads the
//   clock at the same points because it takes the same decisions);
// - a measurement's outcome: rank 0's (status, score, reason, figures), except that a rank that
//   failed makes the outcome a failure (a configuration that did not run on every rank is never
//   recommended). A data-parallel case's figure is already the team's (the harness gathers the
//   ranks' times before computing it), so rank 0's figure is the one every rank computed.
//
// Every exchange goes through the Team, whose implementation bounds it with a timeout (a rank
// that does not arrive ends the run naming the step: bench/mpi/session.hpp).
#include <functional>
#include <string>

#include "bench/core/team.hpp"
#include "bench/tune/search.hpp"

namespace gpubench::tune {

// A clock whose every reading is rank 0's reading of `local`. Every rank must call it at the
// same points.
Clock agreed_clock(Team& team, Clock local);

// Runs `measure` on this rank (an exception becomes a Failed outcome with its message, so this
// rank still takes part in the exchange) and returns the outcome every rank agrees on: rank 0's,
// or the lowest rank's failure ("rank N: <reason>") when rank 0's is Ok and another rank's is not.
// `step` names the exchange in a timeout message.
Measured agreed_measurement(Team& team, const std::function<Measured()>& measure, const std::string& step);

// The outcome as text and back (exact: scores round-trip through JSON's shortest form).
std::string measured_to_text(const Measured& m);
Measured measured_from_text(const std::string& text);

}  // namespace gpubench::tune
