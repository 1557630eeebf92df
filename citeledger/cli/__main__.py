"""``python -m citeledger.cli``: the ``citeledger`` command."""
import sys

from citeledger.cli.commands import main

if __name__ == "__main__":
    sys.exit(main())
