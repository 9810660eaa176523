"""In-memory token buckets (DESIGN.md 9): no database write per request."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from appliance.errors import RateLimited

_MAX_KEYS = 50_000


class TokenBucketLimiter:
    """`rate` tokens per second, at most `burst` saved up, one bucket per key."""

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> None:
        """Spend one token of `key`'s bucket, or raise RateLimited."""
        now = self.clock()
        with self._lock:
            tokens, stamp = self._buckets.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - stamp) * self.rate)
            if tokens < 1.0:
                self._buckets[key] = (tokens, now)
                retry = max(1, math.ceil((1.0 - tokens) / self.rate))
                raise RateLimited(retry, self.burst, max(1, math.ceil(self.burst / self.rate)))
            self._buckets[key] = (tokens - 1.0, now)
            if len(self._buckets) > _MAX_KEYS:
                self._prune(now)

    def _prune(self, now: float) -> None:
        full = [k for k, (t, s) in self._buckets.items() if t + (now - s) * self.rate >= self.burst]
        for key in full:
            del self._buckets[key]
