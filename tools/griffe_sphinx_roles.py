"""A griffe extension for the API reference (mkdocs.yml): turns the Sphinx
roles of jaxamg's docstrings (:func:`name`, :class:`name`, :mod:`name`, ...)
into links to the documented object.

Each name is resolved in the scope of the docstring's object, as Python would
(``make_preconditioner`` inside jaxamg.preconditioners is
jaxamg.preconditioners.make_preconditioner). The link is optional: a name that
is not on any page (a private helper, a Python built-in) stays as code
instead of failing the strict build.
"""

from __future__ import annotations

import html
import re

import griffe

ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj):`~?([^`]+)`")


class SphinxRoles(griffe.Extension):
    """Rewrites the roles of every docstring once griffe has loaded it."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:  # noqa: ARG002
        docstring = obj.docstring
        if docstring is None or ":" not in docstring.value:
            return
        docstring.value = ROLE.sub(lambda m: self._link(obj, m.group(1)), docstring.value)

    @staticmethod
    def _link(obj: griffe.Object, name: str) -> str:
        target = name
        if not name.startswith("."):
            try:
                target = obj.resolve(name.split(".")[0]) + name[len(name.split(".")[0]) :]
            except (griffe.NameResolutionError, AttributeError, ValueError):
                target = name
        shown = html.escape(name.lstrip("."))
        return (
            f'<autoref identifier="{html.escape(target)}" optional><code>{shown}</code></autoref>'
        )
