"""Numbers of the README's headline column that no registered result backs, and why.

Listed so the reproduction page shows them as unchecked rather than leaving them unmentioned;
a test keeps each one present in its README cell, so the list cannot outlive the README text.
"""

from __future__ import annotations

NO_RESULT = "a training run's number; no result file is published for it"
OTHER_FILES = "in result files not yet registered (see the system's page for their commands)"
DERIVATION = "the registry derives a different number from the same result (shown above)"

# (system, the number as the README writes it, why it is unchecked)
UNCHECKED: tuple[tuple[str, str, str], ...] = (
    ("classifier", "0.985", NO_RESULT),
    ("classifier", "14", NO_RESULT),
    ("char_lm", "2.887", NO_RESULT),
    ("char_lm", "2.952", NO_RESULT),
    ("fsnet", "29", OTHER_FILES),
    ("fsnet", "58", OTHER_FILES),
    ("fsnet", "10-41", OTHER_FILES),
    ("fsnet", "34-441", OTHER_FILES),
    ("fsnet", "5-82", OTHER_FILES),
    ("statistical_tools", "0.5", OTHER_FILES),
    ("learning_rules", "1e-8", OTHER_FILES),
    ("diverse", "23-37", DERIVATION),
)
