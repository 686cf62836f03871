"""Unitizing: texts become unit spaces, fragments become disjoint segments (pure NumPy)."""
