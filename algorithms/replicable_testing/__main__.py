"""`python -m algorithms.replicable_testing`: the testers' command line (cli.py)."""

from algorithms.replicable_testing.cli import main

main()
