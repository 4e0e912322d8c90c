# Writes a copy of a committed device profile with host-link keys changed,
# for test/Driver/analyze-tpsm.test:
#   tpsm-profile.py IN OUT [--pageable-both H2D D2H] [--latency US]
#                          [--no-step-sync]
# --pageable-both adds host_links.alone[0].pageable.both (GB/s), --latency
# adds host_links.alone[0].latency with that many microseconds per copy in
# each direction and memory kind, --no-step-sync removes
# gpus[0].sync.step_sync_3_streams_us (t_str).
import json
import sys

src, dst, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
p = json.load(open(src))
alone = p["host_links"]["alone"][0]
summary = lambda v: {"median": v, "min": v, "max": v, "mean": v,
                     "spread": 0, "samples": 1}
while rest:
    opt = rest.pop(0)
    if opt == "--pageable-both":
        h2d, d2h = float(rest.pop(0)), float(rest.pop(0))
        alone["pageable"]["both"] = {"h2d_bytes": 1, "d2h_bytes": 1,
                                     "h2d_gbps": summary(h2d),
                                     "d2h_gbps": summary(d2h), "overlap": 1}
    elif opt == "--latency":
        us = float(rest.pop(0))
        both = {"h2d_us": summary(us), "d2h_us": summary(us)}
        alone["latency"] = {"method": "test", "pinned": both,
                            "pageable": dict(both)}
    elif opt == "--no-step-sync":
        del p["gpus"][0]["sync"]["step_sync_3_streams_us"]
    else:
        sys.exit("tpsm-profile.py: unknown option " + opt)
json.dump(p, open(dst, "w"), indent=1)
