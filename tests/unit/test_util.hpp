#pragma once
// Helpers shared by the unit tests.
#include <gtest/gtest.h>

#include <string>

#include "bench/core/errors.hpp"

namespace gpubench::testing {

// The message of the UsageError `f` throws; a test failure if it throws none.
template <class F>
std::string usage_error(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected gpubench::UsageError";
  return {};
}

}  // namespace gpubench::testing
