"""`python -m optiforge.algorithms.generalization`: the diagnostic's command line (cli.py)."""

from optiforge.algorithms.generalization.cli import main

main()
