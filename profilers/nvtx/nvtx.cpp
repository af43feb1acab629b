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

class NvtxInstrument final : public Instrument {
 public:
  NvtxInstrument() : domain_(nvtxDomainCreateA("gpubench")) {}
  ~NvtxInstrument() override { nvtxDomainDestroy(domain_); }
  std::string name() const override { return "nvtx"; }

  void begin_case(const std::string& case_name) override {
    const nvtxEventAttributes_t a = message(case_name.c_str());
    nvtxDomainRangePushEx(domain_, &a);
    open_case_ = true;
  }
  void begin_phase(const char* phase) override {
    const nvtxEventAttributes_t a = message(phase);
    nvtxDomainRangePushEx(domain_, &a);
  }
  void end_phase() override { nvtxDomainRangePop(domain_); }
  void end_case(nlohmann::ordered_json&) override {
    if (open_case_) nvtxDomainRangePop(domain_);
    open_case_ = false;
  }

 private:
  nvtxDomainHandle_t domain_;
  bool open_case_ = false;
};

}  // namespace

std::unique_ptr<Instrument> make_nvtx_instrument() { return std::make_unique<NvtxInstrument>(); }

}  // namespace gpubench::profilers
