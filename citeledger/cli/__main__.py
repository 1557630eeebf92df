"""``python -m citeledger.cli``: the ``citeledger`` command."""
import sys

from citeledger.cli.main import main

sys.exit(main())
