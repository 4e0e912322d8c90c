#!/usr/bin/env bash
# On the GPU machine (CUDA driver, nvcc, g++; no LLVM): runs the cleave tile
# benchmark that bench/tile/prepare.sh put into CARRY (README.md here).
#   CARRY/run.sh CARRY              (build/gpu-carry-tile/run.sh build/gpu-carry-tile)
# Builds the naive CUDA ports (nvcc -O3 -arch=sm_90), then runs every program
# at every size: seq (clang++ -O3, one core), tiled (cleave tile + cleave
# compile -O3, CLEAVE_DEVICES=$TILED_DEVICES; the run-time rule picks the
# persistent kernel or one launch per anti-diagonal), persistent and
# launches (each schedule forced) and naive, REPS times each,
# and checks every run's checksum against seq's at that size.
# Writes to $OUT (default .): tile.jsonl (one line per program, size and
# variant: every repetition's ms, the median, the status pass | wrong |
# unchecked | failed | timeout | skipped | fallback: the tiled code ran the
# nest as written, no tiled kernel launched), tile.log (every run's output) and
# tile-summary.md (medians, the ratios to naive and seq, and the speed-up
# naive/tiled against issue 29's 5x).
# Environment:
#   REPS           timed runs per configuration (3)
#   SIZES          "NxM ..." ("4096x4096 8192x8192 16384x16384 4096x65536")
#   PROGS          "edit_distance smith_waterman sor blocks" (empty: none)
#   BLOCK_SIZES    "NxM ..." of blocks (technique(blocks), a table of
#                  (N+1) x (N+1) x (M+1) cells; "24x24 40x40 48x48")
#   VARIANTS       "seq sweep tiled model naive" (of these and persistent,
#                  launches): sweep is the tiled build's first run at a
#                  size (one run: the tile-size sweep, docs/tile.md), tiled
#                  its later runs (the cached size), model the build with
#                  -DCLEAVE_TILE_AUTOTUNE=0 (the model's size, no sweep);
#                  the cache is $OUT/tile-cache, emptied at the start
#   STENCILS       "box1 box2 box4 star1 star2 star4" (of box1..box4,
#                  star1..star4; empty: none): bin/stencil KERNEL N STEPS
#   STENCIL_RUNS   "NxSTEPS ..." ("2048x64 2048x1024 8192x256 16384x64")
#   STENCIL_VARIANTS "seq omp naive tiled tiles steps": tiled lets the model
#                  choose; tiles and steps force time tiles and one launch
#                  per step (CLEAVE_TILE_SCHEDULE); seq and omp are the CPU
#                  builds (OMP_NUM_THREADS as set, else every core)
#   CPU_MAX_UPDATES seq and omp run only where N x N x STEPS is at most this
#                  (268435456: 2048x64), else they are "skipped" and the
#                  GPU runs are checked against each other
#   SEQ_MAX_CELLS  larger sizes skip seq (and are "unchecked"); default none
#   TILED_DEVICES  CLEAVE_DEVICES of the tiled runs (gpu0)
#   TIMEOUT        seconds per run (120)
#   DEADLINE       seconds after which runs are skipped, and recorded as such
#                  (450: the whole must fit in one 600 s device call)
#   NVCC           (nvcc on PATH, else /usr/local/cuda/bin/nvcc)
#   NO_NVCC=1      no GPU: builds and runs no naive port (try the script on
#                  the CPU with TILED_DEVICES=cpu and small SIZES)
# Exit status: 0 when every run that was made passed its check.
set -uo pipefail
carry=$(cd "${1:-$(dirname "$0")}" && pwd)
out=${OUT:-.}
mkdir -p "$out"
out=$(cd "$out" && pwd)
reps=${REPS:-3}
sizes=${SIZES:-4096x4096 8192x8192 16384x16384 4096x65536}
progs=${PROGS-edit_distance smith_waterman sor blocks}
block_sizes=${BLOCK_SIZES:-24x24 40x40 48x48}
variants=${VARIANTS:-seq sweep tiled model naive}
stencils=${STENCILS-box1 box2 box4 star1 star2 star4}
stencil_runs=${STENCIL_RUNS:-2048x64 2048x1024 8192x256 16384x64}
stencil_variants=${STENCIL_VARIANTS:-seq omp naive tiled tiles steps}
cpu_max=${CPU_MAX_UPDATES:-268435456}
seq_max=${SEQ_MAX_CELLS:-0}
tiled_devices=${TILED_DEVICES:-gpu0}
limit=${TIMEOUT:-120}
deadline=$((SECONDS + ${DEADLINE:-450}))
export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
jsonl=$out/tile.jsonl log=$out/tile.log summary=$out/tile-summary.md
: > "$jsonl"; : > "$log"
commit=$(head -1 "$carry/COMMIT"); dirty=false
grep -q dirty "$carry/COMMIT" && dirty=true
device=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -1)
[ -n "$device" ] || device=none
load_before=$(uptime)
[ "${NO_NVCC:-0}" = 1 ] && variants=${variants//naive/} && stencil_variants=${stencil_variants//naive/}
# The tile-size cache of the autotuned builds, empty at the start: the first
# run of a program at a size sweeps (variant sweep), later runs read it.
export CLEAVE_CACHE_DIR=$out/tile-cache
rm -rf "$CLEAVE_CACHE_DIR"
naive_bin=$(mktemp -d)
trap 'rm -rf "$naive_bin"' EXIT

# The naive ports, built here (outside CARRY, which may be read-only): the GPU machine's nvcc and driver.
if [[ " $variants " == *" naive "* ]]; then
  nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  for p in $progs; do
    echo "run: nvcc -O3 -arch=sm_90 naive/$p.cu" | tee -a "$log"
    "$nvcc" -O3 -arch=sm_90 "$carry/src/naive/$p.cu" -o "$naive_bin/$p.naive" >> "$log" 2>&1 ||
      echo "run: nvcc failed for $p (its naive runs fail)" | tee -a "$log"
  done
fi
if [ -n "$stencils" ] && [[ " $stencil_variants " == *" naive "* ]]; then
  nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  echo "run: nvcc -O3 -arch=sm_90 naive/stencil.cu" | tee -a "$log"
  "$nvcc" -O3 -arch=sm_90 "$carry/src/naive/stencil.cu" -o "$naive_bin/stencil.naive" >> "$log" 2>&1 ||
    echo "run: nvcc failed for stencil (its naive runs fail)" | tee -a "$log"
fi

median() { tr ' ' '\n' | sort -g | awk '{v[NR]=$1} END {if (NR) print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

bin_of() {
  case $2 in
  naive) echo "$naive_bin/$1.naive" ;;
  sweep) echo "$carry/bin/$1.tiled" ;;
  *) echo "$carry/bin/$1.$2" ;;
  esac
}

is_stencil() { [[ " $stencils " == *" $1 "* ]]; }

# Variants built by cleave tile (they run on $TILED_DEVICES and may fall back).
is_tiled() { [[ " sweep tiled model persistent launches tiles steps " == *" $1 "* ]]; }

# cmd_of PROG N M VARIANT: the command of one run in the array cmd (a
# stencil kernel is an argument of bin/stencil, with M its number of steps).
cmd_of() {
  if is_stencil "$1"; then
    cmd=("$(bin_of stencil "$4")" "$1" "$2" "$3" "$4")
  else
    cmd=("$(bin_of "$1" "$4")" "$2" "$3" "$4")
  fi
}

# run_config PROG N M VARIANT REF_CHECK: REPS runs; prints "status median check".
run_config() {
  local p=$1 n=$2 m=$3 v=$4 ref=$5 refv=${6:-seq} times="" check="" status=pass r line ms c rc
  local nreps=$reps
  # The sweep happens once per size: its first run.
  [ "$v" = sweep ] && nreps=1
  for ((r = 0; r < nreps; ++r)); do
    if ((SECONDS >= deadline)); then status=skipped; break; fi
    cmd_of "$p" "$n" "$m" "$v"
    line=$(CLEAVE_DEVICES=$tiled_devices timeout "$limit" "${cmd[@]}" < /dev/null 2>> "$log")
    rc=$?
    echo "$p $v ${n}x$m rep $r rc $rc: $line" >> "$log"
    if ((rc == 124)); then status=timeout; break; fi
    ms=$(sed -n 's/^RESULT .* ms=\([^ ]*\) .*/\1/p' <<< "$line")
    c=$(sed -n 's/^RESULT .* check=\([0-9a-f]*\)$/\1/p' <<< "$line")
    if ((rc != 0)) || [ -z "$ms" ]; then status=failed; break; fi
    times+="${times:+ }$ms"
    if [ -n "$check" ] && [ "$c" != "$check" ]; then status=wrong; fi
    check=$c
  done
  if [ "$status" = pass ] && is_tiled "$v" && [ -n "${fallback[$p]:-}${fallback[$p,$v]:-}" ]; then
    status=fallback
  elif [ "$status" = pass ] && [ "$v" != "$refv" ]; then
    if [ -z "$ref" ]; then status=unchecked
    elif [ "$check" != "$ref" ]; then status=wrong; fi
  fi
  local mid=""
  [ -n "$times" ] && mid=$(median <<< "$times")
  # A wrong or fallback result never enters a ratio: no median for it.
  [[ "$status" == wrong || "$status" == fallback ]] && mid=""
  cmd_of "$p" "$n" "$m" "$v"
  printf '{"bench": "tile", "git_commit": "%s", "git_dirty": %s, "host": "%s", "date": "%s", "device": "%s", "command": "%s", "kernel": "%s", "sizes": {"n": %d, "m": %d}, "variant": "%s", "cleave_devices": "%s", "reps": %d, "times_ms": [%s], "median_ms": %s, "check": "%s", "seq_check": "%s", "status": "%s"}\n' \
    "$commit" "$dirty" "$(hostname)" "$(date -u +%FT%TZ)" "$device" "${cmd[0]##*/} ${cmd[*]:1}" "$p" "$n" "$m" "$v" \
    "$(is_tiled "$v" && echo "$tiled_devices")" "$nreps" "${times// /, }" "${mid:-null}" "$check" "$ref" "$status" >> "$jsonl"
  echo "$status ${mid:--} $check"
}

declare -A med stat
bad=0
# The tiled code runs the nest as written when the device cannot start (or a
# CUDA call fails): that would time seq under the name tiled. One small run
# per program and variant under CLEAVE_LOG=plan must show the tiled kernels'
# launches; their kinds (kernel: one launch per anti-diagonal, persistent)
# show the run-time rule's choice, the same at every size of SIZES (each has
# more than CLEAVE_TILE_PERSISTENT_MIN_DIAGONALS anti-diagonals of tiles,
# as 256x256 has).
declare -A fallback kinds
sizes_of() { if [ "$1" = blocks ]; then echo "$block_sizes"; else echo "$sizes"; fi; }
tiled_launches() {
  local probe=256
  [ "$1" = blocks ] && probe=20
  CLEAVE_LOG=plan CLEAVE_DEVICES=$tiled_devices timeout "$limit" "$carry/bin/$1.$2" $probe $probe probe 2>&1 < /dev/null |
    grep -o '^launch __cleave_tile[0-9]*_[a-z]*' | sed 's/.*_//' | sort | uniq -c | awk '{printf "%s%s x %s", (NR > 1 ? ", " : ""), $1, $2}'
}
for v in tiled model persistent launches; do
  [[ " $variants " == *" $v "* || ( $v == tiled && " $variants " == *" sweep "* ) ]] || continue
  for p in $progs; do
    k=$(tiled_launches "$p" "$v")
    echo "run: $p $v (probe) on $tiled_devices: tiled kernel launches: ${k:-none}" | tee -a "$log"
    kinds[$p,$v]=${k:-none}
    [ -n "$k" ] || fallback[$p,$v]=1
  done
done

for p in $progs; do
  for s in $(sizes_of "$p"); do
    n=${s%x*} m=${s#*x} ref=""
    for v in $variants; do
      if [ "$v" = seq ] && ((seq_max > 0 && n * m > seq_max)); then
        echo "tile: $p $s seq: skipped (more than SEQ_MAX_CELLS=$seq_max cells)" | tee -a "$log"
        stat[$p,$s,$v]=skipped
        continue
      fi
      read -r st mdn ck < <(run_config "$p" "$n" "$m" "$v" "$ref")
      [ "$v" = seq ] && [ "$st" = pass ] && ref=$ck
      med[$p,$s,$v]=$mdn stat[$p,$s,$v]=$st
      [[ "$st" == wrong || "$st" == failed || "$st" == timeout || "$st" == fallback ]] && bad=1
      echo "tile: $p $s $v: $st, median ${mdn} ms"
    done
  done
done

# Stencils: the model's choice for each kernel and run, from one untimed
# run under CLEAVE_LOG=plan (the kind of generated kernel launched most:
# the warm-up's two steps launch at most two); none means the nest as
# written ran (fallback).
declare -A choice
stencil_choice() {
  CLEAVE_LOG=plan CLEAVE_DEVICES=$tiled_devices timeout "$limit" "$carry/bin/stencil.tiled" "$1" "$2" "$3" probe 2>&1 < /dev/null |
    grep -o '^launch __cleave_tile[0-9]*_\(tiles\|step\)' | sed 's/.*_//; s/^step$/steps/' | sort | uniq -c | sort -rn | awk 'NR == 1 {print $2}'
}
# Runs outer, kernels inner: if DEADLINE cuts the call short, what is lost
# is the last (largest) run's remaining kernels, not whole kernels.
for s in $stencil_runs; do
  for p in $stencils; do
    n=${s%x*} m=${s#*x} ref="" refv=""
    if [[ " $stencil_variants " == *" tiled "* ]] && ((SECONDS < deadline)); then
      c=$(stencil_choice "$p" "$n" "$m")
      choice[$p,$s]=${c:-none}
      echo "run: stencil $p $s: the model chose ${c:-nothing (the nest as written ran)}" | tee -a "$log"
      [ -n "$c" ] || fallback[$p]=1
    fi
    for v in $stencil_variants; do
      if [[ "$v" == seq || "$v" == omp ]] && ((n * n * m > cpu_max)); then
        stat[$p,$s,$v]=skipped
        continue
      fi
      read -r st mdn ck < <(run_config "$p" "$n" "$m" "$v" "$ref" "${refv:-$v}")
      [ -z "$ref" ] && [ "$st" = pass ] && ref=$ck refv=$v
      med[$p,$s,$v]=$mdn stat[$p,$s,$v]=$st
      [[ "$st" == wrong || "$st" == failed || "$st" == timeout || "$st" == fallback ]] && bad=1
      echo "tile: stencil $p $s $v: $st, median ${mdn} ms"
    done
  done
done

ratio() { [[ "$1" != - && "$2" != - && -n "$1" && -n "$2" ]] && awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}' || echo -; }
# stencil_target KERNEL SPEEDUP: issue 29's target for naive/tiled.
stencil_target() {
  local want
  case $1 in box1) echo "-"; return ;; box*) want=2 ;; *) want=1 ;; esac
  [ "$2" = - ] && { echo ">= $want: -"; return; }
  awk -v s="$2" -v w="$want" 'BEGIN {printf ">= %d: %s", w, (s >= w ? "met" : "missed")}'
}
{
  echo "# cleave tile benchmark"
  echo
  echo "Commit $commit$([ "$dirty" = true ] && echo ' (dirty)'), device: $device, $(date -u +%FT%TZ), $reps runs per configuration, tiled with CLEAVE_DEVICES=$tiled_devices."
  echo "Times are the marked nest end to end (host-device copies included), median ms."
  echo "Ratios are times: below 1 means tiled is faster. A status other than pass is shown next to the time."
  echo "GCUPS: cell updates per second of the tiled run (N x M cells), in 10^9."
  echo
  if [ -n "$progs" ]; then
    echo "## Wavefronts (technique(wavefront))"
    echo
    echo "tiled: the run-time rule chooses (launches of the probe at 256x256: persistent = the persistent kernel, kernel = one launch per anti-diagonal);"
    echo "sweep: tiled's first run at the size (the tile-size sweep: every candidate once), tiled its later runs (the cached size: $CLEAVE_CACHE_DIR/tile-sizes.txt);"
    echo "model: the model's size, no sweep (-DCLEAVE_TILE_AUTOTUNE=0); model/tiled above 1 means the sweep found a faster size."
    echo "persistent and launches force each schedule. naive: one launch per anti-diagonal of cells (nvcc)."
    echo "naive/tiled is a speed-up against issue 29's target (>= 5x); the other ratios are times."
    echo
    for p in $progs; do
      echo "- $p: tiled ran ${kinds[$p,tiled]:-?}; persistent ${kinds[$p,persistent]:-?}; launches ${kinds[$p,launches]:-?}"
    done
    echo
    echo "| program | N x M | seq ms | sweep ms | tiled ms | model ms | persistent ms | launches ms | naive ms | naive/tiled | target 5x | model/tiled | persistent/naive | launches/naive | persistent/launches | tiled/seq | tiled GCUPS |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    for p in $progs; do
      for s in $(sizes_of "$p"); do
        row="| $p | $s"
        for v in seq sweep tiled model persistent launches naive; do
          t=${med[$p,$s,$v]:--} st=${stat[$p,$s,$v]:-not run}
          row+=" | $t$([ "$st" != pass ] && echo " ($st)")"
        done
        t=${med[$p,$s,tiled]:--} nv=${med[$p,$s,naive]:--}
        pe=${med[$p,$s,persistent]:--} la=${med[$p,$s,launches]:--}
        sp=$(ratio "$nv" "$t")
        tg=$([ "$sp" != - ] && awk -v s="$sp" 'BEGIN {print (s >= 5 ? "met" : "missed")}' || echo -)
        gc=$([ "$t" != - ] && awk -v n="${s%x*}" -v m="${s#*x}" -v t="$t" 'BEGIN {printf "%.2f", n * m / t / 1e6}' || echo -)
        echo "$row | $sp | $tg | $(ratio "${med[$p,$s,model]:--}" "$t") | $(ratio "$pe" "$nv") | $(ratio "$la" "$nv") | $(ratio "$pe" "$la") | $(ratio "$t" "${med[$p,$s,seq]:--}") | $gc |"
      done
    done
  fi
  if [ -n "$stencils" ]; then
    echo
    echo "## Iterated stencils (technique(timeskew))"
    echo
    echo "N x N floats, STEPS steps, pointer swap; median ms of the nest end to end (copies included)."
    echo "tiled: the model chooses at run time (its choice in parentheses, from a run under CLEAVE_LOG=plan); tiles and steps force time tiles and one launch per step."
    echo "naive/tiled is a speed-up (above 1: tiled is faster); the target is issue 29's (box radius >= 2: 2x over one launch per step; star: never below 1x)."
    echo "tiles/steps: which forced schedule was faster, and whether the model picked it."
    echo "seq and omp run where N x N x STEPS <= $cpu_max; elsewhere the GPU runs are checked against the naive port."
    echo
    echo "| kernel | N x STEPS | seq ms | omp ms | naive ms | tiled ms | tiles ms | steps ms | naive/tiled | target | faster forced | model |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    for p in $stencils; do
      for s in $stencil_runs; do
        row="| $p | $s"
        for v in seq omp naive tiled tiles steps; do
          t=${med[$p,$s,$v]:--} st=${stat[$p,$s,$v]:-not run}
          row+=" | $t$([ "$st" != pass ] && echo " ($st)")$([ "$v" = tiled ] && echo " (${choice[$p,$s]:-?})")"
        done
        sp=$(ratio "${med[$p,$s,naive]:--}" "${med[$p,$s,tiled]:--}")
        ts=${med[$p,$s,tiles]:--} ss=${med[$p,$s,steps]:--} best=- right=-
        if [[ "$ts" != - && "$ss" != - ]]; then
          best=$(awk -v a="$ts" -v b="$ss" 'BEGIN {print (a < b ? "tiles" : "steps")}')
          right=$([ "$best" = "${choice[$p,$s]:-}" ] && echo right || echo wrong)
        fi
        echo "$row | $sp | $(stencil_target "$p" "$sp") | $best | $right |"
      done
    done
  fi
  echo
  echo "Load before: $load_before"
  echo "Load after: $(uptime)"
} > "$summary"
cat "$summary"
exit $bad
