#pragma once
// Every suite gpubench knows, in the order runs and listings use. Adding a family means adding
// a folder under bench/suites/ and one line in all_suites.cpp.
#include <memory>
#include <vector>

#include "bench/core/suite.hpp"

namespace gpubench::suites {

const std::vector<const Suite*>& all();

}  // namespace gpubench::suites
