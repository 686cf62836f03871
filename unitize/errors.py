"""The errors a user can fix, all of one family: the CLI catches :class:`UnitizeError` and exits 2.

Configuration problems raise :class:`ConfigError`, unreadable inputs
:class:`unitize.adapters.AdapterError`, unusable output directories
:class:`OutputError` (and :class:`DataError` for one whose tables break the
contract), a metric whose package is absent
:class:`unitize.metrics.MissingDependency`; everything else a user can fix is a
:class:`RunError`.
"""


class UnitizeError(ValueError):
    """A problem the user can fix: the message says what and how (the CLI's exit code 2)."""


class RunError(UnitizeError):
    """A run that cannot proceed for a reason the user can fix (exit code 2)."""


class ConfigError(UnitizeError):
    """A configuration the run cannot start with (exit code 2)."""


class OutputError(UnitizeError):
    """The output directory cannot be used."""


class DataError(OutputError):
    """An output directory whose tables do not follow the contract."""


class OutputWarning(UserWarning):
    """Something beside an output directory that unitize left alone (the CLI prints it as a warning;
    defined here, not in :mod:`unitize.output`, so that the CLI can set its filter without loading the writers)."""
