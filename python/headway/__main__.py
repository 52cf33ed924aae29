"""The ``headway`` console script: the Rust command line, run in this process.

``python -m headway simulate JOB.fio ...`` is the same as the ``headway`` command.
"""

from __future__ import annotations

import sys
from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> int:
    """Run the ``headway`` command with ``argv`` (default: ``sys.argv[1:]``); returns, and
    as a console script exits with, its status."""
    from headway import _native

    args = sys.argv[1:] if argv is None else list(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    return _native.main(["headway", *args])


if __name__ == "__main__":
    sys.exit(main())
