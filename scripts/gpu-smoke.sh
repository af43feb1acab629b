#!/usr/bin/env bash
# gpu-smoke.sh: on a GPU host, proves or disproves every GPU path of gpubench.
# Every path runs at a small size with verification on; the assertions read the results files
# (scripts/smoke_check.py), not only exit codes; bare peers (cuBLASLt, cudaMemcpy) run beside the
# suites. The paths no GPU has run yet come first. Two parts, one device call each, fit one
# lease of about 15 minutes on one H200, start-up included (docs/gpu-hosts.md: the recipe).
#
#   scripts/gpu-smoke.sh [--out DIR] [--device cuda:N] [--part 1|2] [--only REGEX] [--time-limit S]
#   scripts/gpu-smoke.sh --dry-run [--assume MODEL] [--part 1|2] [--only REGEX]
#
# --dry-run prints every step with the case count and wall time that the binaries plan for it
# (gpubench run/tune --dry-run, the peers' --plan) plus the allowances for what those plans
# leave out (smoke_allowances.awk: host verification, serve arrivals, cuDNN graphs), then each
# part's total and "planned: N cases, about S s"; it needs no GPU. --assume MODEL plans against
# a spec-sheet GPU model (h200, h100-sxm, a100-sxm-80gb, ...; `gpubench run --assume x
# --dry-run` lists them) instead of the GPUs here.
# --part 1: the steps that have never run on a GPU (and the report); --part 2: the others.
# --time-limit S: a step whose plan no longer fits in what is left of S seconds is not started,
# and a step still running when S runs out is stopped: both are SKIP (out of time), never FAIL
# (unless a case it finished failed); the run ends INCOMPLETE (exit 1) with its table, so a
# call of fixed length always gets its summary.
# A real run ends with one table: step, cases ok/skipped/failed, planned and measured seconds,
# PASS/FAIL/SKIP; exit status 1 when a step failed. Results go to DIR/results (results files
# only: `gpubench report` reads them all), everything else to DIR/aux, logs to DIR/logs.
# Works from a checkout (uses build/$GPUBENCH_PRESET, default release, building it if needed)
# and from a bundle (scripts/bundle.sh: the `gpubench` launcher beside this script).
# GPUBENCH=PATH overrides the binary, GPUBENCH_PERF_DIR the folder of the perf peers.
set -uo pipefail
here="$(cd "$(dirname "$(readlink -f "$0")")" && pwd)"

# ---------------------------------------------------------------------------------------------
# The steps, one line each: KIND NAME ARGUMENTS. Adding a step is adding a line.
#   run      gpubench run ARGUMENTS --device D --out results/NAME.json, plus the short timing below
#            unless the line sets its own; checked by `smoke_check.py results` (no failed or
#            suspect entry, Hopper's wgmma/mma peaks ok, instruments on or off for a listed reason)
#   tune     gpubench tune gemm ARGUMENTS --device D --cache aux/NAME.json
#   gpubench gpubench ARGUMENTS (helpers such as datagen; no results file)
#   doctor   gpubench doctor --json: no finding of severity error
#   profile  smoke_check.py profile on the results and trace of step ARGUMENTS
#   memcheck compute-sanitizer --tool memcheck gpubench run ARGUMENTS (one case per kernel family)
#   peer     a bare program beside the suite: cublaslt ARGS | memcpy RESULTS-STEP ARGS | chase_gpu RESULTS-STEP ARGS
#   mpi      mpirun -np <GPUs> gpubench run ARGUMENTS (one rank per GPU)
#   ratio    A B LO HI [AXIS=V1,V2 ...]: each case's mean time in results/A.json over results/B.json
#            within [LO, HI]; with AXIS=..., only the cases that have one of those values
#   soak     gpubench soak ARGUMENTS --device D --out results/NAME.json: exit 0, `smoke_check.py
#            results` and `smoke_check.py soak` (a passed verdict, samples with rates, power and
#            clocks; with --power-limits, every setting measured or the refusal printed)
#   tune-train, tune-data  gpubench tune train|dataload ARGUMENTS --device D --out results/NAME.json:
#            exit 0, `smoke_check.py results` and `smoke_check.py tuning`
#   mamf     gpubench tune gemm --mamf ARGUMENTS --device D --out results/NAME.json: exit 0 and
#            `smoke_check.py mamf` (a TFLOP/s and shape, the GPU's SM clock recorded, the budget kept)
#   evaluate gpubench evaluate ARGUMENTS --device D --out aux/NAME.json --report md: exit 0,
#            `smoke_check.py results` on the merged file, and the node card in aux/NAME.md
#   report   gpubench report of every results file
# In ARGUMENTS, @aux and @results are those folders; ENV:VAR=VALUE sets a variable for the step;
# NEEDS:gpus>=N skips the step (with the reason) on a host with fewer GPUs.
steps() {
  cat <<'STEPS'
# ---- Part 1 (`--part 1`, the first call of a lease): first the paths no GPU has run yet
# (issue 41 item 5), first in the order and in the table, so a first lease proves them before
# the paths an earlier GPU run passed, and a call cut short loses the proven ones.
doctor   doctor
# Attention in fp8 (E4M3) through cuDNN (the quick preset's bf16 shape): the forward, causal or not,
# verified against exact attention on the dequantised inputs; planned on Hopper and newer, skipped
# with the reason before (a skip the plan did not expect fails the step).
run      attention-fp8    --suite attention --axis provider=cudnn --axis dtype=fp8-e4m3 --axis phase=prefill --axis direction=fwd --axis causal=0,1 --axis batch=2 --axis heads=16 --axis seq_q=4096 --axis head_dim=128
# precision=fp8 (sm_89+: skipped before, as the plan says) beside bf16-amp of the same step, for the
# report's step speed-up: every linear GEMM in cuBLASLt fp8 with current scaling, verified.
run      train-fp8        --suite train --axis model=transformer,mlp --axis layers=2 --axis hidden=64 --axis heads=4 --axis ffn_mult=4 --axis seq=32 --axis micro_batch=16 --axis vocab=512 --axis precision=fp8,bf16-amp --axis accum=2 --axis recompute=none
# train with fused attention (cuDNN SDPA forward and backward in the 16-bit steps; fp32/tf32
# fall back to unfused): the transformer in every precision with accumulation and block
# recompute, then the plain and mlp-recompute step.
run      train-paths      --suite train --axis model=transformer --axis layers=2 --axis hidden=64 --axis heads=4 --axis ffn_mult=4 --axis seq=32 --axis micro_batch=2 --axis vocab=512 --axis precision=fp32,tf32,fp16-amp,bf16-amp --axis accum=2 --axis recompute=block
run      train-plain      --suite train --axis model=transformer --axis layers=2 --axis hidden=64 --axis heads=4 --axis ffn_mult=4 --axis seq=32 --axis micro_batch=2 --axis vocab=512 --axis precision=bf16-amp --axis accum=1 --axis recompute=none,mlp
# Data-parallel steps on one GPU (a one-rank NCCL communicator), each verified against the
# single-rank reference before timing, with the bucket timeline; then the largest-micro-batch search.
run      train-dp         --suite train --axis model=transformer --axis layers=2 --axis hidden=256 --axis heads=4 --axis ffn_mult=4 --axis seq=128 --axis micro_batch=4 --axis vocab=4096 --axis precision=fp32,bf16-amp --axis accum=2 --axis recompute=none --axis dp=ddp,zero1 --axis bucket_mb=0.5
run      train-largest    --suite train --axis model=transformer --axis layers=1 --axis hidden=256 --axis heads=4 --axis ffn_mult=4 --axis seq=1024 --axis micro_batch=0 --axis vocab=8192 --axis precision=bf16-amp --axis accum=1 --axis recompute=none
# infer: the llama model's CUDA path (prefill and decode, with and without CUDA graphs; a short
# serving trace) on the small model and on one Llama 3 8B layer.
run      infer-small      --suite infer --axis model=llama-small --axis dtype=bf16 --axis phase=prefill,decode --axis batch=1,4 --axis prompt_len=128 --axis context_len=256 --axis graphs=0,1
run      infer-8b-layer   --suite infer --axis model=llama3-8b --axis layers=1 --axis dtype=bf16 --axis phase=prefill,decode --axis batch=1,8 --axis prompt_len=512 --axis context_len=1024 --axis graphs=0,1
run      infer-serve      --suite infer --axis model=llama-small --axis dtype=bf16 --axis phase=serve --axis rate=16 --axis requests=16 --axis prompt_len=64 --axis output_len=16 --axis max_batch=8
# fp8 linear layers (sm_89+; skipped with the reason before): one Llama 3 8B layer's prefill and
# decode, the decode also captured in a graph (the quantisers inside it), and a serving trace.
run      infer-fp8        --suite infer --axis model=llama3-8b --axis layers=1 --axis dtype=fp8 --axis phase=prefill,decode --axis batch=8 --axis prompt_len=512 --axis context_len=1024 --axis graphs=0,1
run      infer-fp8-serve  --suite infer --axis model=llama-small --axis dtype=fp8 --axis phase=serve --axis rate=16 --axis requests=16 --axis prompt_len=64 --axis output_len=16 --axis max_batch=8
# gemm op=grouped: the cuBLASLt loop over experts (some with no token: 40 experts, 300 tokens), per-expert verification, pct_of_dense.
run      gemm-grouped     --suite gemm --axis op=grouped --axis provider=cublaslt --axis dtype=fp32,bf16 --axis layout=tn --axis m=300 --axis n=256 --axis k=192 --axis experts=8,40 --axis routing=uniform,zipf --axis beta=1
# nvbandwidth's concurrent patterns (issue 31): the host ones on any GPU count, the peer ones with two or more.
run      memory-patterns  --suite memory --axis test=all_to_host_ce,host_to_all_ce,all_to_host_sm,host_to_all_sm --axis size=8M
run      memory-patterns-peer NEEDS:gpus>=2 --device cuda --suite memory --axis test=all_to_one_ce,one_to_all_ce,all_to_one_sm,one_to_all_sm --axis size=8M
# Uneven exchanges (alltoallv; moe_dispatch's pack and unpack kernels around two of them), with
# and without a graph, and every call timed alone with events (timing=per_iter; issue 31).
run      coll-exchange    --suite collectives --axis gpus=1 --axis op=alltoallv,moe_dispatch --axis dtype=fp32,bf16 --axis size=8,1M --axis graph=0,1
run      coll-per-iter    --suite collectives --axis gpus=1 --axis op=all_reduce,alltoallv --axis size=8,1M --axis graph=0,1 --axis timing=per_iter
# The bare pointer-chase peer beside the suite's host_device_latency (memory-overheads runs it).
run      memory-overheads --suite memory --axis test=launch,launch_queue,graph_launch,graph_queue,sync,malloc,malloc_async,host_device_latency --axis size=0,64M
peer     peer-chase       chase_gpu memory-overheads --min-time 0.3 --rounds 1
# nvJPEG's batched decode (issue 44): the CUDA decoder alone, DALI's 65% split and the hardware
# decoder alone (skipped, saying so, on a GPU without one), each image checked against libjpeg-turbo.
run      dataload-nvjpeg  --suite dataload --axis stage=decode --axis decode=gpu --axis hw_load=0,65,100 --axis workers=1 --axis batch=32
# Video (issue 48): NVDEC decodes of x264 and x265 streams, every frame equal to libavcodec's CPU
# decode; NVENC encodes, each decoded back and held to its PSNR floor, where the GPU has NVENC (on
# A100, H100, H200 and B200 planned as skipped: "no NVENC on ..."). The host needs Debian 12's
# libavcodec59 and libavformat59 (loaded at run time): without them the suite says so.
run      video-nvdec      --suite video --axis op=decode --axis codec=h264,hevc --axis res=1080p --axis frames=60
run      video-nvenc      --suite video --axis op=encode --axis codec=h264,hevc --axis res=1080p --axis preset=p1,p3 --axis frames=60
# The achievable-matmul search (issue 27): shapes pruned by wave quantisation from the SM count, the
# finalists measured longer, the SM clock of the best measurement from NVML.
mamf     mamf-bf16        --axis dtype=bf16 --budget 10
# ---- Then, in part 1, steps that need nothing of part 2, so the two calls take about as long:
# the mlp in every precision with and without accumulation and its data-parallel step, one
# process per case, the acceptance soaks, the training tuner and the bare cuBLASLt peer.
run      train-mlp        --suite train --axis model=mlp --axis layers=2 --axis hidden=64 --axis micro_batch=2 --axis vocab=512 --axis precision=fp32,tf32,fp16-amp,bf16-amp --axis accum=1,2 --axis recompute=none
run      train-dp-mlp     --suite train --axis model=mlp --axis layers=3 --axis hidden=512 --axis micro_batch=64 --axis vocab=1000 --axis precision=tf32,fp16-amp --axis accum=1 --axis recompute=none --axis dp=ddp,zero1 --axis bucket_mb=0.5
run      isolate          --suite gemm --axis m=256 --axis dtype=bf16,fp32 --isolate --case-timeout 120
# Acceptance: a 20 s soak on the tensor-core precision with the highest peak, then a two-step
# power-limit sweep (without the right to change limits: one line, measured at the current one).
soak     soak             --load gemm --duration 20s --sample-interval 1s
soak     power-sweep      --load gemm --duration 5s --sample-interval 1s --power-limits 100%,80%
# Tuning a training setup's knobs (30 s) and its final measurements.
tune-train tune-train     --model transformer --budget 30
# The bare cuBLASLt loop beside the gemm suite's provider.
peer     peer-cublaslt    cublaslt 1 8192
# ---- Part 2 (`--part 2`, the second call): the paths the H200 run of 2026-12-04 passed.
PART 2
gpubench datagen         datagen --out @aux/dataload-data --count 32 --tokens 0
# gemm: every provider and precision at an odd size; fp8 (sm_89+) and int8 run in TN only.
run      gemm-cublas      --suite gemm --axis provider=cublas --axis dtype=fp64,fp32,tf32,fp16,bf16,fp16-acc16,int8 --axis layout=nn,tn --axis m=200
run      gemm-cublaslt    --suite gemm --axis provider=cublaslt,cublaslt-tuned --axis dtype=fp64,fp32,tf32,fp16,bf16,fp16-acc16,fp8-e4m3,fp8-e5m2,int8 --axis layout=tn --axis m=256 --lt-candidates 8
# Every layout with strided batches, padded leading dimensions and beta = 1, on a non-square problem.
run      gemm-layouts     --suite gemm --axis provider=cublas,cublaslt --axis dtype=fp32,bf16 --axis layout=nn,nt,tn,tt --axis m=96 --axis n=80 --axis k=72 --axis batch=3 --axis pad=8 --axis beta=1
run      gemm-epilogues   --suite gemm --axis provider=cublas,cublaslt --axis dtype=fp32,bf16 --axis layout=tn --axis m=256 --axis epilogue=bias,gelu,bias-gelu --axis fusion=fused,separate
# Block-scaled GEMMs (issue 30) need sm_100/sm_120 and a CUDA 12.8+ build: elsewhere they are planned and skipped with the reason;
# on Blackwell they run, and smoke_check.py requires each ok one verified with both figures (tflops, tflops_with_quantize).
run      gemm-blockscaled --suite gemm --axis provider=cublaslt --axis dtype=mxfp8,nvfp4 --axis layout=tn --axis m=256
# Tuning writes its cache among the other files (never among results), then cublaslt-tuned reads it.
tune     gemm-tune        --axis dtype=bf16,fp8-e4m3 --axis m=256 --lt-candidates 8
run      gemm-tuned       --suite gemm --axis provider=cublaslt,cublaslt-tuned --axis dtype=bf16,fp8-e4m3 --axis layout=tn --axis m=256 --tuning-cache @aux/gemm-tune.json
run      gemm-cold        --suite gemm --axis m=1536 --axis n=512 --axis k=256 --axis dtype=bf16,fp32 --cold
run      gemm-llm         --suite gemm --preset llm --axis model=h256-f1024-a8-kv2-s64-b2-v1000-glu --axis tp=2
# gpubench's own kernels beside cuBLAS (200: a size regblock does not tile, skipped with the reason).
run      gemm-custom-fp32 --suite gemm --axis m=200,256 --axis dtype=fp32 --axis provider=cublas,custom:naive,custom:tiled,custom:regblock
run      gemm-custom-tc   --suite gemm --axis m=512 --axis dtype=fp16,bf16 --axis provider=cublas,custom:wmma,custom:wgmma
run      gemm-custom-rect --suite gemm --axis m=384 --axis n=512 --axis k=192 --axis dtype=bf16 --axis provider=custom:wmma,custom:wgmma
# Grids past the old launch limits: 68,750 column tiles (the 2-D grid failed past n = 1,048,560).
run      gemm-large-n     --suite gemm --axis m=16 --axis n=1100000 --axis k=16 --axis dtype=fp32 --axis provider=custom:naive,custom:tiled
# memory: every GPU path of the ceilings suite (each verifies its answer).
run      memory-bandwidth --suite memory --axis test=copy,scale,add,triad,dot,fill --axis size=4000016
run      memory-copies    --suite memory --axis test=h2d_pinned,h2d_pageable,d2h_pinned,d2h_pageable,bidir_pinned,bidir_pageable,d2d,h2d_sm,d2h_sm --axis size=1000,8M
run      memory-peer      NEEDS:gpus>=2 --device cuda --suite memory --axis test=p2p,p2p_noaccess,p2p_bidir,device_device_latency --axis size=0,8M
run      memory-peak      --suite memory --axis test=fma_fp64,fma_fp32,fma_fp16x2,fma_bf16x2,fma_int32,mma_fp16,mma_bf16,mma_tf32,mma_int8,mma_fp8
run      memory-cold      --suite memory --axis test=triad,launch --axis size=0,64M --cold
# The cold flush (a read kernel) is not counted by the CUPTI timer.
run      memory-cold-cupti --suite memory --axis test=triad --axis size=64M --cold --timer cupti --profile nvtx,trace,telemetry,host
# The copies the bare cudaMemcpy peer repeats, at a size where a copy outlasts its launch.
run      memory-ref       --suite memory --axis test=d2d,h2d_pinned --axis size=256M --min-time 0.3
# Instruments: trace (with a Perfetto file), telemetry, host, hardware metrics; the CUPTI timer.
run      profile          --suite gemm --axis m=512 --axis dtype=bf16 --profile nvtx,trace,telemetry,host,metrics --trace-dir @aux/traces
profile  profile-checks   profile
# 256 MiB per array: 768 MiB a kernel, far out of any L2 (H200: 50 MiB) and ~170 us at 4.5 TB/s, so
# the ~1 us between back-to-back launches that events include and the CUPTI union leaves out is
# under 1% (at 16 MiB per array the kernel fit in L2 and ran 6-12 us: the ratio fell below 0.90).
run      profile-cupti    --suite memory --axis test=triad --axis size=256M --timer cupti --profile nvtx,trace,telemetry,host
# The same case under CUDA events: kernel busy time is at most the event time, and not much less
# for a >= 100 us kernel launched back to back (the gaps between launches are what it leaves out).
run      profile-event    --suite memory --axis test=triad --axis size=256M --profile nvtx,trace,telemetry,host
ratio    timer-ratio      profile-cupti profile-event 0.90 1.02
# dataload: GPU augmentation, batch copies and the pipeline with the GPU consumer, then the train consumer.
run      dataload-gpu     ENV:GPUBENCH_DATASET=@aux/dataload-data --suite dataload --axis stage=augment,h2d,pipeline --axis workers=1 --axis dtype=fp16 --axis batch=8 --axis io=memory,cached --axis prefetch=0,2 --axis pinned=0,1 --axis aug=cpu,gpu --axis step_us=2000
run      dataload-types   ENV:GPUBENCH_DATASET=@aux/dataload-data --suite dataload --axis stage=augment --axis workers=1 --axis dtype=fp32 --axis batch=8
run      dataload-train   ENV:GPUBENCH_DATASET=@aux/dataload-data --suite dataload --axis stage=pipeline --axis consumer=train-768 --axis workers=1 --axis dtype=fp16 --axis batch=8 --axis io=memory --axis prefetch=2 --axis pinned=1 --axis aug=cpu,gpu
# collectives on one GPU (a one-rank communicator): every op in fp32 (two sizes, both layouts),
# then one case of each other type and reduction, then a CUDA Graph launch.
run      coll-ops         --suite collectives --axis gpus=1 --axis dtype=fp32 --axis redop=sum --axis inplace=0,1 --axis size=8,1M
run      coll-dtypes      --suite collectives --axis gpus=1 --axis op=all_reduce --axis dtype=fp16,bf16,fp64,int32,fp8_e4m3,fp8_e5m2 --axis redop=sum --axis inplace=0 --axis size=1M
run      coll-redops      --suite collectives --axis gpus=1 --axis op=all_reduce --axis dtype=fp32 --axis redop=prod,max,min,avg --axis inplace=0 --axis size=1M
run      coll-graph       --suite collectives --axis gpus=1 --axis op=all_reduce,all_gather --axis graph=1 --axis size=1M
# Non-blocking communicators: every call polled until no longer ncclInProgress before timing ends.
run      coll-nonblocking ENV:NCCL_COMM_BLOCKING=0 --suite collectives --axis gpus=1 --axis op=all_reduce,all_gather,alltoall,sendrecv --axis dtype=fp32 --axis size=8,64M --axis graph=0,1
# The same cases on a blocking communicator: polling must not cost a non-blocking one its speed.
run      coll-blocking    --suite collectives --axis gpus=1 --axis op=all_reduce,all_gather,alltoall,sendrecv --axis dtype=fp32 --axis size=8,64M --axis graph=0,1
# Compared where NCCL launches the work on the calling thread: graph replays, and the single
# collectives at 64 MiB. Outside graphs, NCCL 2.28's non-blocking group of sends and receives
# (alltoall, sendrecv) is launched from a thread it creates per ncclGroupEnd (src/group.cc): an
# H200 measured 46-57 us a call where a blocking one took 9-11 (8 B) and 54-62 vs 42 us (64 MiB),
# NCCL's cost, not the polling's; at 8 B, single collectives differ by +-2 us of host noise.
ratio    nccl-nb-ratio    coll-nonblocking coll-blocking 0.8 1.25 graph=1
ratio    nccl-nb-direct   coll-nonblocking coll-blocking 0.8 1.25 graph=0 op=all_reduce,all_gather size=67108864
run      coll-multi       NEEDS:gpus>=2 --device cuda --suite collectives --axis size=8,1M,64M
mpi      coll-mpi         NEEDS:gpus>=2 --device cuda --suite collectives --axis size=8,1M,64M --axis graph=0,1
mpi      train-dp-mpi     NEEDS:gpus>=2 --device cuda --suite train --axis model=transformer --axis layers=2 --axis hidden=256 --axis heads=4 --axis ffn_mult=4 --axis seq=128 --axis micro_batch=4 --axis vocab=4096 --axis precision=bf16-amp --axis accum=2 --axis recompute=none --axis dp=none,ddp,zero1 --axis bucket_mb=0.5
gpubench scaling          NEEDS:gpus>=2 scaling @results/coll-mpi.json @results/train-dp-mpi.json --format json
# Tuning the data loader's knobs (15 s: on an H200 its final measurements alone needed about 8 s,
# and --budget 10 was refused) and its final measurements.
tune-data tune-dataload   ENV:GPUBENCH_DATASET=@aux/dataload-data --budget 15
# Bare peers, side by side with the suites: ratios printed.
peer     peer-memcpy      memcpy memory-ref --size 256M --min-time 0.3 --rounds 1
run      quick            --preset quick
# Last, as the slowest steps for what they prove (a call cut short loses these first): one case
# per kernel family under compute-sanitizer's memcheck (where the tool exists), three processes:
# suites whose axes do not share a name run together.
memcheck memcheck-gemm-mem --suite gemm,memory --axis m=256 --axis dtype=fp32,bf16 --axis provider=custom:naive,custom:tiled,custom:regblock,custom:wmma,custom:wgmma --axis test=triad,dot,h2d_sm,fma_fp32,mma_bf16 --axis size=0,1M
memcheck memcheck-train-data ENV:GPUBENCH_DATASET=@aux/dataload-data --suite train,dataload --axis model=mlp,transformer --axis layers=1 --axis hidden=64 --axis heads=4 --axis ffn_mult=4 --axis seq=32 --axis micro_batch=2 --axis vocab=512 --axis precision=bf16-amp --axis accum=1 --axis recompute=none --axis stage=augment,pipeline --axis workers=1 --axis dtype=fp16 --axis batch=8 --axis io=memory --axis aug=gpu
memcheck memcheck-epilogue --suite gemm --axis m=256 --axis dtype=bf16 --axis provider=cublas --axis layout=tn --axis epilogue=bias-gelu --axis fusion=separate
memcheck memcheck-peak-cold --suite memory --axis test=mma_fp8,triad --axis size=0,64M --cold
report   report
# ---- Part 3 (`--part 3`, a third call where the lease has time, else the next lease's first):
# gpubench evaluate (issue 42) on every GPU of the host in 90 s: a worker per GPU, the depth GPU,
# the node items where there are 2 GPUs or more (dp-step under mpirun, NCCL_ALGO=Ring/NVLS), the
# loader search; the budget kept and the card written (its files in aux/: results/ holds only the
# results files the report step reads).
PART 3
evaluate evaluate         --device cuda --budget 90s
STEPS
}

# Short timing for every run step (a line's own --min-time etc. wins): these runs prove paths;
# their figures are not for keeping.
SMOKE_TIMING=(--min-time 0.02 --warmup 0.01 --min-samples 5)
# Instruments may be off only for these reasons (INSTRUMENT=REGEX on the text after "off: ").
# Counters need admin rights or a profiling-enabled (v)GPU; everything else must be on.
EXPECT_OFF=(
  "metrics=^insufficient privileges for GPU performance counters"
  "metrics=^virtual GPU \\(vGPU\\) without profiling"
  "metrics=^not supported on a MIG instance"
)
# Allowances for what no binary can plan (labelled as such in the dry run), calibrated by the
# first H200 run (2026-12-04, docs/gpu-hosts.md has its table): what gpubench's own plan of a
# run step leaves out is in smoke_allowances.awk (host verification, serve arrivals, cuDNN
# graphs, a preset's sizes); here, the steps no binary plans.
# A helper command (datagen, doctor, a check): 0.1-0.6 s on the H200.
HELPER_ALLOWANCE_S=2
# The report step: one `gpubench report` per results file; 10.8 s for 60 files on the H200.
REPORT_PER_FILE_S=0.2
# Soaks and tuning runs plan from their own settings: setup and verification on top of the
# duration (the H200: soak 21.6 s for 20 s, the sweep 11.7 s for 2 x 5 s); the final
# measurements of the recommended and default configurations on top of a tuning budget (tune
# train 38.0 s for a 30 s budget, tune dataload 13.4 s for 15 s).
SOAK_SETUP_S=4
TUNE_FINAL_FACTOR=1.1
# compute-sanitizer: the H200 took 1.6-2.5 s per memcheck step whose cases plan 2.1-3.4 s
# unwatched (x10 + 5 s and then x3 + 5 s were far over), so x1.5 + 2 s.
MEMCHECK_START_S=2
MEMCHECK_SLOWDOWN=1.5

# ---------------------------------------------------------------------------------------------
usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; }
time_limit=0 out_of_time=0 dry_run=0 assume="" out="${GPUBENCH_SMOKE_OUT:-smoke-results}" device="${GPUBENCH_SMOKE_DEVICE:-cuda:0}" only="" part=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry_run=1 ;;
    --assume) [ $# -ge 2 ] || { echo "gpu-smoke: --assume needs a GPU model" >&2; exit 2; }; assume="$2"; shift ;;
    --out) [ $# -ge 2 ] || { echo "gpu-smoke: --out needs a folder" >&2; exit 2; }; out="$2"; shift ;;
    --device) [ $# -ge 2 ] || { echo "gpu-smoke: --device needs cuda:N" >&2; exit 2; }; device="$2"; shift ;;
    --only) [ $# -ge 2 ] || { echo "gpu-smoke: --only needs a regex" >&2; exit 2; }; only="$2"; shift ;;
    --part)
      [[ "${2:-}" =~ ^[123]$ ]] || { echo "gpu-smoke: --part needs 1, 2 or 3, got '${2:-}'" >&2; exit 2; }
      part="$2"; shift ;;
    --time-limit)
      [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "gpu-smoke: --time-limit needs a whole number of seconds, got '${2:-}'" >&2; exit 2; }
      time_limit="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "gpu-smoke: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$assume" ] && [ "$dry_run" = 0 ] && { echo "gpu-smoke: --assume plans for a GPU that is not here: add --dry-run" >&2; exit 2; }
[[ "$device" =~ ^cuda(:[0-9]+)?$ ]] || [ "$device" = cpu ] || { echo "gpu-smoke: --device '$device': expected cuda:N" >&2; exit 2; }

# The binaries: from the environment, a bundle (the launcher beside this script), or a checkout.
perf_dir="${GPUBENCH_PERF_DIR:-}"
if [ -n "${GPUBENCH:-}" ]; then
  gpubench=("$GPUBENCH")
elif [ -x "$here/gpubench" ] && [ -f "$here/cuda-libs.txt" ]; then
  gpubench=("$here/gpubench")  # a bundle: the launcher finds the host's CUDA libraries
  bundle=1
else
  build="$here/../build/${GPUBENCH_PRESET:-release}"
  if [ ! -x "$build/apps/gpubench/gpubench" ]; then
    source "$here/lib.sh"
    ensure_packages "${GPUBENCH_BUILD_PACKAGES[@]}"
    build=$(GPUBENCH_REQUIRE_CUDA=1 build_preset "${GPUBENCH_PRESET:-release}" -DGPUBENCH_BUILD_TESTS=OFF) || exit 1
  fi
  gpubench=("$build/apps/gpubench/gpubench")
  perf_dir="${perf_dir:-$build/perf}"
fi
# A perf peer: from the bundle's bin/ through the launcher, else from perf_dir.
peer_cmd() {
  local name="$1"
  if [ "${bundle:-0}" = 1 ] && [ -z "$perf_dir" ]; then
    [ -x "$here/bin/$name" ] || return 1
    echo "env GPUBENCH_BIN=$name $here/gpubench"
  else
    [ -x "$perf_dir/$name" ] || return 1
    echo "$perf_dir/$name"
  fi
}

results="$out/results" aux="$out/aux" logs="$out/logs"
if [ "$dry_run" = 0 ]; then
  rm -rf "$results" "$aux" "$logs"
  mkdir -p "$results" "$aux" "$logs" || exit 1
  command -v python3 >/dev/null || { echo "gpu-smoke: python3 is needed for the checks (scripts/smoke_check.py)" >&2; exit 1; }
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  # The planned column of a real run comes from the same dry runs, for the GPU's model by name:
  # no CUDA context per step (where gpubench does not know the model, each step plans on the GPU).
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "${device#cuda:}" 2>/dev/null | sed -n 1p)
  [ "$device" = cuda:0 ] && [ -n "$gpu_name" ] && "${gpubench[@]}" list --assume "$gpu_name" --suite memory --axis test=launch >/dev/null 2>&1 &&
    assume="$gpu_name"
else
  gpus=1  # the assumed model, or the plan for one GPU
fi
checker="$here/smoke_check.py"
allowances="$here/smoke_allowances.awk"
[ -f "$allowances" ] || { echo "gpu-smoke: $allowances is missing (it travels beside this script)" >&2; exit 2; }

# ---------------------------------------------------------------------------------------------
# Helpers. Each step appends one row: name kind ok skipped failed planned_s took_s verdict note.
rows=() total_cases=0 total_s=0 failed_steps=0 plan_failed=0 results_steps=0
add_row() {  # NAME KIND OK SKIPPED FAILED PLANNED_S TOOK_S VERDICT NOTE
  local planned; planned=$(printf '%.1f' "$6")
  rows+=("$(printf '%-20s %-8s %5s %5s %5s %8s %8s  %-4s %s' "$1" "$2" "$3" "$4" "$5" "$planned" "$7" "$8" "${9:-}")")
}

# Expands @aux/@results, sets ENV: variables (exported in `step_env`), drops NEEDS: (in `needs_gpus`).
expand_args() {
  args=() step_env=() needs_gpus=0
  local a
  for a in "$@"; do
    a="${a//@aux/$aux}"
    a="${a//@results/$results}"
    case "$a" in
      ENV:*) step_env+=("${a#ENV:}") ;;
      NEEDS:gpus\>=*) needs_gpus="${a#NEEDS:gpus>=}" ;;
      *) args+=("$a") ;;
    esac
  done
}
has_arg() { local want="$1" a; shift; for a in "$@"; do [ "$a" = "$want" ] && return 0; done; return 1; }
arg_after() { local want="$1"; shift; while [ $# -gt 1 ]; do [ "$1" = "$want" ] && { echo "$2"; return; }; shift; done; }
# The run flags a step gets: its own, then --device (unless given) and the short timing (each unless given).
run_flags() {
  flags=("${args[@]}")
  has_arg --device "${args[@]}" || flags+=(--device "$device")
  local i
  for ((i = 0; i < ${#SMOKE_TIMING[@]}; i += 2)); do
    has_arg "${SMOKE_TIMING[i]}" "${args[@]}" || flags+=("${SMOKE_TIMING[i]}" "${SMOKE_TIMING[i + 1]}")
  done
}
# gpubench's own plan of a command: sets plan_cases and plan_s from its "dry-run:" line, and
# allow_s / allow_note from its case lines: what that plan leaves out (smoke_allowances.awk).
plan_of() {
  local listing line preset=0
  has_arg --preset "$@" && preset=1
  listing=$(env "${step_env[@]}" "${gpubench[@]}" "$@" --dry-run ${assume:+--assume "$assume"} 2>"$aux_err")
  line=$(tail -n1 <<<"$listing")
  if [[ "$line" =~ ^dry-run:\ ([0-9]+)\ to\ run,\ ([0-9]+)\ skipped,\ about\ ([0-9.]+)\ s$ ]]; then
    plan_cases=${BASH_REMATCH[1]} plan_skipped=${BASH_REMATCH[2]} plan_s=${BASH_REMATCH[3]}
    local allowance; allowance=$(awk -v preset="$preset" -f "$allowances" <<<"$listing")
    allow_s=$(awk '{ print $2 }' <<<"$allowance") allow_note=$(cut -d' ' -f3- <<<"$allowance")
    [ "$allow_s" = 0.0 ] && allow_note=""
  else
    echo "gpu-smoke: could not plan '${gpubench[*]} $*': $(tail -n2 "$aux_err")" >&2
    plan_cases=0 plan_skipped=0 plan_s=0 plan_failed=1
    return 1
  fi
}
add_s() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a + b }'; }
mul_s() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a * b }'; }
now() { date +%s.%N; }
# Runs a command with its output in logs/NAME.log under a time limit; on failure the log's end is
# shown. Sets rc (124 when the limit stopped it) and took. At the limit: SIGINT (gpubench keeps
# every finished result), within 5 s a second SIGINT (soak: restore power limits and clocks and
# exit at once, even with a worker hung on the GPU), within 10 s more SIGKILL.
run_logged() {
  local name="$1" limit="$2"; shift 2
  local start; start=$(now)
  echo "== $name: $*" >"$logs/$name.log"
  # Job control for the launch: without it bash starts background commands with SIGINT ignored,
  # and gpubench keeps an ignored signal ignored (nohup semantics), so the INTs below would be lost.
  set -m
  env "${step_env[@]}" "$@" >>"$logs/$name.log" 2>&1 &
  local pid=$! waited=0 stopped=0
  set +m
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$waited" -ge $((limit * 10)) ]; then
      stopped=1
      kill -INT "$pid" 2>/dev/null; wait_gone "$pid" 50
      kill -0 "$pid" 2>/dev/null && { kill -INT "$pid" 2>/dev/null; wait_gone "$pid" 100; }
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
      break
    fi
    sleep 0.1; waited=$((waited + 1))
  done
  wait "$pid"; rc=$?
  [ "$stopped" = 1 ] && rc=124
  took=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
  if [ "$stopped" = 1 ]; then
    echo "== $name: stopped after $limit s" >>"$logs/$name.log"
    # Cut by --time-limit (its limit was what was left of it), not by its own limit: out of time.
    [ "$limit_cut" = 1 ] && step_cut=1
  fi
}
wait_gone() { local i; for ((i = 0; i < $2; ++i)); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done; }  # PID TENTHS
show_failure() { echo "---- $1 (rc=$rc), end of $logs/$1.log:"; tail -n 25 "$logs/$1.log"; echo "----"; }
# A step's time limit: ten times its plan, at least two minutes.
limit_for() { awk -v p="$1" 'BEGIN { l = p * 10; if (l < 120) l = 120; printf "%d", l }'; }
# Reads "counts: ok=.. skipped=.. failed=.." from a check's output.
counts_of() {
  c_ok=$(sed -n 's/^counts: ok=\([0-9]*\).*/\1/p' "$1" | tail -n1)
  c_skip=$(sed -n 's/^counts: .*skipped=\([0-9]*\).*/\1/p' "$1" | tail -n1)
  c_fail=$(sed -n 's/^counts: .*failed=\([0-9]*\).*/\1/p' "$1" | tail -n1)
  c_ok=${c_ok:--} c_skip=${c_skip:--} c_fail=${c_fail:--}
}
check_results() {  # NAME FILE [smoke_check flags]: the results file's assertions, into the step's log
  local name="$1" file="$2"; shift 2
  local expect=() e
  for e in "${EXPECT_OFF[@]}"; do expect+=(--expect-off "$e"); done
  python3 "$checker" results "$file" "${expect[@]}" "$@" >"$aux/$name.check" 2>&1
  local check_rc=$?
  cat "$aux/$name.check" >>"$logs/$name.log"
  counts_of "$aux/$name.check"
  return $check_rc
}
verdict() {  # NAME KIND PLANNED OK(0/1) [NOTE]
  local v=PASS
  if [ "$4" != 0 ] && [ "$step_cut" = 1 ]; then
    # Stopped at --time-limit: out of time (SKIP), never FAIL, unless what it finished before
    # the cut failed its checks (a failed or suspect case is a failure however the step ended).
    local partial_ok=1 e expect=()
    if [ -n "$step_results" ] && [ -f "$step_results" ]; then
      for e in "${EXPECT_OFF[@]}"; do expect+=(--expect-off "$e"); done
      python3 "$checker" results "$step_results" "${expect[@]}" >"$aux/$1.partial" 2>&1 || partial_ok=0
      cat "$aux/$1.partial" >>"$logs/$1.log"
      counts_of "$aux/$1.partial"
    fi
    if [ "$partial_ok" = 1 ]; then
      out_of_time=$((out_of_time + 1))
      add_row "$1" "$2" "$c_ok" "$c_skip" "$c_fail" "$3" "$took" SKIP "out of time: stopped at --time-limit after ${took} s"
      echo "== $1: SKIP (out of time: stopped at --time-limit after ${took} s; ok=$c_ok before the cut)"
      return
    fi
  fi
  [ "$4" = 0 ] || { v=FAIL; failed_steps=$((failed_steps + 1)); }
  add_row "$1" "$2" "$c_ok" "$c_skip" "$c_fail" "$3" "$took" "$v" "${5:-}"
  echo "== $1: $v (ok=$c_ok skipped=$c_skip failed=$c_fail, ${took} s)"
}
skip_row() {  # NAME KIND PLANNED REASON
  if [ "$dry_run" = 1 ]; then
    printf '%-20s %-8s %5d cases %4d skipped  about %6.1f s  skip: %s\n' "$1" "$2" 0 0 0 "$4"
  else
    add_row "$1" "$2" - - - "${3:-0}" - SKIP "$4"
    echo "== $1: SKIP ($4)"
  fi
}

# ---------------------------------------------------------------------------------------------
# One step: plan it (dry run) or run and check it.
aux_err=$(mktemp)
trap 'rm -f "$aux_err"' EXIT
do_step() {
  local kind="$1" name="$2"; shift 2
  expand_args "$@"
  plan_cases=0 plan_skipped=0 plan_s=0 allow_s=0 allow_note="" c_ok=- c_skip=- c_fail=- took=- step_cut=0 limit_cut=0 step_results=""
  local note=""
  if [ "$needs_gpus" -gt "$gpus" ]; then
    skip_row "$name" "$kind" 0 "needs $needs_gpus GPUs, $gpus here"
    return
  fi
  # A dry run plans without the step's variables: they name files earlier steps would write.
  [ "$dry_run" = 1 ] && step_env=()
  case "$kind" in
    run) run_flags; plan_of run "${flags[@]}" ;;
    memcheck)
      run_flags; plan_of run "${flags[@]}" --profile none
      plan_s=$(add_s "$(mul_s "$plan_s" "$MEMCHECK_SLOWDOWN")" "$MEMCHECK_START_S"); note="allowance: x$MEMCHECK_SLOWDOWN + ${MEMCHECK_START_S} s" ;;
    mpi) run_flags; plan_of run "${flags[@]}" ;;
    tune) plan_of tune gemm "${args[@]}" --device "$device" ;;
    peer)
      local cmd
      if cmd=$(peer_cmd "gpubench_perf_${args[0]}"); then
        local line
        if [ "${args[0]}" = memcpy ] || [ "${args[0]}" = chase_gpu ]; then line=$($cmd "${args[@]:2}" --plan); else line=$($cmd --plan "${args[@]:1}"); fi
        [[ "$line" =~ ^plan:\ ([0-9]+)\ cases?,\ about\ ([0-9.]+)\ s$ ]] && plan_cases=${BASH_REMATCH[1]} plan_s=${BASH_REMATCH[2]}
      else
        note="gpubench_perf_${args[0]} not found"
      fi ;;
    gpubench|doctor|profile|ratio) plan_s=$HELPER_ALLOWANCE_S; note="allowance" ;;
    report)  # one report per results file of this call
      plan_s=$(add_s "$HELPER_ALLOWANCE_S" "$(mul_s "$results_steps" "$REPORT_PER_FILE_S")")
      note="allowance: $HELPER_ALLOWANCE_S s + $results_steps files x $REPORT_PER_FILE_S s" ;;
    soak)  # the duration once per sweep setting, plus setup and verification
      local d settings=1; d=$(arg_after --duration "${args[@]}"); d=${d%s}
      if has_arg --power-limits "${args[@]}"; then settings=$(arg_after --power-limits "${args[@]}" | tr ',' '\n' | grep -c .); fi
      plan_s=$(add_s "$(mul_s "${d:-30}" "$settings")" "$SOAK_SETUP_S"); note="duration x $settings + ${SOAK_SETUP_S} s" ;;
    mamf)  # the search keeps to its budget (finalists included), plus setup
      local b; b=$(arg_after --budget "${args[@]}")
      plan_s=$(add_s "${b:-30}" "$SOAK_SETUP_S"); note="budget + ${SOAK_SETUP_S} s" ;;
    tune-train|tune-data)  # the search budget, then the final measurements of two configurations
      local b; b=$(arg_after --budget "${args[@]}")
      plan_s=$(add_s "$(mul_s "${b:-60}" "$TUNE_FINAL_FACTOR")" "$SOAK_SETUP_S"); note="budget x $TUNE_FINAL_FACTOR + ${SOAK_SETUP_S} s" ;;
    evaluate)  # the budget (in seconds here), which it overruns by 10% at most, plus its report
      local b; b=$(arg_after --budget "${args[@]}"); b=${b%s}
      plan_s=$(add_s "$(mul_s "${b:-90}" 1.1)" "$SOAK_SETUP_S"); note="budget x 1.1 + ${SOAK_SETUP_S} s" ;;
    *) echo "gpu-smoke: step $name: unknown kind '$kind'" >&2; exit 2 ;;
  esac
  case "$kind" in run|mpi|memcheck|soak|mamf|tune-train|tune-data) results_steps=$((results_steps + 1)) ;; esac
  if [ "$allow_s" != 0 ] && [ "$allow_s" != 0.0 ]; then  # what gpubench's plan leaves out, on top
    plan_s=$(add_s "$plan_s" "$allow_s")
    note="${note:+$note; }+${allow_s} s: $allow_note"
  fi
  if [ "$dry_run" = 1 ]; then
    printf '%-20s %-8s %5d cases %4d skipped  about %6.1f s  %s\n' "$name" "$kind" "$plan_cases" "$plan_skipped" "$plan_s" "$note"
    total_cases=$((total_cases + plan_cases))
    total_s=$(add_s "$total_s" "$plan_s")
    return
  fi
  local limit; limit=$(limit_for "$plan_s")
  if [ "$time_limit" -gt 0 ]; then  # what is left of --time-limit: enough for the plan, or not started
    local left; left=$(awk -v s="$started" -v n="$(now)" -v t="$time_limit" 'BEGIN { l = t - (n - s); if (l < 0) l = 0; printf "%d", l }')
    if awk -v l="$left" -v p="$plan_s" 'BEGIN { exit !(l < p) }'; then
      out_of_time=$((out_of_time + 1))
      skip_row "$name" "$kind" "$plan_s" "out of time: ${left} s of --time-limit left"; return
    fi
    [ "$left" -lt "$limit" ] && { limit=$left; limit_cut=1; }
  fi
  case "$kind" in run|mpi|memcheck|soak|mamf|tune-train|tune-data) step_results="$results/$name.json" ;; evaluate) step_results="$aux/$name.json" ;; esac
  # Every case the plan runs must run: a skip it did not expect fails the step (smoke_check.py).
  local plan_check=(--planned "$plan_cases" --planned-skipped "$plan_skipped")
  case "$kind" in
    run)
      run_logged "$name" "$limit" "${gpubench[@]}" run "${flags[@]}" --out "$results/$name.json"
      local require=(--require-on telemetry)
      has_arg --profile "${flags[@]}" && [[ " ${flags[*]} " == *trace* ]] && require=(--require-on telemetry,trace)
      has_arg --timer "${flags[@]}" && require=(--require-on telemetry,trace)
      if [ -f "$results/$name.json" ]; then check_results "$name" "$results/$name.json" "${require[@]}" "${plan_check[@]}"; local crc=$?; else local crc=1; fi
      [ "$rc" = 0 ] && [ "$crc" = 0 ] && verdict "$name" run "$plan_s" 0 || { show_failure "$name"; verdict "$name" run "$plan_s" 1; } ;;
    memcheck)
      local sanitizer; sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
      if [ -z "$sanitizer" ]; then skip_row "$name" "$kind" "$plan_s" "compute-sanitizer not found"; return; fi
      run_logged "$name" "$limit" "$sanitizer" --tool memcheck --error-exitcode 3 --print-limit 20 \
        "${gpubench[@]}" run "${flags[@]}" --profile none --out "$results/$name.json"
      if grep -q "Device not supported" "$logs/$name.log" && ! grep -q "ERROR SUMMARY: [1-9]" "$logs/$name.log"; then
        skip_row "$name" "$kind" "$plan_s" "compute-sanitizer refused the device (Device not supported)"; return
      fi
      check_results "$name" "$results/$name.json" >/dev/null 2>&1; local crc=$?
      [ "$rc" = 0 ] && [ "$crc" = 0 ] && verdict "$name" memcheck "$plan_s" 0 || { show_failure "$name"; verdict "$name" memcheck "$plan_s" 1; } ;;
    mpi)
      if ! command -v mpirun >/dev/null; then skip_row "$name" "$kind" "$plan_s" "mpirun not found"; return; fi
      local mpi=(mpirun --oversubscribe -np "$gpus"); [ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
      run_logged "$name" "$limit" "${mpi[@]}" "${gpubench[@]}" run "${flags[@]}" --out "$results/$name.json"
      check_results "$name" "$results/$name.json" --require-on telemetry "${plan_check[@]}"; local crc=$?
      [ "$rc" = 0 ] && [ "$crc" = 0 ] && verdict "$name" mpi "$plan_s" 0 || { show_failure "$name"; verdict "$name" mpi "$plan_s" 1; } ;;
    tune)
      run_logged "$name" "$limit" "${gpubench[@]}" tune gemm "${args[@]}" --device "$device" --cache "$aux/$name.json"
      # Its last line: "gpubench tune: N shape(s) tuned, M failed; cache FILE".
      c_ok=$(sed -n 's/^gpubench tune: \([0-9]*\) shape(s) tuned, .*/\1/p' "$logs/$name.log" | tail -n1)
      c_fail=$(sed -n 's/^gpubench tune: .* tuned, \([0-9]*\) failed.*/\1/p' "$logs/$name.log" | tail -n1)
      c_ok=${c_ok:-0} c_fail=${c_fail:--} c_skip=$(grep -c '\] skipped ' "$logs/$name.log")
      [ "$rc" = 0 ] && [ "${c_ok:-0}" -gt 0 ] && verdict "$name" tune "$plan_s" 0 || { show_failure "$name"; verdict "$name" tune "$plan_s" 1; } ;;
    gpubench)
      run_logged "$name" "$limit" "${gpubench[@]}" "${args[@]}"
      [ "$rc" = 0 ] && verdict "$name" "$kind" "$plan_s" 0 || { show_failure "$name"; verdict "$name" "$kind" "$plan_s" 1; } ;;
    doctor)
      run_logged "$name" "$limit" "${gpubench[@]}" doctor --json --results-dir "$results"
      sed -n '/^{/,$p' "$logs/$name.log" >"$aux/doctor.json"
      python3 "$checker" doctor "$aux/doctor.json" >>"$logs/$name.log" 2>&1
      [ $? = 0 ] && verdict "$name" doctor "$plan_s" 0 || { show_failure "$name"; verdict "$name" doctor "$plan_s" 1; } ;;
    profile)
      local of="${args[0]}" start; start=$(now)
      python3 "$checker" profile "$results/$of.json" "$aux/traces/$of.trace.json" >"$logs/$name.log" 2>&1
      rc=$?
      took=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
      grep '^profile' "$logs/$name.log"
      [ "$rc" = 0 ] && verdict "$name" profile "$plan_s" 0 || { show_failure "$name"; verdict "$name" profile "$plan_s" 1; } ;;
    ratio)  # A B LO HI [AXIS=V1,V2 ...]: the mean time of each case in results/A.json over the same case in results/B.json (only cases with those axis values)
      local start; start=$(now)
      local where=() w
      for w in "${args[@]:4}"; do where+=(--where "$w"); done
      python3 "$checker" ratio "$results/${args[0]}.json" "$results/${args[1]}.json" "${args[2]}" "${args[3]}" "${where[@]}" >"$logs/$name.log" 2>&1
      rc=$?
      took=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
      grep '^ratio\|problem' "$logs/$name.log"
      c_ok=$(grep -c '^ratio.* ok$' "$logs/$name.log") c_fail=$(grep -c '^ratio.* FAIL$\|problem' "$logs/$name.log") c_skip=0
      [ "$rc" = 0 ] && verdict "$name" ratio "$plan_s" 0 || { show_failure "$name"; verdict "$name" ratio "$plan_s" 1; } ;;
    soak)
      run_logged "$name" "$limit" "${gpubench[@]}" soak --device "$device" "${args[@]}" --out "$results/$name.json"
      local crc=1 sweep=()
      has_arg --power-limits "${args[@]}" && sweep=(--sweep "$(arg_after --power-limits "${args[@]}" | tr ',' '\n' | grep -c .)")
      if [ -f "$results/$name.json" ]; then
        check_results "$name" "$results/$name.json" && python3 "$checker" soak "$results/$name.json" "${sweep[@]}" >"$aux/$name.soak" 2>&1
        crc=$?
        cat "$aux/$name.soak" >>"$logs/$name.log" 2>/dev/null
        grep '^soak\|^sweep\|problem' "$aux/$name.soak" 2>/dev/null
        grep -h '^power limit: off' "$logs/$name.log"
      fi
      [ "$rc" = 0 ] && [ "$crc" = 0 ] && verdict "$name" soak "$plan_s" 0 || { show_failure "$name"; verdict "$name" soak "$plan_s" 1; } ;;
    mamf)
      run_logged "$name" "$limit" "${gpubench[@]}" tune gemm --mamf --device "$device" "${args[@]}" --out "$results/$name.json"
      local crc=1
      if [ -f "$results/$name.json" ]; then
        python3 "$checker" mamf "$results/$name.json" >"$aux/$name.mamf" 2>&1
        crc=$?
        cat "$aux/$name.mamf" >>"$logs/$name.log" 2>/dev/null
        grep '^mamf\|problem' "$aux/$name.mamf" 2>/dev/null
      fi
      [ "$rc" = 0 ] && [ "$crc" = 0 ] && verdict "$name" mamf "$plan_s" 0 || { show_failure "$name"; verdict "$name" mamf "$plan_s" 1; } ;;
    evaluate)
      local dev=(--device "$device"); has_arg --device "${args[@]}" && dev=()
      run_logged "$name" "$limit" "${gpubench[@]}" evaluate "${dev[@]}" "${args[@]}" --out "$aux/$name.json" --report md
      local crc=1
      if [ -f "$aux/$name.json" ]; then
        check_results "$name" "$aux/$name.json" && grep -q '^## Node card' "$aux/$name.md" 2>/dev/null
        crc=$?
        [ "$crc" = 0 ] || echo "no node card in $aux/$name.md" >>"$logs/$name.log"
      fi
      [ "$rc" = 0 ] && [ "$crc" = 0 ] && verdict "$name" evaluate "$plan_s" 0 || { show_failure "$name"; verdict "$name" evaluate "$plan_s" 1; } ;;
    tune-train|tune-data)
      local target=train; [ "$kind" = tune-data ] && target=dataload
      run_logged "$name" "$limit" "${gpubench[@]}" tune "$target" --device "$device" "${args[@]}" --out "$results/$name.json"
      local crc=1
      if [ -f "$results/$name.json" ]; then
        check_results "$name" "$results/$name.json" && python3 "$checker" tuning "$results/$name.json" --target "$target" >"$aux/$name.tuning" 2>&1
        crc=$?
        cat "$aux/$name.tuning" >>"$logs/$name.log" 2>/dev/null
        grep '^tuning\|problem' "$aux/$name.tuning" 2>/dev/null
      fi
      [ "$rc" = 0 ] && [ "$crc" = 0 ] && verdict "$name" "$kind" "$plan_s" 0 || { show_failure "$name"; verdict "$name" "$kind" "$plan_s" 1; } ;;
    peer)
      local cmd; cmd=$(peer_cmd "gpubench_perf_${args[0]}") || { verdict "$name" peer "$plan_s" 1 "$note"; return; }
      if [ "${args[0]}" = memcpy ] || [ "${args[0]}" = chase_gpu ]; then
        local check=peer-memcpy; [ "${args[0]}" = chase_gpu ] && check=peer-chase
        run_logged "$name" "$limit" $cmd "${args[@]:2}"
        python3 "$checker" "$check" "$logs/$name.log" "$results/${args[1]}.json" >"$aux/$name.check" 2>&1
      else
        run_logged "$name" "$limit" $cmd "${args[@]:1}"
        python3 "$checker" peer-cublaslt "$logs/$name.log" >"$aux/$name.check" 2>&1
      fi
      local crc=$?
      cat "$aux/$name.check" | tee -a "$logs/$name.log" | grep '^peer\|problem'
      c_ok=$(grep -c '^peer.* \(ok\|PASS\)$' "$aux/$name.check") c_fail=$(grep -c '^peer.* FAIL$\|problem' "$aux/$name.check") c_skip=0
      [ "$rc" = 0 ] && [ "$crc" = 0 ] && verdict "$name" peer "$plan_s" 0 || { show_failure "$name"; verdict "$name" peer "$plan_s" 1; } ;;
    report)
      local f bad=0 start; start=$(now)
      mkdir -p "$out/reports"
      echo "== report" >"$logs/$name.log"
      local files=()
      set +f; shopt -s nullglob; files=("$results"/*.json); shopt -u nullglob; set -f
      # (a call whose steps write no results file, as part 3's evaluate, has none to report)
      [ ${#files[@]} -gt 0 ] || [ "$results_steps" = 0 ] || { echo "no results file to report" >>"$logs/$name.log"; bad=1; }
      for f in "${files[@]}"; do
        "${gpubench[@]}" report "$f" --output "$out/reports/$(basename "${f%.json}").md" >>"$logs/$name.log" 2>&1 || { echo "report failed: $f" >>"$logs/$name.log"; bad=1; }
      done
      took=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') rc=$bad
      [ "$bad" = 0 ] && verdict "$name" report "$plan_s" 0 || { show_failure "$name"; verdict "$name" report "$plan_s" 1; } ;;
  esac
}

# ---------------------------------------------------------------------------------------------
if [ "$dry_run" = 1 ]; then
  echo "gpu-smoke dry run: ${assume:+planned for $assume with }$("${gpubench[@]}" version 2>/dev/null | sed -n 1p)"
else
  echo "gpu-smoke: $("${gpubench[@]}" version | sed -n 1p); results in $out"
  nvidia-smi -L 2>/dev/null || echo "gpu-smoke: nvidia-smi not found"
fi
started=$(now)
set -f  # step arguments are words, never globs
step_part=1 part_steps=(0 0 0 0) part_cases=(0 0 0 0) part_s=(0 0 0 0) part_files=(0 0 0 0)
while read -r kind name rest; do
  [ -z "$kind" ] || [[ "$kind" == \#* ]] && continue
  if [ "$kind" = PART ]; then step_part=$name; continue; fi
  # --part N: the steps of that part, and the report (of that call's results) in every part.
  [ -n "$part" ] && [ "$part" != "$step_part" ] && [ "$kind" != report ] && continue
  [ -n "$only" ] && ! [[ "$name" =~ $only ]] && continue
  read -ra words <<<"$rest"
  before_cases=$total_cases before_s=$total_s before_files=$results_steps
  do_step "$kind" "$name" "${words[@]}"
  if [ "$kind" = report ]; then
    # Each call reports its own part's files: the share --part P would plan for it.
    for p in 1 2 3; do
      part_steps[p]=$((part_steps[p] + 1))
      part_s[p]=$(add_s "${part_s[p]}" "$(add_s "$HELPER_ALLOWANCE_S" "$(mul_s "${part_files[p]}" "$REPORT_PER_FILE_S")")")
    done
  else
    part_steps[step_part]=$((part_steps[step_part] + 1))
    part_cases[step_part]=$((part_cases[step_part] + total_cases - before_cases))
    part_s[step_part]=$(add_s "${part_s[step_part]}" "$(add_s "$total_s" "-$before_s")")
    part_files[step_part]=$((part_files[step_part] + results_steps - before_files))
  fi
done < <(steps)
set +f

if [ "$dry_run" = 1 ]; then
  [ "$plan_failed" = 0 ] || { echo "gpu-smoke: a step could not be planned (above)" >&2; exit 2; }
  # One lease, two calls (docs/gpu-hosts.md): each part's plan, the report in both.
  for p in 1 2 3; do
    [ -n "$part" ] && [ "$part" != "$p" ] && continue
    [ "${part_steps[p]}" -gt 0 ] || continue
    echo "part $p: ${part_steps[p]} steps, ${part_cases[p]} cases, about $(printf '%.0f' "${part_s[p]}") s"
  done
  echo "planned: $total_cases cases, about $(printf '%.0f' "$total_s") s"
  exit 0
fi
echo
printf '%-20s %-8s %5s %5s %5s %8s %8s  %-4s %s\n' step kind ok skip fail planned took result note
printf '%s\n' "${rows[@]}"
verdict_text=PASSED
[ "$out_of_time" = 0 ] || verdict_text="INCOMPLETE ($out_of_time step(s) out of time)"
if [ "$failed_steps" -gt 0 ]; then
  verdict_text="FAILED ($failed_steps step(s))"
  [ "$out_of_time" = 0 ] || verdict_text="$verdict_text; $out_of_time step(s) out of time"
fi
echo "gpu-smoke: $(awk -v a="$started" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }') s in all; $verdict_text"
[ "$failed_steps" = 0 ] && [ "$out_of_time" = 0 ]
