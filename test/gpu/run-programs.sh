#!/usr/bin/env bash
# On a GPU machine: runs every example built by prepare-programs.sh on each
# device set that exists among
#   gpu0 | cpu,gpu0 | gpu0,gpu1 | cpu,gpu0,gpu1 | gpu0,gpu1,gpu2,gpu3 | all
# at its default size (and at its benchmark size on all devices), checking
# each program's PASS; then the split benchmark (issue 4 §8: vecadd,
# Black-Scholes, matmul split evenly over 1, 2 and 4 GPUs, data resident and
# starting on the host; also built natively by nvcc -O3 as a reference).
# Writes $OUT/programs-gpu.log and $OUT/split.jsonl; exit status non-zero on
# any failed check. The programs run under the default partition policy (the
# model); SPLIT=0 skips the split benchmark.
#   test/gpu/run-programs.sh [CARRY_DIR]   (default: build/gpu-carry-programs)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry=$(cd "${1:-$here/../../build/gpu-carry-programs}" && pwd)
out=${OUT:-.}
mkdir -p "$out"
log=$out/programs-gpu.log
: > "$log"
export LD_LIBRARY_PATH=$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
say() { echo "$@" | tee -a "$log"; }
say "# cleave programs on GPUs, $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(head -c 40 "$carry/COMMIT")"
nvidia-smi -L 2>/dev/null | tee -a "$log"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
fails=0
sets="gpu0 cpu,gpu0"
[ "$ngpu" -ge 2 ] && sets="$sets gpu0,gpu1 cpu,gpu0,gpu1"
[ "$ngpu" -ge 4 ] && sets="$sets gpu0,gpu1,gpu2,gpu3"
sets="$sets all"
declare -A bench=(
  [vecadd]="268435456" [blackscholes]="67108864" [matmul]="4096 4096 4096 32"
  [transpose]="16384 16384" [reduction]="268435456 512" [histogram]="1073741824"
  [jacobi2d]="4096 4096 200" [nbody]="16384 4 256")
run() { # devices, program, args...
  local devs=$1; shift
  say "## CLEAVE_DEVICES=$devs $*"
  if CLEAVE_DEVICES=$devs CLEAVE_LOG=plan timeout 120 "$carry/bin/$@" > "$out/run.txt" 2>&1; then
    grep -v '^  ' "$out/run.txt" | sort | uniq -c | sed 's/^/    /' >> "$log"
    # Which variant ran each range: [rebased], [partition], [original], ...
    grep -o '\[[a-z][^]]*\]' "$out/run.txt" | sort | uniq -c | sed 's/^/    ranges /' >> "$log" || true
    grep -E 'PASS|FAIL' "$out/run.txt" | tee -a "$log"
  else
    fails=$((fails + 1))
    tail -20 "$out/run.txt" | tee -a "$log"
    say "FAIL: exit status"
  fi
}
for prog in vecadd blackscholes matmul transpose reduction histogram jacobi2d nbody; do
  for devs in $sets; do run "$devs" "$prog"; done
  # shellcheck disable=SC2086
  run all "$prog" ${bench[$prog]}
done
grep -q '^FAIL\|: FAIL' "$log" && fails=$((fails + 1))

# The split benchmark (SPLIT=0: the programs only).
[ "${SPLIT:-1}" = 0 ] && { rm -f "$out/run.txt"; say "# failures: $fails"; exit $((fails > 0)); }
split=$out/split.jsonl
: > "$split"
gsets="gpu0"
[ "$ngpu" -ge 2 ] && gsets="$gsets gpu0,gpu1"
[ "$ngpu" -ge 4 ] && gsets="$gsets gpu0,gpu1,gpu2,gpu3"
for k in vecadd:268435456 blackscholes:67108864 matmul:8192; do
  for devs in $gsets; do
    say "## split ${k%%:*} on $devs"
    CLEAVE_DEVICES=$devs CLEAVE_PARTITION=even timeout 120 "$carry/bin/split" "${k%%:*}" 10 "${k##*:}" >> "$split" 2>> "$log" ||
      { fails=$((fails + 1)); say "FAIL: split ${k%%:*} on $devs"; }
  done
done
if command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  if "$nvcc" -O3 -arch=sm_90 -o "$out/split-native" "$carry/split/split.cu" 2>> "$log"; then
    for k in vecadd:268435456 blackscholes:67108864 matmul:8192; do
      CUDA_VISIBLE_DEVICES=0 CLEAVE_DEVICES=native-nvcc timeout 120 "$out/split-native" "${k%%:*}" 10 "${k##*:}" >> "$split" 2>> "$log" ||
        say "FAIL: native ${k%%:*}"
    done
    rm -f "$out/split-native"
  fi
fi
rm -f "$out/run.txt"
say "# failures: $fails"
exit $((fails > 0))
