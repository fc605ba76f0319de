"""`python -m optiforge.benchmarks run NAME [--preset smoke|paper] [--publish]`; see
docs/benchmarks.md."""

from optiforge.benchmarks.harness.cli import main

main()
