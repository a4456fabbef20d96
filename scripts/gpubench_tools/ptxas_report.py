"""ptxas -v output, read per kernel, and a CUDA 12 build's judged against the tests' own (nvcc 13)
build of the same PTX (scripts/cuda12_device_check.py): an older ptxas may assemble a kernel and
still spill it, give it other registers or serialise its tensor-core instructions."""
from __future__ import annotations

import re
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
