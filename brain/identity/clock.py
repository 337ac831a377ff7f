"""Protocol timestamps: UTC, whole seconds, `YYYY-MM-DDTHH:MM:SSZ`; `SOURCE_DATE_EPOCH` pins them."""

from __future__ import annotations

import os
import re
import time
from datetime import UTC, datetime

from brain.errors import InvalidInputError

TIMESTAMP_PATTERN = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


def utc_timestamp(epoch_seconds: int | None = None) -> str:
    """Now (or `epoch_seconds`) as a protocol timestamp; `SOURCE_DATE_EPOCH` overrides the clock."""
    if epoch_seconds is None:
        pinned = os.environ.get("SOURCE_DATE_EPOCH")
        if pinned is not None and pinned.strip():
            try:
                epoch_seconds = int(pinned.strip())
            except ValueError:
                raise InvalidInputError(
                    f"SOURCE_DATE_EPOCH={pinned!r} is not an integer number of seconds"
                ) from None
        else:
            epoch_seconds = int(time.time())
    global _last_formatted
    if _last_formatted[0] == epoch_seconds:  # a run stamps thousands of records within the same second
        return _last_formatted[1]
    moment = datetime.fromtimestamp(epoch_seconds, tz=UTC)
    formatted = f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S}Z"
    _last_formatted = (epoch_seconds, formatted)
    return formatted


_last_formatted: tuple[int | None, str] = (None, "")


def parse_timestamp(value: str) -> datetime:
    """A protocol timestamp as an aware datetime; refuses offsets, fractions and invalid dates."""
    if not isinstance(value, str) or TIMESTAMP_PATTERN.fullmatch(value) is None:
        raise InvalidInputError(f"invalid timestamp {value!r}: expected YYYY-MM-DDTHH:MM:SSZ (UTC)")
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        raise InvalidInputError(f"invalid timestamp {value!r}: not a calendar date and time") from None
