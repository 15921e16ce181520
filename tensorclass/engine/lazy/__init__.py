"""lazy."""
