set -u
O=$OUT
lscpu | grep -E "^CPU\(s\)|NUMA|Socket|Model name|MHz" ; nvidia-smi topo -m | head -8
H=build/gpu-carry-headline/bin/headline
export LD_LIBRARY_PATH=build/gpu-carry-headline
run() { # tag taskset-prefix...
  local tag=$1; shift
  CLEAVE_DEVICES=gpu0,gpu1,gpu2,gpu3 CLEAVE_PARTITION=even "$@" timeout 120 $H --reps 20 --budget-ms 1500 --kernels vecadd,blackscholes,jacobi2d,stencil3d,reduction --modes resident --set 4gpu --policy even-$tag > $O/r-$tag.jsonl 2>/dev/null
  echo "$tag $(grep -o '"kernel":"[a-z0-9]*"\|"median_ms":[0-9.]*' $O/r-$tag.jsonl | tr '\n' ' ')"
}
run warm env
for r in 1 2; do
  run all-$r env
  run node0-$r numactl --cpunodebind=0 --membind=0
  run cores0-7-$r taskset -c 0-7
done
