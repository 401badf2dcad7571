"""``python -m a2a_models.conformance URL [options]``."""

import sys

from ._cli import main

sys.exit(main(prog="python -m a2a_models.conformance"))
