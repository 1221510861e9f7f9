"""What the store keeps behind a row, at the release's size (issue 29): the archived top-100 ranking of FreshStack's
672 queries (the paper's Table 3: langchain 203, yolo 57, laravel 184, angular 129, godot 99), with doc ids shaped
like the release's (`repo/path/file.md_start_end`), once with a model's float32 similarities and once with a TREC
file's 4-decimal scores.

Printed beside the reference measured in the same run:
* stored bytes per archived ranking: the store's blob (canonical layout, zstd) against the gzipped JSON file older
  releases wrote per row (`RunArchive`: `json.dumps` + `gzip` at its default level 9), and what a second row with
  the same ranking adds (deduplicated by content: nothing);
* the time to write one and read one back (hash verified) against the old file's;
* a submission's storing step, like for like: scores rows plus the ranking in one SQLite transaction with
  `synchronous=FULL` (today) against scores rows in a `synchronous=NORMAL` transaction plus the gzipped file
  written atomically beside it (before), medians of alternating runs. Scoring itself is the same code both ways.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.figures import figure

RELEASE = {"langchain": 203, "yolo": 57, "laravel": 184, "angular": 129, "godot": 99}
DEPTH = 100
CORPUS = 25_000  # chunks a topic's rankings draw from (the release: 25,482 to 117,288 a topic)
ROUNDS = 7


def corpus(topic: str, rng: random.Random) -> list[str]:
    """About `CORPUS` chunk ids of a topic's repositories: files under a few dozen folders, each cut into chunks."""
    repos = [f"{topic}", f"{topic}-docs", f"{topic}-examples", f"{topic}-js"]
    parts = ("api", "integrations", "how_to", "concepts", "tutorials", "reference", "components", "utils")
    folders = [f"{a}/{b}" for a in ("docs", "src", "libs/core", "examples", "guides") for b in parts]
    letters = "abcdefghijklmnopqrstuvwxyz_"
    ids: list[str] = []
    while len(ids) < CORPUS:
        name = "".join(rng.choices(letters, k=rng.randint(5, 18)))
        path = f"{rng.choice(repos)}/{rng.choice(folders)}/{name}.{rng.choice(['md', 'mdx', 'py', 'ipynb', 'ts'])}"
        start = 0
        for _ in range(rng.randint(2, 14)):
            end = start + rng.randint(200, 2500)
            ids.append(f"{path}_{start}_{end}")
            start = end
    return ids


def release_ranking(seed: int, *, decimals: bool) -> dict[str, dict[str, dict[str, float]]]:
    """672 queries x top 100, ids like the release's; float32 scores, or TREC-style 4-decimal ones."""
    rng = random.Random(seed)
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for topic, queries in RELEASE.items():
        chunks = corpus(topic, rng)
        runs[topic] = {}
        for _ in range(queries):
            scores = sorted((rng.random() for _rank in range(DEPTH)), reverse=True)
            values = [round(v * 30, 4) if decimals else float(np.float32(v)) for v in scores]
            query = str(rng.randint(75_000_000, 79_999_999))
            runs[topic][query] = dict(zip(rng.sample(chunks, DEPTH), values, strict=True))
    return runs


def legacy_save(root: Path, key: str, runs: Any) -> Path:
    """What `RunArchive.save` wrote before issue 29: one gzipped JSON file per row, written atomically."""
    from freshstack_hf.atomic import atomic_path

    target = root / f"{key}.json.gz"
    with atomic_path(target) as tmp, gzip.open(tmp, "wb") as fh:
        fh.write(json.dumps(runs, separators=(",", ":")).encode())
    return target


def legacy_load(path: Path) -> Any:
    return json.loads(gzip.decompress(path.read_bytes()))


def timed(fn: Any, *args: Any) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def sizes_and_codec(root: Path) -> None:
    from leaderboard.store.blobs import Blob
    from leaderboard.store.ranking_blob import decode_ranking

    for key, label, decimals in (
        ("model", "model scores (float32)", False),
        ("run", "run file scores (4 decimals)", True),
    ):
        runs = release_ranking(1, decimals=decimals)
        old_write = statistics.median(timed(legacy_save, root, "r", runs) for _ in range(3))
        old_file = legacy_save(root, "r", runs)
        old_read = statistics.median(timed(legacy_load, old_file) for _ in range(3))
        new_write = statistics.median(timed(Blob.ranking, runs) for _ in range(3))
        blob = Blob.ranking(runs)
        new_read = statistics.median(timed(lambda b: decode_ranking(b.raw()), blob) for _ in range(3))
        assert decode_ranking(blob.raw()) == runs
        old_bytes, new_bytes = old_file.stat().st_size, len(blob.data)
        figure(f"{key}_stored_mb", new_bytes / 1e6, "MB", ".1f", f"a release-size ranking in the store, {label}")
        figure(f"{key}_json_mb", old_bytes / 1e6, "MB", ".1f", f"the same as the older gzipped JSON file, {label}")
        print(
            f"archived ranking, {label}: stored {new_bytes / 1e6:.2f} MB vs gzipped JSON {old_bytes / 1e6:.2f} MB "
            f"({old_bytes / new_bytes:.2f}x smaller); write {new_write * 1000:.0f} ms vs {old_write * 1000:.0f} ms "
            f"({old_write / new_write:.2f}x); read + verify {new_read * 1000:.0f} ms vs {old_read * 1000:.0f} ms "
            f"({old_read / new_read:.2f}x)"
        )


def per_system_in_the_store(root: Path) -> None:
    from leaderboard.store.blobs import Blob
    from leaderboard.store.store import Store

    runs = release_ranking(2, decimals=False)
    with Store(f"sqlite:///{root / 'sizes.db'}") as store:
        store.create_all()
        blob = Blob.ranking(runs)
        for i in range(3):  # the same ranking behind three rows (e.g. resubmitted under other names and scopes)
            store.add_system(name=f"s{i}", kind="run", content_hash=f"h{i}", blobs={"ranking": blob})
        other = Blob.ranking(release_ranking(3, decimals=False))
        store.add_system(name="other", kind="run", content_hash="h-other", blobs={"ranking": other})
        usage = store.blobs.usage()
    stored = sum({u["sha256"]: u["stored_size"] for u in usage}.values())
    print(
        f"store size per archived run: {len(usage)} rows, {len({u['sha256'] for u in usage})} distinct rankings, "
        f"{stored / 1e6:.2f} MB of blobs ({stored / len(usage) / 1e6:.2f} MB per row; a row whose ranking is "
        f"already stored adds 0 bytes)"
    )


def storing_step(root: Path) -> None:
    """One submission's write, like for like: the old (rows, NORMAL, then a file) against today's (rows + blob)."""
    from sqlalchemy import event

    from freshstack_hf.metrics import MEASURES
    from leaderboard.store.blobs import Blob
    from leaderboard.store.records import ResultMeta
    from leaderboard.store.store import Store

    runs = release_ranking(4, decimals=True)
    rng = random.Random(0)
    results = {}
    for topic, by_query in runs.items():
        per_query = {q: {m.id: rng.random() for m in MEASURES} for q in by_query}
        metrics = {m.id: statistics.fmean(s[m.id] for s in per_query.values()) for m in MEASURES}
        results[topic] = {"metrics": metrics, "per_query": per_query}
    meta = ResultMeta("local-bench")
    old = Store(f"sqlite:///{root / 'old.db'}")
    new = Store(f"sqlite:///{root / 'new.db'}")
    for store in (old, new):
        store.create_all()
    # what every connection ran before: synchronous=NORMAL (after the store's own FULL)
    event.listen(old.engine, "connect", lambda dbapi, _record: dbapi.execute("PRAGMA synchronous = NORMAL"))
    old.engine.dispose()
    with old.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1
    files = root / "runs"
    files.mkdir()
    times: dict[str, list[float]] = {"before": [], "today": []}

    def before(key: str) -> None:
        old.add_system(name=key, kind="run", content_hash=key, results=results, meta=meta)
        legacy_save(files, key, runs)

    def today(key: str) -> None:
        blobs = {"ranking": Blob.ranking(runs)}
        new.add_system(name=key, kind="run", content_hash=key, results=results, meta=meta, blobs=blobs)

    for i in range(ROUNDS):
        times["before"].append(timed(before, f"h{i}"))
        times["today"].append(timed(today, f"h{i}"))
    old.close()
    new.close()
    b, t = statistics.median(times["before"]), statistics.median(times["today"])
    print(
        f"a release-size submission's storing step (672 queries x {len(MEASURES)} measures + the ranking): "
        f"today {t * 1000:.0f} ms vs before {b * 1000:.0f} ms ({b / t:.2f}x; medians of {ROUNDS}, alternating)"
    )


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        root = Path(tmp)
        sizes_and_codec(root)
        per_system_in_the_store(root)
        storing_step(root)
