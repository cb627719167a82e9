"""The Python the plugin needs, checked before anything else is imported (so an old interpreter gets one line).

The components use `typing.NotRequired` (Python 3.11, PEP 655) and the pinned SDKs need 3.11 too, so an older
interpreter would otherwise stop on an ImportError deep in a traceback. This module is kept importable by old
interpreters (no 3.10+ syntax at runtime).
"""

from __future__ import annotations

import sys

FLOOR = (3, 11)


def too_old(version_info: tuple[object, ...]) -> str | None:
    """The one-line refusal for an interpreter older than FLOOR; None when it is new enough."""
    if tuple(int(str(part)) for part in version_info[:2]) >= FLOOR:
        return None
    have = ".".join(str(part) for part in version_info[:3])
    need = ".".join(str(part) for part in FLOOR)
    return (f"gpu-platform provider: Python {have} is too old; it needs Python >= {need} (typing.NotRequired); "
            f"fix: put Python {need} or newer first on PATH (or set the runtime's toolchain) and delete "
            "provider/venv so the plugin's virtual environment is made again")


def require() -> None:
    """Exit with the one-line refusal when the running interpreter is too old."""
    message = too_old(tuple(sys.version_info))
    if message is not None:
        sys.stderr.write(message + "\n")
        raise SystemExit(1)
