"""Spreading an encoding over several devices with sentence-transformers' multi-process pool, started once a block.

Which devices (`pool_devices`: those asked for, else every visible GPU when there are several and the input is
big), and for how long: an `EncodingPool` starts when an encoding inside its block first needs it and serves every
later one, so a retrieval or a job pays the start (seconds: a process per device, each importing torch and copying
the model) once, and not at all when everything comes from the cache.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

log = logging.getLogger(__name__)

# A pool costs seconds to start (one process and one copy of the model per device): below this many texts a
# single device is done before the pool would be.
MIN_POOL_TEXTS = 2048


def pool_devices(devices: Sequence[str] | None, texts: int, gpus: int) -> list[str] | None:
    """The devices to encode `texts` texts on with a multi-process pool, or None for the plain one-process path.

    `devices` given: those, when there are at least two (`[]` or one device: no pool). Not given (None): every
    visible GPU (`gpus` of them) when there are several and the input is big enough to pay for starting a pool
    (`MIN_POOL_TEXTS`); else None, so one GPU or a CPU encodes exactly as without a pool.
    """
    if devices is not None:
        return list(devices) if len(devices) >= 2 else None
    if gpus > 1 and texts >= MIN_POOL_TEXTS:
        return [f"cuda:{i}" for i in range(gpus)]
    return None


def visible_gpus() -> int:
    """How many CUDA devices torch sees (0 without CUDA)."""
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


class EncodingPool:
    """sentence-transformers' multi-process pool for one model: started the first time an encoding inside `held()`
    needs one, and stopped when the outermost `held()` ends.

    A start costs seconds (a process per device, each importing torch and copying the model), so a retrieval (its
    documents and its queries) or a job (every topic) holding one starts at most one, and none when every text
    comes from the cache. The workers copy the model as it is when the pool starts, window included, so every
    encoding through it must use that window; while it runs, the model itself waits on the CPU.
    """

    def __init__(self, model: Any, devices: list[str] | None) -> None:
        self.model, self.devices = model, devices
        self._pool: Any = None
        self._window: int | None = None
        self._home: Any = None
        self._holders = 0

    @contextmanager
    def held(self) -> Iterator[EncodingPool]:
        """Keep the pool, once started, for every encoding until the outermost block ends (even on error)."""
        self._holders += 1
        try:
            yield self
        finally:
            self._holders -= 1
            if self._holders == 0:
                self._stop()

    def for_texts(self, n: int) -> Any:
        """The started pool to encode `n` texts with, started now if `pool_devices` wants one; None: one process."""
        if not self._holders:
            raise RuntimeError("EncodingPool.for_texts outside held(): nothing would stop the pool")
        if self._pool is not None:
            if self.model.max_seq_length != self._window:
                raise RuntimeError(
                    f"the pool's workers encode with a window of {self._window} tokens, "
                    f"not the {self.model.max_seq_length} asked for: hold one pool per window"
                )
            return self._pool
        devices = pool_devices(self.devices, n, visible_gpus() if self.devices is None else 0)
        if devices is None:
            return None
        log.info("encoding with a pool on %s", ", ".join(devices))
        self._home, self._window = self.model.device, self.model.max_seq_length  # starting moves the model to the CPU
        self._pool = self.model.start_multi_process_pool(devices)
        return self._pool

    def _stop(self) -> None:
        if self._pool is None:
            return
        pool, self._pool = self._pool, None
        self.model.stop_multi_process_pool(pool)
        self.model.to(self._home)


@contextmanager
def maybe_pool(model: Any, devices: list[str] | None, n: int, pool: Any = None) -> Iterator[Any]:
    """The pool to encode `n` texts with: the caller's (an `EncodingPool` it holds, or a started pool), else one of
    this block's own on `pool_devices`, or None (the window must already be set: see `EncodingPool`)."""
    if isinstance(pool, EncodingPool):
        yield pool.for_texts(n)
    elif pool is not None:
        yield pool
    else:
        with EncodingPool(model, devices).held() as own:
            yield own.for_texts(n)
