"""The corpus stage on a 50,000-file synthetic repository: files/s and peak memory, beside what bounds them.

The repository (a mix of .py, .ts, .md and .php files of lognormal sizes, a few large enough to need several
chunks) is generated once into bench-out/ and reused. Our stage runs in a subprocess so its peak RSS can be read
from `getrusage(RUSAGE_CHILDREN)`; the goal is under 2 GB. References measured in the same run: reading and
decoding the same files without chunking (the floor any chunker pays), and the official `freshstack` chunker on a
sample of the files, where it can be imported and run offline (it needs a tiktoken download and nbconvert; when it
cannot, the reason is printed and its figure is "n/a").

Run: `python -m benchmarks build_corpus`.
"""

from __future__ import annotations

import math
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

N_FILES = 50_000
SEED = 20250401
MAX_TOKENS = 2048
SAMPLE = 2_000  # files the official chunker is timed on (it is much slower), and ours beside it
GOAL_BYTES = 2 * 1024**3
OUT = Path("bench-out") / "build_corpus"
REPO = OUT / f"repo-{N_FILES}-{SEED}"
MIX = ((".py", 0.4, 3500), (".ts", 0.2, 3000), (".md", 0.3, 4500), (".php", 0.1, 3500))  # ext, share, mean bytes

_WORDS = (
    "value",
    "request",
    "client",
    "config",
    "model",
    "index",
    "token",
    "result",
    "handler",
    "buffer",
    "query",
    "route",
    "cache",
    "stream",
    "parse",
    "render",
    "update",
    "user",
    "event",
    "option",
    "session",
    "data",
)


def _ident(rng: random.Random) -> str:
    return "_".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))


def _python_part(rng: random.Random) -> str:
    name, arg = _ident(rng), _ident(rng)
    body = "".join(f"    {_ident(rng)} = {arg}.{_ident(rng)}({rng.randint(0, 99)})\n" for _ in range(rng.randint(2, 9)))
    doc = f'    """Return the {_ident(rng)} of {arg}."""\n'
    return f"\n\ndef {name}({arg}: Any) -> Any:\n{doc}{body}    return {arg}\n"


def _typescript_part(rng: random.Random) -> str:
    body = "".join(
        f"    const {_ident(rng)} = this.{_ident(rng)}({rng.randint(0, 9)});\n" for _ in range(rng.randint(2, 8))
    )
    return f"export function {_ident(rng)}(input: string): number {{\n{body}    return input.length;\n}}\n\n"


def _markdown_part(rng: random.Random) -> str:
    words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(20, 80)))
    return f"## {_ident(rng).title()}\n\nThe {words}.\n\n```python\nprint({_ident(rng)})\n```\n\n"


def _php_part(rng: random.Random) -> str:
    body = "".join(
        f"        ${_ident(rng)} = $this->{_ident(rng)}({rng.randint(0, 9)});\n" for _ in range(rng.randint(2, 8))
    )
    return f"function {_ident(rng)}($request)\n{{\n{body}        return $request;\n}}\n\n"


# extension -> (file head, maker of one top-level unit: a function, a section)
KINDS: dict[str, tuple[str, Callable[[random.Random], str]]] = {
    ".py": ("import os\nimport sys\nfrom typing import Any\n\n", _python_part),
    ".ts": ("import { Injectable } from '@angular/core';\n\n", _typescript_part),
    ".md": ("# The guide\n\n", _markdown_part),
    ".php": ("<?php\n\nnamespace App\\Http;\n\n", _php_part),
}
POOL = 3000  # units made per kind; files draw from them (generating every unit afresh costs minutes)


def generate() -> tuple[int, int]:
    """(files, bytes) of the synthetic repository, made once and reused (a marker says it is complete)."""
    done = REPO.with_suffix(".done")
    if done.is_file():
        files, size = map(int, done.read_text().split())
        return files, size
    rng = random.Random(SEED)
    pools = {ext: [make(rng) for _ in range(POOL)] for ext, (_, make) in KINDS.items()}
    total = 0
    for i in range(N_FILES):
        ext, _, mean = rng.choices(MIX, weights=[m[1] for m in MIX])[0]
        size = int(min(200_000, rng.lognormvariate(math.log(mean) - 0.5, 1.0)))
        parts, n = [KINDS[ext][0]], len(KINDS[ext][0])
        while n < size:
            parts.append(pools[ext][rng.randrange(POOL)])
            n += len(parts[-1])
        path = REPO / f"pkg{i % 97}" / f"mod{i % 13}" / f"file{i}{ext}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(parts), encoding="utf-8")
        total += n
    done.write_text(f"{N_FILES} {total}\n")
    return N_FILES, total


_CHILD = """
import json, sys, time
from pathlib import Path
from freshstack_hf.build import corpus
from freshstack_hf.build.config import parse_topic
from freshstack_hf.build.stage import StageContext
repo, work = sys.argv[1], sys.argv[2]
cfg = parse_topic({"topic": "bench", "questions": {"source": "q", "tags": ["x"]},
                   "corpus": {"repositories": [{"source": repo, "keyword": "bench"}], "max_tokens": %d}})
record = corpus.run(StageContext(cfg, work=Path(work), out=Path(work) / "repo", show_progress=False))
print(json.dumps({k: record[k] for k in ("files", "chunks", "seconds", "near_empty_dropped", "skipped")}))
"""


def _ours_in_subprocess() -> tuple[dict, int]:
    """(the stage's record, the child's peak RSS in bytes)."""
    import json

    done = subprocess.run(
        [sys.executable, "-c", _CHILD % MAX_TOKENS, str(REPO.resolve()), str(OUT / "work")],
        capture_output=True,
        text=True,
        check=True,
    )
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return json.loads(done.stdout.strip().splitlines()[-1]), peak_kb * 1024


def _read_floor(files: list) -> float:
    from freshstack_hf.build.files import load_text

    start = time.perf_counter()
    for rel, path in files:
        load_text(path, rel, 2_000_000)
    return time.perf_counter() - start


def _official(sample: list) -> tuple[float | None, str]:
    """Seconds for the official chunker on `sample`, or (None, why it cannot run here)."""
    reasons = []
    try:
        from freshstack.chunking.chunker import UniversalFileChunker
    except Exception as exc:  # its module imports nbconvert/traitlets, semchunk, tree_sitter_language_pack
        reasons.append(f"import: {type(exc).__name__}: {str(exc).splitlines()[0][:80]}")
    try:
        import tiktoken

        tiktoken.get_encoding("cl100k_base")  # its default tokenizer: a download on first use
    except Exception as exc:
        reasons.append(f"tiktoken cl100k_base: {type(exc).__name__} (no network)")
    if reasons:
        return None, "; ".join(reasons)
    chunker = UniversalFileChunker(max_tokens=MAX_TOKENS)
    start = time.perf_counter()
    for rel, path in sample:
        chunker.chunk(path.read_text(encoding="utf-8"), {"file_path": rel})
    return time.perf_counter() - start, ""


def _ours_in_process(sample: list) -> float:
    from freshstack_hf.build.chunking import Chunker
    from freshstack_hf.build.files import load_text
    from freshstack_hf.build.tokenizers import get_tokenizer

    chunker = Chunker(get_tokenizer("regex"), MAX_TOKENS, 5)
    start = time.perf_counter()
    for rel, path in sample:
        text, _ = load_text(path, rel, 2_000_000)
        chunker.chunk(rel, text)
    return time.perf_counter() - start


def main() -> None:
    from freshstack_hf.build.files import walk_files

    start = time.perf_counter()
    n_files, n_bytes = generate()
    print(
        f"  synthetic repository: {n_files} files, {n_bytes / 1e6:.0f} MB ({REPO}); "
        f"ready in {time.perf_counter() - start:.1f} s"
    )

    record, peak = _ours_in_subprocess()
    ours_fps = record["files"] / record["seconds"]
    print(
        f"  ours (corpus stage, subprocess): {record['files']} files -> {record['chunks']} chunks in "
        f"{record['seconds']:.1f} s = {ours_fps:,.0f} files/s, {n_bytes / 1e6 / record['seconds']:.1f} MB/s"
    )
    print(
        f"  peak RSS {peak / 1e6:,.0f} MB; goal < {GOAL_BYTES / 1e6:,.0f} MB: "
        f"{'met' if peak < GOAL_BYTES else 'MISSED'} ({peak / GOAL_BYTES:.2f} of the goal)"
    )

    files, _ = walk_files(REPO)
    floor = _read_floor(files)
    print(
        f"  reference, read + decode only: {len(files) / floor:,.0f} files/s; "
        f"ours / read-only = {ours_fps / (len(files) / floor):.2f}x (chunking + Parquet overhead)"
    )

    sample = random.Random(SEED).sample(files, SAMPLE)
    ours_sample = _ours_in_process(sample)
    official, why = _official(sample)
    if official is None:
        print(f"  official freshstack chunker on {SAMPLE} sampled files: n/a (cannot run offline here: {why})")
        print(f"  ours on the same {SAMPLE} files: {SAMPLE / ours_sample:,.0f} files/s; ours / official = n/a")
    else:
        print(
            f"  official freshstack chunker on {SAMPLE} sampled files: {SAMPLE / official:,.0f} files/s; "
            f"ours {SAMPLE / ours_sample:,.0f} files/s; ours / official = {official / ours_sample:.1f}x faster"
        )
