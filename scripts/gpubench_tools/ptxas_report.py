"""What ptxas made of a PTX file - its -v report and the warpgroup synchronisation of the SASS - read
per kernel, and a CUDA 12 build's judged against the tests' own (nvcc 13) build of the same PTX
(scripts/cuda12_device_check.py): an older ptxas may assemble a kernel and still spill it, give
it other registers or serialise its tensor-core instructions."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_PROPERTIES = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_REGISTERS = re.compile(r"Used (\d+) registers")
#: ptxas's performance advisories, e.g. "(C7515) Potential Performance Loss: wgmma.mma_async
#: instructions are serialized ... in the function 'NAME'".
_ADVISORY = re.compile(r"Potential Performance Loss")


@dataclass
class Kernel:
    registers: int = -1
    stack_bytes: int = 0
    spill_bytes: int = 0  # stores + loads


@dataclass
class Report:
    kernels: dict[str, Kernel] = field(default_factory=dict)
    advisories: list[str] = field(default_factory=list)


def parse(text: str) -> Report:
    """The kernels (entry functions) of a ptxas -v output and its performance advisories."""
    report = Report()
    entry = None  # the entry whose lines follow
    properties_of = None  # the function of the last "Function properties for" line
    for line in text.splitlines():
        if _ADVISORY.search(line):
            report.advisories.append(line.split(":", 1)[-1].strip() if "ptxas" in line else line.strip())
            continue
        m = _ENTRY.search(line)
        if m:
            entry = m.group(1)
            report.kernels[entry] = Kernel()
            continue
        m = _PROPERTIES.search(line)
        if m:
            properties_of = m.group(1)
            continue
        m = _FRAME.search(line)
        if m and properties_of in report.kernels:
            k = report.kernels[properties_of]
            k.stack_bytes, k.spill_bytes = int(m.group(1)), int(m.group(2)) + int(m.group(3))
            continue
        m = _REGISTERS.search(line)
        if m and entry in report.kernels:
            report.kernels[entry].registers = int(m.group(1))
    return report


def judge(cuda12: Report, reference: Report | None, fixed_registers: set[str]) -> list[str]:
    """Why a CUDA 12 build of a PTX file is worse than the reference build of it, one line per
    finding: every performance advisory; and against the reference, a kernel missing, spilling
    more or with a stack frame it had not, or - for the kernels in `fixed_registers`, whose
    setmaxnreg targets were computed from their register count at entry - other registers."""
    found = [f"ptxas advisory: {a}" for a in cuda12.advisories]
    if reference is None:
        return found
    for name, ref in reference.kernels.items():
        mine = cuda12.kernels.get(name)
        if mine is None:
            found.append(f"{name}: not built")
            continue
        if mine.spill_bytes > ref.spill_bytes:
            found.append(f"{name}: {mine.spill_bytes} bytes of spills, {ref.spill_bytes} in the reference build")
        if mine.stack_bytes > 0 and ref.stack_bytes == 0:
            found.append(f"{name}: a stack frame of {mine.stack_bytes} bytes, none in the reference build")
        if name in fixed_registers and mine.registers != ref.registers:
            found.append(f"{name}: {mine.registers} registers at entry, {ref.registers} in the reference build "
                         "(its setmaxnreg targets need exactly those)")
    return found


#: SASS of the wgmma pipeline, counted per kernel: the warpgroup fences before wgmma, the waits on
#: them, and the wgmma that close a group (gsb0). A serialised build fences and waits around
#: every HGMMA (CUDA 12.0's ptxas on the Hopper GEMM before its accumulators were zeroed: 4
#: ARRIVE, 4 DEPBAR.LE gsb0, 0x0 per stage where nvcc 13 has 1 ARRIVE and a DEPBAR.LE 0x1).
SASS_SHAPE = {
    "WARPGROUP.ARRIVE": re.compile(r"\bWARPGROUP\.ARRIVE\b"),
    "WARPGROUP.DEPBAR": re.compile(r"\bWARPGROUP\.DEPBAR\b"),
    "HGMMA closing a group (gsb0)": re.compile(r"\bHGMMA\..*\bgsb0\b"),
}
_SASS_FUNCTION = re.compile(r"^//-+ \.text\.(\S+)\s+-+$")


def sass_shape(listing: str) -> dict[str, Counter]:
    """Per kernel of an nvdisasm -c listing, how many lines match each SASS_SHAPE pattern."""
    shapes: dict[str, Counter] = {}
    current = None
    for line in listing.splitlines():
        m = _SASS_FUNCTION.match(line.strip())
        if m:
            current = shapes.setdefault(m.group(1), Counter())
            continue
        if current is not None:
            for name, pattern in SASS_SHAPE.items():
                if pattern.search(line):
                    current[name] += 1
    return shapes


def judge_sass(cuda12: dict[str, Counter], reference: dict[str, Counter]) -> list[str]:
    """One line per kernel of the reference whose warpgroup synchronisation the CUDA 12 build
    does not reproduce (its wgmma fenced or waited on differently: serialised, or pipelined
    otherwise than written)."""
    found = []
    for kernel, ref in reference.items():
        mine = cuda12.get(kernel, Counter())
        diff = [f"{name} {mine[name]} (reference {ref[name]})" for name in SASS_SHAPE if mine[name] != ref[name]]
        if diff:
            found.append(f"{kernel}: SASS " + ", ".join(diff))
    return found
