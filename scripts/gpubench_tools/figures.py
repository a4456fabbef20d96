"""What every figure of the tools shares (matplotlib is imported by the caller's figure code)."""

from __future__ import annotations


def literal_text(fig) -> None:
    """Draws every text of `fig` as written: matplotlib reads a string with two "$" as mathtext,
    and the figures carry text from the result files (a device or host name, a date, a link
    label), where "$\\frac{$" made the drawing fail. The tick labels and the axes' offset texts
    are left alone: the log axes' formatters write their powers ("2^4", "10^3") as mathtext.
    Called on a finished figure, before it is laid out or drawn."""
    from matplotlib.axis import Axis
    from matplotlib.text import Text

    numbering = set()
    for axis in fig.findobj(Axis):
        numbering.add(id(axis.offsetText))
        for tick in axis.get_major_ticks() + axis.get_minor_ticks():
            numbering.update((id(tick.label1), id(tick.label2)))
    for text in fig.findobj(Text):
        if id(text) not in numbering:
            text.set_parse_math(False)
