#!/usr/bin/env python3
"""Builds each named program of this directory twice (clang++ as written;
`cleave tile` then `cleave compile`), runs both (the tiled one on the CPU
devices through Cleave's runtime) and compares their output line by line.

usage: differential.py CLEAVE INPUTS_DIR WORK_DIR PROGRAM...
Prints one line per program; exits non-zero on the first difference.
"""
import os
import shutil
import subprocess
import sys


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s%s" % (r.returncode, " ".join(cmd),
                                             r.stdout, r.stderr))
    return r


def main():
    cleave, inputs, work = sys.argv[1:4]
    cxx = shutil.which("clang++") or "clang++"
    for name in sys.argv[4:]:
        src = os.path.join(inputs, name + ".cpp")
        ref, tiled_cu, tiled = (os.path.join(work, name + s)
                                for s in ("-ref", ".cu", "-tiled"))
        run([cxx, "-std=c++17", "-O1", "-I", inputs, src, "-o", ref])
        run([cleave, "tile", src, "-o", tiled_cu])
        run([cleave, "compile", "-I", inputs, tiled_cu, "-o", tiled])
        want = run([ref]).stdout.splitlines()
        env = dict(os.environ, CLEAVE_DEVICES="cpu", CLEAVE_LOG="plan")
        got = run([tiled], env)
        lines = got.stdout.splitlines()
        if lines != want:
            for w, g in zip(want, lines):
                if w != g:
                    print("%s: differs: want '%s', got '%s'" % (name, w, g))
                    break
            else:
                print("%s: differs in its number of lines" % name)
            sys.exit(1)
        launched = "launch __cleave_tile" in got.stderr
        print("%s: %d sizes identical, %s" %
              (name, len(want), "tiled kernels launched" if launched
               else "no tiled kernel launched"))


if __name__ == "__main__":
    main()
