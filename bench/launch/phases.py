"""Summarizes CLEAVE_LOG=phases lines from stdin: the first launch's steps,
then per step the median and the 90th percentile of its host time over the
other launches (the first 5 skipped)."""
import re
import statistics
import sys

steps = {}
launches = 0
first = None
for line in sys.stdin:
    m = re.match(r"cleave phases \S+: (.*) us$", line.strip())
    if not m or "queued=" in line:
        continue
    launches += 1
    if launches == 1:
        first = m.group(1)
    if launches <= 5:
        continue
    for key, value in re.findall(r"([\w:]+)=([0-9.]+)", m.group(1)):
        steps.setdefault(key.split(":")[0], []).append(float(value))
print(f"  first launch: {first} us")
print(f"  launches: {launches} (first 5 skipped)")
for key, values in steps.items():
    values.sort()
    p90 = values[int(0.9 * (len(values) - 1))]
    print(f"  {key:10} median {statistics.median(values):8.2f} us"
          f"   p90 {p90:8.2f} us   ({len(values)} launches)")
