"""``python -m citeledger.cli``: the ``citeledger`` command."""
import sys

from citeledger.cli.entry import main

if __name__ == "__main__":
    sys.exit(main())
