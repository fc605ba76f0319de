"""`python -m algorithms.generalization`: the diagnostic's command line (cli.py)."""

from algorithms.generalization.cli import main

main()
