"""`python -m benchmarks run NAME [--preset smoke|paper] [--publish]`; see docs/benchmarks.md."""

from benchmarks.harness.cli import main

main()
