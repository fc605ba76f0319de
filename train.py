"""optiforge's command line from a clone: `python train.py [fit|validate|test|predict] ...`.

The same CLI as the `optiforge` command that `pip install` puts on the PATH; it lives in
`optiforge/cli.py` (see there for what it checks before anything is written).
"""

from optiforge.cli import OptiforgeCLI, main

__all__ = ["OptiforgeCLI", "main"]

if __name__ == "__main__":
    main()
