"""Benchmarks that ship with the package: `memory-sim bench` runs them side by side (suite.py); the scripts in
the repository's scripts/ folder run each on its own and write the figures under benchmarks/.

They use psutil and matplotlib (main dependencies); without matplotlib the plots are skipped, with one line saying so.
"""
