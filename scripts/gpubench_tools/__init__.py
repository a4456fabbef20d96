"""Python tools for gpubench result files: loading and validation, the card table, roofline and
sweep plots, the results store, the regression comparator, the nightly job and trend plots, the
HTML report, node acceptance against the expected bands (acceptance.py, harness/model/bands.csv)
and the outliers of a fleet (fleet.py).

Every module reads gpubench's Google Benchmark JSON through results.py, and the card table
through cards.py (harness/model/cards.csv, the same file compiled into the C++ harness).
Every output file is written whole or not at all through output.py.
"""
