"""Where a run's work happens: processes, scratch storage, progress."""
