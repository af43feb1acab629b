# smoke_allowances.awk: what `gpubench run --dry-run` leaves out of its estimate, per case that
# runs, read from the plan's case lines (suite/axis=value/.../device  [...]). gpubench plans the
# measurement policy, 2 s a process and 0.1 s a case (apps/gpubench/dry_run.hpp); the costs below
# are on top of it. scripts/gpu-smoke.sh and perf/gpu_goals.sh add them to every plan they print
# (issue 41 item 5; docs/gpu-hosts.md says how each was set).
#   awk -v preset=0|1 -f smoke_allowances.awk DRY-RUN-OUTPUT
# prints one line: "allowance S" then the parts ("; "-separated "N x WHAT (E s)"), or "allowance 0".
# preset=1: the cases are a preset's (--preset), sized for measuring, not for a smoke.
BEGIN {
  # Calibrated by the first H200 run (2026-12-04, docs/gpu-hosts.md): its `quick` step, 174 GPU
  # cases of six suites, took 59.1-67 s against a 26.4 s plan. With the collectives' and cuDNN
  # attention's own allowances below (14 s of it), 0.2 s more per preset case brings that plan to
  # 75 s, above the slowest of those runs (allocation and fill of buffers up to 1 GiB, and host
  # verification of outputs that size; the H200 run has no per-suite split of it).
  PRESET_CASE_S = 0.2
  # collectives: communicator set-up and 64 MiB buffers; coll-blocking and coll-nonblocking
  # took 6.8 and 6.7 s against 4.2 for 16 cases each on the H200: 0.16 s a case more.
  COLL_CASE_S = 0.15
  # train with micro_batch=0 (the largest-micro-batch search): its trials are not planned;
  # train-largest took 12.8 s against 2.1 on the H200.
  TRAIN_SEARCH_S = 11
  # cuDNN graphs (attention provider=cudnn, train attention=fused): building a graph, its
  # heuristics and plans, per graph; never timed on a GPU, an estimate. A cuDNN attention case
  # builds its forward graph (and backward one), a fused train step forward and backward for the
  # step and again for its verification shape.
  CUDNN_GRAPH_S = 0.5
  # infer on a Llama 3 model (llama3-*): the case's host verification, one layer with a
  # 512-token head against the double reference (bench/suites/infer/cuda_cases.cpp): seconds in
  # bf16/fp16, about 20 s in fp8, whose reference emulates the E4M3 codes (issue 41's review;
  # no GPU has run it yet).
  LLAMA3_VERIFY_S = 3
  LLAMA3_VERIFY_FP8_S = 20
  # infer phase=serve: the timed pass waits for the trace's arrivals, requests / rate seconds,
  # which no plan of the measurement policy holds; 2 s more for the last requests' decode steps,
  # the trace's set-up and the untimed warm-up pass (which skips the idle gaps between arrivals,
  # so it costs the steps alone).
  SERVE_TAIL_S = 2
  # video: the clip generated, encoded and decoded back before timing, and runs of a whole clip:
  # the CPU's two quick x264 encodes (720p, 30 frames) took 10.8 s against 3.4 planned on the
  # build VM (3.7 s a case more; a decode a third of it); a GPU case's stream or check is the
  # host's, 1 s (an estimate). Scaled by the clip's pixels (bench/evaluate/estimate.cpp: the same).
  VIDEO_CPU_ENCODE_CLIP_S = 3.7
  VIDEO_GPU_CLIP_S = 1.0
}
function add(what, n, s) {
  if (n <= 0) return
  count[what] += n; secs[what] += s
  if (!(what in seen)) { seen[what] = 1; order[++kinds] = what }
}
# A case line that runs: "suite/axis=value/.../device  [...]" without "skipped:".
/^[^ \/]+\/[^ ]*  \[/ && !/\] skipped: / {
  n = split($1, part, "/")
  suite = part[1]; device = part[n]
  delete ax
  for (i = 2; i < n; ++i) { eq = index(part[i], "="); if (eq > 0) ax[substr(part[i], 1, eq - 1)] = substr(part[i], eq + 1) }
  gpu = device ~ /^cuda/
  if (preset) add("preset case", 1, PRESET_CASE_S)
  if (suite == "collectives" && gpu) add("collective", 1, COLL_CASE_S)
  if (suite == "train" && ax["micro_batch"] == "0") add("largest-batch search", 1, TRAIN_SEARCH_S)
  if (suite == "train" && gpu && ax["attention"] == "fused") add("fused train step (4 cuDNN graphs)", 1, 4 * CUDNN_GRAPH_S)
  if (suite == "attention" && gpu && ax["provider"] == "cudnn") {
    graphs = ax["direction"] == "fwd" || ax["direction"] == "" ? 1 : 2
    add("cuDNN attention case", 1, graphs * CUDNN_GRAPH_S)
  }
  if (suite == "infer" && gpu && ax["model"] ~ /^llama3-/) {
    if (ax["dtype"] == "fp8") add("Llama 3 fp8 verification", 1, LLAMA3_VERIFY_FP8_S)
    else add("Llama 3 verification", 1, LLAMA3_VERIFY_S)
  }
  if (suite == "video") {
    px = ax["res"] == "2160p" ? 3840 * 2160 : ax["res"] == "1080p" ? 1920 * 1080 : 1280 * 720
    clip = px * (ax["frames"] == "" ? 30 : ax["frames"] + 0) / (1280 * 720 * 30)
    per = gpu ? VIDEO_GPU_CLIP_S : (ax["op"] == "encode" ? VIDEO_CPU_ENCODE_CLIP_S : VIDEO_CPU_ENCODE_CLIP_S / 3)
    add("video clip, check and runs", 1, clip * per)
  }
  if (suite == "infer" && ax["phase"] == "serve") {
    span = (ax["rate"] + 0 > 0) ? (ax["requests"] + 0) / (ax["rate"] + 0) : 0
    add("serve trace", 1, span + SERVE_TAIL_S)
  }
}
END {
  total = 0; text = ""
  for (k = 1; k <= kinds; ++k) {
    w = order[k]; total += secs[w]
    text = text sprintf("%s%d x %s (%.1f s)", k > 1 ? "; " : "", count[w], w, secs[w])
  }
  printf "allowance %.1f%s%s\n", total, kinds ? " " : "", text
}
