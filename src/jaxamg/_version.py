# The one place the version is written; pyproject.toml reads it with a regex.
__version__ = "0.2.0.dev0"
