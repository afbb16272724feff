#!/usr/bin/env python3
"""Rewrites each inline-PTX statement of a kernel header as a call the CPU
emulations define: asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" :
"=r"(st) : "l"(p) : "memory") becomes emu_ld_acquire_gpu_global_u32(st, p);
(outputs first, by reference, then inputs). Everything else is copied as
it is, so the emulation runs the header's own logic.
Usage: host_asm.py kernels/block/lookback.cuh > /tmp/lookback_host.cuh"""
import re
import sys


def split_top(s, sep):
    """Splits s at sep outside parentheses and string literals."""
    parts, depth, cur, i, in_str = [], 0, "", 0, False
    while i < len(s):
        c = s[i]
        if in_str:
            cur += c
            if c == "\\":
                cur += s[i + 1]
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            cur += c
        elif c == "(":
            depth += 1
            cur += c
        elif c == ")":
            depth -= 1
            cur += c
        elif c == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    parts.append(cur)
    return parts


def operands(part):
    out = []
    for op in split_top(part, ","):
        op = op.strip()
        if not op:
            continue
        m = re.match(r'^"[^"]*"\s*\((.*)\)$', op, re.S)
        if not m:
            sys.exit(f"host_asm.py: cannot read operand {op!r}")
        out.append(m.group(1).strip())
    return out


def rewrite(src):
    out, pos = "", 0
    for m in re.finditer(r"\basm\s+volatile\s*\(|\basm\s*\(", src):
        if m.start() < pos:
            continue
        # the statement's closing parenthesis
        depth, i, in_str = 1, m.end(), False
        while depth:
            c = src[i]
            if in_str:
                if c == "\\":
                    i += 1
                elif c == '"':
                    in_str = False
            elif c == '"':
                in_str = True
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            i += 1
        body = src[m.end() : i - 1]
        parts = split_top(body, ":")
        template = "".join(re.findall(r'"([^"]*)"', parts[0]))
        instr = template.split()[0]
        outs = operands(parts[1]) if len(parts) > 1 else []
        ins = operands(parts[2]) if len(parts) > 2 else []
        name = "emu_" + instr.replace(".", "_").replace(":", "_")
        out += src[pos : m.start()] + f"{name}({', '.join(outs + ins)})"
        pos = i
    return out + src[pos:]


if __name__ == "__main__":
    sys.stdout.write(rewrite(open(sys.argv[1]).read()))
