#!/usr/bin/env bash
# Regenerates docs/validation.md from `perfcast validate` on the published measurements.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./build/release/perfcast
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Every frozen evaluation file pooled into one report, statistics only (their rows are in their own sections below):
# GPU, eval_gpu_*.csv and eval_torchvision_b12.csv; CPU, eval_cpu_*.csv (the glob leaves out eval_cpu.csv, a
# calibration file since session 10).
$bin validate data/validation/eval_gpu_*.csv data/validation/eval_torchvision_b12.csv --markdown "$tmp/pooled_gpu.md" \
  --no-rows >/dev/null
$bin validate data/validation/eval_cpu_*.csv --markdown "$tmp/pooled_cpu.md" --no-rows >/dev/null
$bin validate data/validation/published.csv --markdown "$tmp/published.md" >/dev/null
$bin validate data/validation/published_scaling.csv --markdown "$tmp/scaling.md" >/dev/null
$bin validate data/validation/check_pytorch.csv --markdown "$tmp/pytorch.md" >/dev/null
$bin validate data/validation/check_recent.csv --markdown "$tmp/recent.md" >/dev/null
$bin validate data/validation/mlperf_training_calibration.csv --markdown "$tmp/mlperf_training.md" >/dev/null
$bin validate data/validation/check_llm.csv --markdown "$tmp/llm.md" >/dev/null
$bin validate data/validation/check_pascal.csv --markdown "$tmp/pascal.md" >/dev/null
$bin validate data/validation/mlperf_inference.csv --markdown "$tmp/mlperf.md" >/dev/null
$bin validate data/validation/check_timm.csv --markdown "$tmp/timm.md" >/dev/null
$bin validate data/validation/power.csv --markdown "$tmp/power.md" >/dev/null
$bin validate data/validation/measured_h200.csv --markdown "$tmp/measured_h200.md" >/dev/null
$bin validate data/validation/eager_training_calibration.csv --markdown "$tmp/eager_training.md" >/dev/null
$bin validate data/validation/check_hostbound.csv --markdown "$tmp/hostbound.md" >/dev/null
$bin validate data/validation/check_frameworks.csv --markdown "$tmp/frameworks.md" >/dev/null
$bin validate data/validation/check_scaling.csv --markdown "$tmp/check_scaling.md" >/dev/null
$bin validate data/validation/cpu.csv --markdown "$tmp/cpu.md" >/dev/null
# What-if pairs over the calibration files: the folder (not eval_*) plus the three eval_* files that are calibration.
$bin validate --pairs data/validation data/validation/eval_cpu.csv data/validation/eval_recsys.csv \
  data/validation/eval_llm_parallel.csv --markdown "$tmp/pairs.md" >/dev/null
$bin validate data/validation/eval_cpu.csv --markdown "$tmp/eval_cpu.md" >/dev/null
$bin validate data/validation/eval_torchvision_b12.csv --markdown "$tmp/eval_torchvision.md" >/dev/null
$bin validate data/validation/eval_gpu_fresh.csv --markdown "$tmp/eval_gpu_fresh.md" >/dev/null
$bin validate data/validation/eval_cpu_fresh.csv --markdown "$tmp/eval_cpu_fresh.md" >/dev/null
$bin validate data/validation/eval_gpu_s12.csv --markdown "$tmp/eval_gpu_s12.md" >/dev/null
$bin validate data/validation/eval_cpu_s12.csv --markdown "$tmp/eval_cpu_s12.md" >/dev/null
$bin validate data/validation/eval_cpu_s21.csv --markdown "$tmp/eval_cpu_s21.md" >/dev/null
$bin validate data/validation/eval_gpu_s13.csv --markdown "$tmp/eval_gpu_s13.md" >/dev/null
$bin validate data/validation/eval_gpu_s16.csv --markdown "$tmp/eval_gpu_s16.md" >/dev/null
$bin validate data/validation/eval_gpu_s17.csv --markdown "$tmp/eval_gpu_s17.md" >/dev/null
$bin validate data/validation/eval_gpu_s18.csv --markdown "$tmp/eval_gpu_s18.md" >/dev/null
$bin validate data/validation/eval_gpu_s18b.csv --markdown "$tmp/eval_gpu_s18b.md" >/dev/null
$bin validate data/validation/eval_gpu_s19.csv --markdown "$tmp/eval_gpu_s19.md" >/dev/null
$bin validate data/validation/eval_gpu_s20.csv --markdown "$tmp/eval_gpu_s20.md" >/dev/null
$bin validate data/validation/eval_gpu_s21.csv --markdown "$tmp/eval_gpu_s21.md" >/dev/null
$bin validate data/validation/eval_gpu_s22.csv --markdown "$tmp/eval_gpu_s22.md" >/dev/null
$bin validate data/validation/eval_gpu_s23.csv --markdown "$tmp/eval_gpu_s23.md" >/dev/null
$bin validate data/validation/eval_gpu_s24.csv --markdown "$tmp/eval_gpu_s24.md" >/dev/null
$bin validate data/validation/eval_gpu_s24b.csv --markdown "$tmp/eval_gpu_s24b.md" >/dev/null
$bin validate data/validation/eval_gpu_s25.csv --markdown "$tmp/eval_gpu_s25.md" >/dev/null
$bin validate data/validation/eval_gpu_s26.csv --markdown "$tmp/eval_gpu_s26.md" >/dev/null
$bin validate data/validation/eval_gpu_s26b.csv --markdown "$tmp/eval_gpu_s26b.md" >/dev/null
$bin validate data/validation/eval_gpu_s27.csv --markdown "$tmp/eval_gpu_s27.md" >/dev/null
$bin validate data/validation/eval_gpu_s27b.csv --markdown "$tmp/eval_gpu_s27b.md" >/dev/null
$bin validate data/validation/eval_cpu_s27.csv --markdown "$tmp/eval_cpu_s27.md" >/dev/null
$bin validate data/validation/eval_gpu_s27c.csv --markdown "$tmp/eval_gpu_s27c.md" >/dev/null
$bin validate data/validation/eval_gpu_s28.csv --markdown "$tmp/eval_gpu_s28.md" >/dev/null
$bin validate data/validation/eval_gpu_s28c.csv --markdown "$tmp/eval_gpu_s28c.md" >/dev/null
$bin validate data/validation/eval_gpu_s28b.csv --markdown "$tmp/eval_gpu_s28b.md" >/dev/null
$bin validate data/validation/eval_cpu_s28.csv --markdown "$tmp/eval_cpu_s28.md" >/dev/null
$bin validate data/validation/eval_gpu_s28d.csv --markdown "$tmp/eval_gpu_s28d.md" >/dev/null
$bin validate data/validation/eval_gpu_s29.csv --markdown "$tmp/eval_gpu_s29.md" >/dev/null
$bin validate data/validation/eval_gpu_s29b.csv --markdown "$tmp/eval_gpu_s29b.md" >/dev/null
$bin validate data/validation/eval_cpu_s29.csv --markdown "$tmp/eval_cpu_s29.md" >/dev/null
$bin validate data/validation/eval_gpu_s29c.csv --markdown "$tmp/eval_gpu_s29c.md" >/dev/null
$bin validate data/validation/eval_gpu_s30.csv --markdown "$tmp/eval_gpu_s30.md" >/dev/null
$bin validate data/validation/eval_gpu_s30b.csv --markdown "$tmp/eval_gpu_s30b.md" >/dev/null
$bin validate data/validation/eval_gpu_s30c.csv --markdown "$tmp/eval_gpu_s30c.md" >/dev/null
$bin validate data/validation/eval_gpu_s31.csv --markdown "$tmp/eval_gpu_s31.md" >/dev/null
$bin validate data/validation/eval_gpu_s31b.csv --markdown "$tmp/eval_gpu_s31b.md" >/dev/null
$bin validate data/validation/eval_gpu_s31c.csv --markdown "$tmp/eval_gpu_s31c.md" >/dev/null
$bin validate data/validation/eval_gpu_s32.csv --markdown "$tmp/eval_gpu_s32.md" >/dev/null
$bin validate data/validation/eval_gpu_s32b.csv --markdown "$tmp/eval_gpu_s32b.md" >/dev/null
$bin validate data/validation/eval_gpu_s32c.csv --markdown "$tmp/eval_gpu_s32c.md" >/dev/null
$bin validate data/validation/eval_gpu_s33.csv --markdown "$tmp/eval_gpu_s33.md" >/dev/null
$bin validate data/validation/eval_gpu_s33b.csv --markdown "$tmp/eval_gpu_s33b.md" >/dev/null
$bin validate data/validation/eval_gpu_s33c.csv --markdown "$tmp/eval_gpu_s33c.md" >/dev/null
$bin validate data/validation/eval_gpu_s34.csv --markdown "$tmp/eval_gpu_s34.md" >/dev/null
$bin validate data/validation/eval_gpu_s34b.csv --markdown "$tmp/eval_gpu_s34b.md" >/dev/null
$bin validate data/validation/eval_cpu_s34.csv --markdown "$tmp/eval_cpu_s34.md" >/dev/null
$bin validate data/validation/eval_gpu_s35.csv --markdown "$tmp/eval_gpu_s35.md" >/dev/null
$bin validate data/validation/eval_gpu_s35b.csv --markdown "$tmp/eval_gpu_s35b.md" >/dev/null
$bin validate data/validation/eval_gpu_s36.csv --markdown "$tmp/eval_gpu_s36.md" >/dev/null
$bin validate data/validation/eval_cpu_s36.csv --markdown "$tmp/eval_cpu_s36.md" >/dev/null
$bin validate data/validation/eval_gpu_s36b.csv --markdown "$tmp/eval_gpu_s36b.md" >/dev/null
$bin validate data/validation/eval_gpu_s37b.csv --markdown "$tmp/eval_gpu_s37b.md" >/dev/null
$bin validate data/validation/eval_gpu_s37.csv --markdown "$tmp/eval_gpu_s37.md" >/dev/null
$bin validate data/validation/eval_gpu_s37c.csv --markdown "$tmp/eval_gpu_s37c.md" >/dev/null
$bin validate data/validation/eval_gpu_s38.csv --markdown "$tmp/eval_gpu_s38.md" >/dev/null
$bin validate data/validation/eval_cpu_s38.csv --markdown "$tmp/eval_cpu_s38.md" >/dev/null
$bin validate data/validation/eval_gpu_s38b.csv --markdown "$tmp/eval_gpu_s38b.md" >/dev/null
$bin validate data/validation/eval_gpu_s39.csv --markdown "$tmp/eval_gpu_s39.md" >/dev/null
$bin validate data/validation/eval_gpu_s39b.csv --markdown "$tmp/eval_gpu_s39b.md" >/dev/null
$bin validate data/validation/eval_gpu_s39c.csv --markdown "$tmp/eval_gpu_s39c.md" >/dev/null
$bin validate data/validation/eval_gpu_s40.csv --markdown "$tmp/eval_gpu_s40.md" >/dev/null
$bin validate data/validation/eval_gpu_s40c.csv --markdown "$tmp/eval_gpu_s40c.md" >/dev/null
$bin validate data/validation/eval_gpu_s41.csv --markdown "$tmp/eval_gpu_s41.md" >/dev/null
$bin validate data/validation/eval_gpu_s41b.csv --markdown "$tmp/eval_gpu_s41b.md" >/dev/null
$bin validate data/validation/eval_gpu_s41c.csv --markdown "$tmp/eval_gpu_s41c.md" >/dev/null
$bin validate data/validation/eval_gpu_s42b.csv --markdown "$tmp/eval_gpu_s42b.md" >/dev/null
$bin validate data/validation/eval_gpu_s42c.csv --markdown "$tmp/eval_gpu_s42c.md" >/dev/null
$bin validate data/validation/eval_gpu_s42.csv --markdown "$tmp/eval_gpu_s42.md" >/dev/null
$bin validate data/validation/eval_gpu_s40b.csv --markdown "$tmp/eval_gpu_s40b.md" >/dev/null
$bin validate data/validation/recsys_calibration.csv --markdown "$tmp/recsys_calibration.md" >/dev/null
$bin validate data/validation/eval_recsys.csv --markdown "$tmp/recsys.md" >/dev/null
  echo
$bin validate data/validation/llm_parallel.csv --markdown "$tmp/llm_parallel.md" >/dev/null
$bin validate data/validation/deepspeed_calibration.csv --markdown "$tmp/deepspeed_calibration.md" >/dev/null
$bin validate data/validation/vllm_calibration.csv --markdown "$tmp/vllm_calibration.md" >/dev/null
$bin validate data/validation/eval_llm_parallel.csv --markdown "$tmp/eval_llm_parallel.md" >/dev/null
  echo
$bin validate data/validation/llm_serving.csv --markdown "$tmp/serving.md" >/dev/null
{
  cat docs/validation_intro.md
  echo
  echo "# All evaluation files pooled"
  echo
  echo "The frozen evaluation files (each read once, at its freeze, before the model changes of its session were merged)"
  echo "pooled into one report per device kind: \`perfcast validate FILE FILE...\` takes every statistic over the rows of all"
  echo "files together and forms precision pairs within each file. The table by file gives each file's own figures, so a file"
  echo "with many rows shows its weight in the pool. The files of data/interval_setup.toml fresh_calibration_files (the older"
  echo "evaluation files) calibrate the interval width, so their interval coverage is in sample: each summary counts their"
  echo "rows and gives the coverage without them. Each file's rows are in its own section below."
  echo
  echo "GPU: every data/validation/eval_gpu_*.csv and eval_torchvision_b12.csv."
  echo
  cat "$tmp/pooled_gpu.md"
  echo
  echo "CPU: every data/validation/eval_cpu_*.csv (eval_cpu.csv, a calibration file since session 10, is not one of them)."
  echo
  cat "$tmp/pooled_cpu.md"
  echo
  cat "$tmp/published.md"
  echo
  echo "# Scaling set: published_scaling.csv (1 to 8 GPUs)"
  echo
  echo "Its single-GPU rows were not used to set any single-GPU constant (they are the check set of"
  echo "docs/calibration.md); the data-parallel constants were set against its multi-GPU rows"
  echo "(docs/scale-out-validation.md)."
  echo
  cat "$tmp/scaling.md"
  echo
  echo "# PyTorch check set: check_pytorch.csv"
  echo
  echo "Published single-GPU PyTorch measurements gathered in session 3 (u39kun/deep-learning-benchmark, NVIDIA"
  echo "DeepLearningExamples ResNet-50 v1.5 and BERT, lambdal/deeplearning-benchmark), each with its source and setup in"
  echo "the notes. No constant was fitted to them; two modelling fixes came from reading why they missed (GP102 FP16"
  echo "computes in FP32 on half storage; eager attention's elementwise kernels). Known misses: batch-1 inference"
  echo "in NVIDIA's benchmark (host- and loader-bound: 3-6x too fast until session 8, 19-40% with the per-op host costs measured in profiler traces), PyTorch 0.3 on V100 (early cuDNN 7.0 Volta"
  echo "kernels, 25-100% too fast), BERT with TF32 matmuls on Ampere (21-123% too fast in the 2020 containers; the"
  echo "RTX 3080 BERT-large row at batch 2 is the worst). Session 4 relabelled the BERT rows to bert_*_squad, the SQuAD"
  echo "question-answering model their notes say they ran (no 30522-way MLM decoder): 9.4 -> 9.1%. Session 5: eager"
  echo "PyTorch optimizers make one memory pass per operation (torch.optim without fused=True); NVIDIA's run_squad.py trains"
  echo "FP32/TF32 with its Python BertAdam and AMP with apex FusedAdam, so the AMP BERT rows carry fused_optimizer=yes"
  echo "(9.1 -> 8.8%; the FP32 BERT-large rows at batch 2-4 moved from 35-62% to 21-32% too fast)."
  echo
  cat "$tmp/pytorch.md"
  echo
  echo "# Newer GPUs and engines check set: check_recent.csv"
  echo
  echo "Published single-GPU measurements on GPUs and engines never used for calibration (H100 PCIe, RTX 4090, RTX A6000,"
  echo "A100 80GB, L4, L40S, T4, A10; PyTorch, TensorFlow 1/2, MXNet, TensorRT), gathered in session 3 with sources in the"
  echo "notes. Changes made with it in view: the Ada tensor efficiency from published RTX 4090 matmul rates (was 0.75,"
  echo "26-38% slow), fused attention in TensorRT and torch.compile, and (session 5) Turing's INT8 tensor rate capped at"
  echo "twice its FP16 cap (T4 TensorRT INT8 BERT had been 49-66% too fast, now 0-12%; 21.0 -> 19.6%). Known misses:"
  echo "batch-1 inference (latency-bound engines and loaders, 1.3-4x too fast), NVIDIA's TF1 ResNet-50 inference benchmark"
  echo "on a DGX A100 (60-110% too fast: its tf.data pipeline and NCHW FP16 path), MXNet ResNet-50 on T4 (about 2x too"
  echo "slow), L4 TensorRT BERT FP16 (11-41% too fast: the 72 W power limit is modelled only coarsely), TF2's BERT inference harness (A100 11-73%, T4 3-39% too fast), TF32 BERT training (PyTorch: A100 80GB 11-14%,"
  echo "RTX 4090 13-20%, H100 PCIe and RTX A6000 26-32%; TF2 BERT-large on an A100 93% too fast). Session 4 relabelled"
  echo "the 62 BERT rows to bert_*_squad, the SQuAD question-answering model their notes say they ran; the pre-training"
  echo "graph's 30522-way MLM decoder had hidden these over-predictions (15.8 -> 21.0%). No validation row uses the"
  echo "pre-training graphs bert_base / bert_large any more."
  echo
  cat "$tmp/recent.md"
  echo
  echo "# MLPerf Training ResNet-50, NVIDIA's MXNet recipe: mlperf_training_calibration.csv (calibration, session 42)"
  echo
  echo "Single-node results of rounds v1.1 and v2.1 (A100 SXM4 and PCIe, 2-8 GPUs), images/s over the epoch as the logs"
  echo "print it. Read while the mxnet-mlperf runtime was written (cuDNN fused-ops batch norm, BN+ReLU and BN+add+ReLU"
  echo "kernels, 4-channel stem; data/validation/README.md): 34.6% median under the plain mxnet profile, every row too slow."
  echo
  cat "$tmp/mlperf_training.md"
  echo
  echo "# Language-model serving check set: check_llm.csv"
  echo
  echo "Published llama.cpp llama-bench runs on GeForce, workstation and datacenter GPUs (pp512 = prefill, tg = decode"
  echo "from an empty cache) and NVIDIA's TensorRT-LLM 0.8 performance tables (FP8, fixed batch; their throughput includes"
  echo "the prompt's prefill, so those rows use --mode generate with the input length as --context). Gathered in session 3;"
  echo "the one change made with it in view is from llama.cpp's source: its FP16 cuBLAS GEMMs accumulate in FP16"
  echo "(CUBLAS_COMPUTE_16F), which GeForce boards run at twice their FP32-accumulate rate (prefill rows on RTX 30/40 were"
  echo "30-39% slow). Known misses: TensorRT-LLM Mistral-7B with large batches (60-170% too fast: the model makes"
  echo "grouped-query attention's smaller KV cache pay off more than the measurement shows), FP8 prefill ~20% too fast,"
  echo "llama.cpp f16 decode on A100 (58-68% too fast) and on H100 PCIe (30-48% too fast across the board). Tried in"
  echo "session 5 and not kept: TensorRT-LLM 0.8 documents its GQA (XQA) decode kernels as experimental and off by default,"
  echo "and its default masked-MHA kernel runs one thread block per query head, each reading its KV head's cache. Reading a"
  echo "shared KV head once per query head brought the H100/H200 Mistral rows to -22..+32%, but made the L40S Mistral rows"
  echo "22-54% and one H200 Llama-2-70B row 50% slow (the tables say XQA was enabled 'where our tests displayed performance"
  echo "benefits', row by row, which the rows do not record)."
  echo
  cat "$tmp/llm.md"
  echo
  echo "# Pascal check set: check_pascal.csv"
  echo
  echo "More published GP102/GP104 measurements, gathered in session 3 and not used to set anything: nicklhy/DLInfBench"
  echo "(PyTorch, MXNet and TensorFlow fp32 inference on GTX 1080 Ti, GTX 1080 and Titan X Pascal), Dell EMC's TensorRT 2.0"
  echo "Tesla P40 whitepaper (FP32 and INT8 GoogLeNet/AlexNet, batch 1-4096) and llama.cpp P40 prefill tables."
  echo "Session 4: DLInfBench's timing includes the blocking copy of every batch from host memory, so its rows carry"
  echo "\`data=host\` (the copy adds to each step); TensorFlow 1.2 transposes every NHWC convolution to NCHW and back except"
  echo "1x1 stride-1 ones, which it runs as a cuBLAS GEMM (a runtime-version rule); non-fused Winograd became F(2x2,3x3)"
  echo "and MXNet's cuDNN 5 generation took the torch7 library efficiency 0.70 (docs/calibration.md; dropped in session 35: MXNet 0.x takes 1.0, as PyTorch 0.1.12 and TF 1.2.1 on the same cuDNN 5.1.10). Median 31.2 -> 24.2%; DLInfBench's TF and PyTorch rows on the GTX 1080 Ti are within 9%."
  echo "Known misses: TensorRT 2.0 INT8 on the P40 (30-70% too fast at large batch: the model gives dp4a convolutions the"
  echo "SGEMM efficiency; the measured INT8/FP32 gain is 2.9-3.1x, not the 3.4-3.8x predicted), batch-1 rows (PyTorch 0.1"
  echo "and TF 1.2 per-op overheads and the DataLoader's per-batch cost are not modelled: ~5 ms per image measured in all"
  echo "three frameworks), Titan X Pascal PyTorch rows (25-31% too fast; the GTX 1080 Ti rows of the same harness are"
  echo "within 9%), TF-slim Inception v3 (37-46% too fast), MXNet of 2017 with cuDNN 5.1 (2-11% too slow at batch 32/64 since session 35, 33% too fast at batch 1) and AlexNet"
  echo "through PyTorch's DataLoader (collating 79 MB batches on the host)."
  echo
  cat "$tmp/pascal.md"
  echo
  echo "# TensorRT as MLPerf runs it: mlperf_inference.csv (calibration)"
  echo
  echo "NVIDIA's MLPerf Inference Offline results on one-GPU systems (v1.0: A100 PCIe 40GB, A10; v3.0: A100 PCIe 80GB,"
  echo "H100 PCIe, L4), ResNet-50 and BERT-Large INT8, each row with its mlperf_log_summary.txt and the config's batch."
  echo "Two engine facts were modelled from TensorRT's documentation and NVIDIA's MLPerf code with these rows in view"
  echo "(median 47.1% -> 12.8%, every row predicted 17-53% too slow before): the BERT engine runs packed tokens without"
  echo "padding (the seq_mean column: 177 real tokens of 384, SQuAD v1.1's 54% padding), and the RGB layer runs on INT8"
  echo "tensor cores over kCHW4-padded channels instead of FP32 CUDA cores (a third of the A100 step at batch 2048)."
  echo "Known miss: L4 ResNet-50 at batch 32 with CUDA graphs, 48% too slow: at that batch each INT8 activation (26 MB"
  echo "at most) fits the L4's 48 MB L2 between kernels, where perfcast sends every kernel's bytes to DRAM (73% of its"
  echo "predicted step); L2 residency between kernels is not modelled."
  echo
  cat "$tmp/mlperf.md"
  echo
  echo "# timm check set: check_timm.csv"
  echo
  echo "timm's published benchmark files (huggingface/pytorch-image-models results/): AMP inference on the RTX 4090 (PyTorch"
  echo "2.4 eager NCHW and channels-last, and torch.compile) and RTX 3090, AMP training on the RTX 3090 (PyTorch 1.12, NCHW"
  echo "and channels-last), 20 torchvision-equivalent models each. Gathered in session 3, after the zoo gained the torchvision"
  echo "models; one change made with it in view, from Inductor's documented behaviour: torch.compile converts convolutions to"
  echo "channels-last (layout_optimization), so pytorch-compile no longer pays NCHW transposes (compile rows -48% -> -26%)."
  echo "Known misses: predictions are 12-26% slow across these GeForce AMP rows (modern cuDNN's tensor-core convolutions run"
  echo "closer to the GEMM rate than conv_efficiency_tensor = 0.75, set on TF1-era rows), timm's resnet101/152 are v1.5"
  echo "while the zoo's are v1, and depthwise-heavy networks train 20-45% faster than measured on the RTX 3090."
  echo
  cat "$tmp/timm.md"
  echo
  echo "# Board power: power.csv"
  echo
  echo "Measured average board power per GPU (metric board_power_w, W) over the steady steps of a stated training job,"
  echo "against the power model's average power (PowerCost avg_power_w: each kernel's power weighted by its time, the"
  echo "gaps between kernels and the waits inside the step at the clocks-up wait power, the board at P0 with no kernel;"
  echo "src/analysis/power.cpp, data/power.toml). Sources: this project's NVML recording of PyTorch ResNet-50 AMP"
  echo "training on the lent H200 (tests/data/monitor, session 19) and the Zeus (NSDI 2023) power trace (ml-energy/zeus,"
  echo "trace/summary_power_{v100,rtx6000,p100}.csv: torchvision ResNet-50 FP32 ImageNet training, the epoch's average"
  echo "power at the board's highest listed power limit). Calibration: added in session 31 with no power constant changed"
  echo "with it in view. Session 32 changed two: data/power.toml clocks_up_activity (h/power32), derived from the H200"
  echo "recording's setup phase (CUDA context open, clocks up, 0% utilization), not from its timed steps or any power.csv"
  echo "row; and data/architectures.toml sm_70 power_clock_exponent 1.77 (h/v100pw32), derived from the two V100"
  echo "datasheets (SXM2 300 W at 1530 MHz, PCIe 250 W at 1380 MHz) but chosen with power.csv's V100 rows and the Zeus"
  echo "epoch times at lower limits in view (docs/calibration.md, session 32). Power rows enter no what-if pair and no"
  echo "interval (those describe throughput residuals)."
  echo
  cat "$tmp/power.md"
  echo
  echo "# Measured by perfcast on an H200: measured_h200.csv (calibration)"
  echo
  echo "PyTorch 2.11 eager on a lent H200 (session 19, data/device_sessions/2026-12-04-h200/): torchvision CNNs and Hugging"
  echo "Face BERT, training and inference, FP32 / TF32 / AMP FP16 / BF16, NCHW and channels-last, batch 1-256 (a batch sweep"
  echo "of ResNet-50 where the host stops bounding the step). The host, a 16-vCPU Emerald Rapids guest, has no data/hosts"
  echo "profile, so host-bound rows are read against the default host."
  echo
  cat "$tmp/measured_h200.md"
  echo
  echo "# Eager Hugging Face GPT-2 training: eager_training_calibration.csv (calibration, session 42, data/validation/README.md)"
  echo
  cat "$tmp/eager_training.md"
  echo
  echo "# Host-bound check set: check_hostbound.csv"
  echo
  echo "Calibration, gathered in session 12 (issue 13) for the host model and the intervals of host-bound rows: PyTorch eager"
  echo "inference at batch 1-64 from the eager baselines of three inference-compiler benchmarks: AITemplate (A100-40GB,"
  echo "PyTorch 1.12, FP16 ResNet-50, BERT-base encoder, ViT-B/16), Baidu's Poros (A10 on a Xeon Platinum 8350C, PyTorch"
  echo "1.12.1, FP32 ResNet-50, VGG-16, MobileNetV2, EfficientNet-B0, BERT-base) and PaddlePaddle's 2018 Paddle-TRT page"
  echo "(Tesla P4 on a Xeon Gold 5117, native PyTorch ResNet-50/101 and Inception-v3). Latency stays flat from batch 1 to"
  echo "8-32 on the A100 and A10: the host sets the step. No constant was set with these rows in view."
  echo
  cat "$tmp/hostbound.md"
  echo
  echo "# Other frameworks: check_frameworks.csv"
  echo
  echo "Gathered in session 4 for the new jax and onnxruntime profiles, written from their documentation before these rows:"
  echo "ONNX Runtime 1.2-1.16 with the CUDA execution provider on BERT (its transformers README's V100 table and its BERT"
  echo "SQuAD notebook on V100 and RTX 4090), Keras 3 on JAX (BERT-base on an A100) and NVIDIA JAX-Toolbox ViT-B/16"
  echo "pre-training on 8 A100 / H100. One setting was changed with these rows in view, and says so in its source: the"
  echo "ORT profile fuses elementwise chains (ORT's extended graph optimizations and its transformer optimizer fuse"
  echo "Attention, SkipLayerNorm, Gelu and EmbedLayerNorm; median 18.6 -> 19.3% over the file, 17.5 -> 15.5% over the 45"
  echo "ORT rows). Known misses: ORT 1.2/1.4 FP16 on the V100 at batch 1-4 and at most 128 tokens (24-114% too fast; its"
  echo "per-node host cost; the RTX 4090 FP16 rows are within 10%), an RTX 4090 run without the optimizer timed in"
  echo "Jupyter, Keras/JAX training (53-77% too fast) and the JAX ViT pre-training rows (51% / 127% too fast; their hosts"
  echo "and H100 variant are assumptions)."
  echo
  cat "$tmp/frameworks.md"
  echo
  echo "# Multi-GPU check set: check_scaling.csv"
  echo
  echo "Gathered in session 5 by a helper agent from NVIDIA DeepLearningExamples READMEs, after the multi-GPU model was"
  echo "set and without looking at predictions: ResNet-50 v1.5 (PyTorch DDP, MXNet Horovod with DALI, TF1 Horovod + XLA),"
  echo "BERT-large SQuAD fine-tuning (PyTorch APEX DDP, TF1 Horovod + XLA), TF1 BERT-large LAMB pre-training (gradient"
  echo "accumulation, grad_accum column) and TF1 U-Net, on DGX-1 (NVLink), DGX-2 and DGX A100 (NVSwitch), each"
  echo "configuration with its 1-GPU row. Set in view of it, from the systems' datasheets: the DGX A100 and DGX-2 host"
  echo "profiles (the rows had no host and fell back to a 6-core desktop, which starved 8-16 GPUs of decoded images)."
  echo "Scaling efficiency (docs/scale-out-validation.md): 5.5 points mean error over the 88 multi-GPU rows (assuming"
  echo "perfect scaling: 9.1; throughput median 13.6%). Seven TF1 BERT 'FP32' rows were removed: one V100 cannot run"
  echo "31-33 BERT-large sequences/s in FP32 (about 25 TFLOPS, above its 15.7 peak). Known misses: BERT fine-tuning"
  echo "loses more than modelled (PyTorch APEX DDP measured 0.83-0.95 at 4-16 GPUs, predicted 0.97-0.99; TF Horovod +"
  echo "XLA with AMP at 8-16 GPUs measured 0.63-0.77, predicted 0.89-0.91), and the 1-GPU TF1 BERT AMP rows are 41-77%"
  echo "too fast."
  echo
  cat "$tmp/check_scaling.md"
  echo
  echo "# What-if pairs on the calibration files (issue 13)"
  echo
  echo "Issue 13 judges what-ifs as well as single predictions: a precision change (amp, fp16, int8 against fp32 on the"
  echo "same model, GPU and batch) and a GPU count (scaling efficiency of poorly scaling data-parallel rows). Every pair"
  echo "below is two measured rows of one calibration file that differ in that input only (\`perfcast validate --pairs\`,"
  echo "src/analysis/what_if_pairs.h; thresholds in data/what_if_pairs.toml). Evaluation files are not read."
  echo
  sed '1,2d' "$tmp/pairs.md"
  echo
  echo "# Evaluation: eval_torchvision_b12.csv (frozen)"
  echo
  echo "Issue 13's first evaluation file, frozen in session 8 before the host model was built and never tuned against"
  echo "(data/validation/README.md): aisensiy/pytorch-gpu-benchmark, 14 torchvision models at batch 12 in PyTorch eager"
  echo "FP32, training (no optimizer step) and inference, GTX 1080 Ti, Tesla T4 and V100 PCIe 32GB, the image batch copied"
  echo "from pageable host memory inside each step. At freeze: median 17.8%, mean 48.2%, within 2x 83.3%. The light"
  echo "models (ShuffleNet, SqueezeNet, MobileNet) are host-bound at this batch; they were 2-4x too fast until session 8's"
  echo "per-op host costs measured in profiler traces (docs/host-trace-fit.md, chosen without this file in view)."
  echo
  echo "Interval coverage in this file is in sample: the file calibrates the interval width (data/interval_setup.toml"
  echo "fresh_calibration_files, session 23), so it does not judge the intervals."
  echo
  cat "$tmp/eval_torchvision.md"
  echo
  echo "# Evaluation: eval_gpu_fresh.csv (frozen)"
  echo
  echo "Frozen in session 11 (commit f569287) before that session's model changes, from four sources no other data file"
  echo "uses: NVIDIA FasterTransformer's BERT guide (its TensorFlow 1.15 XLA and TorchScript baseline columns, T4 and V100),"
  echo "Apache MXNet's performance FAQ (MXNet 1.2, V100), tensorpack/benchmarks (TensorFlow 1.6 on 1-8 V100) and"
  echo "sandeepkumar-skb/pytorch_experiments (PyTorch eager ResNet-50, V100). Nothing is chosen with it in view; the"
  echo "freeze figures are in data/validation/README.md."
  echo
  echo "Interval coverage in this file is in sample: the file calibrates the interval width (data/interval_setup.toml"
  echo "fresh_calibration_files, session 23), so it does not judge the intervals."
  echo
  cat "$tmp/eval_gpu_fresh.md"
  echo
  echo "# Evaluation: eval_cpu_fresh.csv (frozen)"
  echo
  echo "Frozen in session 11 with eval_gpu_fresh.csv: two rows, ONNX Runtime 1.4 BERT-base at batch 1 (sequence 128 and"
  echo "512) on a Core i7-8700, from ONNX Runtime's TF2ONNX BERT CPU notebook. The same machine as eval_cpu.csv, so it is"
  echo "weak evidence of out-of-sample CPU accuracy: too few rows to judge issue 15's 20% target."
  echo
  echo "Interval coverage in this file is in sample: the file calibrates the interval width (data/interval_setup.toml"
  echo "fresh_calibration_files, session 23), so it does not judge the intervals."
  echo
  cat "$tmp/eval_cpu_fresh.md"
  echo
  echo "# Evaluation: eval_gpu_s12.csv (frozen)"
  echo
  echo "Frozen in session 12 before that session's model changes were merged, from four sources no other data file"
  echo "uses: ELS-RD/transformer-deploy's benchmark logs (RoBERTa-base/large = BERT-base/large shapes, batch 16 x 384,"
  echo "PyTorch FP32 / AMP and TensorRT FP16 on T4 and RTX 3090), pycls's model zoo (inference of 64 images on a V100,"
  echo "PyTorch 1.6), cgnorthcutt/cnn-gpu-benchmarks (PyTorch ImageNet training with real data on RTX 2080 Ti and Titan RTX)"
  echo "and yuyu2172/chainer-performance-improvements (Chainer and Torch7 AlexNet / GoogLeNet on a Titan X Pascal)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  echo "Interval coverage in this file is in sample: the file calibrates the interval width (data/interval_setup.toml"
  echo "fresh_calibration_files, session 23), so it does not judge the intervals."
  echo
  cat "$tmp/eval_gpu_s12.md"
  echo
  echo "# Evaluation: eval_cpu_s12.csv (frozen)"
  echo
  echo "Frozen in session 12 before that session's model changes were merged, from one source no other data file uses:"
  echo "ispcojp/ai_inference_device_benchmark (batch-1 FP32 inference of six timm / torchvision image models in PyTorch"
  echo "eager and ONNX Runtime on a Core i9-10900X, whole chip). One machine, inference only: weak evidence for issue 15's"
  echo "CPU target. Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  echo "Interval coverage in this file is in sample: the file calibrates the interval width (data/interval_setup.toml"
  echo "fresh_calibration_files, session 23), so it does not judge the intervals."
  echo
  cat "$tmp/eval_cpu_s12.md"
  echo
  echo "# Evaluation: eval_cpu_s21.csv (frozen)"
  echo
  echo "Frozen in session 21 before that session's model changes were merged, from one source no other data file uses:"
  echo "Intel Neural Compressor's 'Validated Models' page (FP32 inference, PyTorch 2.0.1 eager and ONNX Runtime 1.15.0, one"
  echo "Xeon Platinum 8480+ socket). Every figure sums 14 processes of 4 cores at batch 1; perfcast predicts one process on"
  echo "56 cores at batch 14 (the 'instances' column records the fact). Nothing is chosen with it in view; the freeze"
  echo "figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_cpu_s21.md"
  echo
  echo "# Evaluation: eval_gpu_s13.csv (frozen)"
  echo
  echo "Frozen in session 13 before that session's model changes were merged, from five sources no other data file"
  echo "uses: linbo0518/CVBenchmarks (MXNet 1.4 Gluon at batch 1 on a Titan Xp and a GTX 1080 Ti), open-mmlab/mmdeploy's"
  echo "latency benchmark (TensorRT 7.2 FP32 / FP16 / INT8 at batch 1 on a T4), kakaobrain/torchgpipe (ResNet-101"
  echo "training on a Tesla P40), xhiroga/til (ResNet-50 at batch 8 on an RTX 4090, PyTorch eager and TensorRT) and"
  echo "Oneflow-Inc/DLPerf (DeepLearningExamples PyTorch / TensorFlow ResNet-50 and BERT-base training on one V100)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  echo "Interval coverage in this file is in sample: the file calibrates the interval width (data/interval_setup.toml"
  echo "fresh_calibration_files, session 23), so it does not judge the intervals."
  echo
  cat "$tmp/eval_gpu_s13.md"
  echo
  echo "# Evaluation: eval_gpu_s16.csv (frozen)"
  echo
  echo "Frozen in session 16 before that session's model changes were merged, from three Hugging Face transformers SDPA"
  echo "training benchmark tables no other data file uses (BERT-base on an A100 80GB, ELECTRA-base on a T4, OPT-350m on"
  echo "an L40S; PyTorch float16, eager and SDPA attention, forward + backward without an optimizer step). The three share"
  echo "one benchmark script family, so they are not fully independent. Nothing is chosen with it in view; the freeze"
  echo "figures are in data/validation/README.md."
  echo
  echo "Interval coverage in this file is in sample: the file calibrates the interval width (data/interval_setup.toml"
  echo "fresh_calibration_files, session 23), so it does not judge the intervals."
  echo
  cat "$tmp/eval_gpu_s16.md"
  echo
  echo "# Evaluation: eval_gpu_s17.csv (frozen)"
  echo
  echo "Frozen in session 17 before that session's model changes were merged, from four NVIDIA DeepLearningExamples"
  echo "READMEs no other data file uses: TensorFlow 2 ELECTRA-base SQuAD fine-tuning and inference (A100 40GB AMP, V100"
  echo "16GB / 32GB), TensorFlow 2 U-Net medical training (A100 40GB, V100 16GB), PyTorch EfficientNet-B0 training"
  echo "(A100 80GB, V100 16GB / 32GB) and TensorFlow 2 EfficientNet-B0 inference (A100 80GB); FP32 / TF32 and AMP."
  echo "One repository and one publisher behind all four, so they are not fully independent. Nothing is chosen with it"
  echo "in view; the freeze figures are in data/validation/README.md."
  echo
  echo "Interval coverage in this file is in sample: the file calibrates the interval width (data/interval_setup.toml"
  echo "fresh_calibration_files, session 23), so it does not judge the intervals."
  echo
  cat "$tmp/eval_gpu_s17.md"
  echo
  echo "# Evaluation: eval_gpu_s18.csv (frozen)"
  echo
  echo "Frozen in session 18 before that session's model changes were merged, from two sources no other data file uses:"
  echo "a hobbyist blog's timm benchmark.py runs (NikolasEnt, PyTorch 1.13: VGG-16 and ResNet-50 inference and training,"
  echo "float32 and float16, GTX 1080 Ti, RTX 2080 Ti, RTX 3090, RTX 4090) and PaddlePaddle's float16 inference benchmark"
  echo "(Paddle Fluid ResNet-50 at batch 1-16, float32 and float16, Titan Xp). Nothing is chosen with it in view; the"
  echo "freeze figures are in data/validation/README.md."
  echo
  echo "Interval coverage in this file is in sample: the file calibrates the interval width (data/interval_setup.toml"
  echo "fresh_calibration_files, session 23), so it does not judge the intervals."
  echo
  cat "$tmp/eval_gpu_s18.md"
  echo
  echo "# Evaluation: eval_gpu_s18b.csv (frozen)"
  echo
  echo "Gathered in session 18 after that session's model changes were merged; frozen before the session-19 model"
  echo "changes, from one source no other data file uses: XHMY/torch_benchmark's nn_bench.py (NGC PyTorch 23.04,"
  echo "PyTorch 2.1 eager, torchvision ResNet-50, DenseNet-201, VGG-13 and ViT-B/16 training at batch 64 with SGD,"
  echo "float32 and model.half() float16, RTX 4090 under WSL2 and Titan RTX). Nothing is chosen with it in view; the"
  echo "freeze figures are in data/validation/README.md."
  echo
  echo "Interval coverage in this file is in sample: the file calibrates the interval width (data/interval_setup.toml"
  echo "fresh_calibration_files, session 23), so it does not judge the intervals."
  echo
  cat "$tmp/eval_gpu_s18b.md"
  echo
  echo "# Evaluation: eval_gpu_s19.csv (frozen)"
  echo
  echo "Gathered in session 19 before that session's model changes were merged, from one source no other data file"
  echo "uses: OpenPPL/ppl.nn's CUDA benchmark page (TensorRT 8 column, Tesla T4, batch 1, 224x224, torchvision models"
  echo "exported to ONNX; precision taken as fp16). Nothing is chosen with it in view; the freeze figures are in"
  echo "data/validation/README.md."
  echo
  echo "Interval coverage in this file is in sample: the file calibrates the interval width (data/interval_setup.toml"
  echo "fresh_calibration_files, session 23), so it does not judge the intervals."
  echo
  cat "$tmp/eval_gpu_s19.md"
  echo
  echo "# Evaluation: eval_gpu_s20.csv (frozen)"
  echo
  echo "Gathered in session 20 before that session's model changes were merged, from two sources no other data file"
  echo "uses: huggingface/optimum's GPTQ benchmark page (fp16 baseline rows: Llama 2 13B generate and prefill in"
  echo "transformers on an A100-SXM4-80GB, batch 1-16, prompt 512) and bitsandbytes' benchmarking README (BF16 baseline"
  echo "rows: Llama 3.1 8B decode via optimum-benchmark on an RTX 4090 and an H100 SXM, batch 1/8/32). Nothing is chosen"
  echo "with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s20.md"
  echo
  echo "# Evaluation: eval_gpu_s21.csv (frozen)"
  echo
  echo "Gathered in session 21 before that session's model changes were merged, from four sources no other data file"
  echo "uses: AutoGPTQ's README (fp16 Hugging Face generate, LLaMA-7B, A100-40G), premAI-io/benchmarks (transformers and"
  echo "lit-gpt Llama-2-7B generate, fp16/fp32, A100 80GB), pytorch/TensorRT's example notebooks (BERT-base, EfficientNet-B0,"
  echo "ResNet-50: eager, TorchScript, TensorRT FP32/FP16 on A100, V100, RTX 3090) and TinyChat's README (Hugging Face FP16"
  echo "decode at batch 1, Llama-2 7B/13B and Falcon-7B on RTX A6000 and RTX 4090). Nothing is chosen with it in view; the"
  echo "freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s21.md"
  echo
  echo "# Evaluation: eval_gpu_s22.csv (frozen)"
  echo
  echo "Gathered in session 22 before that session's model changes were merged, from three sources no other data file"
  echo "uses: AutoAWQ's README benchmark table (AWQ 4-bit prefill and decode in eager PyTorch with AutoAWQ's fused layers,"
  echo "Llama-2 7B / Mistral 7B / Llama-2 13B shapes, batch 1-8, RTX 4090), bytedance/effective_transformer's README (the"
  echo "TensorFlow 1.15 XLA baseline: BERT-base encoder inference, FP16 / FP32, batch 100-1000, V100 and T4) and"
  echo "PaddleClas's ResNet page (Paddle-TRT FP16 / FP32 ResNet-18/50/152 at batch 1-8 on a T4, input copy in the timing)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s22.md"
  echo
  echo "# Evaluation: eval_gpu_s23.csv (frozen)"
  echo
  echo "Gathered in session 23 before that session's model changes were merged, from four sources no other data file"
  echo "uses: kernl's third-party benchmark README (BERT-base inference on an RTX 3090: TensorRT 8.5 FP16 engines and ONNX"
  echo "Runtime 1.12 FP16 with IO binding, batch 1-32, sequence 16-512), Paddle-Inference-Demo's GPU benchmark page (Paddle-TRT"
  echo "FP16 / FP32 MobileNetV2 and ResNet-101 at batch 1-4 on a T4), the Qwen2.5 speed benchmark (Qwen2.5-7B BF16 generation"
  echo "of 2048 tokens at batch 1 after a 1-30720-token prompt on an A100 80GB, Hugging Face transformers with FlashAttention-2"
  echo "and vLLM 0.6.3) and Flax's ImageNet example (ResNet-50 training on 8 V100s in JAX, FP32 and mixed precision, from"
  echo "the runs' walltime). Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s23.md"
  echo
  echo "# Evaluation: eval_gpu_s24.csv (frozen)"
  echo
  echo "Gathered in session 24 before that session's model changes were merged, from three sources no other data file"
  echo "uses: torchtitan's performance page (FSDP2 pre-training of Llama 2 13B / 70B and Llama 3 70B on 64 A100 80GB, bf16,"
  echo "no or full activation checkpointing), Jan's TensorRT-LLM vs llama.cpp post (Mistral 7B decode at batch 1 after a"
  echo "2048-token prompt on an RTX 4090 and an RTX 3090: llama.cpp Q4_K_M and TensorRT-LLM 0.7.1 AWQ int4) and OneFlow's XRT"
  echo "README (BERT-base pre-training at batch 40 on an RTX 2080 Ti: TensorFlow and TensorFlow-XLA, FP32 and mixed"
  echo "precision). Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s24.md"
  echo
  echo "# Evaluation: eval_gpu_s24b.csv (frozen)"
  echo
  echo "Gathered in session 24 before that session's model changes were merged, from sources no other data file uses:"
  echo "NVIDIA's MLPerf Inference v0.7 and v1.1 closed submissions (ResNet-50 v1.5 and BERT-Large TensorRT INT8 engines,"
  echo "Offline and SingleStream, on a T4, an A100 PCIe 40GB and a DGX A100 with one A100 SXM 80GB) and two"
  echo "tf_cnn_benchmarks reports in ROCm/tensorflow-upstream issues #173 and #256 (training on an RTX 3080 with --use_fp16"
  echo "in NVIDIA's 20.12 TF2 container, and on a GTX 1080 Ti in FP32 and FP16: ResNet-50/101/152, Inception-v3, VGG-16,"
  echo "AlexNet). Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s24b.md"
  echo
  echo "# Evaluation: eval_gpu_s25.csv (frozen)"
  echo
  echo "Gathered in session 25 before that session's model changes were merged, from sources no other data file uses:"
  echo "the result tables of NVIDIA's TensorFlow quantization toolkit examples (NVIDIA/TensorRT tools/tensorflow-quantization:"
  echo "batch-1 latency on an A100 of ResNet-50/101 v1, MobileNet v2, EfficientNet-B0 and Inception-v3 in TensorFlow 2.8 and"
  echo "as TensorRT 8.4 FP32, PTQ INT8 and QAT INT8 engines), a 2018 gist timing a Caffe ResNet-50 TensorRT 4.0 engine on a"
  echo "V100 at batch 1-256 in FP32 and FP16, and tlkh/tf-metal-experiments' RTX 3090 reference table (Keras training with"
  echo "XLA and mixed_float16: ResNet-50, MobileNet v2, BERT-large). Nothing is chosen with it in view; the freeze figures"
  echo "are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s25.md"
  echo
  echo "# Evaluation: eval_gpu_s26.csv (frozen)"
  echo
  echo "Gathered in session 26 before that session's model changes were merged, from sources no other data file uses:"
  echo "the Paddle team's V100 reproductions of NVIDIA DeepLearningExamples training (wanghuancoder/PerformanceReport:"
  echo "ResNet-50 v1.5 in NGC PyTorch, TensorFlow 1.15 with XLA and MXNet at batch 128/256 in FP32 and mixed precision on"
  echo "1 and 8 V100-SXM2-32GB, and BERT-base pre-training phase 1 in PyTorch and TensorFlow-XLA on a V100-SXM2-16GB) and"
  echo "BladeDISC's ResNet-50 example (PyTorch 1.12 eager inference at batch 32 on an A10, FP32, FP16 and AMP). Nothing is"
  echo "chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s26.md"
  echo
  echo "# Evaluation: eval_gpu_s26b.csv (frozen)"
  echo
  echo "Gathered in session 26 before that session's model changes were merged, from four sources no other data file uses:"
  echo "Hamel Husain's Llama-2-7B batch-1 latency study (hamelsmu/llama-inference: vLLM's offline engine in fp16 and Hugging"
  echo "Face transformers generate in bf16, up to 200 new tokens per question, RTX A6000), MLC's llm-perf-bench README (llama.cpp"
  echo "Q4_K_M decode of Llama 2 7B and 13B, 256 tokens, RTX 4090), a 2018 aws-samples/deep-learning-models issue (TensorFlow"
  echo "+ Horovod ResNet-50 training, FP16 with FP32 master weights, batch 256 per GPU, ImageNet TFRecords, 1, 2 and 8 V100s of a"
  echo "p3.16xlarge), and Nyun AI's Faster-LLM-Survey logs (Llama-2-7B on an A100-SXM4-40GB: llama.cpp llama-bench prefill"
  echo "and decode in f16 and GGUF types, TensorRT-LLM 0.5.0 generate in FP16, INT8 and INT4 weight-only). Nothing is chosen"
  echo "with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s26b.md"
  echo
  echo "# Evaluation: eval_gpu_s27.csv (frozen)"
  echo
  echo "Gathered in session 27 before that session's model changes were merged, from sources no other data file uses:"
  echo "the Hugging Face transformers guide 'Optimize inference using torch.compile()' (google/vit-base-patch16-224 and"
  echo "microsoft/resnet-50 inference in PyTorch 2.0.1, eager and torch.compile default mode, FP32, batch 1, 4 and 16 on an"
  echo "A100, a V100 and a T4) and PaddlePaddle's PaddleCV image-classification README (ResNet50 AMP training with DALI on one"
  echo "Tesla V100, Paddle Fluid static graph, batch 128 and 256). Nothing is chosen with it in view; the freeze figures are"
  echo "in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s27.md"
  echo
  echo "# Evaluation: eval_gpu_s27b.csv (frozen)"
  echo
  echo "Gathered in session 27 before that session's model changes were merged, from two sources no other data file uses:"
  echo "NVIDIA's TensorRT-LLM H200 blogs (H200launch.md, TensorRT-LLM 0.5.0, and Falcon180B-H200.md, 0.7a: FP8 static-batch"
  echo "generate throughput of Llama 2 13B and 70B on one H200, batch 32-1024, 128-2048 prompt and 128-4096 output tokens)"
  echo "and Hugging Face optimum-benchmark's running-llamas reports (transformers 4.35.2 with PyTorch 2.1 in fp16 on an"
  echo "A100-SXM4-80GB: Llama 2 7B and 13B forward pass over 256 prompt tokens and generate of 512 new tokens, batch 1-64,"
  echo "eager, SDPA and FlashAttention-2 attention). Nothing is chosen with it in view; the freeze figures are in"
  echo "data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s27b.md"
  echo
  echo "# Evaluation: eval_cpu_s27.csv (frozen)"
  echo
  echo "Gathered in session 27 before that session's model changes were merged, from one source no other data file uses:"
  echo "Neural Magic's DeepSparse user guide (ONNX Runtime baselines on dense SparseZoo oBERT-base models, batch 64 at"
  echo "sequence 128 and 384, one AWS c6i.16xlarge: 32 cores of a Xeon Platinum 8375C). The catalog entry for that part was"
  echo "added in the same branch from datasheet-type sources before any row was read for a prediction. Nothing is chosen with"
  echo "it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_cpu_s27.md"
  echo
  echo "# Evaluation: eval_gpu_s27c.csv (frozen)"
  echo
  echo "Gathered in session 27 before that session's model changes were merged, from sources no other data file uses:"
  echo "Alibaba's AI Matrix CNN_Caffe results for one Tesla P4 (TensorRT FP32 engines of BVLC GoogLeNet, ResNet-50/152,"
  echo "DenseNet-121 and SqueezeNet v1.1 at batch 16, 32 and 64; TensorRT INT8 and FP32 engines of VGG-16 and INT8 engines of"
  echo "ResNet-50/152 and DenseNet-121 from its P4 reference results) and server-gear.com's tf_cnn_benchmarks run on an RTX 3090"
  echo "and an RTX 4090 (ResNet-50 and Inception-v3 --use_fp16 training, one GPU, batch 64-512, NVIDIA's TF 1.15 container"
  echo "23.02). Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s27c.md"
  echo
  echo "# Evaluation: eval_gpu_s28.csv (frozen)"
  echo
  echo "Gathered in session 28 before that session's model changes were merged, from two sources no other data file uses:"
  echo "PaddlePaddle/Perf, Baidu's framework comparison reports on one 8 x V100-SXM2 node: ResNet-50 v1.5 ImageNet training"
  echo "in Paddle 2.1 (PaddleClas, DALI), NGC TensorFlow 1.15 with XLA, NGC PyTorch 1.9 and NGC MXNet 1.8 (DeepLearningExamples),"
  echo "FP32 and AMP, 1 and 8 GPUs; BERT-base pre-training phase 1 (sequence 128, batch 96, gradient accumulation) in Paddle 2.4,"
  echo "NGC PyTorch 1.11 and NGC TensorFlow 1.15 with XLA; and PaddlePaddle/PLSC's ViT-B/16 ImageNet training in Paddle"
  echo "dygraph on 8 A100 (FP16 O2, and FP32 with the DeiT recipe). Nothing is chosen with it in view; the freeze figures are"
  echo "in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s28.md"
  echo
  echo "# Evaluation: eval_gpu_s28c.csv (frozen)"
  echo
  echo "Gathered in session 28 before that session's model changes were merged, from sources no other data file uses:"
  echo "stefan-it/dl-benchmarks (one RTX 2080 Ti, TensorFlow 1.12: Lambda's tf_cnn_benchmarks training of ResNet-50/152,"
  echo "Inception-v3/v4, VGG-16 and AlexNet, fp32 and --use_fp16, one GPU, synthetic data; and u39kun's TF inference of"
  echo "VGG-16 and ResNet-152 at batch 16, fp32 and fp16) and HudenJear/gpu-dl-benchmark (one RTX 3090, PyTorch 2.9"
  echo "torchvision ResNet-50 and ViT-B/16 fp32 inference at batch 32). Nothing is chosen with it in view; the freeze figures"
  echo "are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s28c.md"
  echo
  echo "# Evaluation: eval_gpu_s28b.csv (frozen)"
  echo
  echo "Gathered in session 28 before that session's model changes were merged, from sources no other data file uses:"
  echo "FlagPerf's Megatron-LM (megatron-core 0.6) pre-training cases of Llama 3 8B and 70B on 8-64 H100 SXM (BF16 and"
  echo "Transformer Engine FP8, sequence 8192, global batch 512, tensor/pipeline parallel, distributed optimizer), torchao's"
  echo "LLaMA benchmark log (uncompiled gpt-fast-style generate of 200 tokens, batch 1, Llama 2 7B and Llama 3 8B in FP32"
  echo "and BF16 on an A100) and NVIDIA NeMo Framework's Llama 2 7B inference table (128 prompt + 20 output tokens, batch 1-8,"
  echo "one A100 SXM4 80GB or H100 80GB HBM3, TensorRT-LLM assumed). Nothing is chosen with it in view; the freeze figures are"
  echo "in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s28b.md"
  echo
  echo "# Evaluation: eval_cpu_s28.csv (frozen)"
  echo
  echo "Gathered in session 28 before that session's model changes were merged, from MLPerf Inference results no other data"
  echo "file uses: the cTuning / GATEOverflow (MLCommons CM) submissions for one AMD Ryzen 9 7950X desktop, ONNX Runtime FP32"
  echo "through the MLCommons reference implementations (v3.0 open: BERT-large SQuAD at sequence 384, SingleStream, ONNX"
  echo "Runtime 1.14.0; v3.1 open: ResNet-50 v1.5 SingleStream and MultiStream, 1.14.0; v5.1 closed: ResNet-50 v1.5"
  echo "SingleStream and MultiStream, 1.22.1, and the C++ implementation's SingleStream). Nothing is chosen with it in view;"
  echo "the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_cpu_s28.md"
  echo
  echo "# Evaluation: eval_gpu_s28d.csv (frozen)"
  echo
  echo "Gathered in session 28 before that session's model changes were merged, from a source no other data file uses:"
  echo "RyannnG/gie_int8_sample, a modified TensorRT (GIE) 2.1 sampleINT8 run on one TITAN X (Pascal): BVLC GoogLeNet and"
  echo "VGG-16 Caffe models, FP32 and INT8 engines at batch 64, GPU engine time only (CUDA events around enqueue). Nothing is"
  echo "chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s28d.md"
  echo
  echo "# Evaluation: eval_gpu_s29.csv (frozen)"
  echo
  echo "Gathered in session 29 before that session's model changes were merged, from two sources no other data file uses:"
  echo "Deci-AI/super-gradients' model-zoo table (Tesla T4, TensorRT FP16 engines at batch 1, device latency without IO:"
  echo "ViT-B/16, ViT-L/16, EfficientNet-B0, ResNet-18/34/50, MobileNetV2, MobileNetV3-Large) and roatienza/benchmark"
  echo "(Quadro RTX 6000, batch-1 FP32 inference in PyTorch eager and ONNX Runtime's CUDA EP, wall clock per call)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s29.md"
  echo
  echo "# Evaluation: eval_gpu_s29b.csv (frozen)"
  echo
  echo "Gathered in session 29 before that session's model changes were merged, from two sources no other data file uses:"
  echo "llama.cpp PR #6766 (JohannesGaessler's ./main text-generation rates on an RTX 3090 and an RTX 4090, master before"
  echo "CUDA graphs) and llama.cpp issue #6763 (agray3's H100 PCIe baseline): Llama 2 7B Q4_0 / Q4_K_M decode at batch 1."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s29b.md"
  echo
  echo "# Evaluation: eval_cpu_s29.csv (frozen)"
  echo
  echo "Gathered in session 29 before that session's model changes were merged, from a source no other data file uses:"
  echo "Krai's MLPerf Inference results (v3.1 closed, v4.1 open) for its KILT C++ harness over ONNX Runtime's CPU execution"
  echo "provider (1.14.1 and 1.18.1) on one Xeon Gold 6240R (catalog entry added in session 29): ResNet-50 v1.5 FP32"
  echo "SingleStream, batch 1. Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_cpu_s29.md"
  echo
  echo "# Evaluation: eval_gpu_s29c.csv (frozen)"
  echo
  echo "Gathered in session 29 before that session's model changes were merged, from two sources no other data file uses:"
  echo "mvsjober/ml-benchmarks (CSC's benchmark suite: PyTorch DDP ResNet-50 v1.5 FP32 training, batch 32 per GPU, on 1, 2"
  echo "and 4 GPUs of one Puhti V100 or Mahti A100 node, synthetic host batches and ImageNet JPEGs; PyTorch 1.11 and 2.2/2.3)"
  echo "and the transformers multi-GPU guide (GPT-2 small fine-tuning in FP32 with DDP on two TITAN RTX, NVLink on and off)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s29c.md"
  echo
  echo "# Evaluation: eval_gpu_s30.csv (frozen)"
  echo
  echo "Gathered in session 30 before that session's model changes were merged, from two sources no other data file uses:"
  echo "Zuppichini's PyTorch 2.0 benchmark (torchvision ResNet-34 and ResNeXt-50 32x4d FP16 eager inference, batch 1-64, on an"
  echo "RTX 3090 with PyTorch 2.1, cudnn.benchmark off and on) and Paik's PyTorch DDP scaling benchmark (torchvision ResNet-152 and"
  echo "ViT-B/16 mixed-precision training with DDP on 1-8 A100 SXM4 80GB (NVSwitch) and V100 SXM2 16GB, PyTorch 2.12)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s30.md"
  echo
  echo "# Evaluation: eval_gpu_s30b.csv (frozen)"
  echo
  echo "Gathered in session 30 before that session's model changes were merged, from three sources no other data file uses:"
  echo "llama.cpp PR #5351 and PR #5434 (JohannesGaessler's llama-bench pp512 rows at batch size 1, i.e. one token per"
  echo "llama_decode call: Llama-7B-shaped GGUF Q2_K/Q3_K_S/Q4_0/Q5_1 on an RTX 3090, February 2024 builds) and llama.cpp issue"
  echo "#2641 (./main build 992, LLaMA 7B Q4_1 text generation on an A100-SXM4-80GB, August 2023)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s30b.md"
  echo
  echo "# Evaluation: eval_gpu_s30c.csv (frozen)"
  echo
  echo "Gathered in session 30 before that session's model changes were merged, from a source no other data file uses:"
  echo "NVIDIA DeepLearningExamples' PyTorch GNMT v2 README, two revisions (training throughput on DGX-1 V100 16G and DGX-2"
  echo "V100 32G in pytorch-19.05, DGX A100 and DGX-1 in pytorch-20.06; 1 to 16 GPUs, FP32/TF32 and apex O2 mixed precision)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s30c.md"
  echo
  echo "# Evaluation: eval_gpu_s31.csv (frozen)"
  echo
  echo "Gathered in session 31 before that session's model changes were merged, from three sources no other data file uses:"
  echo "PaddleClas' T4 inference tables of its DenseNet, Inception, Mobile, EfficientNet and Others model pages (Paddle Inference"
  echo "with its TensorRT engine, FP32 and FP16, batch 1 and 8), NVIDIA DeepLearningExamples' PaddlePaddle BERT README (BERT-large"
  echo "pre-training on 1 and 8 A100 80GB, SQuAD fine-tuning and inference, TF32 and AMP) and milabench's BERT-base training rows"
  echo "on an A100 80GB PCIe (PyTorch eager, sequence 512, batch 32, FP32, TF32 and AMP)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s31.md"
  echo
  echo "# Evaluation: eval_gpu_s31b.csv (frozen)"
  echo
  echo "Gathered in session 31 before that session's model changes were merged, from two sources no other data file uses:"
  echo "the ggml project's own llama.cpp CI logs (ggml-org/ci, node ggml-4-x86-cuda-v100: a Tesla V100-PCIE-16GB; llama.cpp"
  echo "build 1609, December 2023): OpenLLaMA 7B v2 (LLaMA-7B shapes) in F16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q3_K_M, Q4_K_M, Q5_K_M"
  echo "and Q6_K, ./main text generation at batch 1 and ./perplexity prompt processing of 2048-token chunks; and optimum-benchmark's"
  echo "training-llamas example (Llama-2-7b full fine-tuning in pure float16 with the transformers Trainer, sequence 256,"
  echo "batch 1-16, one A100-SXM4-80GB, PyTorch 2.1)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s31b.md"
  echo
  echo "# Evaluation: eval_gpu_s31c.csv (frozen)"
  echo
  echo "Gathered in session 31 before that session's model changes were merged, from three sources no other data file uses:"
  echo "NVIDIA DeepLearningExamples' TensorFlow GNMT v2 README (GNMT training on 1 and 8 GPUs of a DGX-1 V100 16G, TensorFlow 1.14,"
  echo "FP32 and TF-AMP), Hugging Face's pytorch-pretrained-BERT prediction-speed thread (BERT-base SQuAD inference on a V100, FP32 and"
  echo "FP16, sequence 64-384) and the Stanford DAWN reference DAWNBench inference entries (ResNet-152 at batch 1 on a Google Compute"
  echo "P100, TensorFlow 1.2 and MXNet 0.11)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s31c.md"
  echo
  echo "# Evaluation: eval_gpu_s32.csv (frozen)"
  echo
  echo "Gathered in session 32 before that session's model changes were merged, from two sources no other data file uses: the"
  echo "'T4 performance data' sections of Huawei's Ascend model-zoo inference guides (trtexec FP16 engines of torchvision ResNet-101,"
  echo "ResNet-152 and ResNeXt-50 32x4d on a Tesla T4, TensorRT 7.2.3.4, batch 1-32) and NVIDIA DeepLearningExamples' 2020 'BERT"
  echo "Inference Using TensorRT' README (TensorRT 7.0 BERT-Base and BERT-Large SQuAD engines on a T4, FP16 and FP32, sequence 128"
  echo "and 384, batch 1, 8 and 128)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s32.md"
  echo
  echo "# Evaluation: eval_gpu_s32b.csv (frozen)"
  echo
  echo "Gathered in session 32 before that session's model changes were merged, from two sources no other data file uses:"
  echo "TensorRT-LLM issue #329 (benchmark.py's built-in LLaMA-7B with FP8 GEMMs and an FP8 KV cache on an H100 SXM, one static"
  echo "batch of 64 sequences of 2048 prompt and 128 generated tokens, November 2023) and Lit-GPT's resource tables (its own eager"
  echo "GPT, Llama 2 7B and 13B in bf16 at batch 1 on an A100-SXM4-40GB, PyTorch 2.1, October 2023)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s32b.md"
  echo
  echo "# Evaluation: eval_gpu_s32c.csv (frozen)"
  echo
  echo "Gathered in session 32 before that session's model changes were merged, from one source no other data file uses:"
  echo "the GluonCV model-zoo throughput plot (dmlc/gluon-cv docs/_static/classification_throughputs.html, measured by dlmark):"
  echo "FP32 inference of 18 Gluon/GluonCV ImageNet CNNs (ResNet-18..152 v1, ResNet-50 v1b, AlexNet, DenseNet-121..201,"
  echo "MobileNetV2, Inception-v3, SqueezeNet 1.1, VGG-11..19) at batch 64 on one Tesla V100-SXM2-16GB, MXNet hybridized graphs."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s32c.md"
  echo
  echo "# Evaluation: eval_gpu_s33.csv (frozen)"
  echo
  echo "Gathered in session 33 before that session's model changes were merged, from one source no other data file uses:"
  echo "hidet's daily benchmark reports (hidet-org/hidet issue #154): batch-1 inference of torchvision ResNet-50 and Hugging Face"
  echo "bert-base-uncased (sequence 128) in FP32 and pure FP16, PyTorch 2.0 run op by op (torch.compile backend 'eager'), on an"
  echo "RTX 3090 (2023-04-14 report) and an RTX 4090 (2023-06-05 report); wall clock of 10 back-to-back calls, median of 10 repeats."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s33.md"
  echo
  echo "# Evaluation: eval_gpu_s33b.csv (frozen)"
  echo
  echo "Gathered in session 33 before that session's model changes were merged, from two sources no other data file uses:"
  echo "the example output of PyTorch's own DDP benchmark (pytorch/pytorch benchmarks/distributed/ddp/README.md: torchvision"
  echo "ResNet-50, ResNet-101, ResNeXt-50 32x4d and ResNeXt-101 32x8d FP32 training at batch 32 per GPU, synthetic input, on 1, 2,"
  echo "4 and 8 V100s of a DGX-1, PyTorch 1.4) and SkyPilot's torch DDP benchmark example (the same script's ResNet-101 output on"
  echo "1, 2, 4 and 8 A100-SXM4-40GB of a GCP a2-highgpu-8g, PyTorch 2.1)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s33b.md"
  echo
  echo "# Evaluation: eval_gpu_s33c.csv (frozen)"
  echo
  echo "Gathered in session 33 before that session's model changes were merged, from one source no other data file uses:"
  echo "NVIDIA's DGX Cloud benchmarking recipes (NVIDIA/dgxc-benchmarking llama3.1/README_8b.md, README_70b.md and"
  echo "nemo_megatron/README_175b.md, NeMo on Megatron-Core): Llama 3.1 8B (TP1 PP1 CP2, 8-128 GPUs) and 70B (TP4 PP4 CP2 VP5,"
  echo "64-2048 GPUs) at sequence 8192 and GPT-3 175B (TP4 PP8 VP12, 128-2048 GPUs) at 2048, pre-training on DGX H100 nodes,"
  echo "BF16 and FP8, weak scaling (global batch grows with the GPUs), tokens/s per GPU of the last logged step."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s33c.md"
  echo
  echo "# Evaluation: eval_gpu_s34.csv (frozen)"
  echo
  echo "Gathered in session 34 before that session's model changes were merged, from two sources no other data file uses:"
  echo "dividiti's Collective Knowledge Caffe benchmark on one GTX 1080 (dividiti/ck-caffe-nvidia-gtx1080 experiment JSON:"
  echo "BVLC Caffe master and NVIDIA Caffe 0.15, both on cuDNN 5.1, 'caffe time' forward pass of BVLC AlexNet, GoogLeNet and"
  echo "SqueezeNet 1.1 at batch 2-16, FP32) and a CNTK developer's ResNet-50 training figures in microsoft/CNTK issue #2848"
  echo "(CNTK 2.4, V100 FP16 and P100 FP32, batch 32; the GPU parts assumed PCIe 16GB)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s34.md"
  echo
  echo "# Evaluation: eval_gpu_s34b.csv (frozen)"
  echo
  echo "Gathered in session 34 before that session's model changes were merged, from one source no other data file uses:"
  echo "XTuner's Llama 3 8B full fine-tuning speed table (InternLM/xtuner xtuner/configs/llama/llama3_8b/README.md):"
  echo "Llama 3 8B at sequence 8192 on 4, 8 and 16 A100-80G, DeepSpeed ZeRO-3 in BF16 with activation checkpointing and"
  echo "packed varlen flash attention (Hugging Face transformers), tokens/s per GPU; sequence-parallel rows left out."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s34b.md"
  echo
  echo "# Evaluation: eval_cpu_s34.csv (frozen)"
  echo
  echo "Gathered in session 34 before that session's model changes were merged, from one source no other data file uses:"
  echo "philschmid/aws-neuron-samples' CPU baseline (benchmark/results/benchmmark_c6i.2xlarge_*.csv): batch-1 inference of"
  echo "Hugging Face bert-base-uncased, bert-large-uncased and roberta-base (sequence classification, padded to 8-512 tokens)"
  echo "and google/vit-base-patch16-224 in PyTorch 1.13 eager FP32 on an AWS c6i.2xlarge (4 cores of a Xeon Platinum 8375C),"
  echo "mean latency of 100 calls after 10 warm-up calls."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_cpu_s34.md"
  echo
  echo "# Evaluation: eval_gpu_s35.csv (frozen)"
  echo
  echo "Gathered in session 35 before that session's model changes were merged, from one source no other data file uses:"
  echo "the per-step CSVs of yqtianust/pytorch-gpu-benchmark (a fork of ryujaehun/pytorch-gpu-benchmark with its own runs):"
  echo "torchvision ResNet-18, ResNet-50, ResNet-152, DenseNet-121, VGG-16 and SqueezeNet 1.1 on one Tesla V100-DGXS-16GB"
  echo "(DGX Station), batch 12, FP32 and pure FP16, training without optimizer step and inference, cudnn.benchmark on,"
  echo "the batch copied from host memory inside each synchronised step; 12 / median of 50 timed steps."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s35.md"
  echo
  echo "# Evaluation: eval_gpu_s35b.csv (frozen)"
  echo
  echo "Gathered in session 35 before that session's model changes were merged, from two sources no other data file uses:"
  echo "the Megatron-Bridge performance summary (NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, DGX-H100 tables of"
  echo "the 25.09, 25.11 and 26.02 NeMo containers): Llama 3 8B (8 GPUs, Megatron-FSDP) and Llama 3 70B (64 GPUs, TP4 PP8 VP5)"
  echo "pre-training at sequence 8192 in FP8 (current scaling; assumed for the 25.09 rows); and IBM/Meta's PyTorch FSDP"
  echo "throughput table (PyTorch blog 'Maximizing training throughput using PyTorch FSDP', with fms-fsdp's README): Llama 2"
  echo "7B (HSDP, no checkpointing) and 70B (FSDP, full checkpointing) at batch 2 x 4096 in BF16 with SDPA flash attention"
  echo "on 128 A100 80GB (400 Gb/s per node) and 96 H100 80GB (800 Gb/s per node). Tokens/s per GPU throughout."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s35b.md"
  echo
  echo "# Evaluation: eval_gpu_s36.csv (frozen)"
  echo
  echo "Gathered in session 36 before that session's model changes were merged, from one source no other data file uses:"
  echo "JunhongXu/pytorch-benchmark-volta results/3090/ and results/TITANXP/ (one GeForce RTX 3090, CUDA 11.1, cuDNN 8.0.4,"
  echo "February 2021; one TITAN Xp, CUDA 10.2, cuDNN 7.6.5, January 2021):"
  echo "torchvision ResNet-18/50/152, DenseNet-121, VGG-16, MobileNetV2 and SqueezeNet 1.1 at batch 12, FP32 and pure FP16,"
  echo "training without optimizer step and inference, cudnn.benchmark on, the batch copied from host memory inside each"
  echo "synchronised step; 12 / median of the first 10 timed steps."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s36.md"
  echo
  echo "# Evaluation: eval_cpu_s36.csv (frozen)"
  echo
  echo "Gathered in session 36 before that session's model changes were merged, from one source no other data file uses:"
  echo "PaddleSlim's CPU deployment tutorial for quantized image classifiers (PaddlePaddle/PaddleSlim"
  echo "demo/mkldnn_quant/quant_aware/PaddleCV_mkldnn_quantaware_tutorial_cn.md): the FP32 column of its single-core table"
  echo "for one Xeon Gold 6148 (Paddle Inference with MKL-DNN and IR fuses, batch 1, one thread, Turbo Boost off):"
  echo "MobileNetV2, ResNet-50, ResNet-101, VGG-16 and VGG-19, images/s over the ImageNet validation set held in memory."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_cpu_s36.md"
  echo
  echo "# Evaluation: eval_gpu_s36b.csv (frozen)"
  echo
  echo "Gathered in session 36 before that session's model changes were merged, from two sources no other data file uses:"
  echo "the NeMo Framework Launcher README (NVIDIA/NeMo-Framework-Launcher README.md@003d7e63, section 7.1.2): GPT-3 5B"
  echo "(24 layers, hidden 4096, 32 heads, sequence 2048; data/validation/models/nemo-gpt3-5b.json) pre-training in BF16 with"
  echo "distributed Adam, TP 1 PP 1, on 1 to 32 DGX A100 80GB nodes (micro-batch 4, global batch 2048 and no recomputation"
  echo "assumed from a later 5b.yaml); and ATorch's Llama 2 example (intelligent-machine-learning/dlrover"
  echo "atorch/examples/llama2/README.md@11bf2fbf): Llama 2 7B pre-training with PyTorch FSDP, bf16 autocast, full activation"
  echo "checkpointing and flash attention, batch 4 x 4096 per GPU, on 8 to 64 A100 80GB (its TFLOPs over its own FLOP count)."
  echo "Tokens/s per GPU throughout."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s36b.md"
  echo
  echo "# Evaluation: eval_gpu_s37b.csv (frozen)"
  echo
  echo "Gathered in session 37 before that session's model changes were merged, from one source no other data file uses:"
  echo "the Lit-GPT benchmarks of the Thunder compiler's repository (Lightning-AI/lightning-thunder"
  echo "examples/lit-gpt/README.md@adc2c556) on one A100-SXM4-40GB with a PyTorch 2.2 nightly: Lit-GPT's own GPT in bf16,"
  echo "one forward of 10 x 2048 tokens of the LLaMA-7B shapes in eager PyTorch and torch.compile (prefill), 200-token"
  echo "generation at batch 1 in eager PyTorch, and eager training of OpenLLaMA 3B (batch 2 x 2048, pure bf16, SGD);"
  echo "and the same repository's README line for Llama 3.2 1B generation in Hugging Face transformers on an H100."
  echo "Tokens/s throughout."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s37b.md"
  echo
  echo "# Evaluation: eval_gpu_s37.csv (frozen)"
  echo
  echo "Gathered in session 37 before that session's model changes were merged, from one source no other data file uses:"
  echo "tensorflow/benchmarks issue #359: tf_cnn_benchmarks AlexNet training on"
  echo "one V100-SXM2-32GB, FP32, batch 512, ImageNet TFRecords without distortions, TensorFlow 1.13.1 (NGC 19.03)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s37.md"
  echo
  echo "# Evaluation: eval_gpu_s37c.csv (frozen)"
  echo
  echo "Gathered in session 37 before that session's model changes were merged, from two sources no other data file uses:"
  echo "MosaicML's MosaicGPT training-throughput sweep (mosaicml/examples examples/llm/throughput/README.md@3bbda73b,"
  echo "its uncommented 'A100 80GB' table): Composer with PyTorch FSDP FULL_SHARD (PURE bf16 mixed precision), Triton"
  echo "FlashAttention, MosaicGPT 125M-70B (the mpt-* model files) at sequence 512-8192 on 8 to 64 A100 80GB GPUs,"
  echo "activation checkpointing on for 7B and larger (tokens/s per GPU); and the vanilla Hugging Face baselines of"
  echo "DeepSpeed's autotuning showcase (microsoft/DeepSpeedExamples autotuning/hf/README.md@55694cde): transformers 4.12"
  echo "under DDP on one node of 16 V100, BERT-base/large MNLI fine-tuning (FP32, sequence 128) and GPT-2 small/medium/large"
  echo "on wikitext-2 (AMP, 1024 tokens) (samples/s)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s37c.md"
  echo
  echo "# Evaluation: eval_gpu_s38.csv (frozen)"
  echo
  echo "Gathered in session 38 before that session's model changes were merged, from three sources no other data file uses:"
  echo "the TResNet authors' README (Alibaba-MIIL/TResNet README.md@0e39f2e8): timm's ResNet-50 AMP training on one V100 at"
  echo "90% of its maximal batch (259); libingwei/AI-Infer-Acc docs/TEST_RECORD.md@35714cd5: torchvision ResNet-18 TensorRT 10.4"
  echo "engines (FP32, FP16, INT8) at batch 32 on a Kaggle T4, 100 back-to-back enqueues between CUDA events; and the TorchRec"
  echo "DLRM example's results (facebookresearch/dlrm torchrec_dlrm/README.MD@045094c5): the MLPerf-shaped DLRM in FP32 on"
  echo "1, 4 and 8 A100 40GB of an AWS p4d, Criteo 1TB from host memory, local batch 256-16384, and the README's later"
  echo "MLPerf-table configuration (@3d2148a8, 8 GPUs x 8192) (records/s)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s38.md"
  echo
  echo "# Evaluation: eval_cpu_s38.csv (frozen)"
  echo
  echo "Gathered in session 38 from three sources no other data file uses, on CPUs added to the catalog in the same"
  echo "session for them (xeon-w-2123, xeon-gold-6334, epyc-7v13): the 'nnopt' book's BERT page (nightr.gitbook.io; ONNX"
  echo "Runtime 1.2 BERT-base at sequence 128 on a Xeon W-2123, fully fused graph, 1 and 8 threads); BlindAI's benchmark page"
  echo "(mithril-security/blindai docs/docs/Benchmarks.md with its harness mithril-security/inference_backends_benchmarks:"
  echo "onnxruntime 1.12.1 BERT-base at sequence 8, one thread, Xeon Gold 6334); amd/ZenDNN-onnxruntime issue #5 (the default"
  echo "CPU execution provider of onnxruntime-zendnn 1.17.0, BERT-large at batch 24 and sequence 16, 96 threads on an Azure"
  echo "EPYC 7V13 VM, taken as two sockets). Samples/s throughout."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_cpu_s38.md"
  echo
  echo "# Evaluation: eval_gpu_s38b.csv (frozen)"
  echo
  echo "Gathered in session 38 before that session's model changes were merged, from two sources no other data file uses:"
  echo "Sebastian Raschka's LLM training-speed tips (rasbt/LLMs-from-scratch ch05/10_llm-training-speed/README.md@06361583):"
  echo "the book's GPT-2 124M trained on one A100 with PyTorch 2.6, step by step (FP32, TF32, fused AdamW, pure bf16, SDPA,"
  echo "torch.compile, vocabulary 50304, batch 32) and on 4 A100 under DDP; and karpathy/nanoGPT's GitHub threads (pull"
  echo "request #225 and issue #110): nanoGPT train.py pre-training GPT-2 124M with torch.compile, bf16 autocast and AdamW,"
  echo "12 x 1024 tokens per micro-batch, on one GeForce RTX 4090 (PyTorch 2.0) and on 8 A100 under DDP (tokens/s)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s38b.md"
  echo
  echo "# Evaluation: eval_gpu_s39.csv (frozen)"
  echo
  echo "Gathered in session 39 before that session's model changes were merged, from sources no other data file uses: the"
  echo "MLPerf Training v0.6, v0.7 and v1.0 closed-division result logs (mlcommons/training_results_v0.6, _v0.7, _v1.0):"
  echo "NVIDIA's MXNet ResNet-50 v1.5 (FP16, NHWC, DALI GPU decoding, Horovod, batch 208 or 408 per GPU) on one node of"
  echo "4 to 16 GPUs (DGX-1, DGX-2, DGX A100 40GB and 80GB, Dell C4140 and DSS 8440, Fujitsu GX2570 M5 and GX2460 M1,"
  echo "Inspur NF5488, GIGABYTE G492: V100 SXM2/SXM3, A100 SXM4 and PCIe), value = images / epoch time or the log's own"
  echo "throughput; NVIDIA's PyTorch DLRM on one DGX A100 (global batch 55296, FP16); and NVIDIA/DALI issue #2242 (the"
  echo "DeepLearningExamples TF1 ResNet-50 v1.5 with AMP, XLA and DALI on one V100 PCIe 32GB). Samples/s throughout."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s39.md"
  echo
  echo "# Evaluation: eval_gpu_s39b.csv (frozen)"
  echo
  echo "Gathered in session 39 before that session's model changes were merged, from a source no other data file uses:"
  echo "the BigCode project's inference benchmark (bigcode-project/bigcode-inference-benchmark README.md@0253839c): Hugging"
  echo "Face transformers generate() on one A100 80GB, 100 greedy new tokens after short padded prompts, randomly initialised"
  echo "1.3B-parameter BLOOM and GPT-2 configurations (d 2048, 24 layers, 16 heads; model files in data/validation/models),"
  echo "FP32 and BF16, batch 1 to 512 (tokens/s)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s39b.md"
  echo
  echo "# Evaluation: eval_gpu_s39c.csv (frozen)"
  echo
  echo "Gathered in session 39 before that session's model changes were merged, from one source no other data file uses:"
  echo "the GPU benchmark of Baidu's Anakin inference engine (PaddlePaddle/Anakin benchmark/README_GPU.md@0875f38a), whose"
  echo "counterpart column is NVIDIA TensorRT 3 on one Tesla P4 (cuDNN v7, Xeon E5-2620 v2 host): latency of one batch at"
  echo "batch 1, 2, 4, 8 and 32 for the Caffe VGG-16, ResNet-50 and ResNet-101 (KaimingHe's v1) models, FP32 assumed;"
  echo "images/s = batch x 1000 / ms."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s39c.md"
  echo
  echo "# Evaluation: eval_gpu_s40.csv (frozen)"
  echo
  echo "Gathered in session 40 before that session's model changes were merged, from sources no other data file uses:"
  echo "training throughput. (1) QwenLM/Qwen README 'Profiling of Memory and Speed' (@03cd81f5): full-parameter fine-tuning"
  echo "of Qwen-1.8B on one A100-SXM4-80G and Qwen-7B on two (DeepSpeed, bf16, flash attention 2, batch 1 x 8 accumulated,"
  echo "sequence 256-8192; tokens/s per GPU = 8 x seq / (s/it)). (2) MLPerf Training v3.0 and v2.0 ResNet-50 MXNet result"
  echo "logs (tracked_stats throughput of epoch 4): DGX H100, GIGABYTE G593-SD0 (8x H100 SXM), Lenovo SR670 V2 (8x H100"
  echo "PCIe 310 W), ASUS ESC4000-E11 (4x A100 PCIe 80GB with and without NVLink bridges), H3C R4900 G5 (1x A100 PCIe 80GB)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md. Not independent since"
  echo "session 41 for DeepSpeed's per-step host cost: the parallel-training host timeline (docs/calibration.md,"
  echo "'DeepSpeed ZeRO step costs') was chosen with this file's Qwen rows in view. Without its Qwen rows (the MLPerf MXNet"
  echo "rows only):"
  echo
  grep -v 'data/validation/models/qwen-' data/validation/eval_gpu_s40.csv > "$tmp/eval_gpu_s40_without_qwen.csv"
  $bin validate "$tmp/eval_gpu_s40_without_qwen.csv" --markdown "$tmp/eval_gpu_s40_without_qwen.md" >/dev/null
  echo "| scope | rows | median APE | mean APE | median bias | within 2x | predicted to fit |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  grep -m1 "all predicted rows" "$tmp/eval_gpu_s40_without_qwen.md" | sed 's/all predicted rows/without the Qwen rows/'
  echo
  cat "$tmp/eval_gpu_s40.md"
  echo
  echo "# Evaluation: eval_gpu_s40c.csv (frozen)"
  echo
  echo "Gathered in session 40 before that session's model changes were merged, from two sources no other data file uses:"
  echo "aizvorski/vgg-benchmarks (VGG-16 training at batch 16, one full SGD step: Caffe and Keras/TensorFlow on one GTX 1080,"
  echo "TensorFlow, Keras/TensorFlow and MXNet on one V100-SXM2-16GB of an AWS p3.2xlarge) and facebookarchive/caffe2 issue"
  echo "#2519 (Caffe and Caffe2 forward time of AlexNet and GoogLeNet at batch 1 on one GTX 1080 Ti); images/s = batch x 1000 / ms."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s40c.md"
  echo
  echo "# Evaluation: eval_gpu_s41.csv (frozen)"
  echo
  echo "Gathered in session 41 before that session's model changes were merged, from two sources no other data file uses:"
  echo "MLPerf Training v4.0 and v3.1 closed-division result logs (mlcommons/training_results_v4.0, _v3.1), NVIDIA's MXNet"
  echo "ResNet-50 v1.5 recipe on one node of 8x H200 SXM, 4x and 8x L40S, 8x H100 PCIe, 4x and 8x H100 SXM (on-premise and an"
  echo "Azure ND H100 v5 VM) and 2/4/8/10x A100 PCIe 80GB in an external PCIe box; value = the log's own epoch-4 throughput"
  echo "(images/s over the node), FP16, NHWC, DALI GPU decoding, Horovod."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s41.md"
  echo
  echo "# Evaluation: eval_gpu_s41b.csv (frozen)"
  echo
  echo "Gathered in session 41 before that session's model changes were merged, from two sources no other data file uses:"
  echo "argonne-lcf/LLM-Inference-Bench (vLLM offline generation of one static batch, input = output length, fp16, one GPU:"
  echo "Llama-2-7B, Llama-3-8B, Mistral-7B and Qwen2-7B on an A100-SXM4-40GB of ALCF Polaris and an H100-SXM5 of JLSE;"
  echo "tokens/s = batch x output length / latency) and vllm-project/vllm PR #4290 (llama-bench Llama-3-8B Q8_0 on a Tesla P40)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s41b.md"
  echo
  echo "# Evaluation: eval_gpu_s41c.csv (frozen)"
  echo
  echo "Gathered in session 41 before that session's model changes were merged, from one source no other data file uses:"
  echo "kentaroy47/timm_speed_benchmark (results_fp32_224.csv@7057c209, the run of 2022-06-08): timm models' fp32 inference"
  echo "on one RTX A6000 with a Ryzen 5 3600 host, batch 4, each timed step a forward plus the host-to-GPU copy of the batch;"
  echo "22 models whose architecture is a zoo model (ResNet, ResNeXt, Wide ResNet, DenseNet, VGG, ViT, MobileNet, EfficientNet-B0);"
  echo "images/s = 4 x 1000 / ms; PyTorch 1.10 assumed (TF32 by default)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s41c.md"
  echo
  echo "# Evaluation: eval_gpu_s42b.csv (frozen)"
  echo
  echo "Gathered in session 42 before that session's model changes were merged, from two documents of Dao-AILab/flash-attention:"
  echo "the training README's GPT3-125M..2.7B throughput on one node of 8 A100 80GB SXM4 (Lightning DDP, bf16, FlashAttention,"
  echo "apex FusedAdam or ZeRO-1 AdamW; tokens/s per GPU = the table's figure / 8), and a V100 port's report of its own GPT-small/medium"
  echo "forward+backward in pure FP16 with PyTorch SDPA on a V100-SXM2-32GB (no optimizer step; tokens/s = batch x seq x 1000 / ms)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s42b.md"
  echo
  echo "# Evaluation: eval_gpu_s42c.csv (frozen)"
  echo
  echo "Gathered in session 42 before that session's model changes were merged, from one source no other data file uses:"
  echo "NVIDIA DeepLearningExamples TensorFlow2/Recommendation/WideAndDeep README@3424cd03, 'Training performance results':"
  echo "Wide & Deep (the zoo's wide_deep) trained by main.py --benchmark on a DGX A100 (A100 80GB) and a DGX-1 (V100 16GB),"
  echo "1 GPU at batch 131072 and 8 GPUs (Horovod) at 16384 per GPU, TF32/FP32 and AMP, XLA on and off; samples/s of all GPUs;"
  echo "prebatched TFRecords parsed on the host and copied every step (data host); TensorFlow 2.4 assumed (TF32 on A100)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s42c.md"
  echo
  echo "# Evaluation: eval_gpu_s42.csv (frozen)"
  echo
  echo "Gathered in session 42 before that session's model changes were merged, from three sources no other data file uses:"
  echo "Simantini1709/GPU-Inference-Optimization (README.md@10bbb5ed: ResNet-50 and ViT-B/16 inference at batch 32 on a Colab"
  echo "Tesla T4, PyTorch 2.5.1, fp32 / FP16 autocast, eager and TorchScript), facebookresearch/LeViT (timings.txt@2bd7ab32:"
  echo "timm ResNet-50 traced, FP16 autocast, batch 1024 on a V100-SXM2-16GB) and Any-Winter-4079/GPT-3-Small-Pretraining-Experiments"
  echo "(GPT-2 124M torch.compile bf16 pretraining on one Runpod GPU: H200, H100 SXM/PCIe, A100 SXM/PCIe, L40S, RTX A6000, L4)."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s42.md"
  echo
  echo "# Evaluation: eval_gpu_s40b.csv (frozen)"
  echo
  echo "Gathered in session 40 before that session's model changes were merged, from two MLPerf Inference rounds no other"
  echo "data file's GPU rows use: NVIDIA's closed-division one-GPU TensorRT results of v2.1 (2022: A100 PCIe 80GB, one A100"
  echo "SXM 80GB of a DGX A100, the H100 SXM preview) and v4.0 (2024: one H100 SXM of a DGX H100), ResNet-50 v1.5 INT8"
  echo "(Offline, SingleStream, MultiStream) and BERT-Large SQuAD (Offline INT8 and FP8, SingleStream INT8); samples/s."
  echo "Nothing is chosen with it in view; the freeze figures are in data/validation/README.md."
  echo
  cat "$tmp/eval_gpu_s40b.md"
  echo
  echo "# CPUs as devices: cpu.csv"
  echo
  echo "Issue 15: training on CPUs, predicted by the CPU cost path (docs/cpus.md). Calibration: the oneDNN convolution"
  echo "and backward efficiencies and Torch7's CPU traits (per-image unfold + GEMM, serial elementwise loops) were set"
  echo "with these rows in view. Torch7 rows: jcjohnson/cnn-benchmarks on dual Xeon E5-2630 v3 (forward + backward,"
  echo "batch 16; the same tables time a GTX 1080 51x faster on ResNet-152). PaddlePaddle rows: MKL-DNN VGG-19 training"
  echo "on two Xeon Gold 6148. Session 10 added batch-1 BERT-base inference in PyTorch 1.8.1 on two Xeon Platinum 8275CL"
  echo "(Hugging Face's CPU scaling blog, sequence 20-512) and the batch-1 terms of data/cpu_cost.toml (taken from"
  echo "sources with those rows in view, none fitted): they went from 2.8-4.5x to 1.5-2.5x too fast."
  echo
  cat "$tmp/cpu.md"
  echo
  echo "# eval_cpu.csv (gathered as evaluation; calibration since session 10, issue 15)"
  echo
  echo "Three CPU inference rows from sources no other validation file uses, committed before any prediction on them:"
  echo "BERT-base SQuAD at batch 1, sequence 128 on a Core i7-8700 (ONNX Runtime's CPU notebook: PyTorch 1.4 eager and"
  echo "ONNX Runtime 1.2 on the offline-fused model) and ResNeXt-101 32x8d at batch 1 on one Xeon Platinum 8180 socket"
  echo "(Intel's convnet-benchmark-py, PyTorch 1.2). Every row is predicted 2-5.4x too fast: batch-1 inference reaches"
  echo "4-8% of these CPUs' FP32 peak, a regime the calibration rows (training at batch 16-256) do not hold. Too few"
  echo "rows to judge the 20% target. Session 10's batch-1 terms (data/cpu_cost.toml) were built because of this result,"
  echo "so the file is calibration since then; they moved it from median 318% / mean 284% to 202% / 196%."
  echo
  cat "$tmp/eval_cpu.md"
  echo
  cat docs/validation_recsys.md
  echo
  cat "$tmp/recsys_calibration.md"
  echo
  cat "$tmp/recsys.md"
  echo
  cat docs/validation_llm_parallel_intro.md
  echo
  cat "$tmp/llm_parallel.md"
  echo
  echo "# DeepSpeed ZeRO training on one node: deepspeed_calibration.csv (calibration, session 41, data/validation/README.md)"
  echo
  cat "$tmp/deepspeed_calibration.md"
  echo
  echo "# vLLM offline generation on one GPU: vllm_calibration.csv (calibration, session 42, data/validation/README.md)"
  echo
  cat "$tmp/vllm_calibration.md"
  echo
  echo "# Parallel LLM training: eval_llm_parallel.csv (gathered as evaluation; calibration since the session-8 review, data/validation/README.md)"
  echo
  cat "$tmp/eval_llm_parallel.md"
  echo
  cat docs/serving_validation_intro.md
  echo
  cat "$tmp/serving.md"
} > docs/validation.md
echo "wrote docs/validation.md"
