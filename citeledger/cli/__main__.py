"""``python -m citeledger.cli``: the ``citeledger`` command."""
import sys

from citeledger.cli.commands import main

sys.exit(main())
