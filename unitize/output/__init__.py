"""Everything a run writes: the output directory (:mod:`.directory`, claimed by :mod:`.claim`) and the run's files (:mod:`.write`)."""

from ..cells import cell, neutral_table
from .claim import OWNED, OutputError, OutputWarning, claim_output, locks_output, read_manifest
from .derived import DERIVED, REPORT_MARKER, is_report
from .directory import (
    PARQUET_WRITE_OPTIONS,
    OutputDir,
    ParquetStream,
    atomic_write_text,
    csv_text,
    parquet_options,
    refuse_foreign,
    sha256_file,
    staged_folder,
    temporary,
    text_stream,
)
from .tables import documents_table, tokens_table, universe_table
from .write import RunResult, input_rows, run_section, write_run

__all__ = [
    "DERIVED",
    "OWNED",
    "PARQUET_WRITE_OPTIONS",
    "OutputDir",
    "OutputError",
    "OutputWarning",
    "REPORT_MARKER",
    "ParquetStream",
    "RunResult",
    "atomic_write_text",
    "cell",
    "neutral_table",
    "claim_output",
    "csv_text",
    "documents_table",
    "input_rows",
    "is_report",
    "locks_output",
    "parquet_options",
    "read_manifest",
    "run_section",
    "sha256_file",
    "refuse_foreign",
    "staged_folder",
    "temporary",
    "text_stream",
    "tokens_table",
    "universe_table",
    "write_run",
]
