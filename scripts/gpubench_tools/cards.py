"""The card table: datasheet peaks of known GPUs, read from harness/model/cards.csv.

That CSV is the one source of truth: the C++ harness embeds it at build time and this module
reads the same file (never a copy), so the roofline the scripts draw for a card is the one the
harness used for its percent-of-peak figures.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError

#: Repository root (scripts/gpubench_tools/ is two levels below it).
REPO_ROOT = Path(__file__).resolve().parents[2]
#: The card table shared with the C++ harness.
CARDS_CSV = REPO_ROOT / "harness" / "model" / "cards.csv"

_HEADER = [
    "key", "display_name", "match", "cc", "sm_count", "fp32_TFLOPS", "fp16_tensor_TFLOPS",
    "dram_GBps", "l2_MiB", "pcie_gen", "pcie_width", "source",
]


def pcie_GBps_per_direction(gen: int, width: int) -> float:
    """Per-direction bandwidth of a PCIe link in GB/s; 0 when unknown.

    GT/s per lane x lanes x line-code efficiency / 8: Gen1-2 use 8b/10b, Gen3-5 128b/130b,
    Gen6 (PAM4, FLIT mode) has no such code. Same formula as harness/model/device.cpp.
    """
    rates = {1: (2.5, 0.8), 2: (5.0, 0.8), 3: (8.0, 128 / 130), 4: (16.0, 128 / 130),
             5: (32.0, 128 / 130), 6: (64.0, 1.0)}
    if width <= 0 or gen not in rates:
        return 0.0
    gts, efficiency = rates[gen]
    return gts * width * efficiency / 8.0


@dataclass(frozen=True)
class Card:
    """One row of cards.csv (dense datasheet peaks)."""

    key: str
    display_name: str
    match: str  #: regular expression matched (case-insensitive) against the driver's device name
    cc: str
    sm_count: int
    fp32_TFLOPS: float
    fp16_tensor_TFLOPS: float
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
    def l2_bytes(self) -> float:
        """L2 size in bytes."""
        return self.l2_MiB * 1024 * 1024


def load_cards(path: Path | str = CARDS_CSV) -> list[Card]:
    """Parses cards.csv; raises UsageError naming the file and line on a malformed table."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise UsageError(f"{path}: cannot read the card table ({e.strerror})") from None
    rows = list(csv.reader(text.splitlines()))
    if not rows or rows[0] != _HEADER:
        raise UsageError(f"{path}: unexpected header (want {','.join(_HEADER)})")
    cards = []
    for line_no, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(_HEADER):
            raise UsageError(f"{path}:{line_no}: expected {len(_HEADER)} fields, got {len(row)}")
        try:
            cards.append(Card(
                key=row[0], display_name=row[1], match=row[2], cc=row[3], sm_count=int(row[4]),
                fp32_TFLOPS=float(row[5]), fp16_tensor_TFLOPS=float(row[6]),
                dram_GBps=float(row[7]), l2_MiB=float(row[8]), pcie_gen=int(row[9]),
                pcie_width=int(row[10]), source=row[11]))
        except ValueError as e:
            raise UsageError(f"{path}:{line_no}: {e}") from None
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
