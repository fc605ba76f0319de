"""Problem definitions with no learning in them: instances, validators, reference solvers."""
