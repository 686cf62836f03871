"""The run that chains the stages: read → validate and unitize → write (:mod:`~unitize.run.pipeline`),
and the conversion between formats with the model as the pivot (:mod:`~unitize.run.conversion`)."""

from .pipeline import RunError, check_kept, convert, is_items, read_corpus, summary, unitize, write_output

__all__ = ["RunError", "check_kept", "convert", "is_items", "read_corpus", "summary", "unitize", "write_output"]
