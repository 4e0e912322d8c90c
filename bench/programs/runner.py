#!/usr/bin/env python3
"""Runs the program corpus built by prepare.sh: each program's nvcc build and
its Cleave build under several device sets, cold and warm, and writes one JSON
line per (program, variant, cache). run.sh is the entry point; its header
documents the environment. Standard library only (the GPU machine's python3).
"""
import gzip
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

TIME_RE = re.compile(r"^time_ms:\s*([0-9.eE+-]+)\s*$", re.M)

# (label, CLEAVE_DEVICES or None for the runtime's default set). "nvcc" is
# the program as nvcc built it.
GPU_VARIANTS = [("nvcc", None), ("gpu0", "gpu0"), ("cpu+gpu0", "cpu,gpu0"),
                ("default", None)]
# DRY=1: a machine without a GPU, to check the script and the programs.
DRY_VARIANTS = [("cpu", "cpu"), ("cpu3", "cpu,cpu,cpu"), ("default", None)]


def env_int(name, default):
    return int(os.environ.get(name, default))


def parse_variants(text):
    """VARIANTS="nvcc gpu0:gpu0 cpu+gpu0:cpu,gpu0 default:" -> pairs."""
    out = []
    for item in text.split():
        label, _, devices = item.partition(":")
        out.append((label, devices or None))
    return out


def unpack(carry):
    """The folder to run from: the carry itself, or its tarball unpacked."""
    tarball = os.path.join(carry, "corpus.tar.xz")
    if not os.path.exists(tarball):
        return carry, None
    work = tempfile.mkdtemp(prefix="cleave-corpus-")
    with tarfile.open(tarball) as tar:
        try:
            tar.extractall(work, filter="data")
        except TypeError:  # a Python without extraction filters
            tar.extractall(work)
    return work, work


def read_programs(root):
    programs = []
    with open(os.path.join(root, "programs.tsv")) as f:
        next(f)
        for line in f:
            name, nvcc, cleave, xfail = (line.rstrip("\n").split("\t") + [""])[:4]
            programs.append({"name": name, "nvcc": nvcc == "1",
                             "cleave": cleave == "1", "xfail": xfail})
    return programs


def gpu_name():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name",
                              "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=30).stdout.strip()
        return out.splitlines()[0] if out else "no GPU"
    except (OSError, subprocess.SubprocessError):
        return "no GPU"


class Bench:
    def __init__(self, carry, out):
        self.root, self.tmp = unpack(carry)
        self.out = out
        self.reps = env_int("REPS", 5)
        self.scale = env_int("SCALE", 8)
        self.timeout = env_int("TIMEOUT", 120)
        self.deadline = time.monotonic() + env_int("DEADLINE", 540)
        # A run that starts just before the deadline must still end inside
        # the call: runs are cut 40 s past it.
        self.hard_end = self.deadline + 40
        self.dry = os.environ.get("DRY", "0") == "1"
        default = DRY_VARIANTS if self.dry else GPU_VARIANTS
        self.variants = (parse_variants(os.environ["VARIANTS"])
                         if os.environ.get("VARIANTS") else default)
        with open(os.path.join(self.root, "COMMIT")) as f:
            commit = f.read().split()
        self.common = {
            "git_commit": commit[0] if commit else "unknown",
            "git_dirty": "dirty" in commit,
            "host": socket.gethostname(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "device": "cpu (dry run)" if self.dry else gpu_name(),
            "scale": self.scale,
            "command": "bench/programs/run.sh",
        }
        self.jsonl = open(os.path.join(out, "programs-bench.jsonl"), "w")
        self.log = open(os.path.join(out, "programs-bench.log"), "w")
        self.phases = os.environ.get("PHASES", "0") == "1"

    def say(self, text):
        print(text, flush=True)
        self.log.write(text + "\n")
        self.log.flush()

    def run_once(self, exe, devices, cache, extra_env=None):
        """One run: (status, time_ms, wall_ms, output, exit status)."""
        env = dict(os.environ)
        env.pop("CLEAVE_DEVICES", None)
        if devices:
            env["CLEAVE_DEVICES"] = devices
        if cache:
            env["CLEAVE_CACHE_DIR"] = cache
        env["LD_LIBRARY_PATH"] = os.path.join(self.root, "lib") + (
            ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        env.update(extra_env or {})
        start = time.monotonic()
        limit = max(1.0, min(self.timeout, self.hard_end - start))
        try:
            p = subprocess.run([exe, str(self.scale)], capture_output=True,
                               text=True, env=env, timeout=limit)
            rc, text = p.returncode, p.stdout + p.stderr
        except subprocess.TimeoutExpired as e:
            rc = "timeout"
            text = (e.stdout or b"").decode(errors="replace") if isinstance(
                e.stdout, bytes) else (e.stdout or "")
        wall = (time.monotonic() - start) * 1e3
        found = TIME_RE.findall(text)
        ok = rc == 0 and re.search(r"^PASS", text, re.M) and not re.search(
            r"^FAIL", text, re.M)
        status = "pass" if ok else ("timeout" if rc == "timeout" else "wrong")
        return status, float(found[-1]) if found else None, wall, text, rc

    def record(self, program, variant, devices, cache, status, runs, note=""):
        line = dict(self.common)
        line.update({"program": program, "variant": variant,
                     "devices": devices if devices else "(default)",
                     "cache": cache, "reps": len(runs), "status": status})
        if runs:
            times = [r[0] for r in runs]
            walls = [round(r[1], 3) for r in runs]
            line["times_ms"] = times
            line["wall_ms"] = walls
            if all(t is not None for t in times):
                line["median_ms"] = statistics.median(times)
            line["median_wall_ms"] = round(statistics.median(walls), 3)
        if note:
            line["note"] = note
        self.jsonl.write(json.dumps(line) + "\n")
        self.jsonl.flush()

    def series(self, program, variant, devices, exe, cache_mode):
        """REPS runs of one configuration; cold: a fresh cache each run;
        warm: one cache, warmed by an untimed run; none: nvcc's build."""
        if time.monotonic() > self.deadline:
            self.record(program, variant, devices, cache_mode, "skipped", [],
                        "past DEADLINE")
            self.say(f"  {variant} {cache_mode}: skipped (past DEADLINE)")
            return
        caches = []
        shared = tempfile.mkdtemp(prefix="cache-") if cache_mode == "warm" else None
        runs, status, failure = [], "pass", ""
        try:
            # The untimed first run: warms the cache (warm) or the GPU and
            # the file system (nvcc); cold runs have none.
            if cache_mode in ("warm", "none"):
                st, _, _, text, rc = self.run_once(exe, devices, shared)
                if st != "pass":
                    status, failure = st, f"warm-up rc={rc}: {text[-2000:]}"
            for _ in range(self.reps if status == "pass" else 0):
                if time.monotonic() > self.deadline:
                    failure = "cut at DEADLINE after %d runs" % len(runs)
                    break
                cache = shared
                if cache_mode == "cold":
                    cache = tempfile.mkdtemp(prefix="cache-")
                    caches.append(cache)
                st, t, wall, text, rc = self.run_once(exe, devices, cache)
                runs.append((t, wall))
                if st != "pass":
                    status, failure = st, f"rc={rc}: {text[-2000:]}"
                    break
        finally:
            for c in caches + ([shared] if shared else []):
                shutil.rmtree(c, ignore_errors=True)
        self.record(program, variant, devices, cache_mode, status, runs,
                    failure[:2000])
        med = statistics.median([r[0] for r in runs if r[0] is not None] or [0])
        self.say(f"  {variant} {cache_mode}: {status}, median time_ms "
                 f"{med:.3f}, wall_ms {statistics.median([r[1] for r in runs] or [0]):.1f}")
        if failure:
            self.say("    " + failure.replace("\n", "\n    "))

    def phases_log(self, prog, exe):
        """One warm run with CLEAVE_LOG=phases on each device set of
        PHASES_DEVICES (space-separated; default gpu0, cpu in a dry run)."""
        default = "cpu" if self.dry else "gpu0"
        for devices in os.environ.get("PHASES_DEVICES", default).split():
            cache = tempfile.mkdtemp(prefix="cache-")
            try:
                self.run_once(exe, devices, cache)
                _, _, _, text, _ = self.run_once(exe, devices, cache,
                                                 {"CLEAVE_LOG": "phases"})
            finally:
                shutil.rmtree(cache, ignore_errors=True)
            with gzip.open(os.path.join(self.out, "programs-phases.log.gz"),
                           "at") as f:
                f.write(f"## {prog} on {devices}, warm, scale {self.scale}\n"
                        f"{text}\n")

    def program(self, prog):
        name = prog["name"]
        self.say(f"# {name}" + (f" (XFAIL: {prog['xfail']})" if prog["xfail"] else ""))
        for label, devices in self.variants:
            nvcc = label == "nvcc"
            exe = os.path.join(self.root, "bin", name + (".nvcc" if nvcc else ".cleave"))
            if not (prog["nvcc"] if nvcc else prog["cleave"]):
                self.record(name, label, devices, "none" if nvcc else "-",
                            "no-build", [], prog["xfail"])
                self.say(f"  {label}: no build")
                continue
            for cache_mode in (["none"] if nvcc else ["cold", "warm"]):
                self.series(name, label, devices, exe, cache_mode)
        if self.phases and prog["cleave"] and time.monotonic() < self.deadline:
            self.phases_log(name, os.path.join(self.root, "bin", name + ".cleave"))

    def run(self):
        programs = read_programs(self.root)
        only = [p for p in os.environ.get("PROGRAMS", "").split(",") if p]
        if only:
            programs = [p for p in programs if p["name"] in only]
        shard = os.environ.get("SHARD", "")
        if shard:
            i, k = (int(x) for x in shard.split("/"))
            programs = programs[i - 1::k]
        self.say(f"# corpus benchmark {self.common['date']}, commit "
                 f"{self.common['git_commit']}, device {self.common['device']}, "
                 f"scale {self.scale}, reps {self.reps}, variants "
                 + " ".join(f"{l}={d or '(default)'}" for l, d in self.variants))
        for prog in programs:
            self.program(prog)
        self.jsonl.close()
        self.log.close()
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: runner.py CARRY_DIR")
    out = os.environ.get("OUT", ".")
    os.makedirs(out, exist_ok=True)
    Bench(os.path.abspath(sys.argv[1]), out).run()


if __name__ == "__main__":
    main()
