#pragma once
// The `selftest` suite: CPU cases that misbehave on purpose (throw, allocate without bound,
// hang, crash, answer wrongly), so the end-to-end tests can check that a run survives them.
// Present only when the environment sets GPUBENCH_ENABLE_SELFTEST=1.
#include <memory>

#include "bench/core/suite.hpp"

namespace gpubench::suites::selftest {

std::unique_ptr<Suite> make_suite();

}  // namespace gpubench::suites::selftest
