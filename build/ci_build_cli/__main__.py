"""`python3 -m ci_build_cli ...` with the project's Python roots on PYTHONPATH: what build/ci_build runs."""

import sys

from tools.modules import restore_caller_pythonpath

from .cli import main

restore_caller_pythonpath()  # the programs ci_build starts get the caller's PYTHONPATH, or the roots again
sys.exit(main())
