"""arrowipc.from_python: this path of arrowipc.data.from_python (the kernel layer) stays importable; it is the
same module object, so its names, and patches of them, are that module's."""
import sys

from .data import from_python as _module
from .data.from_python import *  # noqa: F401,F403   (the public names, for type checkers)

sys.modules[__name__] = _module
