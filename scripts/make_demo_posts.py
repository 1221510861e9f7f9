"""Regenerate the demo topic's Stack Exchange dump: freshstack_hf/demo_data/Posts.xml and sources.json.

The demo builds a small real topic offline: Stack-Overflow-style questions about the libraries installed in the
project's virtual environment (datasets, huggingface_hub, gradio, pandas, sentence_transformers), whose accepted
answers state facts that can be read in those libraries' installed source files. sources.json lists, for each kept
question, the site-packages files (relative paths) where the facts of its accepted answer were verified.

Posts are written in a light markup turned into Stack Overflow HTML: blank lines separate paragraphs, ``` fences
code blocks, `backticks` mark inline code and lines starting with "- " make a bullet list.

Besides the 44 answered on-topic questions the dump holds 6 questions the `questions` stage must drop: 2 without an
accepted answer, 2 off-topic (javascript), 1 dated 2023 (outside the 2025-01-01..2026-10-31 window) and 1 whose
accepted answer is missing from the file.

Usage (from the repository root):  python scripts/make_demo_posts.py
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from xml.sax.saxutils import quoteattr

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "freshstack_hf" / "demo_data"

_INLINE = re.compile(r"`([^`]+)`")


def _inline(text: str) -> str:
    parts = _INLINE.split(text)
    out = []
    for i, part in enumerate(parts):
        out.append(f"<code>{html.escape(part, quote=False)}</code>" if i % 2 else html.escape(part, quote=False))
    return "".join(out)


def md(text: str) -> str:
    """The light markup described in the module docstring -> Stack Overflow style HTML."""
    blocks: list[str] = []
    lines = text.strip("\n").split("\n")
    i = 0
    para: list[str] = []
    items: list[str] = []

    def flush() -> None:
        if para:
            blocks.append("<p>" + _inline(" ".join(s.strip() for s in para)) + "</p>")
            para.clear()
        if items:
            blocks.append("<ul>\n" + "\n".join(f"<li>{_inline(it)}</li>" for it in items) + "\n</ul>")
            items.clear()

    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            code: list[str] = []
            i += 1
            while not lines[i].startswith("```"):
                code.append(lines[i])
                i += 1
            blocks.append("<pre><code>" + html.escape("\n".join(code) + "\n", quote=False) + "</code></pre>")
        elif line.startswith("- "):
            if para:
                flush()
            items.append(line[2:].strip())
        elif items and line.startswith("  ") and line.strip():
            items[-1] += " " + line.strip()  # continuation of a list item
        elif not line.strip():
            flush()
        else:
            if items:
                flush()
            para.append(line)
        i += 1
    flush()
    return "\n".join(blocks) + "\n"


class Dump:
    def __init__(self, first_id: int) -> None:
        self.next_id = first_id
        self.rows: list[tuple[int, list[tuple[str, object]]]] = []
        self.sources: dict[str, list[str]] = {}
        self.library: dict[str, str] = {}

    def _id(self) -> int:
        i = self.next_id
        self.next_id += 1
        return i

    def question(
        self,
        *,
        date: str,
        tags: list[str],
        title: str,
        body: str,
        answer: str | None,
        answer_date: str | None = None,
        sources: list[str] | None = None,
        score: int = 3,
        views: int = 250,
        answer_score: int = 4,
        others: list[tuple[str, str, int]] = (),
        accepted_missing: bool = False,
        library: str | None = None,
    ) -> int:
        """Add a question, its accepted answer (if any) and other answers (date, body, score)."""
        qid = self._id()
        answers = []
        acc = None
        if answer is not None:
            acc = self._id()
            answers.append((acc, answer_date or date, answer, answer_score))
        for odate, obody, oscore in others:
            answers.append((self._id(), odate, obody, oscore))
        if accepted_missing:
            acc = qid + 97  # an answer id that is not in this dump
        attrs: list[tuple[str, object]] = [("Id", qid), ("PostTypeId", 1)]
        if acc is not None:
            attrs.append(("AcceptedAnswerId", acc))
        attrs += [
            ("CreationDate", date),
            ("Score", score),
            ("ViewCount", views),
            ("Body", md(body)),
            ("OwnerUserId", 1000 + qid % 211),
            ("LastActivityDate", max([date] + [a[1] for a in answers])),
            ("Title", title),
            ("Tags", "".join(f"<{t}>" for t in tags)),
            ("AnswerCount", len(answers)),
            ("CommentCount", qid % 3),
            ("ContentLicense", "CC BY-SA 4.0"),
        ]
        self.rows.append((qid, attrs))
        for aid, adate, abody, ascore in answers:
            self.rows.append(
                (
                    aid,
                    [
                        ("Id", aid),
                        ("PostTypeId", 2),
                        ("ParentId", qid),
                        ("CreationDate", adate),
                        ("Score", ascore),
                        ("Body", md(abody)),
                        ("OwnerUserId", 2000 + aid % 173),
                        ("LastActivityDate", adate),
                        ("CommentCount", aid % 2),
                        ("ContentLicense", "CC BY-SA 4.0"),
                    ],
                )
            )
        if sources:
            self.sources[str(qid)] = sources
        if library:
            self.library[str(qid)] = library
        return qid

    def xml(self) -> str:
        out = ['<?xml version="1.0" encoding="utf-8"?>', "<posts>"]
        for _, attrs in sorted(self.rows, key=lambda r: r[0]):
            out.append("  <row " + " ".join(f"{k}={quoteattr(str(v), {chr(10): '&#xA;'})}" for k, v in attrs) + " />")
        out.append("</posts>")
        return "\n".join(out) + "\n"


D = Dump(first_id=79120)

# ---------------------------------------------------------------------------------------------------------------
# datasets (tag huggingface-datasets)
# ---------------------------------------------------------------------------------------------------------------
DS = ["python", "huggingface-datasets"]

D.question(
    library="datasets",
    date="2025-08-04T09:12:31.407",
    tags=DS,
    title="load_dataset raises 'Dataset scripts are no longer supported' even with trust_remote_code=True",
    score=11,
    views=2841,
    body="""
Our team keeps a small corpus as a folder with JSON Lines files and a loading script `my_corpus/my_corpus.py`
that defines a `GeneratorBasedBuilder`. It worked for two years. After upgrading `datasets` the same call fails:

```
from datasets import load_dataset

ds = load_dataset("./my_corpus", trust_remote_code=True)
```

```
ERROR:datasets.load:`trust_remote_code` is not supported anymore.
Please check that the Hugging Face dataset './my_corpus' isn't based on a loading script and remove `trust_remote_code`.
Traceback (most recent call last):
  File "prepare.py", line 3, in <module>
    ds = load_dataset("./my_corpus", trust_remote_code=True)
  ...
RuntimeError: Dataset scripts are no longer supported, but found my_corpus.py
```

I thought `trust_remote_code=True` was exactly the switch that allows running the script. Is there another flag
to re-enable scripts, or what is the intended way to load such a folder now? The script only reads the jsonl
files and renames two fields.
""",
    answer_date="2025-08-04T10:03:12.220",
    answer_score=17,
    answer="""
There is no flag any more. Dataset loading scripts were removed: when `load_dataset` finds a Python file named
after the dataset (`my_corpus.py` in `my_corpus/`), or when the path itself ends with the script name, it raises
`RuntimeError: Dataset scripts are no longer supported, but found my_corpus.py`.

`trust_remote_code` is simply popped from the keyword arguments; if it is true, `load_dataset` only logs the error
"`trust_remote_code` is not supported anymore" and continues, so it cannot help.

Convert the data to a standard format and use a packaged builder instead. Your script only renames fields, so:

```
ds = load_dataset("json", data_files={"train": "my_corpus/train.jsonl"})
ds = ds.rename_column("txt", "text")
```

Delete `my_corpus.py` from the folder (otherwise it is still found), or convert the files to Parquet and push them
to the Hub, which is what the error message recommends for script-based datasets.
""",
    sources=["datasets/load.py"],
)

D.question(
    library="datasets",
    date="2025-09-17T14:40:05.113",
    tags=[*DS, "pytorch"],
    title="TypeError: object of type 'IterableDataset' has no len() after switching to streaming=True",
    score=6,
    views=1377,
    body="""
My corpus no longer fits on the training box, so I moved to streaming:

```
ds = load_dataset("parquet", data_files="shards/*.parquet", split="train", streaming=True)
ds = ds.shuffle(seed=0)
steps_per_epoch = len(ds) // 32
loader = DataLoader(ds, batch_size=32)
```

```
TypeError: object of type 'IterableDataset' has no len()
```

I removed the `len` call and hard-coded the number of steps, but now the first few hundred batches are visibly
not shuffled: they all come from the same source file, in almost the original order. With the regular (non
streaming) `Dataset` the same `shuffle(seed=0)` gave a perfect permutation.

How do I get the length of a streamed dataset, and how do I make `shuffle` actually mix the data?
""",
    answer_date="2025-09-17T16:21:44.901",
    answer_score=9,
    answer="""
With `streaming=True` you get an `IterableDataset`, which has no `__len__`: rows are only known while you iterate.
Take the number of rows from the dataset card or the Parquet metadata, or iterate once; use `take(n)` and
`skip(n)` to cut a subset.

`IterableDataset.shuffle` is a buffer shuffle, not a permutation. It fills a buffer with `buffer_size` examples
(default `buffer_size=1000`) and samples from that buffer, and it also shuffles the order of the shards, reading up
to `max_buffer_input_shards` shards (default 10) at a time. A bigger buffer gives a better mix:

```
ds = ds.shuffle(seed=0, buffer_size=50_000)
for epoch in range(3):
    ds.set_epoch(epoch)  # reshuffle shards and buffer every epoch
    for batch in DataLoader(ds, batch_size=32):
        ...
```

Note that after `skip` or `take` the shard order is kept and only one shard at a time fills the buffer.
""",
    sources=["datasets/iterable_dataset.py"],
)

D.question(
    library="datasets",
    date="2025-11-02T08:05:49.650",
    tags=[*DS, "scikit-learn"],
    title="train_test_split with stratify_by_column: 'Stratifying by column is only supported for ClassLabel column'",
    score=4,
    views=912,
    body="""
I load a labelled CSV (columns `text` and `label`, where label is the string `spam` or `ham`) and want a
stratified 80/20 split, like `train_test_split(..., stratify=y)` in scikit-learn:

```
ds = load_dataset("csv", data_files="sms.csv", split="train")
splits = ds.train_test_split(test_size=0.2, stratify_by_column="label", seed=42)
```

```
ValueError: Stratifying by column is only supported for ClassLabel column, and column label is Value.
```

`ds.features` shows `{'text': Value('string'), 'label': Value('string')}`. Do I really have to map the labels to
integers by hand? And what does the returned object look like, is it a tuple like in sklearn?
""",
    answer_date="2025-11-02T08:31:10.002",
    answer_score=8,
    answer="""
Yes, stratification only works on a `ClassLabel` feature; the CSV builder infers `Value('string')`. You don't
need to map by hand, `class_encode_column` casts the column to `ClassLabel` (nulls are not made a class unless
`include_nulls=True`):

```
ds = ds.class_encode_column("label")
splits = ds.train_test_split(test_size=0.2, stratify_by_column="label", seed=42)
train, test = splits["train"], splits["test"]
```

`train_test_split` returns a `DatasetDict` with the keys `"train"` and `"test"`, not a tuple. `shuffle=True` is the
default, `seed` fixes the permutation, and if both `test_size` and `train_size` are `None` the test size is 0.25.
""",
    sources=["datasets/arrow_dataset.py"],
)

D.question(
    library="datasets",
    date="2026-01-13T19:22:18.311",
    tags=[*DS, "pandas"],
    title="Column __index_level_0__ appears after Dataset.from_pandas on a filtered DataFrame",
    score=5,
    views=684,
    body="""
I build a dataset from a pandas DataFrame and push it to the Hub. When I filter the frame first, the dataset gets
an extra column:

```
df = pd.read_parquet("reviews.parquet")
df = df[df["lang"] == "en"]
ds = Dataset.from_pandas(df)
print(ds.column_names)
# ['review', 'stars', 'lang', '__index_level_0__']
```

Without the filter the column is not there. The dataset viewer on the Hub now shows `__index_level_0__` as a
feature, which confuses people. Where does it come from and what is the clean way to avoid it? I'd rather not call
`remove_columns` after every conversion.
""",
    answer_date="2026-01-13T20:07:41.598",
    answer_score=7,
    answer="""
It's the pandas index. `Dataset.from_pandas` has a `preserve_index` argument whose default `None` stores the index
as a column, except for a `RangeIndex`, which is kept as metadata only. A fresh frame has a `RangeIndex`; after the
boolean filter the index is an ordinary integer index with gaps, so it is written as `__index_level_0__`.

Either drop it at conversion time:

```
ds = Dataset.from_pandas(df, preserve_index=False)
```

or reset the index first with `df.reset_index(drop=True)`. Use `preserve_index=True` if you actually want the index
stored as a column.

Side note: a dataset made with `from_pandas` lives in memory and has no cache directory; save it with
`save_to_disk` if you want it on disk.
""",
    sources=["datasets/arrow_dataset.py"],
)

D.question(
    library="datasets",
    date="2025-06-23T11:47:02.777",
    tags=DS,
    title="ValueError when calling load_dataset on a folder written by save_to_disk",
    score=3,
    views=1502,
    body="""
My preprocessing job tokenizes a dataset and saves it:

```
tokenized.save_to_disk("artifacts/tokenized")
```

The training job then does

```
ds = load_dataset("artifacts/tokenized")
```

and fails with:

```
ValueError: You are trying to load a dataset that was saved using `save_to_disk`. Please use `load_from_disk` instead.
```

Why are there two different functions? The folder contains Arrow files, and `load_dataset("arrow", ...)` exists. Is
`load_from_disk` slower, and can I control how many files `save_to_disk` writes? It wrote a lot of
`data-000xx-of-000yy.arrow` files for a 40 GB dataset.
""",
    answer_date="2025-06-24T07:12:55.130",
    answer_score=5,
    answer="""
`save_to_disk` writes Arrow shards plus a `state.json` and `dataset_info.json` that describe the `Dataset` (or a
`dataset_dict.json` for a `DatasetDict`). `load_dataset` checks whether the path contains that `state.json` and
refuses with exactly this `ValueError`, because it is meant for raw data files, not for a serialized dataset.

Use the matching reader:

```
from datasets import load_from_disk
ds = load_from_disk("artifacts/tokenized")  # Dataset or DatasetDict
```

It memory-maps the Arrow files, so it is fast; pass `keep_in_memory=True` only if you want a copy in RAM.

The number of files comes from `max_shard_size`, which defaults to `"500MB"`. Pass a bigger value or a fixed
`num_shards` (not both):

```
tokenized.save_to_disk("artifacts/tokenized", max_shard_size="2GB")
```
""",
    sources=["datasets/load.py", "datasets/arrow_dataset.py", "datasets/config.py"],
)

D.question(
    library="datasets",
    date="2026-02-09T15:58:20.046",
    tags=[*DS, "nlp"],
    title="Batched map that splits documents into chunks fails: expected length 1000 but got length 3817",
    score=8,
    views=1190,
    body="""
I want to split long documents into overlapping windows so that one input row becomes several output rows:

```
def chunk(batch):
    out = {"text": []}
    for doc in batch["text"]:
        out["text"].extend(split_into_windows(doc, size=512, stride=128))
    return out

ds = ds.map(chunk, batched=True)
```

```
pyarrow.lib.ArrowInvalid: Column 1 named url expected length 1000 but got length 3817
```

The dataset has the columns `text`, `url` and `id`. I read that batched mapping is allowed to change the number of
rows, so what am I doing wrong? I also tried `batch_size=1`, which runs but is very slow on 2M documents.
""",
    answer_date="2026-02-09T16:20:03.770",
    answer_score=12,
    answer="""
A batched function may indeed return more (or fewer) examples than it received, but the columns you don't return
are kept from the input batch, so `url` and `id` still have 1000 rows (the default `batch_size=1000`) while `text`
has 3817.

Drop the old columns with `remove_columns`; they are removed before the output of the function is added:

```
ds = ds.map(chunk, batched=True, remove_columns=ds.column_names, num_proc=8, desc="chunking")
```

If you need `url` and `id` on every chunk, repeat them yourself inside the function
(`out["url"].extend([url] * n)`) and still pass `remove_columns`. `num_proc` runs the map in several processes, the
function must be picklable for that.
""",
    sources=["datasets/arrow_dataset.py"],
)

D.question(
    library="datasets",
    date="2025-10-28T06:33:47.912",
    tags=[*DS, "audio", "torchaudio"],
    title="ImportError: To support decoding audio data, please install 'torchcodec'",
    score=14,
    views=3920,
    body="""
After upgrading, reading an audio example crashes. This used to give me a dict with `array` and `sampling_rate`
(decoded with soundfile):

```
ds = load_dataset("audiofolder", data_dir="clips", split="train")
sample = ds[0]["audio"]
```

```
Traceback (most recent call last):
  ...
  File ".../datasets/features/audio.py", line 186, in decode_example
    raise ImportError("To support decoding audio data, please install 'torchcodec'.")
ImportError: To support decoding audio data, please install 'torchcodec'.
```

I have `soundfile` and `librosa` installed. Do I really need another dependency? Also, my model expects 16 kHz
mono while the clips are 44.1 kHz stereo, previously I resampled with librosa in a `map`.
""",
    answer_date="2025-10-28T07:15:30.004",
    answer_score=19,
    answer="""
Yes. The `Audio` feature now decodes with torchcodec: an example's audio value is a
`torchcodec.decoders.AudioDecoder` object, and soundfile/librosa are no longer used for decoding. Install
`torchcodec` (it needs FFmpeg libraries on the system).

Resampling and down-mixing are done by the feature itself, no `map` needed:

```
from datasets import Audio
ds = ds.cast_column("audio", Audio(sampling_rate=16000, num_channels=1))
audio = ds[0]["audio"]
samples = audio.get_all_samples()  # data tensor with shape (num_channels, num_samples)
```

Old code that reads `audio["array"]` and `audio["sampling_rate"]` keeps working, the decoder supports those two
keys. `sampling_rate=None` keeps the native rate; `num_channels` accepts `None`, 1 or 2. For the raw file content
use `Audio(decode=False)`, which returns `{"path": ..., "bytes": ...}` and needs no decoder.
""",
    sources=["datasets/features/audio.py", "datasets/arrow_dataset.py"],
)

D.question(
    library="datasets",
    date="2026-03-30T12:01:09.388",
    tags=[*DS, "caching"],
    title="datasets map() cache files fill up my home directory, how do I move or disable the cache?",
    score=2,
    views=433,
    body="""
On our cluster my home quota is 20 GB. Every experiment with `Dataset.map` leaves `cache-<hash>.arrow` files and my
jobs now die with `OSError: [Errno 122] Disk quota exceeded`.

```
ds = load_dataset("json", data_files="data/*.jsonl", split="train")
ds = ds.map(normalize)  # writes ~8 GB of cache
ds = ds.filter(lambda x: len(x["text"]) > 50)
```

Two questions:

- How do I point the cache to `/scratch/$USER` instead of my home directory?
- While iterating on the preprocessing I don't want any cache at all, I'd rather recompute every time. Is there
  a global switch?
""",
    answer_date="2026-03-30T12:48:52.745",
    answer_score=3,
    answer="""
The cache folder comes from environment variables read when `datasets` is imported: `HF_DATASETS_CACHE`, which
defaults to `$HF_HOME/datasets`, i.e. `~/.cache/huggingface/datasets` (`XDG_CACHE_HOME` is respected). Set it
before starting Python:

```
export HF_DATASETS_CACHE=/scratch/$USER/hf_datasets
```

For the second part, `datasets.disable_caching()` is the global switch. With caching disabled, cache files are
always recreated, are written to a temporary directory that is deleted when the session closes and get a random
name instead of the fingerprint. It does not affect `load_dataset` itself (use `download_mode` there).

Per call you can also pass `load_from_cache_file=False` to force recomputation, or `keep_in_memory=True` to skip
writing a cache file for that `map`.
""",
    sources=["datasets/config.py", "datasets/fingerprint.py", "datasets/arrow_dataset.py"],
)

D.question(
    library="datasets",
    date="2026-05-06T10:26:40.517",
    tags=[*DS, "pytorch", "dataloader"],
    title="NotImplementedError: Loading a streaming dataset in parallel with num_proc is not implemented",
    score=3,
    views=298,
    body="""
Reading a big Parquet dataset from object storage is slow, so I tried to parallelize the streaming load:

```
ds = load_dataset(
    "parquet",
    data_files="s3://bucket/corpus/*.parquet",
    split="train",
    streaming=True,
    num_proc=8,
)
```

```
NotImplementedError: Loading a streaming dataset in parallel with `num_proc` is not implemented. To parallelize
streaming, you can wrap the dataset with a PyTorch DataLoader using `num_workers` > 1 instead.
```

I followed the hint and used `DataLoader(ds, batch_size=64, num_workers=16)`, but the log says it stopped some of
my workers. What decides how many workers are really used?
""",
    answer_date="2026-05-06T11:02:18.093",
    answer_score=4,
    answer="""
`num_proc` is only for non-streaming loading. For an `IterableDataset` the parallelism comes from the DataLoader:
each worker gets some of the dataset's shards (here, the Parquet files), so at most `ds.num_shards` workers can do
anything. When `num_workers` is larger you get the warning "Too many dataloader workers: 16 (max is
dataset.num_shards=6). Stopping 10 dataloader workers."

So either use `num_workers <= ds.num_shards`, split the data into more files, or try `ds = ds.reshard()`, which may
increase `num_shards` depending on the file format:

```
ds = ds.reshard()
print(ds.num_shards)
loader = DataLoader(ds, batch_size=64, num_workers=min(16, ds.num_shards))
```
""",
    sources=["datasets/load.py", "datasets/iterable_dataset.py"],
)

# ---------------------------------------------------------------------------------------------------------------
# huggingface_hub (tag huggingface-hub)
# ---------------------------------------------------------------------------------------------------------------
HH = ["python", "huggingface-hub"]

D.question(
    library="huggingface_hub",
    date="2025-03-11T13:14:27.820",
    tags=HH,
    title="hf_hub_download raises RepositoryNotFoundError for a public dataset repo",
    score=9,
    views=4410,
    body="""
The repository `my-org/eval-sets` is a public dataset; I can open it in the browser without logging in. Downloading
one file from a script fails:

```
from huggingface_hub import hf_hub_download

path = hf_hub_download("my-org/eval-sets", "test.jsonl")
```

```
huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error. (Request ID: Root=1-67d0...)

Repository Not Found for url: https://huggingface.co/api/models/my-org/eval-sets/revision/main.
Please make sure you specified the correct `repo_id` and `repo_type`.
If you are trying to access a private or gated repo, make sure you are authenticated and your token has the
required permissions.
```

I ran `hf auth login` anyway and get the same error. The repo id is copied from the page. What else could be wrong?
""",
    answer_date="2025-03-11T13:20:02.117",
    answer_score=21,
    answer="""
Look at the URL in the error: `/api/models/...`. `hf_hub_download` treats `repo_type=None` as `"model"`, so it
looks for a *model* called `my-org/eval-sets`, which does not exist. Pass the type:

```
path = hf_hub_download("my-org/eval-sets", "test.jsonl", repo_type="dataset")
```

The same `repo_type` argument exists on `snapshot_download` and on the `HfApi` methods (`"model"`, `"dataset"` or
`"space"`).

The error message is vague on purpose: the Hub answers the same way for a missing repo and for a private or gated
repo you cannot access, and both are raised as `RepositoryNotFoundError` (`GatedRepoError` is a subclass for gated
repos).
""",
    sources=["huggingface_hub/file_download.py", "huggingface_hub/utils/_http.py", "huggingface_hub/errors.py"],
)

D.question(
    library="huggingface_hub",
    date="2026-02-17T08:41:55.004",
    tags=[*HH, "docker"],
    title="FutureWarning: The HF_HUB_ENABLE_HF_TRANSFER environment variable is deprecated",
    score=7,
    views=1866,
    body="""
Our inference image has had this in the Dockerfile for a long time, because model downloads were much faster with
it:

```
RUN pip install hf_transfer
ENV HF_HUB_ENABLE_HF_TRANSFER=1
```

Since we bumped `huggingface_hub` to 2.x every process prints on import:

```
FutureWarning: The `HF_HUB_ENABLE_HF_TRANSFER` environment variable is deprecated as 'hf_transfer' is not used
anymore. Please use `HF_XET_HIGH_PERFORMANCE` instead ...
```

Does that mean downloads are slow again? Is `hf_transfer` still used at all if it is installed? What should the
Dockerfile look like now?
""",
    answer_date="2026-02-17T09:30:12.561",
    answer_score=10,
    answer="""
`hf_transfer` is not used any more, installed or not; the variable is only checked to print that `FutureWarning`.
Fast transfers now go through Xet storage. The replacement switch is `HF_XET_HIGH_PERFORMANCE`:

```
ENV HF_XET_HIGH_PERFORMANCE=1
```

Remove `hf_transfer` and `HF_HUB_ENABLE_HF_TRANSFER` from the image. If `HF_XET_HIGH_PERFORMANCE` is set, the old
variable no longer triggers the warning, so a mixed environment stays quiet.

Related variables: `HF_XET_CACHE` sets where the Xet chunk cache lives (by default under `HF_HOME`), and
`HF_HUB_DISABLE_XET=1` turns Xet off entirely if you need to debug a download.
""",
    sources=["huggingface_hub/constants.py"],
)

D.question(
    library="huggingface_hub",
    date="2026-03-04T16:09:33.290",
    tags=[*HH, "proxy", "httpx"],
    title="The `proxies` argument is ignored in `hf_hub_download` - how to use a corporate proxy now?",
    score=5,
    views=970,
    body="""
Behind our company proxy I used to pass the proxy explicitly:

```
hf_hub_download(
    "sentence-transformers/all-MiniLM-L6-v2",
    "config.json",
    proxies={"https": "http://proxy.corp.local:3128"},
)
```

After upgrading I get

```
UserWarning: The `proxies` argument is ignored in `hf_hub_download`. To set up proxies, use the HTTP_PROXY /
HTTPS_PROXY environment variables or configure the `httpx2.Client` manually using
`huggingface_hub.set_client_factory`.
```

followed by a connection timeout. We also need a custom CA bundle for the TLS-inspecting proxy. I can't set
environment variables globally on the shared machines. Is there a way to configure this from Python?
""",
    answer_date="2026-03-04T17:44:10.882",
    answer_score=8,
    answer="""
Per-request proxies were dropped when `huggingface_hub` moved away from `requests` (1.x): `proxies` is removed
from the keyword arguments with that warning. You have two options.

- Environment: `HTTP_PROXY` / `HTTPS_PROXY` are honoured by the HTTP client.
- From Python: register a client factory once, before the first request. All `huggingface_hub` calls share the
  client it returns (see `get_session`), so proxy and certificates apply everywhere:

```
import httpx2
from huggingface_hub import set_client_factory

def make_client():
    return httpx2.Client(proxy="http://proxy.corp.local:3128", verify="/etc/ssl/corp-ca.pem")

set_client_factory(make_client)
```

`set_client_factory` closes the current session so the next call builds a new client. Don't close the shared
client yourself. For async code there is `set_async_client_factory`.
""",
    sources=["huggingface_hub/utils/_validators.py", "huggingface_hub/utils/_http.py"],
)

D.question(
    library="huggingface_hub",
    date="2025-12-01T10:52:17.664",
    tags=HH,
    title="snapshot_download warns that local_dir_use_symlinks and resume_download are deprecated and ignored",
    score=4,
    views=1251,
    body="""
This download helper was written a while ago:

```
from huggingface_hub import snapshot_download

snapshot_download(
    repo_id="Qwen/Qwen2.5-0.5B-Instruct",
    local_dir="./models/qwen",
    local_dir_use_symlinks=False,
    resume_download=True,
)
```

It still works, but prints:

```
UserWarning: The `local_dir_use_symlinks` argument is deprecated and ignored in `snapshot_download`. Downloading to
a local directory does not use symlinks anymore.
UserWarning: The `resume_download` argument is deprecated and ignored in `snapshot_download`. Downloads always
resume whenever possible.
```

I specifically need real files in `./models/qwen` (we rsync the folder to machines without the HF cache). Are they
real files now? And will an interrupted download still resume without the flag?
""",
    answer_date="2025-12-01T11:15:40.020",
    answer_score=6,
    answer="""
Yes to both, you can just delete the two arguments.

- `local_dir_use_symlinks`: downloading into `local_dir` no longer uses symlinks into the cache, the files in
  `./models/qwen` are regular files.
- `resume_download`: downloads always resume whenever possible, so the flag has no meaning any more.

Both (and `force_filename`) are stripped from the keyword arguments by the argument validator, which only warns.

One thing to know for rsync: the download keeps its bookkeeping (commit hashes, ETags) in
`./models/qwen/.cache/huggingface/`. Exclude that folder when copying, or keep it if you want later downloads
into the same folder to skip unchanged files.
""",
    sources=["huggingface_hub/utils/_validators.py", "huggingface_hub/_local_folder.py"],
)

D.question(
    library="huggingface_hub",
    date="2025-05-20T07:30:44.871",
    tags=[*HH, "hpc", "slurm"],
    title="How to move the Hugging Face cache from ~/.cache to scratch on an HPC cluster?",
    score=6,
    views=2210,
    body="""
On our cluster `$HOME` is tiny and everything under `~/.cache/huggingface/hub` quickly eats the quota. I tried
setting the directory in my job script right before the download:

```
import os
from huggingface_hub import snapshot_download

os.environ["HF_HOME"] = "/scratch/me/hf"
snapshot_download("BAAI/bge-small-en-v1.5")
```

but the files still land in `~/.cache/huggingface/hub`. I also saw `TRANSFORMERS_CACHE` and `HUGGINGFACE_HUB_CACHE`
mentioned in old answers. Which variable is the right one today, and where does my login token end up if I move
`HF_HOME`? The same job later loads the model through `transformers`, so ideally one setting should cover
both libraries.
""",
    answer_date="2025-05-20T08:02:29.318",
    answer_score=9,
    answer="""
The paths are computed once, when `huggingface_hub` is imported (they are module constants), so setting
`os.environ` after the import has no effect. Export the variables in the job script, or set them before any
import of `huggingface_hub`, `transformers` or `datasets`.

- `HF_HOME` is the root; it defaults to `$XDG_CACHE_HOME/huggingface`, i.e. `~/.cache/huggingface`.
- `HF_HUB_CACHE` is where repos are downloaded; it defaults to `$HF_HOME/hub`. `HUGGINGFACE_HUB_CACHE` is the
  legacy name and is still read as a fallback.
- The token lives in `$HF_HOME/token` unless `HF_TOKEN_PATH` says otherwise, so moving `HF_HOME` means logging in
  again (or setting `HF_TOKEN`).

```
export HF_HOME=/scratch/$USER/hf
```

For a single call you can also pass `cache_dir=` to `snapshot_download` / `hf_hub_download`.
""",
    sources=["huggingface_hub/constants.py"],
)

D.question(
    library="huggingface_hub",
    date="2026-04-08T21:05:13.452",
    tags=[*HH, "offline"],
    title="OfflineModeIsEnabled: Cannot reach ... offline mode is enabled, but the model is in the cache",
    score=3,
    views=645,
    body="""
Our compute nodes have no internet access, so the batch script sets `HF_HUB_OFFLINE=1` and the models are
downloaded beforehand on the login node. Loading the model works, but my own helper that checks the latest commit
fails:

```
from huggingface_hub import HfApi, hf_hub_download

info = HfApi().model_info("intfloat/e5-base-v2")
```

```
huggingface_hub.errors.OfflineModeIsEnabled: Cannot reach https://huggingface.co/api/models/intfloat/e5-base-v2:
offline mode is enabled. To disable it, please unset the `HF_HUB_OFFLINE` environment variable.
```

And `hf_hub_download("intfloat/e5-base-v2", "onnx/model.onnx")` fails with a different error,
`LocalEntryNotFoundError`. Why do these behave differently, and how should code be written so it works on both the
login node and the compute nodes?
""",
    answer_date="2026-04-08T22:10:37.900",
    answer_score=5,
    answer="""
With `HF_HUB_OFFLINE=1` (or `TRANSFORMERS_OFFLINE=1`) every HTTP request made through the library's session raises
`OfflineModeIsEnabled`, a subclass of `ConnectionError`. `model_info` is a pure API call with no cached
equivalent, so it can only fail.

Download functions fall back to the cache. `hf_hub_download` returns the cached path if the file is there; if it
is not (you never downloaded `onnx/model.onnx` on the login node) the failed metadata call plus the cache miss end
in `LocalEntryNotFoundError` ("... we cannot find the requested files in the local cache").

So: download everything you need on the login node (`snapshot_download` with the right `allow_patterns`), and in
shared code guard API calls:

```
from huggingface_hub.errors import OfflineModeIsEnabled
try:
    sha = HfApi().model_info(repo).sha
except OfflineModeIsEnabled:
    sha = None
```

`local_files_only=True` gives cache-only behaviour for a single call; a miss then raises `LocalEntryNotFoundError`
with "Cannot find the requested files in the disk cache and outgoing traffic has been disabled".
""",
    sources=["huggingface_hub/utils/_http.py", "huggingface_hub/errors.py", "huggingface_hub/constants.py"],
)

D.question(
    library="huggingface_hub",
    date="2026-06-15T09:44:58.107",
    tags=HH,
    title="snapshot_download(local_files_only=True) raises IncompleteSnapshotError",
    score=4,
    views=211,
    body="""
I pre-download a model on a machine with internet and later load it offline:

```
# online machine
snapshot_download("google/embeddinggemma-300m", allow_patterns=["*.json", "*.safetensors"])

# offline machine, same cache copied over
path = snapshot_download("google/embeddinggemma-300m", local_files_only=True)
```

```
huggingface_hub.errors.IncompleteSnapshotError: The cached snapshot for 'google/embeddinggemma-300m' (revision
'main', commit 57c2...) is incomplete: 3 file(s) are missing (tokenizer.model, onnx/model.onnx, README.md).
Outgoing traffic is disabled ('local_files_only=True'). Re-run the download with network access to complete the
snapshot.
```

With an older version the second call just returned the folder. I only need the files I downloaded. Is this a bug?
""",
    answer_date="2026-06-15T10:31:22.684",
    answer_score=6,
    answer="""
Not a bug, it's a deliberate check. When the Hub can't be reached (offline, connection error or
`local_files_only=True`), `snapshot_download` compares the cached snapshot with the cached tree listing of that
commit, filtered by `allow_patterns` / `ignore_patterns`. If expected files are missing it raises
`IncompleteSnapshotError` instead of silently returning a partial folder.

Your second call has no patterns, so every file of the repo is expected. Pass the same patterns as during the
download:

```
path = snapshot_download("google/embeddinggemma-300m", local_files_only=True,
                         allow_patterns=["*.json", "*.safetensors"])
```

If a partial folder is fine, catch the error: it is a subclass of `LocalEntryNotFoundError` (so old `except`
clauses still work) and has a `snapshot_path` attribute pointing at the incomplete snapshot.
""",
    sources=["huggingface_hub/_snapshot_download.py", "huggingface_hub/errors.py"],
)

D.question(
    library="huggingface_hub",
    date="2025-07-29T18:20:36.095",
    tags=[*HH, "disk-space"],
    title="delete_revisions from scan_cache_dir does nothing, the cache size stays the same",
    score=2,
    views=540,
    body="""
I want a cron job that removes old revisions from the model cache, keeping only what `main` points to. Following
the docs I wrote:

```
from huggingface_hub import scan_cache_dir

info = scan_cache_dir()
old = [rev.commit_hash
       for repo in info.repos
       for rev in repo.revisions
       if "main" not in rev.refs]
info.delete_revisions(*old)
print(scan_cache_dir().size_on_disk_str)
```

The printed size is exactly the same before and after, and no error is raised. Some of the hashes may already be
gone, does that break it? Is there a CLI alternative for the cron job?
""",
    answer_date="2025-07-29T18:42:19.530",
    answer_score=4,
    answer="""
`delete_revisions` does not delete anything by itself: it returns a `DeleteCacheStrategy`, which lets you inspect
the plan (a dry run) and must then be executed:

```
strategy = info.delete_revisions(*old)
print(f"Will free {strategy.expected_freed_size_str}")
strategy.execute()
```

Unknown hashes are fine: a revision hash that is not in the local cache only produces a warning, no error. Hashes
are unique across repos, so you can mix revisions of different repos in one call.

For a cron job the CLI has `hf cache ls`, `hf cache rm` and `hf cache prune`, which removes detached revisions
(revisions no ref points to) and incomplete downloads; use `--dry-run` to preview and `-y/--yes` to skip the
confirmation prompt.
""",
    sources=["huggingface_hub/utils/_cache_manager.py", "huggingface_hub/cli/cache.py"],
)

D.question(
    library="huggingface_hub",
    date="2026-07-21T12:12:49.880",
    tags=[*HH, "github-actions"],
    title="Which Hugging Face token is used: HF_TOKEN, the saved login, or the Colab secret?",
    score=5,
    views=377,
    body="""
In CI we set a repository secret as `HF_TOKEN` with write access to the org. On my laptop I'm logged in with
`hf auth login` as my personal account, and in Colab notebooks I store a secret also called `HF_TOKEN`. Now a
push from a test script went to the wrong account:

```
from huggingface_hub import get_token, whoami

print(whoami()["name"])
api.upload_file(path_or_fileobj="model.safetensors", path_in_repo="model.safetensors", repo_id="org/model")
```

What is the order in which `huggingface_hub` picks a token? And is there a way to make sure that no token at all
is sent unless I pass one explicitly (for the public downloads in our tests)?
""",
    answer_date="2026-07-21T13:00:01.411",
    answer_score=7,
    answer="""
`get_token()` resolves the token in this order:

- a short-lived token from an OIDC exchange if `HF_OIDC_RESOURCE` is set (Trusted Publishers in CI),
- the `HF_TOKEN` environment variable,
- the token file written by `hf auth login` (`$HF_HOME/token`, or `HF_TOKEN_PATH`),
- the Colab secrets vault (`HF_TOKEN` secret), only inside Google Colab.

So on your laptop an exported `HF_TOKEN` wins over the saved login. Check with `whoami()` or `hf auth whoami`.

To stop the library from sending the stored token implicitly, set `HF_HUB_DISABLE_IMPLICIT_TOKEN=1`: with
`token=None` no token is read from the machine. Pass `token=False` to skip the auth header for one call, or an
explicit `token="hf_..."` for the push.
""",
    sources=["huggingface_hub/utils/_auth.py", "huggingface_hub/constants.py"],
)

# ---------------------------------------------------------------------------------------------------------------
# gradio (tag gradio)
# ---------------------------------------------------------------------------------------------------------------
GR = ["python", "gradio"]

D.question(
    library="gradio",
    date="2025-12-03T14:25:09.338",
    tags=GR,
    title="Gradio 6: custom theme and css passed to gr.Blocks are ignored with a UserWarning",
    score=12,
    views=3302,
    body="""
After upgrading from Gradio 5 my app lost its styling. The code:

```
import gradio as gr

with gr.Blocks(theme=gr.themes.Soft(), css=".gradio-container {max-width: 900px}") as demo:
    gr.Markdown("# Support bot")
    ...

demo.launch()
```

On start-up I get

```
UserWarning: The parameters have been moved from the Blocks constructor to the launch() method in Gradio 6.0:
theme, css. Please pass these parameters to launch() instead.
```

Where exactly do they go now? I also have `js=` and `head=` for an analytics snippet, are those affected too?
""",
    answer_date="2025-12-03T14:51:30.760",
    answer_score=18,
    answer="""
In Gradio 6 the page-level options moved from the `Blocks` constructor to `launch()`. The constructor pops
`theme`, `css`, `css_paths`, `js`, `head` and `head_paths` from its keyword arguments and warns; `launch()` accepts
them directly:

```
with gr.Blocks() as demo:
    gr.Markdown("# Support bot")

demo.launch(
    theme=gr.themes.Soft(),
    css=".gradio-container {max-width: 900px}",
    head=ANALYTICS_SNIPPET,
)
```

`theme` can also be a string: a built-in name such as `"soft"` or a theme on the Hub like `"gradio/monochrome"`.
`css_paths` takes files; if both `css` and `css_paths` are given, `css` comes first.
""",
    sources=["gradio/blocks.py"],
)

D.question(
    library="gradio",
    date="2025-12-19T09:03:41.500",
    tags=[*GR, "chatbot", "llm"],
    title="TypeError: Chatbot.__init__() got an unexpected keyword argument 'type'",
    score=10,
    views=2785,
    body="""
My chat demo was written for Gradio 5 where I had to opt into the OpenAI-style format:

```
chatbot = gr.Chatbot(type="messages", height=500)
msg = gr.Textbox()

def respond(message, history):
    history.append({"role": "user", "content": message})
    history.append({"role": "assistant", "content": call_llm(history)})
    return "", history

msg.submit(respond, [msg, chatbot], [msg, chatbot])
```

With Gradio 6 it crashes immediately:

```
TypeError: Chatbot.__init__() got an unexpected keyword argument 'type'
```

If I remove `type`, will my history still be a list of dicts, or does it go back to the old list of
`[user, bot]` pairs?
""",
    answer_date="2025-12-19T09:40:12.004",
    answer_score=14,
    answer="""
Remove it: `gr.Chatbot` no longer has a `type` parameter because the messages format is the only format. The
value is a list of messages, each a dict like `{"role": "user", "content": "Help me."}` (or a `gr.ChatMessage`),
with role `"user"`, `"assistant"` or `"system"`. The tuple format is gone, so your `respond` works unchanged:

```
chatbot = gr.Chatbot(height=500)
```

The `content` can also be a component such as `{"content": gr.Image("plot.png")}`. If your history came from a
saved tuple-format log, convert it to role/content dicts before passing it as the value.
""",
    sources=["gradio/components/chatbot.py"],
)

D.question(
    library="gradio",
    date="2026-01-22T17:48:26.223",
    tags=GR,
    title="show_copy_button removed from gr.Chatbot in Gradio 6 - how do I add a copy button?",
    score=4,
    views=1010,
    body="""
Next upgrade problem. I had

```
gr.Chatbot(show_copy_button=True, show_share_button=False)
```

and now get

```
TypeError: Chatbot.__init__() got an unexpected keyword argument 'show_copy_button'
```

The users rely on the per-message copy icon. I also want to get rid of the share button in the corner, which
shows up even though we are not on Spaces. Is there a replacement parameter? I looked at the signature but there
are so many parameters. Ideally I'd also like a single button that copies the whole conversation, since people
paste transcripts into tickets.
""",
    answer_date="2026-01-22T18:10:55.371",
    answer_score=6,
    answer="""
The separate `show_*_button` flags were merged into one `buttons` list. Valid entries are `"share"`, `"copy"`,
`"copy_all"`, or a `gr.Button()` instance for a custom toolbar button:

```
gr.Chatbot(buttons=["copy", "copy_all"])
```

- `"copy"` puts a copy button next to every message,
- `"copy_all"` adds one at the component level that copies the whole conversation,
- `"share"` shares to Hugging Face Spaces discussions.

By default (`buttons=None`) the `"share"` and `"copy_all"` buttons are shown, so listing only the ones you want also
removes the share button. Custom `gr.Button` entries appear in the toolbar and trigger their `.click()` events.
""",
    sources=["gradio/components/chatbot.py"],
)

D.question(
    library="gradio",
    date="2025-04-14T22:18:03.954",
    tags=[*GR, "docker"],
    title="Gradio app in Docker container is not reachable from the host (connection reset)",
    score=8,
    views=5120,
    body="""
I containerized a Gradio demo:

```
FROM python:3.11-slim
COPY . /app
WORKDIR /app
RUN pip install -r requirements.txt
EXPOSE 7860
CMD ["python", "app.py"]
```

`app.py` ends with `demo.launch()`. `docker run -p 7860:7860 myimage` prints
`* Running on local URL:  http://127.0.0.1:7860`, but opening `http://localhost:7860` on the host gives
"connection reset". Inside the container, `curl localhost:7860` works. Sometimes the log also shows port 7861
instead of 7860. What is going on? The same app works fine when I run it directly on my laptop, and I'd prefer
not to hard-code deployment details in `app.py` because the same file runs locally.
""",
    answer_date="2025-04-14T22:29:48.260",
    answer_score=13,
    answer="""
By default Gradio listens on `127.0.0.1`, which inside a container is only reachable from the container itself.
Bind to all interfaces with `server_name="0.0.0.0"`:

```
demo.launch(server_name="0.0.0.0", server_port=7860)
```

or, without touching the code, set the environment variables `GRADIO_SERVER_NAME=0.0.0.0` and
`GRADIO_SERVER_PORT=7860` in the Dockerfile.

About 7861: with `server_port=None`, Gradio searches for a free port starting at 7860, so if something already uses
7860 it takes the next one. Fix the port explicitly so it always matches your `-p` mapping.
""",
    sources=["gradio/blocks.py"],
)

D.question(
    library="gradio",
    date="2026-02-26T11:37:14.067",
    tags=[*GR, "concurrency"],
    title="Gradio processes only one request at a time, other users wait in the queue",
    score=6,
    views=1730,
    body="""
My app calls a remote LLM API, which takes ~10 s per request but uses no local compute. When two colleagues use the
app at the same time, the second one sees "queue: 1/2" and waits for the first to finish. The handler is a plain
function:

```
def answer(question):
    return client.chat(question)  # network call

with gr.Blocks() as demo:
    q = gr.Textbox()
    out = gr.Markdown()
    q.submit(answer, q, out)

demo.launch()
```

I expected a web server to handle requests in parallel. Is there a setting for this, and can I allow it only for
this event while keeping a heavy GPU function sequential?
""",
    answer_date="2026-02-26T12:15:08.842",
    answer_score=9,
    answer="""
Every event listener has a `concurrency_limit`, and its default `"default"` means "use the `default_concurrency_limit`
of `Blocks.queue()`", which itself is 1. So each event runs one call at a time.

Raise it for this event only:

```
q.submit(answer, q, out, concurrency_limit=10)  # None means no limit
```

or change the default for every event:

```
demo.queue(default_concurrency_limit=5, max_size=50).launch()
```

`default_concurrency_limit` can also come from the `GRADIO_DEFAULT_CONCURRENCY_LIMIT` environment variable.
`max_size` caps how many events may wait in the queue (unlimited when `None`). Keep the GPU function at the default
of 1.
""",
    sources=["gradio/blocks.py", "gradio/events.py"],
)

D.question(
    library="gradio",
    date="2025-09-08T07:55:21.619",
    tags=GR,
    title="InvalidPathError: Cannot move /data/reports/x.pdf to the gradio cache dir",
    score=5,
    views=1444,
    body="""
My function generates PDF reports into a shared folder and returns the path to a `gr.File` output:

```
def build(report_id):
    path = f"/data/reports/{report_id}.pdf"
    render_pdf(report_id, path)
    return path

gr.Interface(build, gr.Textbox(), gr.File()).launch()
```

```
gradio.exceptions.InvalidPathError: Cannot move /data/reports/42.pdf to the gradio cache dir because it was not
created by the application or it is not located in either the current working directory or your system's temp
directory. To fix this error, please ensure your function returns files located in either the current working
directory (/srv/app), your system's temp directory (/tmp) or add /data/reports to the allowed_paths parameter of
launch().
```

Is `allowed_paths` safe? The folder also contains other customers' reports.
""",
    answer_date="2025-09-08T08:20:39.112",
    answer_score=7,
    answer="""
Gradio only serves files from the current working directory, the system temp directory, files it created itself,
and whatever you list in `allowed_paths`:

```
demo.launch(allowed_paths=["/data/reports"])
```

Paths must be absolute. It can also come from the comma-separated environment variable `GRADIO_ALLOWED_PATHS`.

Safety: when you allow a directory, any file in it or in its subdirectories becomes reachable by every user of the
app, which is a problem for your other customers' reports. Better write each report to a temp file (e.g. with
`tempfile`) and return that path, or allow a dedicated export folder only. `blocked_paths` takes precedence over
`allowed_paths` if you need to exclude a subfolder.
""",
    sources=["gradio/processing_utils.py", "gradio/blocks.py"],
)

D.question(
    library="gradio",
    date="2026-04-02T13:26:57.031",
    tags=[*GR, "api"],
    title="launch() got an unexpected keyword argument 'show_api' - hide the API page in Gradio 6",
    score=3,
    views=802,
    body="""
I don't want the "Use via API" link in the footer of an internal tool, and some events must not be callable from
`gradio_client` at all. In Gradio 5 this was:

```
btn.click(delete_record, inp, out, show_api=False)
demo.launch(show_api=False)
```

In Gradio 6:

```
TypeError: Blocks.launch() got an unexpected keyword argument 'show_api'
```

What replaced it? I want to hide the footer link for everything, and make `delete_record` completely
private, while another event should stay callable by our scripts but not appear in the docs.
""",
    answer_date="2026-04-02T14:09:18.455",
    answer_score=5,
    answer="""
Two different settings replace it.

Footer: `launch(footer_links=...)` takes a list of `"api"`, `"gradio"`, `"settings"`, `"runs"` (or custom link
dicts). `None` shows all of them, an empty list hides the footer:

```
demo.launch(footer_links=["gradio", "settings"])
```

Per event: listeners take `api_visibility`, one of

- `"public"` (default): in the API docs and callable by clients,
- `"private"`: hidden and not callable by the Gradio client libraries,
- `"undocumented"`: hidden from the docs but still callable by clients and `gr.load`.

```
btn.click(delete_record, inp, out, api_visibility="private")
sync_btn.click(sync, None, out, api_visibility="undocumented")
```

Configs saved by older versions with `show_api` are translated to `api_visibility` when loaded.
""",
    sources=["gradio/blocks.py"],
)

D.question(
    library="gradio",
    date="2025-05-30T10:14:42.285",
    tags=[*GR, "error-handling"],
    title="Show a readable error message to the user instead of 'Error' in a Gradio app",
    score=7,
    views=2390,
    body="""
When my function fails, the user only sees a red "Error" badge on the output and nothing useful:

```
def predict(csv_file):
    df = pd.read_csv(csv_file)
    if "price" not in df:
        raise ValueError("The CSV needs a 'price' column")
    return model.predict(df)
```

The message is printed in my terminal but not in the browser. How do I show the actual text to the user?
Ideally I'd also like a non-blocking warning for a recoverable problem (e.g. some rows dropped) while still
returning a result, and control how long the popup stays visible.
""",
    answer_date="2025-05-30T10:31:05.777",
    answer_score=11,
    answer="""
Raise `gr.Error` instead of a normal exception; its message is shown to the user in a modal:

```
if "price" not in df:
    raise gr.Error("The CSV needs a 'price' column", duration=None, title="Invalid file")
```

`duration` is in seconds (default 10); `None` or 0 keeps the popup until the user closes it. `print_exception`
controls whether the traceback is also printed in the console.

For non-fatal problems call `gr.Warning("12 rows were dropped")` or `gr.Info(...)` inside the function and keep
going; they show a toast and the function still returns its output. Both accept `duration` and `title` too.

Any other exception is hidden unless you launch with `demo.launch(show_error=True)`, which shows errors in an alert
modal and the browser console.
""",
    sources=["gradio/exceptions.py", "gradio/helpers.py", "gradio/blocks.py"],
)

D.question(
    library="gradio",
    date="2026-08-11T08:49:30.650",
    tags=[*GR, "disk-space"],
    title="Gradio temporary upload files fill /tmp/gradio on a long-running server",
    score=2,
    views=186,
    body="""
We run an internal Gradio app for image uploads on a VM. After a few weeks the root partition was full: `/tmp/gradio`
had 60 GB of uploaded and generated files, none of them older files were ever removed.

```
with gr.Blocks() as demo:
    img = gr.Image(type="filepath")
    out = gr.Image()
    img.upload(enhance, img, out)

demo.launch(server_name="0.0.0.0")
```

Can I move these files to another disk, and is there a built-in way to delete them automatically, e.g. everything
older than a day? A cron job with `find -mtime` feels fragile while the app is running.
""",
    answer_date="2026-08-11T09:30:44.018",
    answer_score=3,
    answer="""
Both exist.

The folder is `GRADIO_TEMP_DIR` if set, otherwise `gradio` under the system temp directory (`tempfile.gettempdir()`,
hence `/tmp/gradio`). Point it at the big disk before starting the app:

```
export GRADIO_TEMP_DIR=/mnt/data/gradio-tmp
```

For clean-up, `gr.Blocks` takes `delete_cache=(frequency, age)` in seconds: every `frequency` seconds, temporary
files created by this Blocks that are older than `age` are deleted. The cache is also emptied completely when the
server restarts.

```
with gr.Blocks(delete_cache=(3600, 86400)) as demo:
    ...
```

You can additionally cap uploads with `launch(max_file_size="20mb")`.
""",
    sources=["gradio/utils.py", "gradio/blocks.py"],
)

# ---------------------------------------------------------------------------------------------------------------
# pandas (tag pandas)
# ---------------------------------------------------------------------------------------------------------------
PD = ["python", "pandas"]

D.question(
    library="pandas",
    date="2026-01-26T10:41:08.733",
    tags=[*PD, "dataframe"],
    title="df['col'].fillna(0, inplace=True) no longer changes my DataFrame in pandas 3",
    score=15,
    views=6120,
    body="""
This pattern is all over our codebase:

```
df = pd.read_csv("sales.csv")
df["discount"].fillna(0, inplace=True)
df["region"].replace("N/A", "unknown", inplace=True)
print(df["discount"].isna().sum())   # still 118
```

Since upgrading to pandas 3.0 the DataFrame is not modified and I get this warning:

```
ChainedAssignmentError: A value is being set on a copy of a DataFrame or Series through chained assignment
using an inplace method.
Such inplace method never works to update the original DataFrame or Series, because the intermediate object
on which we are setting values always behaves as a copy (due to Copy-on-Write).
```

In pandas 2 it worked (with a FutureWarning I ignored). What is the recommended rewrite?
""",
    answer_date="2026-01-26T11:02:33.116",
    answer_score=22,
    answer="""
pandas 3 always uses Copy-on-Write: `df["discount"]` behaves as a copy, so an inplace method on it can never reach
`df`. That's what `ChainedAssignmentError` (a warning class) tells you.

Either call the method on the DataFrame with a dict of columns:

```
df.fillna({"discount": 0}, inplace=True)
df.replace({"region": {"N/A": "unknown"}}, inplace=True)
```

or, usually cleaner, drop `inplace` and assign the result back:

```
df["discount"] = df["discount"].fillna(0)
```

The same applies to plain chained assignment like `df["a"][mask] = 1`; write it in one step with
`df.loc[mask, "a"] = 1`. To turn the warning into an error in tests, use `warnings.filterwarnings("error",
category=pd.errors.ChainedAssignmentError)`.
""",
    sources=["pandas/errors/cow.py", "pandas/errors/__init__.py", "pandas/core/config_init.py"],
)

D.question(
    library="pandas",
    date="2026-02-03T15:19:45.028",
    tags=[*PD, "string", "dtype"],
    title="pandas 3: text columns are dtype 'str' instead of object, and assigning an int raises TypeError",
    score=9,
    views=2876,
    body="""
Two things broke in our validation code after moving to pandas 3:

```
df = pd.DataFrame({"sku": ["A1", "B2", None], "qty": [1, 2, 3]})
print(df["sku"].dtype == object)  # False now
print(df["sku"].dtype)            # str

df.loc[2, "sku"] = 0
```

```
TypeError: Invalid value '0' for dtype 'str'. Value should be a string or missing value, got 'int' instead.
```

Our checks use `select_dtypes(include="object")` to find text columns and now find nothing. Also the missing value
shows as `nan`, not `None`. Can I switch back to object columns globally? I tried
`pd.set_option("future.infer_string", False)` and got a deprecation warning.
""",
    answer_date="2026-02-03T16:00:09.915",
    answer_score=12,
    answer="""
Since pandas 3.0 string data is inferred as the dedicated `str` dtype (a `StringDtype` with `na_value=nan`, so
missing values are `NaN`) instead of `object`. The `future.infer_string` option is deprecated (`Pandas4Warning`) and
will be removed in pandas 4.0; disabling the inference will not be possible, so don't build on it.

- Select text columns with `df.select_dtypes(include="str")`, or check `pd.api.types.is_string_dtype(s)`.
- A `str` column only accepts strings or missing values, hence the `TypeError`. Convert the value
  (`df.loc[2, "sku"] = "0"`) or, if the column really holds mixed objects, make it object explicitly:

```
df["sku"] = df["sku"].astype(object)
```
""",
    sources=["pandas/core/config_init.py", "pandas/core/arrays/string_.py", "pandas/core/arrays/string_arrow.py"],
)

D.question(
    library="pandas",
    date="2025-02-14T12:30:59.415",
    tags=[*PD, "dataframe"],
    title="AttributeError: 'DataFrame' object has no attribute 'append'",
    score=6,
    views=8890,
    body="""
I'm collecting results in a loop like a tutorial showed:

```
results = pd.DataFrame(columns=["epoch", "loss"])
for epoch in range(10):
    loss = train_one_epoch()
    results = results.append({"epoch": epoch, "loss": loss}, ignore_index=True)
```

```
AttributeError: 'DataFrame' object has no attribute 'append'
```

What is the replacement? `pd.concat` wants DataFrames, not dicts, and creating a one-row DataFrame per iteration
looks wasteful. Also my index ends up as 0,0,0,... when I concat one-row frames. The loop runs for a few
thousand iterations in the real code (hyper-parameter sweep), so performance matters a bit. I'm on pandas 2.2 at
work and 3.0 at home, the code should run on both.
""",
    answer_date="2025-02-14T12:44:20.051",
    answer_score=15,
    answer="""
`DataFrame.append` was removed; use `pd.concat`. But don't concat inside the loop: each call copies everything, so
the loop is quadratic. Collect plain rows and build the frame once:

```
rows = []
for epoch in range(10):
    rows.append({"epoch": epoch, "loss": train_one_epoch()})
results = pd.DataFrame(rows)
```

If you really need to add to an existing frame, concat a list of frames and pass `ignore_index=True`; it doesn't
use the index values along the concatenation axis and labels the result 0, ..., n - 1, which fixes your 0,0,0
index:

```
results = pd.concat([results, pd.DataFrame(rows)], ignore_index=True)
```
""",
    sources=["pandas/core/reshape/concat.py"],
)

D.question(
    library="pandas",
    date="2025-03-21T09:06:12.388",
    tags=PD,
    title="'DataFrame' object has no attribute 'applymap' - elementwise function on a DataFrame",
    score=4,
    views=3105,
    body="""
I format every cell of a report table:

```
fmt = df.applymap(lambda v: f"{v:,.2f}" if isinstance(v, float) else v)
```

```
AttributeError: 'DataFrame' object has no attribute 'applymap'
```

`df.apply` works column by column, which is not what I want. What's the elementwise equivalent now? Some cells are
missing and the formatter crashes on `NaN` (`ValueError: Unknown format code`), can I skip those cells without
writing the check in the lambda? The frame has about 40 columns of mixed types, so I would rather not format each
column separately with `Series.map`.
""",
    answer_date="2025-03-21T09:25:44.612",
    answer_score=8,
    answer="""
`DataFrame.applymap` was deprecated and renamed to `DataFrame.map` (added in 2.1.0), and the old name is now gone.
`map` applies a function that takes and returns a scalar to every element:

```
fmt = df.map(lambda v: f"{v:,.2f}", na_action="ignore")
```

`na_action="ignore"` propagates missing values without passing them to the function, so the format call never sees
`NaN`. Extra keyword arguments are forwarded to the function:

```
def fmt_cell(v, digits):
    return f"{v:,.{digits}f}"

df.map(fmt_cell, na_action="ignore", digits=1)
```
""",
    sources=["pandas/core/frame.py"],
)

D.question(
    library="pandas",
    date="2025-05-08T16:44:37.171",
    tags=[*PD, "datetime"],
    title="pd.to_datetime errors='ignore' raises ValueError: errors must be one of 'raise', or 'coerce'",
    score=5,
    views=2140,
    body="""
Some files have a `date` column that is already clean, others have junk like `"n/a"` or `"31/02/2024"`. I used to
convert "whatever works" and leave the rest:

```
df["date"] = pd.to_datetime(df["date"], errors="ignore")
```

Now:

```
ValueError: errors must be one of 'raise', or 'coerce'.
```

I need to keep the original strings for rows that don't parse so a human can look at them later. What is the
replacement for `errors="ignore"`? The valid dates are all ISO formatted (`2024-03-01`), the broken ones are
typed in by hand in a spreadsheet, and there are a few hundred thousand rows per file.
""",
    answer_date="2025-05-08T17:13:02.559",
    answer_score=7,
    answer="""
`errors="ignore"` was removed from `pd.to_datetime`; only `"raise"` (default) and `"coerce"` remain. Coerce and keep
the original text yourself:

```
parsed = pd.to_datetime(df["date"], errors="coerce", format="%Y-%m-%d")
bad = parsed.isna() & df["date"].notna()
df["date_raw"] = df["date"].where(bad)   # original strings only where parsing failed
df["date"] = parsed
```

With `errors="coerce"` values that can't be parsed become `NaT`. An explicit `format` makes the parsing strict and
predictable across files. "ignore" used to return the whole input unchanged as soon as one
value failed, which is rarely what you want anyway.
""",
    sources=["pandas/core/tools/datetimes.py"],
)

D.question(
    library="pandas",
    date="2026-03-12T08:15:30.820",
    tags=[*PD, "group-by"],
    title="groupby().apply() no longer passes the grouping column to my function (KeyError)",
    score=7,
    views=1598,
    body="""
My function needs the group key inside each group:

```
def summarize(g):
    return pd.Series({
        "store": g["store"].iloc[0],
        "revenue": (g["price"] * g["qty"]).sum(),
    })

out = sales.groupby("store").apply(summarize)
```

After upgrading to pandas 3:

```
KeyError: 'store'
```

Passing `include_groups=True` gives `ValueError: include_groups=True is no longer allowed.` How do I access the key
now? In pandas 2.2 I remember a DeprecationWarning saying something about "operated on the grouping columns", which
I silenced. The real function is longer than this example and also uses the store key to look up a
per-store tax rate in a dict, so I really need the key inside the function, not only in the result index.
""",
    answer_date="2026-03-12T08:52:17.046",
    answer_score=9,
    answer="""
In pandas 3.0 the default of `include_groups` in `DataFrameGroupBy.apply` changed from `True` to `False`, and `True`
is no longer allowed: the grouping columns are excluded from the frame passed to your function.

The key is still available as the group's `name` attribute:

```
def summarize(g):
    return pd.Series({"store": g.name, "revenue": (g["price"] * g["qty"]).sum()})

out = sales.groupby("store").apply(summarize)
```

Since the key is already the result's index you often don't need it in the function at all. For this particular
computation, avoiding `apply` is faster:

```
out = sales.assign(revenue=sales["price"] * sales["qty"]).groupby("store")["revenue"].sum()
```
""",
    sources=["pandas/core/groupby/groupby.py"],
)

D.question(
    library="pandas",
    date="2026-05-19T13:58:41.302",
    tags=[*PD, "csv"],
    title="read_csv() got an unexpected keyword argument 'delim_whitespace'",
    score=3,
    views=690,
    body="""
Reading the output of a legacy Fortran program (columns separated by a varying number of spaces):

```
df = pd.read_csv("results.txt", delim_whitespace=True, header=None, names=["x", "y", "z"])
```

```
TypeError: read_csv() got an unexpected keyword argument 'delim_whitespace'
```

I know I can pass a regex as `sep`, but I read somewhere that regex separators switch to the slow Python engine.
The files are several GB, so that matters. What is the proper replacement? Lines may also start with leading
spaces, and some columns are padded with tabs instead of spaces.
""",
    answer_date="2026-05-19T14:21:06.187",
    answer_score=5,
    answer="""
Use `sep=r"\\s+"`. It's the one multi-character separator that is special-cased: separators longer than one
character and different from `'\\s+'` are treated as regular expressions and force the Python engine, but `\\s+`
is handled by the C engine (internally it is what `delim_whitespace` used to do):

```
df = pd.read_csv("results.txt", sep=r"\\s+", header=None, names=["x", "y", "z"])
```

So you keep the fast parser. Avoid other regexes such as `" +"` for big files; they do go through the Python engine
and are also prone to ignoring quoted data.
""",
    sources=["pandas/io/parsers/readers.py"],
)

D.question(
    library="pandas",
    date="2026-06-30T10:33:19.477",
    tags=[*PD, "series", "indexing"],
    title="Series[0] raises KeyError: 0 on a Series with a string index in pandas 3",
    score=6,
    views=1211,
    body="""
I take the first element of a Series returned by `value_counts()`:

```
counts = df["country"].value_counts()
top = counts[0]
```

```
KeyError: 0
```

This used to return the largest count (with a FutureWarning about "treating keys as positions"). The same code
works on a Series with a default integer index. Is integer indexing with `[]` now always label-based? What should I
use to get "the first value" reliably? We have this idiom in dozens of notebooks, so I'd like to understand the rule
before fixing them one by one.
""",
    answer_date="2026-06-30T10:47:51.903",
    answer_score=8,
    answer="""
Yes. In pandas 3.0 an integer key in `Series.__getitem__` is always treated as a label, never as a position. The
index of `value_counts()` holds the country names, so there is no label `0`.

Use positional indexing explicitly:

```
top = counts.iloc[0]          # first value
top_country = counts.index[0]
```

On a default `RangeIndex` `s[0]` still works because label 0 happens to be the first position, which is why the
bug hides in some code paths. Use `.iloc` for positions and `.loc` for labels. Also note the Series returned by
`value_counts()` is named `count`.
""",
    sources=["pandas/core/series.py"],
)

D.question(
    library="pandas",
    date="2026-09-08T07:22:06.659",
    tags=[*PD, "copy-on-write"],
    title="Can I disable Copy-on-Write in pandas 3 (mode.copy_on_write / mode.chained_assignment)?",
    score=2,
    views=260,
    body="""
We have a large legacy code base and want to upgrade to pandas 3 gradually. I hoped to keep the old semantics at
first:

```
pd.set_option("mode.copy_on_write", False)
pd.set_option("mode.chained_assignment", None)
```

Both lines now emit a `Pandas4Warning`. The first one apparently doesn't even change the behaviour. We also relied on
`SettingWithCopyWarning` in our test suite (turned into an error) to find risky code, and I can't find it any more.

Is there any supported way to opt out, and how do we find the chained assignments in our code?
""",
    answer_date="2026-09-08T07:59:40.088",
    answer_score=3,
    answer="""
No. Copy-on-Write is always enabled since pandas 3.0; the `mode.copy_on_write` option is deprecated, has no
impact, and will be removed in pandas 4.0.

`mode.chained_assignment` is deprecated as well: it controlled `SettingWithCopyWarning`, which was removed in 3.0.
Chained assignment now emits `ChainedAssignmentError` (a `Warning` subclass) instead, and chained assignment can
never update the original object under CoW.

To find the risky spots, escalate that warning in your test configuration:

```
import warnings
from pandas.errors import ChainedAssignmentError
warnings.filterwarnings("error", category=ChainedAssignmentError)
```

Then rewrite each hit as a single `.loc[row_indexer, col_indexer] = value` assignment.
""",
    sources=["pandas/core/config_init.py", "pandas/errors/__init__.py", "pandas/errors/cow.py"],
)

# ---------------------------------------------------------------------------------------------------------------
# sentence_transformers (tag sentence-transformers)
# ---------------------------------------------------------------------------------------------------------------
ST = ["python", "sentence-transformers"]

D.question(
    library="sentence_transformers",
    date="2026-04-20T09:10:44.356",
    tags=[*ST, "pytorch"],
    title="SentenceTransformer('model', 'cuda') raises TypeError: takes from 1 to 2 positional arguments",
    score=5,
    views=930,
    body="""
This line worked for years:

```
from sentence_transformers import SentenceTransformer

model = SentenceTransformer("all-MiniLM-L6-v2", "cuda")
```

With sentence-transformers 6.x:

```
TypeError: SentenceTransformer.__init__() takes from 1 to 2 positional arguments but 3 were given
```

Did the second argument change meaning? I also pass a cache directory positionally in another script
(`SentenceTransformer(name, None, None, "/models")`), which fails the same way. What is the correct call now? I'd
also like to keep the models out of the default Hugging Face cache on this server, if there is an environment
variable for that it would save me editing every script.
""",
    answer_date="2026-04-20T09:33:02.441",
    answer_score=7,
    answer="""
All constructor arguments after `model_name_or_path` are keyword-only now (there's a `*` in the signature), so pass
them by name:

```
model = SentenceTransformer("all-MiniLM-L6-v2", device="cuda")
model = SentenceTransformer(name, cache_folder="/models")
```

`cache_folder` can also come from the `SENTENCE_TRANSFORMERS_HOME` environment variable. Other frequently used
keywords are `trust_remote_code` (default `False`), `revision`, `local_files_only`, `token`, `backend` (`"torch"`,
`"onnx"` or `"openvino"`) and `truncate_dim`. If you use `model_kwargs={"device_map": ...}`, that takes precedence
over `device`.
""",
    sources=["sentence_transformers/sentence_transformer/model.py", "sentence_transformers/base/model.py"],
)

D.question(
    library="sentence_transformers",
    date="2026-05-12T14:27:35.990",
    tags=ST,
    title="Warning: The `tokenizer_kwargs` argument was renamed and is now deprecated",
    score=3,
    views=402,
    body="""
I load a model with a custom tokenizer setting:

```
model = SentenceTransformer(
    "BAAI/bge-m3",
    tokenizer_kwargs={"model_max_length": 1024},
)
embeddings = model.encode(sentences=docs)
```

and get two warnings:

```
The `tokenizer_kwargs` argument was renamed and is now deprecated. Please use `processor_kwargs` instead.
The `sentences` argument was renamed and is now deprecated. Please use `inputs` instead.
```

Is this just a rename or does `processor_kwargs` behave differently? And why `inputs`, what else besides
sentences can go in there? The warnings only appear once per process, so I almost missed them in the logs.
""",
    answer_date="2026-05-12T15:04:21.217",
    answer_score=4,
    answer="""
Both are plain renames handled by a `deprecated_kwargs` decorator: it logs the warning once and passes the value
on under the new name (if you pass both names, the old one is dropped).

- `processor_kwargs` is passed to the processor/tokenizer via `AutoProcessor.from_pretrained`, the same place
  `tokenizer_kwargs` went to, so your dict keeps its effect.
- `encode(inputs=...)`: the parameter is called `inputs` because models can be multimodal; it accepts a string, a
  list of strings or multimodal inputs (dicts, images, arrays).

```
model = SentenceTransformer("BAAI/bge-m3", processor_kwargs={"model_max_length": 1024})
embeddings = model.encode(docs)
```

Passing the first argument positionally avoids the name question entirely.
""",
    sources=["sentence_transformers/sentence_transformer/model.py", "sentence_transformers/util/decorators.py"],
)

D.question(
    library="sentence_transformers",
    date="2026-07-06T19:41:52.114",
    tags=[*ST, "embedding"],
    title="encode() has been called with additional keyword arguments that this model does not use: ['max_length']",
    score=4,
    views=287,
    body="""
I want to truncate long documents to 256 tokens for speed and tried:

```
emb = model.encode(docs, batch_size=64, max_length=256, normalize_embeddings=True)
```

```
ValueError: SentenceTransformer.encode() has been called with additional keyword arguments that this model does
not use: ['max_length']. As per SentenceTransformer.get_model_kwargs(), this model does not accept any additional
keyword arguments.
```

Older versions silently ignored unknown arguments, so I'm not even sure my truncation ever worked. How do I set the
maximum length, globally or only for one call? The model's default is 512 tokens.
""",
    answer_date="2026-07-06T20:00:18.672",
    answer_score=6,
    answer="""
`encode` now validates its `**kwargs` against `get_model_kwargs()` and raises this `ValueError` for unknown ones,
so yes, `max_length` was never used before.

Globally, set the model's `max_seq_length` property; longer inputs are truncated:

```
model.max_seq_length = 256
```

For a single call, pass `processing_kwargs`, which overrides the processor settings of the underlying
`Transformer` module for that call only:

```
emb = model.encode(docs, batch_size=64, normalize_embeddings=True,
                   processing_kwargs={"text": {"max_length": 256, "truncation": True}})
```

`batch_size` defaults to 32 and `normalize_embeddings` to `False`.
""",
    sources=["sentence_transformers/sentence_transformer/model.py", "sentence_transformers/base/model.py"],
)

D.question(
    library="sentence_transformers",
    date="2025-08-26T11:18:09.730",
    tags=[*ST, "information-retrieval"],
    title="encode_query vs encode_document vs encode: do I need the query: / passage: prefixes myself?",
    score=8,
    views=1734,
    body="""
I'm building semantic search with an E5-style model that expects `query: ` and `passage: ` prefixes. Currently I
add them by hand:

```
q = model.encode(["query: " + t for t in questions], normalize_embeddings=True)
d = model.encode(["passage: " + t for t in docs], normalize_embeddings=True)
```

I noticed `encode_query` and `encode_document` in newer versions. Do they add the prefixes automatically? Would
using them with my manual prefixes add them twice? And for a model without any prompts configured, is there any
difference from `encode`?
""",
    answer_date="2025-08-26T11:55:36.102",
    answer_score=10,
    answer="""
`encode_query` and `encode_document` are `encode` with two differences:

- if you pass neither `prompt_name` nor `prompt`, they use the `"query"` (resp. `"document"`) entry of the model's
  `prompts` dictionary,
- they set the `task` to `"query"` / `"document"`, which a `Router` module uses to pick query or document
  submodules.

If the model's config defines those prompts, the prefix is prepended for you, and adding it by hand as well would
duplicate it. If you load a model whose config has no prompts, define them:

```
model = SentenceTransformer("intfloat/e5-base-v2",
                            prompts={"query": "query: ", "document": "passage: "})
q = model.encode_query(questions)
d = model.encode_document(docs)
scores = model.similarity(q, d)
```

Without prompts or a router, all three methods return identical embeddings.
""",
    sources=["sentence_transformers/sentence_transformer/model.py"],
)

D.question(
    library="sentence_transformers",
    date="2026-03-24T16:02:27.505",
    tags=ST,
    title="FutureWarning: get_sentence_embedding_dimension has been renamed to get_embedding_dimension",
    score=2,
    views=515,
    body="""
I size my FAISS index from the model:

```
dim = model.get_sentence_embedding_dimension()
index = faiss.IndexFlatIP(dim)
```

and now see

```
FutureWarning: The `get_sentence_embedding_dimension` method has been renamed to `get_embedding_dimension`.
```

Just a rename? I also load the model with `truncate_dim=256` for Matryoshka embeddings; does the method return 256
or the full 768? The index must match what `encode` returns, otherwise FAISS complains with an assertion error on
`index.add`. Sometimes I also want to build a second, smaller index with 128 dimensions from the same loaded model
without reloading it.
""",
    answer_date="2026-03-24T16:28:40.331",
    answer_score=3,
    answer="""
Just a rename: `get_sentence_embedding_dimension` is a deprecated alias that calls `get_embedding_dimension` and
emits the `FutureWarning`.

`get_embedding_dimension` returns the number of dimensions of what `encode` outputs, and it takes `truncate_dim`
into account: with `truncate_dim=256` it returns `min(768, 256) = 256`. So this is safe for sizing the index:

```
model = SentenceTransformer("nomic-ai/modernbert-embed-base", truncate_dim=256)
index = faiss.IndexFlatIP(model.get_embedding_dimension())
```

If you change dimensions temporarily, use the `model.truncate_embeddings(128)` context manager, inside which
`encode` truncates to 128. The same rename exists on `SparseEncoder`.
""",
    sources=["sentence_transformers/sentence_transformer/model.py", "sentence_transformers/sparse_encoder/model.py"],
)

D.question(
    library="sentence_transformers",
    date="2025-11-18T08:37:14.226",
    tags=[*ST, "multiprocessing", "gpu"],
    title="encode_multi_process is deprecated - how to encode on several GPUs now?",
    score=6,
    views=1188,
    body="""
I embed ~30M passages on a node with 4 GPUs using the multi-process pool:

```
pool = model.start_multi_process_pool()
emb = model.encode_multi_process(passages, pool, batch_size=128)
model.stop_multi_process_pool(pool)
```

This now warns that `encode_multi_process` is deprecated and its functionality was integrated into `encode`. How
do I tell `encode` to use all GPUs? Do I still need to start and stop a pool? And is `chunk_size` still a thing?
The job encodes several corpora one after another in the same script, so spawning the worker processes again for
every corpus would waste a few minutes each time. On the CPU-only test machine the same script should still work.
""",
    answer_date="2025-11-18T09:01:55.640",
    answer_score=9,
    answer="""
Pass a list of devices to `encode`; a list triggers multi-process encoding:

```
emb = model.encode(passages, batch_size=128,
                   device=["cuda:0", "cuda:1", "cuda:2", "cuda:3"], chunk_size=10_000)
```

A single device string (`"cuda:0"`, `"cpu"`) means ordinary single-process encoding, `None` the model's current
device. `chunk_size` is still there and sets the size of the chunks sent to the workers.

You don't need your own pool, but you can still reuse one across many calls to avoid the start-up cost:
`encode(..., pool=pool)` with a pool from `start_multi_process_pool()`. With no `target_devices`, that function uses
all CUDA/NPU devices, or 4 CPU workers without accelerators.
""",
    sources=["sentence_transformers/sentence_transformer/model.py", "sentence_transformers/base/model.py"],
)

D.question(
    library="sentence_transformers",
    date="2026-06-02T12:49:03.815",
    tags=[*ST, "reranking"],
    title="CrossEncoder.predict returns scores between 0 and 1 but rank() output has no text",
    score=4,
    views=642,
    body="""
I rerank retrieved passages with a cross-encoder:

```
from sentence_transformers import CrossEncoder

ce = CrossEncoder("cross-encoder/ms-marco-MiniLM-L6-v2")
scores = ce.predict([(query, p) for p in passages])
ranked = ce.rank(query, passages, top_k=5)
print(ranked[0])
# {'corpus_id': 17, 'score': 0.93}
```

Two questions: the `predict` scores are all between 0 and 1, but I read that this model outputs raw logits; is a
sigmoid applied somewhere, and can I get the logits? And how do I get the passage text in the `rank` output
instead of looking up `corpus_id` myself?
""",
    answer_date="2026-06-02T13:30:27.199",
    answer_score=5,
    answer="""
Yes, an activation is applied. `CrossEncoder` has an `activation_fn` that `predict` applies on the logits; if the
model config doesn't specify one, the default is `nn.Sigmoid()` when `num_labels=1` and `nn.Identity()` otherwise.
For raw logits pass an identity:

```
import torch
logits = ce.predict(pairs, activation_fn=torch.nn.Identity())
```

(or set it at load time: `CrossEncoder(name, activation_fn=torch.nn.Identity())`).

`rank` returns a sorted list of dicts with `corpus_id` and `score`; `return_documents=True` adds the `text`:

```
ranked = ce.rank(query, passages, top_k=5, return_documents=True)
```

`top_k=None` (default) returns all documents, and `batch_size` defaults to 32.
""",
    sources=["sentence_transformers/cross_encoder/model.py"],
)

D.question(
    library="sentence_transformers",
    date="2025-06-09T20:05:48.140",
    tags=[*ST, "semantic-search"],
    title="util.semantic_search only returns 10 results per query",
    score=5,
    views=2007,
    body="""
I run semantic search over 2M product descriptions:

```
from sentence_transformers import util

corpus_emb = model.encode(corpus, convert_to_tensor=True)
query_emb = model.encode(queries, convert_to_tensor=True)
hits = util.semantic_search(query_emb, corpus_emb)
print(len(hits[0]))   # 10
```

I need the top 100 per query for a re-ranking stage. Also memory spikes when I pass all 50k queries at once, and I
normalize my embeddings, so I wonder whether using dot product would be faster than the default. What are the
relevant knobs? The corpus embeddings are on a single A100 with 40 GB, and the queries arrive in batches from an
offline job, so latency is less important than memory.
""",
    answer_date="2025-06-09T20:33:11.520",
    answer_score=6,
    answer="""
`top_k` defaults to 10. The knobs:

- `top_k=100` returns 100 hits per query,
- `query_chunk_size` (default 100) is how many queries are scored at once,
- `corpus_chunk_size` (default 500000) is how many corpus entries are scanned at a time; lower both to reduce
  memory, raise them for speed,
- `score_function` defaults to `cos_sim`; with normalized embeddings `util.dot_score` gives the same ranking and
  skips the normalization.

```
hits = util.semantic_search(query_emb, corpus_emb, top_k=100,
                            query_chunk_size=200, score_function=util.dot_score)
```

The result has one list per query, each a list of dicts with `corpus_id` and `score`, sorted by decreasing score.
""",
    sources=["sentence_transformers/util/retrieval.py"],
)

# ---------------------------------------------------------------------------------------------------------------
# posts the questions stage must drop
# ---------------------------------------------------------------------------------------------------------------
# unanswered (no accepted answer)
D.question(
    date="2026-02-20T10:15:00.000",
    tags=PD,
    title="Rolling window over irregular timestamps gives different results than in pandas 2",
    body="""
`df.rolling("7D", on="ts")["value"].mean()` gives slightly different numbers after upgrading. The timestamps are
irregular. Is this expected?
""",
    answer=None,
    others=[("2026-02-20T12:40:00.000", "Can you post a small reproducible example with the timestamps?", 0)],
)
D.question(
    date="2026-05-02T18:03:00.000",
    tags=[*GR, "websocket"],
    title="Gradio app behind nginx keeps reconnecting",
    body="""
My Gradio app is behind nginx with a `location /app/` block. The page loads but shows "Connection errored out"
every few seconds. Any idea?
""",
    answer=None,
)
# off-topic (tags outside the topic), with accepted answers
D.question(
    date="2025-10-10T09:00:00.000",
    tags=["javascript", "reactjs"],
    title="useEffect runs twice on mount in development",
    body="""
My `useEffect(() => { fetchData() }, [])` fires two requests when the component mounts. Why?
""",
    answer="""
In development, React's Strict Mode mounts, unmounts and remounts components to surface missing clean-up. It does
not happen in production builds. Return a clean-up function that aborts the request.
""",
    answer_date="2025-10-10T09:20:00.000",
)
D.question(
    date="2026-01-05T15:30:00.000",
    tags=["javascript", "reactjs", "react-hooks"],
    title="State update not visible right after setState",
    body="""
I call `setCount(count + 1)` and then `console.log(count)` logs the old value.
""",
    answer="""
State updates are applied on the next render; `count` in this closure is the old value. Use the functional form
`setCount(c => c + 1)` and read the new value in the next render or in an effect.
""",
    answer_date="2026-01-05T15:41:00.000",
)
# outside the date window
D.question(
    date="2023-04-18T11:11:11.000",
    tags=DS,
    title="load_dataset hangs when downloading from the Hub",
    body="""
`load_dataset("imdb")` hangs at "Downloading data files" forever on my machine.
""",
    answer="""
Check your proxy settings and try `download_mode="force_redownload"`; a stale lock file in the cache can also block
the download.
""",
    answer_date="2023-04-18T12:00:00.000",
)
# accepted answer id that is not in the dump
D.question(
    date="2026-03-15T09:45:00.000",
    tags=HH,
    title="upload_folder times out for a large checkpoint",
    body="""
`HfApi().upload_folder(folder_path="ckpt", repo_id="me/model")` times out on a 40 GB folder.
""",
    answer=None,
    accepted_missing=True,
)


def main() -> None:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "Posts.xml").write_text(D.xml(), encoding="utf-8")
    (OUT_DIR / "sources.json").write_text(json.dumps(D.sources, indent=2) + "\n", encoding="utf-8")
    counts: dict[str, int] = {}
    for lib in D.library.values():
        counts[lib] = counts.get(lib, 0) + 1
    print(f"wrote {len(D.rows)} rows; answered questions per library: {counts}")


if __name__ == "__main__":
    main()
