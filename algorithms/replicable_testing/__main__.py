"""`python -m optiforge.algorithms.replicable_testing`: the testers' command line (cli.py)."""

from optiforge.algorithms.replicable_testing.cli import main

main()
