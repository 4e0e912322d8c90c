#!/usr/bin/env bash
# On the GPU machine (CUDA driver, python3; no LLVM): runs the program corpus
# that bench/programs/prepare.sh built here. For each program: its nvcc
# build; its Cleave build with CLEAVE_DEVICES=gpu0, with cpu,gpu0, and with
# the default devices, each cold (a fresh CLEAVE_CACHE_DIR for every run) and
# warm (one cache, warmed by an untimed run); REPS runs each (nvcc: after one
# untimed run). Records each run's own GPU time (the program's `time_ms:`
# line, cudaEvents), its wall time and PASS/FAIL.
#   bench/programs/run.sh [CARRY_DIR]       (default build/gpu-carry-corpus)
# Writes to $OUT (default .): programs-bench.jsonl (one line per program,
# variant and cache: every repetition's time_ms and wall_ms, medians,
# status pass | wrong | timeout | no-build | skipped), programs-bench.log,
# programs-bench.md (summarize.py's table: Cleave/nvcc ratios, geomeans)
# and, with PHASES=1, programs-phases.log.gz (one warm gpu0 run of each
# program under CLEAVE_LOG=phases).
# Environment:
#   SCALE     the programs' size argument (8)
#   REPS      timed runs per configuration (5)
#   PROGRAMS  names, comma-separated (default: all of programs.tsv)
#   SHARD     i/k: every k-th program from the i-th (split the corpus over calls)
#   DEADLINE  seconds after which configurations are skipped, and recorded as
#             such (540: one call's 600 s with room to write the summary)
#   TIMEOUT   seconds per run (120)
#   VARIANTS  "label:devices ..." ("nvcc gpu0:gpu0 cpu+gpu0:cpu,gpu0 default:")
#   DRY=1     no GPU: variants cpu, cpu,cpu,cpu and the default devices, no
#             nvcc runs; checks the script and the programs on this machine
#   PHASES=1  also write programs-phases.log.gz (one warm run under
#             CLEAVE_LOG=phases per device set of PHASES_DEVICES, "gpu0")
# Exit status: 0 when every run that was made passed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry=${1:-$here/../../build/gpu-carry-corpus}
out=${OUT:-.}
mkdir -p "$out"
python3 "$here/runner.py" "$carry" || exit 1
python3 "$here/summarize.py" "$out/programs-bench.jsonl" > "$out/programs-bench.md"
cat "$out/programs-bench.md"
! grep -q '"status": "\(wrong\|timeout\)"' "$out/programs-bench.jsonl"
