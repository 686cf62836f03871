"""Everything a run writes: the output directory (:mod:`.directory`) and the run's files (:mod:`.write`)."""

from .directory import (
    OWNED,
    PARQUET_WRITE_OPTIONS,
    OutputDir,
    OutputError,
    ParquetStream,
    atomic_write_text,
    claim_output,
    csv_text,
    locks_output,
    parquet_options,
    read_manifest,
    refuse_foreign,
    sha256_file,
    staged_folder,
)
from .tables import documents_table, tokens_table, universe_table
from .write import RunResult, input_rows, run_section, write_run

__all__ = [
    "OWNED",
    "PARQUET_WRITE_OPTIONS",
    "OutputDir",
    "OutputError",
    "ParquetStream",
    "RunResult",
    "atomic_write_text",
    "claim_output",
    "csv_text",
    "documents_table",
    "input_rows",
    "locks_output",
    "parquet_options",
    "read_manifest",
    "run_section",
    "sha256_file",
    "refuse_foreign",
    "staged_folder",
    "tokens_table",
    "universe_table",
    "write_run",
]
