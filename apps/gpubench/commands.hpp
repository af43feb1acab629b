#pragma once
// One function per subcommand. Each parses its own options and returns the exit code:
// 0 success, 1 a case failed or the run could not complete, 2 bad usage.
#include <string>
#include <vector>

namespace gpubench::app {

int cmd_run(const std::vector<std::string>& args);
int cmd_list(const std::vector<std::string>& args);
int cmd_report(const std::vector<std::string>& args);
// 0 nothing regressed, 1 a case regressed, 2 usage or input error.
int cmd_compare(const std::vector<std::string>& args);
int cmd_history(const std::vector<std::string>& args);
// 0 no error-level finding, 1 at least one.
int cmd_doctor(const std::vector<std::string>& args);
int cmd_version(const std::vector<std::string>& args);
int cmd_datagen(const std::vector<std::string>& args);
int cmd_scaling(const std::vector<std::string>& args);
int cmd_serving(const std::vector<std::string>& args);
// 1 also when there is no CUDA device to tune on.
int cmd_tune(const std::vector<std::string>& args);
int cmd_tune_train(const std::vector<std::string>& args);  // `tune train`: 1 when nothing could be recommended
int cmd_tune_dataload(const std::vector<std::string>& args);
int cmd_tune_storage(const std::vector<std::string>& args);   // `tune storage`, from cmd_tune
int cmd_tune_mamf(const std::vector<std::string>& args);  // `tune gemm --mamf`, from cmd_tune  // `tune dataload`, from cmd_tune
int cmd_evaluate(const std::vector<std::string>& args);  // 1: a case failed or doctor found an error
int cmd_soak(const std::vector<std::string>& args);  // 1: a rule failed; 128+N: interrupted by signal N

}  // namespace gpubench::app
