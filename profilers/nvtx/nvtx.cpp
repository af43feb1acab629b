#include "profilers/nvtx/nvtx.hpp"

#include <nvtx3/nvToolsExt.h>

namespace gpubench::profilers {
namespace {

nvtxEventAttributes_t message(const char* text) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = text;  // NVTX copies the text: a temporary is fine
  return a;
}

// Ranges are push/pop on the calling thread; the harness runs a case on one thread.
class NvtxInstrument final : public Instrument {
 public:
  NvtxInstrument() : domain_(nvtxDomainCreateA("gpubench")) { push("gpubench run"); }
  ~NvtxInstrument() override {
    if (!suite_.empty()) nvtxDomainRangePop(domain_);
    nvtxDomainRangePop(domain_);  // the run
    nvtxDomainDestroy(domain_);
  }
  std::string name() const override { return "nvtx"; }

  void begin_case(const CaseInfo& info) override {
    if (info.suite != suite_) {  // cases of one suite run together: one range per stretch
      if (!suite_.empty()) nvtxDomainRangePop(domain_);
      suite_ = info.suite;
      if (!suite_.empty()) push(("suite " + suite_).c_str());
    }
    push(info.name.c_str());
    open_case_ = true;
  }
  void begin_phase(const char* phase) override { push(phase); }
  void end_phase() override { nvtxDomainRangePop(domain_); }
  void end_case(const CaseOutcome&, nlohmann::ordered_json&) override {
    if (open_case_) nvtxDomainRangePop(domain_);
    open_case_ = false;
  }

 private:
  void push(const char* text) {
    const nvtxEventAttributes_t a = message(text);
    nvtxDomainRangePushEx(domain_, &a);
  }

  nvtxDomainHandle_t domain_;
  std::string suite_;
  bool open_case_ = false;
};

}  // namespace

std::unique_ptr<Instrument> make_nvtx_instrument() { return std::make_unique<NvtxInstrument>(); }

}  // namespace gpubench::profilers
