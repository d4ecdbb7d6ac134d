"""Dispatchers and PE kinds beyond the built-in ones, and how another process
gets them.

A user's dispatcher or PE kind is a class registered by a module of theirs
(:func:`golden.dispatchers.register`, :func:`golden.pe_contract.register`). A
process that starts another, a simulator running a testbench or a command
given ``--plugin``, names those modules in :data:`ENV`; the other process
imports them (:func:`load_from_env`) before it reads a design point that
names what they register.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
import traceback
from pathlib import Path

from . import dispatchers, pe_contract, pe_kinds
from .config import KNOBS

__all__ = ["ENV", "REGISTRIES", "added", "modules", "roots", "load", "load_from_env"]

#: The environment variable that names the modules to import, comma-separated.
ENV = "KALEIDO_PLUGINS"


#: Each registry: the module that holds it and its built-in entries, its table, and
#: the module whose ``register`` admits a user's entry into it.
REGISTRIES = ((dispatchers, dispatchers.DISPATCHERS, dispatchers),
              (pe_kinds, pe_kinds.PE_KINDS, pe_contract))


def added() -> list[tuple[str, type]]:
    """``(the module whose register admits it, class)`` of every dispatcher and
    PE kind registered beyond the built-in ones."""
    return [(admits.__name__, entry)
            for home, table, admits in REGISTRIES
            for entry in table.values() if entry.__module__ != home.__name__]


def modules() -> list[str]:
    """The importable modules that registered them (a script's own, ``__main__``,
    cannot be imported by another process and is left out)."""
    return sorted({entry.__module__ for _, entry in added()} - {"__main__"})


def roots() -> list[str]:
    """The folders another process must have on its path to import :func:`modules`
    (each module's top package's parent), and no others: a folder put there
    besides could shadow a library that process imports."""
    out = []
    for name in modules():
        path = Path(sys.modules[name].__file__).resolve()
        root = str(path.parents[name.count(".") + (path.name == "__init__.py")])
        if root not in out:
            out.append(root)
    return out


#: Names a plugin may still import from where they were, by (module, name): where they are now.
MOVED = {("golden.pe_kinds", "register"): "golden.pe_contract.register"}


def _missing_name(e: ImportError) -> str | None:
    # "cannot import name 'register' from 'golden.pe_kinds' (...)": the name asked for.
    m = re.match(r"cannot import name '(\w+)'", str(e))
    return m[1] if m else None


def load(names) -> None:
    """Import each module in ``names`` (the current directory first on the path,
    as for a script), so that what it registers is known here; a name ending
    in ``.py`` is a file, imported by its stem from its folder. A module that
    cannot be found raises :class:`ImportError` naming it; one whose
    registration is refused (:func:`golden.pe_contract.register`) or that fails
    as it runs, ValueError naming the module and the line."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    for name in names:
        if name.endswith(".py"):
            path = Path(name).resolve()
            if not path.is_file():
                raise ImportError(f"cannot import plugin module {name!r}: no such file")
            name = path.stem
            held = sys.modules.get(name)
            if held is not None and Path(getattr(held, "__file__", "") or "").resolve() != path:
                # import_module would hand back the module already loaded, and the file would never run.
                raise ImportError(f"cannot import plugin file {str(path)!r}: it is named like module {name!r}, "
                                  f"already imported from {getattr(held, '__file__', None) or 'Python itself'}; "
                                  f"rename the file")
            if str(path.parent) not in sys.path:
                # After the project's own packages: a folder beside the plugin that is named
                # like one of them (tests/hw/ beside tests/toys.py) must not stand in for it.
                sys.path.append(str(path.parent))
        try:
            importlib.import_module(name)
        except ImportError as e:
            moved = MOVED.get((getattr(e, "name", None), _missing_name(e)))
            hint = f" ({_missing_name(e)} is {moved} now)" if moved else ""
            raise ImportError(f"cannot import plugin module {name!r}: {e}{hint}") from e
        except ValueError as e:
            # A refused registration: the line of the module that registered.
            raise ValueError(f"plugin module {name!r} (line {_line_in(e, name)}): {e}") from e
        except SyntaxError as e:
            raise ValueError(f"plugin module {name!r}: syntax error at {e.filename}:{e.lineno}: {e.msg}") from e
        except Exception as e:
            raise ValueError(f"plugin module {name!r} failed at {_where(e)}: "
                             f"{e.__class__.__name__}: {e}") from e
        _check_knobs(name)


def _check_knobs(module: str) -> None:
    """A dispatcher of ``module`` that declares a knob the design point has not: ValueError."""
    for entry in dispatchers.DISPATCHERS.values():
        unknown = sorted(set(entry.knobs) - set(KNOBS)) if entry.__module__ == module else []
        if unknown:
            raise ValueError(f"plugin module {module!r}: dispatcher {entry.name!r} declares knobs "
                             f"{', '.join(map(repr, unknown))}, which no Config has (it has "
                             f"{', '.join(sorted(KNOBS))})")


def _line_in(exc: BaseException, module: str) -> str:
    """The line of ``module``'s own file (its last frame in ``exc``'s traceback), or ``?``."""
    spec = importlib.util.find_spec(module) if module not in sys.modules else sys.modules[module].__spec__
    origin = str(Path(spec.origin).resolve()) if spec is not None and spec.origin else None
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if str(Path(f.filename).resolve()) == origin]
    return str(lines[-1]) if lines else "?"


def _where(exc: BaseException) -> str:
    """``file:line`` of the last frame of ``exc``'s traceback outside Python's import machinery."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "importlib" not in f.filename]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "import"


def load_from_env() -> None:
    """:func:`load` the modules :data:`ENV` names."""
    load(n for n in os.environ.get(ENV, "").split(",") if n)
