#!/usr/bin/env python3
"""Adds hand-made experimental entries to a PTX module (run by gen_ptx.sh).

    make_variants.py FILE.ptx KERNEL_NAME [--nodecode]

For the entry KERNEL_NAME (the original kernel, as `cleave compile
--emit=ptx` printed it) this appends, to the same module:

  __cleave_box_K(original params..., u32 first.x, first.y, first.z,
                 u32 grid.x, grid.y, grid.z)
      the original's body where every `%ctaid.D` read becomes
      `%ctaid.D + first.D` and every `%nctaid.D` read becomes `grid.D`.
      Launched as a 3-D grid (a box of the original grid): no division, one
      add per block index the kernel reads. A contiguous linear range of
      blocks is at most 3 boxes in a 2-D grid and 5 in a 3-D one.

  __cleave_rows_K(original params..., u32 first, u32 count, u32 first.y,
                  u32 grid.x, grid.y, grid.z)          (2-D grids only)
      the original's body launched as a 2-D grid (grid.x, rows): the rows
      that hold linear blocks [first, first + count); a block whose linear
      index (ctaid.x + grid.x * (ctaid.y + first.y)) is outside the range
      returns at once (SKMD's prologue). One launch per range, blockIdx.x
      free, blockIdx.y one add, at most 2 * (grid.x - 1) idle blocks.

  __cleave_boxr_K (reduction and transpose only): the box convention with
      the offset reassociated by hand into the thread-index term (boxr()).

  __cleave_nd_K (with --nodecode; 1-D kernels): the original's body with the
      twelve partition parameters, unread: what the extra parameters cost.

These are measurement aids, not compiler output: they show what a different
calling convention would cost. The body is the original's PTX unchanged
apart from the index reads, so the difference against the original is the
convention alone.
"""
import re
import sys


def extract(text, name):
    start = text.index(f".visible .entry {name}(")
    end = text.index("\n}\n", start) + 3
    return text[start:end]


def rename(body, name, new):
    body = body.replace(name + "_param_", new + "_param_")
    return body.replace(f".entry {name}(", f".entry {new}(")


def add_params(body, new, names):
    n = len(re.findall(r"\.param ", body[: body.index(")")]))
    extra = "".join(f",\n\t.param .u32 {new}_param_{n + i}" for i in range(len(names)))
    close = body.index("\n)")
    body = body[:close] + extra + body[close:]
    return body, {nm: f"{new}_param_{n + i}" for i, nm in enumerate(names)}


def add_regs(body, decl):
    # after the opening brace of the body
    brace = body.index("\n{\n") + 3
    return body[:brace] + decl + body[brace:]


MOV = re.compile(r"^(\s*)mov\.u32\s+(%r\d+),\s*%(n?ctaid)\.([xyz]);\s*$", re.M)


def box(text, name):
    new = "__cleave_box_" + name
    body = rename(extract(text, name), name, new)
    body, p = add_params(body, new, ["fx", "fy", "fz", "gx", "gy", "gz"])
    body = add_regs(body, "\t.reg .b32 \t%cbx<4>;\n")

    def sub(m):
        ind, reg, what, d = m.groups()
        if what == "nctaid":
            return f"{ind}ld.param.u32 \t{reg}, [{p['g' + d]}];"
        return (f"{ind}mov.u32 \t%cbx0, %ctaid.{d};\n"
                f"{ind}ld.param.u32 \t%cbx1, [{p['f' + d]}];\n"
                f"{ind}add.s32 \t{reg}, %cbx0, %cbx1;")

    body, n = MOV.subn(sub, body)
    if n == 0:
        raise SystemExit(f"{name}: no %ctaid/%nctaid reads found")
    return body


def rows(text, name):
    new = "__cleave_rows_" + name
    body = rename(extract(text, name), name, new)
    body, p = add_params(body, new, ["first", "count", "fy", "gx", "gy", "gz"])
    if re.search(r"%n?ctaid\.z", body):
        raise SystemExit(f"{name}: rows variant is for 2-D grids")
    body = add_regs(body, "\t.reg .b32 \t%crw<8>;\n\t.reg .pred \t%cpw<2>;\n")
    # Prologue right after the register declarations: linear index of this
    # block, relative to first; return unless below count.
    decl_end = max(m.end() for m in re.finditer(r"^\s*\.reg .*$", body, re.M))
    prologue = (
        f"\n\tmov.u32 \t%crw0, %ctaid.x;\n"
        f"\tmov.u32 \t%crw1, %ctaid.y;\n"
        f"\tld.param.u32 \t%crw2, [{p['fy']}];\n"
        f"\tld.param.u32 \t%crw3, [{p['gx']}];\n"
        f"\tadd.s32 \t%crw1, %crw1, %crw2;\n"
        f"\tmad.lo.s32 \t%crw4, %crw1, %crw3, %crw0;\n"
        f"\tld.param.u32 \t%crw5, [{p['first']}];\n"
        f"\tld.param.u32 \t%crw6, [{p['count']}];\n"
        f"\tsub.s32 \t%crw4, %crw4, %crw5;\n"
        f"\tsetp.ge.u32 \t%cpw0, %crw4, %crw6;\n"
        f"\t@%cpw0 ret;\n")
    body = body[:decl_end] + prologue + body[decl_end:]

    def sub(m):
        ind, reg, what, d = m.groups()
        if what == "nctaid":
            return f"{ind}ld.param.u32 \t{reg}, [{p['g' + d]}];"
        if d == "x":
            return m.group(0)
        return f"{ind}mov.u32 \t{reg}, %crw1;"

    body = MOV.sub(sub, body)
    return body


def boxr(text, name):
    """__cleave_boxr_K: the box convention with the offset reassociated by
    hand into the thread-index term, so that the add is off the path from
    the %ctaid read to the first address: for reduction
    i = 2*ntid*(ctaid + fx) + tid becomes 2*ntid*ctaid + (2*ntid*fx + tid);
    for transpose x = 32*(ctaid.x + fx) + tid.x becomes
    32*ctaid.x + (32*fx + tid.x), the same for y. Only for these two kernels
    (their PTX shapes are matched exactly; anything else fails loudly)."""
    new = "__cleave_boxr_" + name
    body = rename(extract(text, name), name, new)
    body, p = add_params(body, new, ["fx", "fy", "fz", "gx", "gy", "gz"])
    body = add_regs(body, "\t.reg .b32 \t%cbr<16>;\n")
    if name == "_Z10reduce_sumPKfPfi":
        m = re.search(r"mov\.u32\s+(%r\d+), %ctaid\.x;", body)
        c = m.group(1)
        body = body.replace(m.group(0),
            f"mov.u32 \t%cbr0, %ctaid.x;\n\tld.param.u32 \t%cbr1, [{p['fx']}];\n"
            f"\tadd.s32 \t{c}, %cbr0, %cbr1;", 1)
        m = re.search(r"mad\.lo\.s32\s+(%r\d+), (%r\d+), " + re.escape(c) +
                      r", (%r\d+);", body)
        d, a, t = m.groups()
        body = body.replace(m.group(0),
            f"mad.lo.s32 \t%cbr2, {a}, %cbr1, {t};\n"
            f"\tmad.lo.s32 \t{d}, {a}, %cbr0, %cbr2;", 1)
        return body
    if name == "_Z9transposePfPKfii":
        for dim, base in (("x", 0), ("y", 8)):
            f = p["f" + dim]
            m = re.search(r"mov\.u32\s+(%r\d+), %ctaid\." + dim +
                          r";\n\s*shl\.b32\s+(%r\d+), \1, 5;\n"
                          r"\s*mov\.u32\s+(%r\d+), %tid\." + dim +
                          r";\n\s*add\.s32\s+(%r\d+), \2, \3;", body)
            _, sh, tid, out = m.groups()
            r = [f"%cbr{base + i}" for i in range(6)]
            body = body.replace(m.group(0),
                f"mov.u32 \t{r[0]}, %ctaid.{dim};\n"
                f"\tld.param.u32 \t{r[1]}, [{f}];\n"
                f"\tshl.b32 \t{r[2]}, {r[1]}, 5;\n"
                f"\tmov.u32 \t{tid}, %tid.{dim};\n"
                f"\tadd.s32 \t{r[3]}, {tid}, {r[2]};\n"
                f"\tshl.b32 \t{r[4]}, {r[0]}, 5;\n"
                f"\tadd.s32 \t{out}, {r[4]}, {r[3]};\n"
                f"\tadd.s32 \t{sh}, {r[4]}, {r[2]};", 1)
        if re.search(r"%ctaid\.", body.replace("%ctaid.x;\n\tld", "").replace("%ctaid.y;\n\tld", "")):
            raise SystemExit(f"{name}: unexpected ctaid reads left")
        return body
    return None



def nodecode(text, name):
    new = "__cleave_nd_" + name
    body = rename(extract(text, name), name, new)
    body, _ = add_params(body, new, [f"p{i}" for i in range(12)])
    return body


def main():
    path, name = sys.argv[1], sys.argv[2]
    text = open(path).read()
    out = [text, "\n\t// .globl\t__cleave_box_" + name + "\n" + box(text, name)]
    if re.search(r"%ctaid\.y", extract(text, name)) and not re.search(
            r"%ctaid\.z", extract(text, name)):
        out.append("\n\t// .globl\t__cleave_rows_" + name + "\n" + rows(text, name))
    r = boxr(text, name)
    if r:
        out.append("\n\t// .globl\t__cleave_boxr_" + name + "\n" + r)
    if "--nodecode" in sys.argv[3:]:
        out.append("\n\t// .globl\t__cleave_nd_" + name + "\n" + nodecode(text, name))
    open(path, "w").write("".join(out))


if __name__ == "__main__":
    main()
