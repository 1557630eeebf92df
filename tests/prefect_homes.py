"""A PREFECT_HOME for a CLI child process that runs a flow: its own folder, never the session's
(two temporary servers migrating one database at once collide: "UNIQUE constraint failed:
block_type.slug"), holding a copy of the session's migrated database so the child's server skips
the migration (some 12 s on a 2-core machine)."""
from __future__ import annotations

import sqlite3
from pathlib import Path


def copy_of_session_home(home: Path) -> Path:
    """``home`` made (if needed) with a consistent copy of the session's migrated Prefect database.
    Starting the session's temporary server is a no-op when an earlier flow test started it."""
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_HOME

    SubprocessASGIServer().start()  # the session's server: its database is made and migrated
    home.mkdir(parents=True, exist_ok=True)
    source = sqlite3.connect(PREFECT_HOME.value() / "prefect.db")
    copy = sqlite3.connect(home / "prefect.db")
    try:
        source.backup(copy)  # consistent while the session's server writes to it
    finally:
        copy.close()
        source.close()
    return home
