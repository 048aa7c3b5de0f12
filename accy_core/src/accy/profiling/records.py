"""JSON-lines profiling records: the protocol version, the common fields, the writer.

Every record is one JSON object per line carrying :data:`PROTOCOL`, ``event``,
``workload``, ``elements``, ``chain`` (``null`` in run-level records), ``backend`` and
``device`` (the backend's device fingerprint). Events and their fields are documented in
``docs/profiling.md``; the JSON schema is ``docs/profiling.schema.json``. Times are
nanoseconds on the host wall clock, memory is bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from accy.errors import InputError

__all__ = ["EVENTS", "PHASES", "PROTOCOL", "RecordWriter", "read_records"]

PROTOCOL = "accy-profile/1"
#: Phase names in order: the six stages are bracketed by semantic and the backend's phases.
PHASES = ("total", "semantic", "contract", "tensor", "dispatch", "memory", "kernel", "target",
          "codegen", "execute")
EVENTS = ("start", "compile", "check", "phase", "memory", "pass", "analysis", "summary",
          "candidate", "rejected", "best", "error", "end")


class RecordWriter:
    """Write records with the common fields filled in; keeps every record it wrote.

    Args:
        stream: a text stream to write one JSON object per line to (or None: keep only).
        backend: backend name; device: its device fingerprint.
    """

    def __init__(self, stream: IO[str] | None, backend: str, device: str) -> None:
        self.stream = stream
        self.backend = backend
        self.device = device
        self.case: tuple[str | None, int | None, int | None] = (None, None, None)
        self.records: list[dict[str, Any]] = []

    def emit(self, event: str, **fields: Any) -> dict[str, Any]:
        """Write one record of ``event`` for the current case (see :meth:`for_case`)."""
        workload, elements, chain = self.case
        record = {"protocol": PROTOCOL, "event": event, "workload": workload,
                  "elements": elements, "chain": chain, "backend": self.backend,
                  "device": self.device, **fields}
        self.records.append(record)
        if self.stream is not None:
            self.stream.write(json.dumps(record, sort_keys=True) + "\n")
            self.stream.flush()
        return record

    def for_case(self, workload: str | None, elements: int | None, chain: int | None) -> None:
        """Make the following records belong to one case (None: run-level records)."""
        self.case = (workload, elements, chain)


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSON-lines profile.

    Raises:
        InputError: the file cannot be read (missing, a directory, not UTF-8), or a line is
            not a JSON object of this protocol (line number given).
    """
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise InputError(f"cannot read profile {str(path)!r}: {why}; pass a JSON-lines file "
                         "written by 'accy profile'") from e
    return list(_parse(text.splitlines(), str(path)))


def _parse(lines: Iterable[str], name: str) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{name}:{number}: not JSON ({e.msg}); expected one record "
                             "per line as written by 'accy profile'") from e
        if not isinstance(record, dict) or record.get("protocol") != PROTOCOL:
            got = record.get("protocol") if isinstance(record, dict) else type(record).__name__
            raise InputError(f"{name}:{number}: protocol {got!r}, expected {PROTOCOL!r}")
        yield record
