"""What every service needs: settings, the blob store, keys, clock, ids and the outbox."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from appliance import events
from appliance.blobs import BlobStore
from appliance.config import Settings


@dataclass(frozen=True)
class ServiceContext:
    settings: Settings
    blobs: BlobStore
    master_key: bytes

    def now(self) -> datetime:
        return self.settings.clock()

    def new_id(self) -> str:
        return self.settings.new_id()

    def emit(self, event: str, organization_id: str, data: dict[str, Any], **scope: Any) -> None:
        """Write `event` to the outbox inside the caller's transaction."""
        events.emit(event, organization_id, data, event_id=self.new_id(), at=self.now(), **scope)
