"""The package's version, at the ground floor: every module may ask it without importing the package."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("unitize")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"
