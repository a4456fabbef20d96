"""The card table: datasheet peaks of known GPUs, read from harness/model/cards.csv.

That CSV is the one source of truth: the C++ harness embeds it at build time and this module
reads the same file (never a copy), so the roofline the scripts draw for a card is the one the
harness used for its percent-of-peak figures.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError
from .inputs import read_input

#: Repository root (scripts/gpubench_tools/ is two levels below it).
REPO_ROOT = Path(__file__).resolve().parents[2]
#: The card table shared with the C++ harness: beside the tools in an installed copy
#: (`cmake --install`: bin/cards.csv), else in the source tree.
_INSTALLED_CARDS = Path(__file__).resolve().parents[1] / "cards.csv"
CARDS_CSV = _INSTALLED_CARDS if _INSTALLED_CARDS.is_file() else REPO_ROOT / "harness" / "model" / "cards.csv"

_HEADER = [
    "key", "display_name", "match", "cc", "sm_count", "fp32_TFLOPS", "fp16_tensor_TFLOPS",
    "bf16_tensor_TFLOPS", "fp8_tensor_TFLOPS", "dram_GBps", "l2_MiB", "pcie_gen", "pcie_width",
    "source",
]


def pcie_GBps_per_direction(gen: int, width: int) -> float:
    """Per-direction bandwidth of a PCIe link in GB/s; 0 when unknown.

    GT/s per lane x lanes x line-code efficiency / 8: Gen1-2 use 8b/10b, Gen3-5 128b/130b,
    Gen6 (PAM4, FLIT mode) has no such code but spends 14 bytes of every 256-byte flit on FEC and
    CRC. Same formula as harness/model/device.cpp.
    """
    rates = {1: (2.5, 0.8), 2: (5.0, 0.8), 3: (8.0, 128 / 130), 4: (16.0, 128 / 130),
             5: (32.0, 128 / 130), 6: (64.0, 242 / 256)}
    if width <= 0 or gen not in rates:
        return 0.0
    gts, efficiency = rates[gen]
    return gts * width * efficiency / 8.0


#: FP32 FLOP per clock per SM by compute capability, as fp32_flop_per_clock_per_sm() in
#: harness/model/device.cpp has them (harness/model/REFERENCE_FIGURES.md, "FLOP per clock per SM").
FP32_FLOP_PER_CLOCK_PER_SM = {"7.5": 128, "8.0": 128, "8.6": 256, "8.7": 256, "8.9": 256,
                              "9.0": 256, "10.0": 256, "10.3": 256, "12.0": 256}

#: Shared-memory bytes per clock per SM: 32 banks x 4 bytes (harness/model/REFERENCE_FIGURES.md:
#: sm_80/sm_90; the harness's smem_peak_GBps() applies it from compute capability 7.0 on).
SMEM_BYTES_PER_CLOCK_PER_SM = 128

#: Non-tensor FP16x2 (half2 FMA, `fma.rn.f16x2`) throughput as a multiple of the FP32 peak, for
#: the architectures where NVIDIA documents both figures; every other architecture has no
#: FP16x2 ceiling (not documented here, so not drawn):
#: - 8.0: 4x. A100 whitepaper, Table 1, and NVIDIA's "Hopper architecture in depth" blog,
#:   Table 3: "Peak FP16 TFLOPS (non-Tensor)" 78 against "Peak FP32 TFLOPS (non-Tensor)" 19.5
#:   (NVIDIA on its forum: A100's FP16 non-tensor throughput "can be 4x the FP32 throughput").
#: - 9.0: 2x. H100 whitepaper: H100 SXM5 FP16 (non-tensor) 133.8 against FP32 66.9 TFLOPS (the
#:   blog's table, with preliminary clocks: 120 against 60; H100 PCIe 96 against 48).
#: Measured here (results/h100_*/VALIDATION.md): the FP16x2 intensity sweep reaches 128.5
#: TFLOPS on an H100 SXM, 96 % of 2 x 66.9.
FP16X2_PER_FP32 = {"8.0": 4.0, "9.0": 2.0}


def normal_cc(cc) -> str:
    """A compute capability as the tables key it ("9.0"; 9 -> "9.0"); "" when unknown."""
    try:
        v = float(str(cc).strip())
    except ValueError:
        return ""
    return f"{v:.1f}" if v > 0 else ""


def fp16x2_TFLOPS(cc, fp32_TFLOPS: float | None) -> float:
    """The non-tensor FP16x2 peak: FP16X2_PER_FP32 x the FP32 peak; 0 when unknown."""
    ratio = FP16X2_PER_FP32.get(normal_cc(cc), 0.0)
    return ratio * fp32_TFLOPS if fp32_TFLOPS and fp32_TFLOPS > 0 else 0.0


@dataclass(frozen=True)
class Card:
    """One row of cards.csv (dense datasheet peaks)."""

    key: str
    display_name: str
    match: str  #: regular expression matched (case-insensitive) against the driver's device name
    cc: str
    sm_count: int
    fp32_TFLOPS: float
    fp16_tensor_TFLOPS: float  #: dense, FP32 accumulate
    bf16_tensor_TFLOPS: float  #: dense, FP32 accumulate (the FP16 figure on every card listed)
    fp8_tensor_TFLOPS: float  #: dense (no sparsity), FP32 accumulate; 0: no FP8 tensor cores
    dram_GBps: float
    l2_MiB: float
    pcie_gen: int
    pcie_width: int
    source: str

    @property
    def pcie_GBps(self) -> float:
        """Per-direction bandwidth of the card's nominal host link."""
        return pcie_GBps_per_direction(self.pcie_gen, self.pcie_width)

    @property
    def fp16x2_TFLOPS(self) -> float:
        """Non-tensor FP16x2 peak derived from the FP32 figure (FP16X2_PER_FP32); 0 where the
        architecture's ratio is not documented."""
        return fp16x2_TFLOPS(self.cc, self.fp32_TFLOPS)

    @property
    def smem_GBps(self) -> float:
        """Shared-memory peak: SMEM_BYTES_PER_CLOCK_PER_SM x SMs x the clock of the datasheet
        FP32 figure (fp32_TFLOPS / (SMs x FP32 FLOP per clock per SM), e.g. H100 SXM: 66.9 TF /
        (132 x 256) = 1.98 GHz -> 33.4 TB/s), the formula the harness applies to the device's own
        clock (peak_smem_GBps in a result's context); 0 for an architecture the FLOP table
        lacks."""
        per_sm = FP32_FLOP_PER_CLOCK_PER_SM.get(normal_cc(self.cc), 0)
        if per_sm <= 0 or self.sm_count <= 0 or self.fp32_TFLOPS <= 0:
            return 0.0
        clock_Hz = self.fp32_TFLOPS * 1e12 / (self.sm_count * per_sm)
        return SMEM_BYTES_PER_CLOCK_PER_SM * self.sm_count * clock_Hz / 1e9

    @property
    def l2_bytes(self) -> float:
        """L2 size in bytes."""
        return self.l2_MiB * 1024 * 1024


#: The range of each numeric column, as (lowest, highest, whether 0 is allowed, what it is): far
#: beyond any card at both ends, as results.CONTEXT_NUMBER_RANGES bounds a result's peaks. Beyond
#: them the tools' arithmetic overflows (a peak of 1e308 TFLOPS) or a roof is silently dropped (a
#: negative one). 0 is meaningful only where the table uses it: FP8 on cards without FP8 tensor
#: cores, and an unknown PCIe link (pcie_GBps_per_direction gives 0 for it).
_PEAK = (1e-3, 1e9, False, "a peak is from 0.001 to 1e9 GB/s or TFLOPS")
_COLUMN_RANGES = {
    "cc": (1.0, 99.9, False, "a compute capability is from 1.0 to 99.9"),
    "sm_count": (1, 100000, False, "an SM count is an integer from 1 to 100000"),
    "fp32_TFLOPS": _PEAK, "fp16_tensor_TFLOPS": _PEAK, "bf16_tensor_TFLOPS": _PEAK,
    "fp8_tensor_TFLOPS": (1e-3, 1e9, True, "a peak is from 0.001 to 1e9 TFLOPS, or 0 for a card "
                                            "without FP8 tensor cores"),
    "dram_GBps": _PEAK,
    "l2_MiB": (1e-6, 1e9, False, "an L2 holds from 1e-6 to 1e9 MiB"),
    "pcie_gen": (1, 6, True, "a PCIe generation is an integer from 1 to 6, or 0 for unknown"),
    "pcie_width": (1, 32, True, "a PCIe link width is an integer from 1 to 32 lanes, or 0 for unknown"),
}
_INT_COLUMNS = ("sm_count", "pcie_gen", "pcie_width")


def _column_number(text: str, column: str, where: str):
    """The value of a numeric column; UsageError naming the file, line and column when it is not
    a number, not finite, or beyond _COLUMN_RANGES (e.g. nan was drawn as "FP32 nan TFLOP/s")."""
    lo, hi, zero_ok, what = _COLUMN_RANGES[column]
    try:
        number = int(text) if column in _INT_COLUMNS else float(text)
    except ValueError:
        kind = "an integer" if column in _INT_COLUMNS else "a number"
        raise UsageError(f"{where}: column {column} = {text[:40]!r} is not {kind}") from None
    if number == 0 and zero_ok:
        return number
    if not math.isfinite(number):
        raise UsageError(f"{where}: column {column} = {number} is not a finite number ({what})")
    if not lo <= number <= hi:
        shown = f"{number:g}" if isinstance(number, float) or abs(number) < 10 ** 30 else repr(text[:40])
        raise UsageError(f"{where}: column {column} = {shown} is out of range ({what})")
    return number


def load_cards(path: Path | str = CARDS_CSV) -> list[Card]:
    """Parses cards.csv; raises UsageError naming the file, line and column on a malformed
    table."""
    path = Path(path)
    try:
        text = read_input(path, "card table").decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"{path}: cannot read the card table ({e})") from None
    rows = list(csv.reader(text.splitlines()))
    if not rows or rows[0] != _HEADER:
        raise UsageError(f"{path}: unexpected header (want {','.join(_HEADER)})")
    cards = []
    first_line: dict[str, int] = {}  # key -> the line that defined it
    for line_no, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(_HEADER):
            raise UsageError(f"{path}:{line_no}: expected {len(_HEADER)} fields, got {len(row)}")
        fields = dict(zip(_HEADER, row))
        for column in _COLUMN_RANGES:
            _column_number(fields[column], column, f"{path}:{line_no}")
        try:  # (a bad expression raised re.error at the first device-name look-up)
            re.compile(fields["match"])
        except re.error as e:
            raise UsageError(f"{path}:{line_no}: column match = {fields['match'][:40]!r} is not a "
                             f"regular expression ({e})") from None
        if row[0] in first_line:  # which of the two rows would win is undefined
            raise UsageError(f"{path}:{line_no}: card key {row[0]!r} is already defined on line "
                             f"{first_line[row[0]]}")
        first_line[row[0]] = line_no
        cards.append(Card(
            key=row[0], display_name=row[1], match=row[2], cc=row[3], sm_count=int(row[4]),
            fp32_TFLOPS=float(row[5]), fp16_tensor_TFLOPS=float(row[6]),
            bf16_tensor_TFLOPS=float(row[7]), fp8_tensor_TFLOPS=float(row[8]),
            dram_GBps=float(row[9]), l2_MiB=float(row[10]), pcie_gen=int(row[11]),
            pcie_width=int(row[12]), source=row[13]))
    if not cards:
        raise UsageError(f"{path}: the card table is empty (a header and no card)")
    return cards


def known_card_keys(cards: list[Card]) -> str:
    """The keys as one comma-separated line, for error messages."""
    return ", ".join(c.key for c in cards)


def find_card(name: str, cards: list[Card]) -> Card:
    """The card named by key, display name or device name; UsageError listing the known keys."""
    wanted = name.strip().lower()
    for c in cards:
        if wanted in (c.key.lower(), c.display_name.lower()):
            return c
    found = find_card_by_device_name(name, cards)
    if found is not None:
        return found
    raise UsageError(f"unknown card '{name}'; known cards: {known_card_keys(cards)}")


def find_card_by_device_name(device_name: str, cards: list[Card]) -> Card | None:
    """The first card whose `match` expression is found in the driver's device name.

    Mirrors find_card_by_device_name() in harness/model/card_table.cpp (ECMAScript regex,
    case-insensitive search); the expressions in the table use only syntax both engines share.
    """
    for c in cards:
        if c.match and re.search(c.match, device_name, re.IGNORECASE):
            return c
    return None
