"""The `arrowipc` command: inspect, head, validate, convert, recover and bench Arrow IPC data.

Results go to stdout. A failure is one line on stderr, `arrowipc <command>: <what went wrong>`
(the traceback only with --debug), and the exit status tells its kind:

    0    success (for validate: the input is valid)
    1    invalid data: the input is not valid Arrow IPC (validate: problems were found)
    2    usage: a bad command line (unknown option, missing column, ...)
    3    I/O: a file could not be opened, read or written
    4    unsupported: valid data using a feature arrowipc does not implement
    5    internal error: a bug in arrowipc (run again with --debug and report it)
    130  interrupted (Ctrl-C)

One module per command (inspect, head, validate, convert, recover, bench), each with a
`run(args)`; `main` parses the command line and dispatches; `common` holds what they share.
Heavy modules load inside the commands, so `arrowipc --help` costs about an `import arrowipc`.
"""
from .common import (EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_INVALID_DATA, EXIT_IO, EXIT_OK,
                     EXIT_UNSUPPORTED, EXIT_USAGE, UsageError)
from .main import build_parser, main

__all__ = ["EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_INVALID_DATA", "EXIT_IO", "EXIT_OK",
           "EXIT_UNSUPPORTED", "EXIT_USAGE", "UsageError", "build_parser", "main"]
