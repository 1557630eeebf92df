"""Archives made in memory for the tests: a paper's source as arXiv serves it (tar, gzipped)."""
from __future__ import annotations

import io
import tarfile


def tar_bytes(files: dict[str, bytes], gz: bool = True) -> bytes:
    """A tar archive (gzipped unless ``gz`` is False) of these members, in this order."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz" if gz else "w") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()
