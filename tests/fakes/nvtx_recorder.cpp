// An NVTX injection library for tests (NVTX_INJECTION64_PATH points at it): it records the
// ranges pushed and popped in NVTX domains, so a test can check what an Nsight Systems timeline
// of a run would show. Exposes the record as gpubench_nvtx_record() (one line per event:
// "push <domain>: <message>" or "pop <domain>").
#include <nvtx3/nvToolsExt.h>

#include <map>
#include <mutex>
#include <string>

namespace {

std::mutex mutex;
std::string record;
std::map<nvtxDomainHandle_t, std::string> domains;
int next_domain = 1;

nvtxDomainHandle_t domain_create(const char* name) {
  std::lock_guard<std::mutex> lock(mutex);
  auto h = reinterpret_cast<nvtxDomainHandle_t>(static_cast<std::intptr_t>(next_domain++));
  domains[h] = name ? name : "";
  return h;
}
void domain_destroy(nvtxDomainHandle_t) {}
int range_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  std::lock_guard<std::mutex> lock(mutex);
  record += "push " + domains[d] + ": " +
            (a && a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii ? a->message.ascii : "?") + "\n";
  return 0;
}
int range_pop(nvtxDomainHandle_t d) {
  std::lock_guard<std::mutex> lock(mutex);
  record += "pop " + domains[d] + "\n";
  return 0;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) const char* gpubench_nvtx_record() {
  std::lock_guard<std::mutex> lock(mutex);
  return record.c_str();
}

// The entry point NVTX looks up in the library NVTX_INJECTION64_PATH names.
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (!callbacks) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || !table) return 0;
  auto set = [&](unsigned id, auto fn) {
    if (id < size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
  };
  set(NVTX_CBID_CORE2_DomainCreateA, &domain_create);
  set(NVTX_CBID_CORE2_DomainDestroy, &domain_destroy);
  set(NVTX_CBID_CORE2_DomainRangePushEx, &range_push);
  set(NVTX_CBID_CORE2_DomainRangePop, &range_pop);
  return 1;
}

}  // extern "C"
