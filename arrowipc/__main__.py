"""`python -m arrowipc`: the arrowipc command line (same as the installed `arrowipc` script)."""
import sys

from .cli import main

sys.exit(main())
