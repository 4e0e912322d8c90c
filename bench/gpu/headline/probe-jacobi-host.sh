# jacobi2d from the host over cpu+gpu0: gpu0 alone, the model (CLEAVE_LOG=plan,time,
# after an untimed warm-up), and a 5 % static split. Run from the repository
# root on the GPU machine with the headline bundle carried
# (bench/gpu/headline/prepare.sh); writes $OUT.
set -u
H=build/gpu-carry-headline/bin/headline
export LD_LIBRARY_PATH=build/gpu-carry-headline
C=$(mktemp -d)
P=profiles/h200x4-all.json
CLEAVE_DEVICES=gpu0 CLEAVE_PARTITION=even $H --reps 10 --budget-ms 1500 --kernels jacobi2d --modes host --set gpu0 --policy even > $OUT/base.jsonl 2>$OUT/base.err
CLEAVE_DEVICES=cpu,gpu0 CLEAVE_PARTITION=model CLEAVE_PROFILE=$P CLEAVE_CACHE_DIR=$C $H --reps 1 --budget-ms 0 --kernels jacobi2d --modes host --set cpu+gpu0 --policy model-warmup > /dev/null 2>$OUT/warm.err
CLEAVE_DEVICES=cpu,gpu0 CLEAVE_PARTITION=model CLEAVE_PROFILE=$P CLEAVE_CACHE_DIR=$C CLEAVE_LOG=plan,time $H --reps 12 --budget-ms 3000 --kernels jacobi2d --modes host --set cpu+gpu0 --policy model > $OUT/model.jsonl 2>$OUT/model.err
CLEAVE_DEVICES=cpu,gpu0 CLEAVE_SPLIT=0.05,0.95 CLEAVE_LOG=time $H --reps 10 --budget-ms 1500 --kernels jacobi2d --modes host --set cpu+gpu0 --policy split > $OUT/split.jsonl 2>$OUT/split.err
cp $C/* $OUT/ 2>/dev/null
gzip -f $OUT/*.err
for f in base model split; do grep -o '"median_ms":[0-9.]*' $OUT/$f.jsonl; done
