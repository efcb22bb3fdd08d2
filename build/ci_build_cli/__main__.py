"""`python3 -m build.ci_build_cli ...` from the checkout: what build/ci_build runs."""

import sys

from tools.modules import restore_caller_pythonpath

from .cli import main

restore_caller_pythonpath()  # the programs ci_build starts run from the checkout, or say so
sys.exit(main())
