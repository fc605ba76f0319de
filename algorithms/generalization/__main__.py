"""`python -m optiforge.algorithms.generalization`: the diagnostic's command line (cli.py)."""

from optiforge.algorithms.generalization.cli import main

if __name__ == "__main__":
    main()
