"""arrowipc.selection: this path of arrowipc.data.selection (the kernel layer) stays importable; it is the
same module object, so its names, and patches of them, are that module's."""
import sys

from .data import selection as _module
from .data.selection import *  # noqa: F401,F403   (the public names, for type checkers)

sys.modules[__name__] = _module
