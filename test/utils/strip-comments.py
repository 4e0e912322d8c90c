#!/usr/bin/env python3
"""Copies a C, C++ or CUDA source without its comments, line for line.

A source-to-source test's input carries its own RUN and CHECK lines as
comments, and the rewriter copies comments into its output: FileCheck would
then find each pattern in its own line and the test could not fail. The
tests rewrite this copy instead, so that the output holds only what the
rewriter made of the code (and the comments it writes itself).

Every line stays where it was (a comment's newlines are kept, a line that
held only a comment becomes empty), so @LINE, #line markers and diagnostics
keep the input's line numbers. String and character literals, raw strings
included, are copied as they are.

usage: strip-comments.py INPUT OUTPUT   (OUTPUT's directory is created)
"""
import os
import re
import sys


def drop_trailing_blanks(out):
    while out and out[-1] in " \t":
        out.pop()


def strip(text):
    out = []
    i, n = 0, len(text)
    while i < n:
        if text.startswith("//", i):
            # A line comment ends at a newline not escaped by a backslash;
            # the blanks before it go too.
            drop_trailing_blanks(out)
            while i < n and text[i] != "\n":
                if text.startswith("\\\n", i):
                    out.append("\n")
                    i += 1
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise ValueError("unterminated /* comment")
            newlines = text.count("\n", i, end)
            if newlines:
                drop_trailing_blanks(out)
            # Between tokens a comment separates them, as a space does.
            out.append("\n" * newlines if newlines else " ")
            i = end + 2
        elif text[i] == '"':
            i = copy_string(text, i, out)
        elif text[i] == "'" and not digit_separator(text, i):
            i = copy_quoted(text, i, "'", out)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def digit_separator(text, i):
    """Whether the quote at i separates digits of a number (1'000'000)."""
    m = re.search(r"[A-Za-z0-9_.']+$", text[max(0, i - 64):i])
    return bool(m) and m.group(0)[0].isdigit()


def copy_string(text, i, out):
    m = re.search(r"(?<![A-Za-z0-9_])(?:u8|u|U|L)?R$", text[max(0, i - 4):i])
    if not m:
        return copy_quoted(text, i, '"', out)
    # A raw string R"d(...)d" ends only at its own delimiter.
    paren = text.find("(", i)
    close = text.find(")" + text[i + 1:paren] + '"', paren) if paren >= 0 \
        else -1
    if close < 0:
        raise ValueError("unterminated raw string at offset %d" % i)
    close += paren - i + 1
    out.append(text[i:close])
    return close


def copy_quoted(text, i, quote, out):
    j = i + 1
    while j < len(text) and text[j] != quote:
        if text[j] == "\n":
            raise ValueError("unterminated literal at offset %d" % i)
        j += 2 if text[j] == "\\" else 1
    out.append(text[i:j + 1])
    return j + 1


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        text = f.read()
    try:
        stripped = strip(text)
    except ValueError as e:
        sys.stderr.write("%s: %s\n" % (argv[1], e))
        return 1
    os.makedirs(os.path.dirname(os.path.abspath(argv[2])), exist_ok=True)
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write(stripped)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
