"""Stage 3, validation, format-independent: offsets against the texts (:mod:`~unitize.validate.offsets`)
and RAT's cross-annotator rules (:mod:`~unitize.validate.rules`)."""

from .offsets import boundary_problem, check_spans
from .rules import Validation, apply_rules, validate

__all__ = ["Validation", "apply_rules", "boundary_problem", "check_spans", "validate"]
