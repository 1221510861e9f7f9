"""What happened to every judged document of an old snapshot in a new one: unchanged, changed, moved or deleted.

A dated snapshot re-chunks its repositories at newer commits, so a document judged on the old snapshot may keep its
id and text, be edited, travel to another file or repository, or vanish. The classes are decided from the corpora
alone (ids, texts, `repo`/`path` metadata), in this order, first match wins:

1. `unchanged`: the new corpus has the same `_id` with byte-identical text.
2. `changed`, offsets shifted: the identical text sits in the *same file* (same repo and path) under another id,
   because something earlier in the file changed; `new_id` names it.
3. `moved`: the identical text (same SHA-1) is in the new corpus under another file (other path or repository);
   `new_id` names it (the smallest id when several hold it, all of them in `new_ids`).
4. `changed`: the new corpus still has documents from the same file, but neither this id with this text nor this
   text anywhere: the file was edited (`detail` says whether the id survived with other text).
5. `deleted`: no document of the new corpus comes from that file and the text is nowhere in it.

"Changed" is therefore always a same-file outcome and "moved" always a cross-file one: a text that survives only in
another file is moved, even when the old file still exists. A judged id missing from the old corpus (a judgment
without its document) is `unknown`, counted apart rather than guessed.

Each fate names where the document was (`repo` at `old_commit`) and where it is now (`new_repo` at `new_commit`):
the same repository unless it moved to another one, and none ("") when its repository is gone. Naming the new
repository beside its commit keeps a move from docs@b to manual@d from reading as docs at manual's commit.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

from freshstack_hf.records import Doc

CLASSES = ("unchanged", "changed", "moved", "deleted")
UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class DocFate:
    """One judged document of the old snapshot and where it is (or is not) in the new one."""

    doc_id: str
    fate: str
    new_id: str | None = None
    new_ids: tuple[str, ...] = ()
    detail: str = ""
    repo: str = ""  # where the old snapshot had it, at `old_commit`
    path: str = ""
    old_commit: str = ""
    new_repo: str = ""  # where the new snapshot has it (or its file), at `new_commit`; "" when the repository is gone
    new_commit: str = ""


@dataclass(frozen=True, slots=True)
class FateReport:
    """Per-document fates with their counts and, per class, the (repo at old commit -> new repo at new commit) they
    came from."""

    docs: list[DocFate]
    counts: dict[str, int] = field(default_factory=dict)
    commits: dict[str, list[dict[str, object]]] = field(default_factory=dict)

    def as_json(self) -> dict:
        return {"counts": self.counts, "commits": self.commits, "docs": [asdict(d) for d in self.docs]}


def text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def file_of(doc: Doc) -> tuple[str, str]:
    """(repo, path) of a chunk: its metadata, else parsed from the official id `{repo}/{path}_{start}_{end}`."""
    if doc.repo or doc.path:
        return doc.repo, doc.path
    stem = doc.doc_id.rsplit("_", 2)[0] if doc.doc_id.count("_") >= 2 else doc.doc_id
    repo, _, path = stem.partition("/")
    return repo, path


class _NewCorpus:
    """The new corpus indexed three ways: by id, by text hash, by file; and each repo's commit."""

    def __init__(self, docs: Iterable[Doc]) -> None:
        self.by_id: dict[str, Doc] = {}
        self.by_text: dict[str, list[Doc]] = defaultdict(list)
        self.files: set[tuple[str, str]] = set()
        self.repos: set[str] = set()
        self.commit: dict[str, str] = {}
        for doc in docs:
            self.by_id[doc.doc_id] = doc
            self.by_text[text_hash(doc.text)].append(doc)
            repo, path = file_of(doc)
            self.files.add((repo, path))
            self.repos.add(repo)
            if doc.commit:
                self.commit.setdefault(repo, doc.commit)


def classify(old: Doc, new: _NewCorpus) -> DocFate:
    """The fate of one old document (see the module docstring for the rule order)."""
    repo, path = file_of(old)
    base = {"doc_id": old.doc_id, "repo": repo, "path": path, "old_commit": old.commit}
    same_id = new.by_id.get(old.doc_id)
    here = {**base, "new_repo": repo}  # fates that stay in the document's own repository
    if same_id is not None and same_id.text == old.text:
        return DocFate(fate="unchanged", new_id=old.doc_id, new_commit=same_id.commit, **here)
    holders = [d for d in new.by_text.get(text_hash(old.text), []) if d.text == old.text]
    in_file = sorted((d for d in holders if file_of(d) == (repo, path)), key=lambda d: d.doc_id)
    if in_file:
        ids = tuple(d.doc_id for d in in_file)
        return DocFate(
            fate="changed", new_id=ids[0], new_ids=ids, detail="offsets shifted", new_commit=in_file[0].commit, **here
        )
    elsewhere = sorted(holders, key=lambda d: d.doc_id)
    if elsewhere:
        ids = tuple(d.doc_id for d in elsewhere)
        to_repo, to_path = file_of(elsewhere[0])
        detail = f"to {to_repo}/{to_path}" if to_repo != repo else f"to {to_path}"
        return DocFate(
            fate="moved",
            new_id=ids[0],
            new_ids=ids,
            detail=detail,
            new_repo=to_repo,
            new_commit=elsewhere[0].commit,
            **base,
        )
    commit = new.commit.get(repo, "")
    if (repo, path) in new.files:
        if same_id is not None:
            return DocFate(
                fate="changed", new_id=old.doc_id, detail="id kept, text edited", new_commit=same_id.commit, **here
            )
        return DocFate(fate="changed", detail="text edited", new_commit=commit, **here)
    if repo in new.repos:
        return DocFate(fate="deleted", detail="file gone", new_commit=commit, **here)
    return DocFate(fate="deleted", detail="repo gone", **base)


def document_fates(judged: Iterable[str], old_docs: Iterable[Doc], new_docs: Iterable[Doc]) -> FateReport:
    """Classify every judged old document id against the new corpus (ids sorted, so the list is stable)."""
    old_by_id = {d.doc_id: d for d in old_docs}
    new = _NewCorpus(new_docs)
    fates = []
    for doc_id in sorted(set(judged)):
        old = old_by_id.get(doc_id)
        if old is None:
            fates.append(DocFate(doc_id=doc_id, fate=UNKNOWN, detail="judged but not in the old corpus"))
        else:
            fates.append(classify(old, new))
    counts = {c: 0 for c in CLASSES}
    counts.update(Counter(f.fate for f in fates))
    return FateReport(fates, counts, _commits(fates))


def _commits(fates: list[DocFate]) -> dict[str, list[dict[str, object]]]:
    """Per class, how many documents went from each (repo, old commit) to each (new repo, new commit)."""
    tally: dict[str, Counter] = defaultdict(Counter)
    for f in fates:
        tally[f.fate][(f.repo, f.old_commit, f.new_repo, f.new_commit)] += 1
    return {
        fate: [
            {"repo": repo, "old_commit": old, "new_repo": new_repo, "new_commit": new, "documents": n}
            for (repo, old, new_repo, new), n in sorted(counter.items())
        ]
        for fate, counter in sorted(tally.items())
    }
