#!/usr/bin/env python3
"""Checks that C and C++ sources stay small enough to read whole.

Usage: check-size-limits.py [--max-file-lines N] [--max-function-lines N]
                            [--list N] PATH...

Every .cpp, .c, .h and .inc file under each PATH (or PATH itself, when it is
a file) is scanned. A file over --max-file-lines lines, or a function whose
definition (from the first line of its signature to its closing brace) spans
more than --max-function-lines lines, is reported as
`FILE:LINE: error: ...`, and the exit status is 1. --list N prints every
function of more than N lines instead (status 0), longest first.

The scan needs no compiler: it removes comments, string and character
literals and preprocessor lines, then matches braces. A brace that opens at
namespace or class scope after a parameter list (optionally followed by
qualifiers, a trailing return type or a constructor's initializer list) opens
a function body; lambdas and local classes count towards their enclosing
function. A file whose braces do not balance once preprocessor lines are
removed (code that braces differently under #if) is reported as an error, so
that nothing is measured wrongly in silence.
"""

import argparse
import os
import re
import sys

SOURCE_SUFFIXES = (".cpp", ".cc", ".c", ".h", ".hpp", ".inc")


def blank(text):
    """Keeps newlines (for line numbers), replaces everything else by spaces."""
    return re.sub(r"[^\n]", " ", text)


def strip_source(src):
    """Returns SRC with comments, literals and preprocessor lines blanked.

    String and character literals become "" and '' padded with spaces, so
    that `extern "C"` stays recognisable and columns and lines do not move.
    """
    out = []
    i, n = 0, len(src)
    at_line_start = True
    while i < n:
        c = src[i]
        if at_line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if at_line_start and c == "#":
            # A preprocessor line, with its backslash continuations.
            j = i
            while j < n:
                if src[j] == "\n" and src[j - 1] != "\\":
                    break
                j += 1
            out.append(blank(src[i:j]))
            i = j
            continue
        at_line_start = False
        if c == "\n":
            at_line_start = True
            out.append(c)
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(src[i:j]))
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(blank(src[i:j]))
            i = j
        elif c == "R" and src.startswith('"', i + 1) and (
                i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            # A raw string literal R"delim( ... )delim".
            open_paren = src.find("(", i + 2)
            delim = src[i + 2:open_paren]
            close = src.find(")" + delim + '"', open_paren)
            j = n if close < 0 else close + len(delim) + 2
            out.append('R""' + blank(src[i + 3:j]))
            i = j
        elif c == '"' or (c == "'" and not (
                i > 0 and src[i - 1].isalnum() and i + 1 < n and
                src[i + 1].isalnum())):
            # A string or character literal (a quote between two
            # alphanumerics is a digit separator: 1'000).
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + c + blank(src[i + 2:j]) if j - i >= 2 else c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


# What may follow a function's parameter list before its body.
QUALIFIERS = re.compile(
    r"\)\s*((const|volatile|noexcept(\s*\([^()]*\))?|override|final|mutable|"
    r"&&|&|->\s*[^{};=]+?)\s*)*$")
# A constructor's initializer list: `) : Member(...), Other{...}`.
CTOR_INIT = re.compile(r"\)\s*(noexcept\s*)?:(?!:)")
ACCESS_LABEL = re.compile(r"^\s*(public|private|protected)\s*:(?!:)")


def function_name(header):
    """The declarator's name: the identifier before the parameter list."""
    m = CTOR_INIT.search(header)
    sig = header[:m.start() + 1] if m else header
    m = QUALIFIERS.search(sig)
    if m:
        sig = sig[:m.start() + 1]
    depth = 0
    for k in range(len(sig) - 1, -1, -1):
        if sig[k] == ")":
            depth += 1
        elif sig[k] == "(":
            depth -= 1
            if depth == 0:
                name = re.search(r"([\w:~]+(\s*operator\s*[^\s(]+)?|"
                                 r"operator\s*\(\s*\))\s*$", sig[:k])
                return name.group(1) if name else sig[:k].strip()[-40:]
    return "?"


def classify(header):
    """What a `{` opens at namespace or class scope, from the text before it."""
    h = " ".join(header.split())
    h = ACCESS_LABEL.sub("", h).strip()
    if QUALIFIERS.search(h) or (CTOR_INIT.search(h) and h[-1] in ")}"):
        return "function"
    if re.search(r"\bnamespace\b", h) or re.match(r'^extern\s*""$', h):
        return "namespace"
    if "=" not in h and re.search(r"\b(class|struct|union)\b", h) and \
            not re.search(r"\benum\b", h):
        return "class"
    return "other"


def in_ctor_init(header):
    """A brace-initialised member in a constructor's initializer list."""
    h = " ".join(header.split())
    return bool(CTOR_INIT.search(h)) and bool(re.search(r"[\w>]$", h))


def header_start(text, begin, end):
    """Offset of the first character of a declaration, past access labels."""
    header = text[begin:end]
    label = ACCESS_LABEL.match(header)
    skip = label.end() if label else 0
    rest = header[skip:]
    return begin + skip + len(rest) - len(rest.lstrip())


def scan(path, src):
    """Yields (kind, line, name, lines) for the file and each function."""
    text = strip_source(src)
    line_of = []
    line = 1
    for ch in text:
        line_of.append(line)
        if ch == "\n":
            line += 1
    functions = []
    # Each entry: [kind, start offset of the header of the next `{`].
    stack = [["namespace", 0]]
    open_funcs = []  # (stack depth, start line, name)
    for i, ch in enumerate(text):
        if ch == ";" and stack[-1][0] in ("namespace", "class"):
            stack[-1][1] = i + 1
        elif ch == "{":
            kind = "inner"
            if stack[-1][0] in ("namespace", "class"):
                header = text[stack[-1][1]:i]
                if in_ctor_init(header):
                    kind = "ctor-init"
                else:
                    kind = classify(header)
                    if kind == "function":
                        open_funcs.append(
                            (len(stack), line_of[header_start(text, stack[-1][1], i)],
                             function_name(" ".join(header.split()))))
            stack.append([kind, i + 1])
        elif ch == "}":
            if len(stack) == 1:
                raise ValueError("%s:%d: error: unbalanced '}'" %
                                 (path, line_of[i]))
            kind, _ = stack.pop()
            if open_funcs and open_funcs[-1][0] == len(stack):
                _, start, name = open_funcs.pop()
                functions.append((start, name, line_of[i] - start + 1))
            if kind != "ctor-init" and stack[-1][0] in ("namespace", "class"):
                stack[-1][1] = i + 1
    if len(stack) != 1:
        raise ValueError("%s: error: %d unclosed '{' (braces differ under "
                         "#if?)" % (path, len(stack) - 1))
    return src.count("\n") + (0 if src.endswith("\n") or not src else 1), \
        functions


def sources(paths):
    for p in paths:
        if os.path.isfile(p):
            yield p
            continue
        for root, dirs, files in os.walk(p):
            dirs.sort()
            for f in sorted(files):
                if f.endswith(SOURCE_SUFFIXES):
                    yield os.path.join(root, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-file-lines", type=int, default=1500)
    ap.add_argument("--max-function-lines", type=int, default=150)
    ap.add_argument("--list", type=int, metavar="N",
                    help="list every function over N lines, longest first")
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()

    errors = []
    listing = []
    for path in sources(args.paths):
        with open(path, encoding="utf-8", errors="replace") as f:
            src = f.read()
        try:
            lines, functions = scan(path, src)
        except ValueError as e:
            errors.append(str(e))
            continue
        if args.list is not None:
            listing += [(n, "%s:%d: %s: %d lines" % (path, start, name, n))
                        for start, name, n in functions if n > args.list]
            continue
        if lines > args.max_file_lines:
            errors.append("%s:1: error: file has %d lines (limit %d)" %
                          (path, lines, args.max_file_lines))
        for start, name, n in functions:
            if n > args.max_function_lines:
                errors.append("%s:%d: error: function '%s' has %d lines "
                              "(limit %d)" % (path, start, name, n,
                                              args.max_function_lines))
    if args.list is not None:
        for _, text in sorted(listing, key=lambda x: -x[0]):
            print(text)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
