"""``python -m ireval_core``: see :mod:`ireval_core.cli`."""

import sys

from .cli import main

sys.exit(main())
