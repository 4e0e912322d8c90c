#!/usr/bin/env python3
"""report.py on hand-made predictions and measurements (no GPU needed):
the join by GPU and (kernel, grid, block), counted configurations only,
signed errors, MAPE per GPU and mode, an infinite paper prediction, a
configuration not measured, a failed entry, GPU=PATH, and bad input.

  python3 bench/accuracy/test_report.py
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "report.py")
H100 = "NVIDIA H100 80GB HBM3"
H200 = "NVIDIA H200"
VEC = "_Z6vecaddPKfS0_Pfi"


def pred(entry, gpu, name, mode, kernel, grid, block, s, counts=True):
    return {"entry": entry, "gpu": gpu, "gpu_name": name, "mode": mode,
            "kernel": kernel, "grid": grid, "block": block,
            "predicted_s": s, "kernel_s": None if s is None else s - 5e-6,
            "counts": counts, "display": "", "bottleneck": "memory"}


def meas(device, kernel, grid, block, ms, entry):
    return {"entry": entry, "kernel": kernel, "grid": grid, "block": block,
            "device": device, "status": "ok", "median_ms": ms, "samples": 5}


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        P = []
        for gpu, name, f in [("h100x1", H100, 1.0), ("h200x1", H200, 0.8)]:
            P += [pred("vecadd", gpu, name, "hopper", VEC, [65536, 1, 1],
                       [256, 1, 1], 1.1e-4 * f),
                  pred("vecadd", gpu, name, "paper", VEC, [65536, 1, 1],
                       [256, 1, 1], None),
                  pred("vecadd", gpu, name, "paper-fix", VEC, [65536, 1, 1],
                       [256, 1, 1], 0.5e-4 * f),
                  pred("red", gpu, name, "hopper", "_Z3redv", [1024, 1, 1],
                       [512, 1, 1], 2.0e-4 * f),
                  pred("red", gpu, name, "paper", "_Z3redv", [1024, 1, 1],
                       [512, 1, 1], 4.0e-4 * f),
                  pred("red", gpu, name, "paper-fix", "_Z3redv",
                       [1024, 1, 1], [512, 1, 1], 1.0e-4 * f),
                  # a later pass the suite does not count
                  pred("red", gpu, name, "hopper", "_Z3redv", [2, 1, 1],
                       [512, 1, 1], 1.0e-5, counts=False),
                  # counted, never measured
                  pred("mm", gpu, name, "hopper", "_Z2mmv", [8, 8, 1],
                       [16, 16, 1], 1e-3)]
        self.preds = self.write("pred.jsonl", P)
        self.m100 = self.write("m100.jsonl", [
            meas(H100, VEC, [65536, 1, 1], [256, 1, 1], 0.100, "vecadd"),
            meas(H100, "_Z3redv", [1024, 1, 1], [512, 1, 1], 0.250, "red"),
            meas(H100, "_Z3redv", [2, 1, 1], [512, 1, 1], 0.010, "red"),
            {"entry": "nbody", "device": H100, "status": "wrong"}])
        self.m200 = self.write("m200.jsonl", [
            meas(H200, VEC, [65536, 1, 1], [256, 1, 1], 0.080, "vecadd"),
            meas(H200, "_Z3redv", [1024, 1, 1], [512, 1, 1], 0.200, "red")])

    def write(self, name, rows):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        return path

    def run_report(self, *args):
        out = os.path.join(self.dir.name, "out.json")
        p = subprocess.run([sys.executable, REPORT, *args, "--json", out],
                           capture_output=True, text=True)
        doc = None
        if p.returncode == 0:
            with open(out) as f:
                doc = json.load(f)
        return p, doc

    def test_join_and_mape(self):
        p, doc = self.run_report(self.preds, self.m100, self.m200)
        self.assertEqual(p.returncode, 0, p.stderr)
        s = doc["summary"]
        for g in ("h100x1", "h200x1"):
            self.assertEqual(s[g]["hopper"]["kernels"], 2)
            self.assertAlmostEqual(s[g]["hopper"]["mape_pct"], 15.0)
            self.assertAlmostEqual(s[g]["hopper"]["max_abs_error_pct"], 20.0)
            self.assertAlmostEqual(s[g]["paper-fix"]["mape_pct"], 55.0)
            self.assertTrue(s[g]["paper"]["mape_infinite"])
            self.assertIsNone(s[g]["paper"]["mape_pct"])
            self.assertAlmostEqual(s[g]["paper"]["mape_finite_pct"], 60.0)
            self.assertFalse(s[g]["hopper"]["meets_target"])
        rows = {(r["gpu"], r["kernel"]): r for r in doc["rows"]}
        self.assertEqual(len(doc["rows"]), 4)  # the uncounted pass is out
        self.assertAlmostEqual(
            rows[("h100x1", VEC)]["modes"]["hopper"]["error_pct"], 10.0)
        self.assertAlmostEqual(
            rows[("h200x1", "_Z3redv")]["modes"]["hopper"]["error_pct"],
            -20.0)
        self.assertIsNone(rows[("h100x1", VEC)]["modes"]["paper"]["error_pct"])
        self.assertEqual(sorted(m["gpu"] for m in doc["missing"]),
                         ["h100x1", "h200x1"])
        self.assertEqual([f["entry"] for f in doc["failed"]], ["nbody"])
        self.assertIn("| hopper | 2 | 15.0 |", p.stdout)
        self.assertIn("| paper | 2 | inf | 60.0 (1 of 2)", p.stdout)

    def test_target_met(self):
        p, doc = self.run_report(self.preds, self.m100, "--min-kernels", "2",
                                 "--target", "15.5")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(doc["summary"]["h100x1"]["hopper"]["meets_target"])
        self.assertEqual(doc["summary"]["h200x1"]["hopper"]["kernels"], 0)

    def test_kernel_seconds_field(self):
        p, doc = self.run_report(self.preds, self.m100, "--field",
                                 "kernel_seconds")
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = {(r["gpu"], r["kernel"]): r for r in doc["rows"]}
        self.assertAlmostEqual(
            rows[("h100x1", VEC)]["modes"]["hopper"]["predicted_ms"], 0.105)

    def test_forced_gpu(self):
        # The H200's file given as the H100's: joined there.
        p, doc = self.run_report(self.preds, "h100x1=" + self.m200)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = {(r["gpu"], r["kernel"]): r for r in doc["rows"]}
        self.assertEqual(rows[("h100x1", VEC)]["measured_ms"], 0.080)

    def test_unknown_device(self):
        path = self.write("mx.jsonl", [
            meas("Tesla C2075", VEC, [65536, 1, 1], [256, 1, 1], 1.0, "v")])
        p, _ = self.run_report(self.preds, path)
        self.assertEqual(p.returncode, 1)
        self.assertIn("device 'Tesla C2075' matches none", p.stderr)

    def test_bad_json(self):
        path = os.path.join(self.dir.name, "bad.jsonl")
        with open(path, "w") as f:
            f.write("{not json\n")
        p, _ = self.run_report(self.preds, path)
        self.assertEqual(p.returncode, 1)
        self.assertIn("bad.jsonl:1: not JSON", p.stderr)


if __name__ == "__main__":
    unittest.main()
