// The build folder's paths the end-to-end tests need, compiled into this one file only: the
// other e2e files then compile to the same object in every build folder (build/ci, build/cuda12,
// build/nocuda), which ccache reuses across CI's stages (issue 50).
#include "cli_fixture.hpp"

namespace gpubench::e2e {

const char* gpubench_binary() { return GPUBENCH_BINARY_PATH; }
const char* fake_nvml_dir() { return GPUBENCH_FAKE_NVML_PATH; }

}  // namespace gpubench::e2e
