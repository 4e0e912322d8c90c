#!/usr/bin/env python3
"""Checks the layout of bench/results and the links to it.

- Every results file lies in the folder of its benchmark and is named
  <bench>-<date>-<device>-<commit>[-<what>].<ext> (design/STYLE.md), with no
  run tag (-s26).
- Every link of bench/RESULTS.md resolves, and every bench/results path
  that the docs and the benchmarks' READMEs cite exists (templates such as
  <date> and globs are matched as patterns).

usage: check-results.py SOURCE_ROOT    (prints one line per problem)
"""
import glob
import os
import re
import sys

RUN_TAG = re.compile(r"-s\d+[a-z]?(?=[-.]|$)")


def check_names(root, out):
    results = os.path.join(root, "bench", "results")
    for dirpath, _, files in os.walk(results):
        rel = os.path.relpath(dirpath, results)
        for f in sorted(files):
            path = os.path.join("bench", "results", rel, f)
            if rel == "." or os.sep in rel:
                out.append("%s: not in a folder of its benchmark" % path)
                continue
            name = re.compile(r"^%s-\d{4}-\d{2}-\d{2}-[a-z0-9-]+?-[0-9a-f]{7,12}"
                              r"(?:[-.]|$)" % re.escape(rel))
            if not name.match(f):
                out.append("%s: not named %s-<date>-<device>-<commit>[-<what>]"
                           % (path, rel))
            if RUN_TAG.search(f):
                out.append("%s: names a run tag" % path)


def check_results_md(root, out):
    md = os.path.join(root, "bench", "RESULTS.md")
    text = open(md, encoding="utf-8").read()
    for target in re.findall(r"\]\(([^)#]+)", text):
        if not target.startswith("http") and not os.path.exists(
                os.path.join(root, "bench", target)):
            out.append("bench/RESULTS.md: broken link %s" % target)


def check_citations(root, out):
    cited = glob.glob(os.path.join(root, "docs", "*.md")) + \
        glob.glob(os.path.join(root, "bench", "**", "README.md"), recursive=True) + \
        [os.path.join(root, "README.md")]
    for doc in cited:
        text = open(doc, encoding="utf-8").read()
        for m in re.finditer(r"bench/results/[\w./*{},<>-]+", text):
            ref = m.group(0).rstrip(".,")
            if "<" in ref or re.search(r"[A-Z]{4}", ref):
                continue  # a template of a name, not a file
            pattern = re.sub(r"\{([^}]*)\}", lambda g: g.group(1).split(",")[0],
                             ref)
            if not glob.glob(os.path.join(root, pattern)):
                out.append("%s: cites %s, which does not exist"
                           % (os.path.relpath(doc, root), ref))


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    out = []
    check_names(argv[1], out)
    check_results_md(argv[1], out)
    check_citations(argv[1], out)
    for line in out:
        print(line)
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
