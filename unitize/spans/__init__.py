"""The span stage of a run: live fragments → segments → unit matrices."""
