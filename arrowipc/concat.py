"""arrowipc.concat: this path of arrowipc.data.concat (the kernel layer) stays importable; it is the
same module object, so its names, and patches of them, are that module's."""
import sys

from .data import concat as _module
from .data.concat import *  # noqa: F401,F403   (the public names, for type checkers)

sys.modules[__name__] = _module
