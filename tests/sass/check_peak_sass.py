#!/usr/bin/env python3
"""Checks the SASS of gpubench's peak kernels: each kernel's main loop must hold the instruction
it claims to measure, as many times as the source issues per loop body, for every architecture
the build compiled. A loop that the compiler emptied (operands proven constant, the product
hoisted out: sm_90's emulated fp8 mma.sync became 32 FADDs and 2 HMMAs) fails here, at build
time, instead of reporting a peak that no instruction ran.

usage: check_peak_sass.py CUOBJDUMP LIBRARY...   (exit 0: all good, 1: a check failed, 77: no
cuobjdump/nvdisasm to read the SASS with)"""
import collections
import re
import subprocess
import sys

# (mangled-name fragment, description, opcode test, minimum count in the main loop).
# The minima are the source's work per unrolled loop body: FMA chains 8 chains x unroll
# (kUnroll in peak.cu: 4 for fp64, 8 otherwise); mma.sync 4 accumulators x unroll 2; the
# Hopper wgmma loops (peak_wgmma.cu, one per Tensor Core type) 4 per iteration.
FMA = "fma_chainILNS0_7FmaTypeE{}E"
MMA = "mma_kernelILNS0_7MmaTypeE{}E"


def op_is(name, exclude=()):
    return lambda op: (op == name or op.startswith(name + ".")) and not any(x in op for x in exclude)


EXPECT = [
    (FMA.format(0), "fma_fp64", "DFMA", op_is("DFMA"), 32),
    (FMA.format(1), "fma_fp32", "FFMA", op_is("FFMA"), 64),
    (FMA.format(2), "fma_fp16x2", "HFMA2", op_is("HFMA2", ("BF16",)), 64),
    (FMA.format(3), "fma_bf16x2", "HFMA2.BF16", lambda op: op.startswith("HFMA2.BF16"), 64),
    # mad.lo.u32: IMAD proper, not the IMAD.MOV/.SHL/.WIDE/.IADD forms ptxas uses for moves
    (FMA.format(4), "fma_int32", "IMAD", lambda op: op == "IMAD", 64),
    (MMA.format(0), "mma_fp16", "HMMA.16816.F32", lambda op: op == "HMMA.16816.F32", 8),
    (MMA.format(1), "mma_bf16", "HMMA.16816.F32.BF16", op_is("HMMA.16816.F32.BF16"), 8),
    (MMA.format(2), "mma_tf32", "HMMA.1688.F32.TF32", op_is("HMMA.1688.F32.TF32"), 8),
    (MMA.format(3), "mma_int8", "IMMA.16832.S8.S8", op_is("IMMA.16832.S8.S8"), 8),
]
FP8_MMA = MMA.format(4)
FP8_NATIVE_ARCHS = {"sm_89", "sm_120", "sm_120a", "sm_121", "sm_121a"}
WGMMA = "wgmma_peak_kernelILNS0_7MmaTypeE{}E"
# (MmaType, case, opcode, test): every sm_90a wgmma peak loop holds 4 of its GMMA per iteration.
WGMMA_EXPECT = [
    (0, "mma_fp16", "HGMMA.64x256x16.F32", lambda op: op == "HGMMA.64x256x16.F32"),
    (1, "mma_bf16", "HGMMA.64x256x16 BF16", op_is("HGMMA.64x256x16.F32.BF16")),
    (2, "mma_tf32", "HGMMA.64x256x8 TF32", op_is("HGMMA.64x256x8.F32.TF32")),
    (3, "mma_int8", "IGMMA.64x256x32 S8", op_is("IGMMA.64x256x32.S8.S8")),
    (4, "mma_fp8", "QGMMA.64x256x32 E4M3", op_is("QGMMA.64x256x32.F32.E4M3.E4M3")),
]


def parse(text):
    """{(arch, function): [(address, opcode, text)]}"""
    funcs = collections.OrderedDict()
    arch, fn = None, None
    for line in text.splitlines():
        m = re.match(r"\s*arch = (sm_\w+)", line)
        if m:
            arch = m.group(1)
            continue
        m = re.search(r"Function : (\S+)", line)
        if m:
            fn = (arch, m.group(1))
            funcs[fn] = []
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if m and fn:
            body = m.group(2)
            words = body.split()
            op = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
            funcs[fn].append((int(m.group(1), 16), op, body))
    return funcs


def loops(ins):
    """Bodies of backward branches (a branch to itself, the trap loop at the end, is not a loop)."""
    out = []
    for addr, op, body in ins:
        # "BRA 0x1230", "@P0 BRA 0x1230", "BRA.U UP0, 0x1230" (sm_100 and newer)
        m = re.search(r"\bBRA(?:\.\S+)?\s+(?:!?U?P\w+,\s*)?0x([0-9a-f]+)", body)
        if op.startswith("BRA") and m:
            target = int(m.group(1), 16)
            if target < addr:
                out.append([(a, o) for a, o, _ in ins if target <= a <= addr])
    return out


def best_count(ins, test):
    return max([sum(1 for _, o in body if test(o)) for body in loops(ins)] or [0])


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    cuobjdump, libs = sys.argv[1], sys.argv[2:]
    funcs = collections.OrderedDict()
    for lib in libs:
        try:
            r = subprocess.run([cuobjdump, "-sass", lib], capture_output=True, text=True, check=False)
        except OSError as e:
            print(f"SKIP: cannot run {cuobjdump}: {e}")
            return 77
        if r.returncode != 0 or "nvdisasm" in r.stderr:
            print(f"SKIP: {cuobjdump} -sass {lib} failed: {r.stderr.strip()}")
            return 77
        funcs.update(parse(r.stdout))

    failures = []
    archs = sorted({a for a, f in funcs if "peak_cu" in f})
    if not archs:
        failures.append("no peak kernels (peak.cu) found in " + " ".join(libs))
    for arch in archs:
        for frag, case, opname, test, minimum in EXPECT:
            found = [ins for (a, f), ins in funcs.items() if a == arch and frag in f]
            if not found:
                failures.append(f"{arch} {case}: kernel {frag} not found")
                continue
            n = best_count(found[0], test)
            ok = n >= minimum
            print(f"{arch:8} {case:12} {opname:22} {n:3} in the main loop (need {minimum}) {'ok' if ok else 'FAIL'}")
            if not ok:
                failures.append(f"{arch} {case}: {n} {opname} in the main loop, expected at least {minimum}")
        # fp8 mma.sync: native QMMA where it exists; elsewhere the kernel must be the stub that the
        # host never runs (no loop of emulation: no FADD or HMMA in any loop).
        found = [ins for (a, f), ins in funcs.items() if a == arch and FP8_MMA in f]
        if not found:
            failures.append(f"{arch} mma_fp8: kernel not found")
        elif arch in FP8_NATIVE_ARCHS:
            n = best_count(found[0], op_is("QMMA"))
            ok = n >= 8
            print(f"{arch:8} {'mma_fp8':12} {'QMMA':22} {n:3} in the main loop (need 8) {'ok' if ok else 'FAIL'}")
            if not ok:
                failures.append(f"{arch} mma_fp8: {n} QMMA in the main loop, expected at least 8")
        else:
            n = best_count(found[0], lambda o: o.startswith(("FADD", "HMMA", "HFMA2")))
            ok = n == 0
            print(f"{arch:8} {'mma_fp8':12} {'stub, no emulation':22} {n:3} FADD/HMMA in loops (need 0) {'ok' if ok else 'FAIL'}")
            if not ok:
                failures.append(f"{arch} mma_fp8: an emulated fp8 loop ({n} FADD/HMMA) where the kernel must be a stub")

    if any(a == "sm_90a" for a, _ in funcs):
        for index, case, opname, test in WGMMA_EXPECT:
            found = [ins for (a, f), ins in funcs.items() if a == "sm_90a" and WGMMA.format(index) in f]
            if not found:
                failures.append(f"the build has sm_90a code but no sm_90a wgmma {case} peak kernel")
                continue
            n = best_count(found[0], test)
            fadd = best_count(found[0], op_is("FADD"))
            ok = n >= 4 and fadd == 0
            print(f"{'sm_90a':8} {case:12} {opname:22} {n:3} in the main loop (need 4), {fadd} FADD {'ok' if ok else 'FAIL'}")
            if not ok:
                failures.append(f"sm_90a wgmma {case}: {n} {opname} (need 4) and {fadd} FADD (need 0) in the main loop")

    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
