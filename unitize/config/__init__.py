"""Study settings: from a TOML file, from command-line flags, or from RAT's legacy config.

A study file looks like::

    [input]
    format = "datt"
    annotations = "annotations"
    texts = "texts"
    encoding_fallback = "windows-1254"

    [unitize]
    units = ["char", "word"]
    approaches = ["interval", "boundary"]
    layers = ["Arg1", "Arg2"]
    tokenizer = "spacy:tr"
    discontinuous = "extend"

    [output]
    dir = "out"

Paths are relative to the file that names them.
"""

from ..errors import ConfigError
from .options import OPTION_TYPES, Option, dump_key, dump_value, toml_value
from .paths import absolute, working_directory
from .rat import load_rat
from .sections import (
    APPROACHES,
    ASSIGNMENT_AUTO,
    ASSIGNMENT_PER_DOCUMENT,
    ASSIGNMENTS,
    CROWD_ABOVE,
    DISCONTINUOUS,
    ITEM_GROUP_OPTIONS,
    ITEMS_OPTIONS,
    LAYERS_FROM,
    LAYOUTS,
    MODES,
    OUTPUT_OPTIONS,
    PATH_KEYS,
    ROLES_OPTIONS,
    RUN_OPTIONS,
    UNITIZE_OPTIONS,
    UNITS,
)
from .settings import DEFAULT_FORMAT, Settings
from .study import SECTIONS, apply_set, from_mapping, load_toml, override, read_study, section_of

__all__ = [
    "DEFAULT_FORMAT",
    "OUTPUT_OPTIONS",
    "SECTIONS",
    "UNITIZE_OPTIONS",
    "read_study",
    "section_of",
    "APPROACHES",
    "ITEM_GROUP_OPTIONS",
    "ITEMS_OPTIONS",
    "ASSIGNMENTS",
    "ASSIGNMENT_AUTO",
    "ASSIGNMENT_PER_DOCUMENT",
    "CROWD_ABOVE",
    "DISCONTINUOUS",
    "LAYERS_FROM",
    "LAYOUTS",
    "MODES",
    "OPTION_TYPES",
    "PATH_KEYS",
    "ROLES_OPTIONS",
    "RUN_OPTIONS",
    "UNITS",
    "ConfigError",
    "Option",
    "Settings",
    "absolute",
    "apply_set",
    "dump_key",
    "dump_value",
    "from_mapping",
    "load_rat",
    "load_toml",
    "override",
    "toml_value",
    "working_directory",
]
