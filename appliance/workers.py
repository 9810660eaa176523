"""Background loops (webhook delivery, lease reaper): run_once() plus start()/stop()."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from appliance.services.context import ServiceContext
from appliance.services.delivery import DeliveryWorker
from appliance.services.deployments.runtime import reap

log = logging.getLogger("appliance.workers")


class Loop:
    """Calls `run_once` every `interval` seconds on a daemon thread until stopped."""

    def __init__(self, name: str, run_once: Callable[[], object], interval: float) -> None:
        self.name = name
        self.run_once = run_once
        self.interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_once()
            except Exception:  # noqa: BLE001 - a loop must survive any one failure
                log.exception("background loop %s failed; continuing", self.name)
            self._stop.wait(self.interval)


class WebhookDelivery:
    """The webhook delivery worker on a Loop: `start()` after the app is built, `stop()` at exit."""

    def __init__(self, ctx: ServiceContext, interval: float = 1.0) -> None:
        self.worker = DeliveryWorker(ctx)
        self.loop = Loop("webhook-delivery", self.worker.drain, interval)

    def start(self) -> None:
        self.loop.start()

    def stop(self) -> None:
        self.loop.stop()
        self.worker.close()


class LeaseReaper:
    """Hands expired task leases back (planning) or fails them (installing), DESIGN.md 7.3."""

    def __init__(self, ctx: ServiceContext, interval: float = 5.0) -> None:
        self.ctx = ctx
        self.loop = Loop("lease-reaper", self.run_once, interval)

    def run_once(self) -> int:
        """One pass: the number of expired leases handled."""
        return reap(self.ctx)

    def start(self) -> None:
        self.loop.start()

    def stop(self) -> None:
        self.loop.stop()
