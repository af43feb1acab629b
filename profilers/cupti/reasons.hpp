#pragma once
// Why a CUPTI instrument is off, in words a user can act on, from CUPTI's result codes. Plain
// C++ (codes as in cupti_result.h, CUDA 13.0) so every path is unit-tested without a GPU.
#include <string>

namespace gpubench::profilers::cupti {

// "off: <reason>" for a CUPTI call that failed with `code` (`name`: CUPTI's text for it).
std::string off_reason(int code, const std::string& name);

}  // namespace gpubench::profilers::cupti
