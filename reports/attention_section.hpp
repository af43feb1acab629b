#pragma once
// The report's "Attention" section and its finding (issue 28): prefill TFLOP/s against sequence
// length and decode GB/s against the cached context, one line per device, with % of the
// datasheet and of the same file's measured memory ceiling; and, under Findings, how much faster
// the training step is with fused attention than with the unfused one.
#include <vector>

#include "reports/document.hpp"
#include "reports/results_reader.hpp"

namespace gpubench::reports {

// Nothing when the files hold no ok attention case.
void attention_section(Document& doc, const std::vector<ResultsFile>& files);

// Train cases of one device that differ only in attention=fused|unfused: fused's tokens/s over
// unfused's, with each one's attention share of the step. Nothing when there is no such pair.
void attention_finding(Document& doc, const std::vector<ResultsFile>& files, bool& heading);

}  // namespace gpubench::reports
