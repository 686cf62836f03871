"""The reader of an output directory (the mirror of :mod:`unitize.output`): what its consumers share.

``unitize agree``, ``unitize export`` and ``unitize report`` read an output directory only
through this package, and never each other:

- :mod:`.directory` — :class:`OutputData`: open a directory (formats 1 and 2, any layout,
  partitioned parts), its manifest, settings, groups, segments; :func:`densify`;
- :mod:`.model` — what the consumers speak of: :class:`Setting` (a unit-matrix dataset),
  :class:`Matrix` (a (group, layer)'s units × annotators), :class:`DataError`;
- :mod:`.matrix` — a group's rows → a :class:`Matrix`;
- :mod:`.batches` — a large group's rows in batches of whole documents (or items);
- :mod:`.sparse` — a sparse group as stored, or read back dense;
- :mod:`.regions` — where annotators disagree: runs of units, per setting.
"""

from ..errors import DataError
from .directory import OutputData, densify
from .matrix import layer_rows
from .model import Matrix, Setting
from .settings import format_version, read_setting

__all__ = [
    "DataError",
    "Matrix",
    "OutputData",
    "Setting",
    "densify",
    "format_version",
    "layer_rows",
    "read_setting",
]
