"""The error a run raises when the user can fix its cause (the CLI's exit code 2).

Configuration problems raise :class:`unitize.config.ConfigError`, unreadable
inputs :class:`unitize.adapters.AdapterError` and unusable output directories
:class:`unitize.output.OutputError`; everything else a user can fix is a
:class:`RunError`.
"""


class RunError(ValueError):
    """A run that cannot proceed for a reason the user can fix (exit code 2)."""


class ConfigError(ValueError):
    """A configuration the run cannot start with (exit code 2)."""
