"""arrowipc.to_python: this path of arrowipc.data.to_python (the kernel layer) stays importable; it is the
same module object, so its names, and patches of them, are that module's."""
import sys

from .data import to_python as _module
from .data.to_python import *  # noqa: F401,F403   (the public names, for type checkers)

sys.modules[__name__] = _module
