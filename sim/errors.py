"""The error every layer of ``sim`` raises for a problem with the user's input
(the command line prints it as one line and exits with status 2)."""

from __future__ import annotations

__all__ = ["UserError"]


class UserError(Exception):
    """A problem with the user's input: printed as one line, exit status 2."""
