"""Deep links to the Leaderboard table: `?snapshot=D&topic=T&sort=S&order=asc|desc&page=N` read into a snapshot
name (`parse_snapshot`) and a `View` of its topics, with a notice for every value that fell back to the default (the
app's first render and the first paint read the same view), and the script that writes the table's view back into
the address as a visitor pages, sorts and picks a snapshot (`ADDRESS_SCRIPT`), so the address bar always opens what
is on screen."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import HEADLINE, parse_measure
from leaderboard.page.paging import page_number
from leaderboard.tracks.retrieval.tables.table_columns import AVERAGE, TOPIC_ALL, column, default_sort, metric_columns
from leaderboard.tracks.retrieval.tables.table_efficiency import EFFICIENCY
from leaderboard.tracks.retrieval.tables.table_filters import Filters
from leaderboard.tracks.retrieval.views.published import REFERENCE_TAB


@dataclass(frozen=True, slots=True)
class View:
    """What a deep link asks for: one topic (or all), a sort column and direction, a page (1-based; one beyond
    the end shows the last); `notice` explains fallbacks."""

    topic: str | None
    sort: str
    descending: bool = True
    notice: str = ""
    page: int = 1

    def filters(self, types: Sequence[str] | None = None, sizes: Sequence[str] | None = None) -> Filters:
        """The table's filters the link asks for; an address names no search, types or sizes (`types` and `sizes`:
        the boxes' values, None for every row)."""
        order = "desc" if self.descending else "asc"
        return Filters.of("", types, sizes, self.topic or TOPIC_ALL, self.sort, order)


def parse_view(params: Mapping[str, str], topics: Sequence[str], reference_topics: Sequence[str] = ()) -> View:
    """Read `?topic=T&sort=S&order=asc|desc&page=N`; unknown values fall back to the defaults, with a notice.

    A topic that is not the dataset's but is one of the published figures' (`reference_topics`) gets a notice
    pointing to the reference tab, where those figures are; the table itself shows all of its topics.

    `sort` takes a measure (`coverage@20`, `Coverage@20`, `alpha-nDCG@10`, applied to the chosen topic or
    the average), `topic:measure`, a column name (an efficiency column's too), or `name`, `size`, `date`.
    """
    notes = []
    raw_topic = (params.get("topic") or "").strip().lower()
    topic = None
    if raw_topic and raw_topic not in ("all", AVERAGE):
        if raw_topic in topics:
            topic = raw_topic
        elif raw_topic in reference_topics:
            notes.append(
                f"topic {raw_topic[:40]!r} is not in this dataset; its published figures are in the "
                f"{REFERENCE_TAB} tab; showing all topics"
            )
        else:
            notes.append(f"unknown topic {raw_topic[:40]!r}; showing all topics")
    raw_sort = (params.get("sort") or "").strip()
    sort, descending = default_sort(topic), True
    if raw_sort:
        found = _sort_column(raw_sort, topic, topics)
        if found is None:
            notes.append(f"unknown sort {raw_sort[:40]!r}; sorted by {sort}")
        else:
            sort, descending = found, found not in ("system", "id")
    order = (params.get("order") or "").strip().lower()
    if order in ("asc", "desc"):
        descending = order == "desc"
    raw_page = (params.get("page") or "").strip()
    page = page_number(raw_page) if raw_page else 1
    if raw_page and not re.fullmatch(r"0*[1-9][0-9]*", raw_page):
        notes.append(f"page {raw_page[:20]!r} is not a page number; showing page {page}")
    return View(topic, sort, descending, "; ".join(notes), page)


def parse_snapshot(params: Mapping[str, str], labels: Sequence[str]) -> tuple[str, str]:
    """(the snapshot `?snapshot=D` names, a notice): one of `labels` (oldest first). Left out: the newest, the
    default. Unknown: the newest too, as every other deep-link value falls back, with a notice naming the known ones
    (an old link to a snapshot no longer served still opens the board, and says so)."""
    newest = labels[-1]
    raw = (params.get("snapshot") or "").strip()
    if not raw or raw in labels:
        return raw or newest, ""
    return newest, f"unknown snapshot {raw[:40]!r} (this board has {', '.join(labels)}); showing the newest, {newest}"


def _sort_column(text: str, topic: str | None, topics: Sequence[str]) -> str | None:
    aliases = {"name": "system", "system": "system", "size": "size", "date": "date", "id": "id"}
    if text.lower() in aliases:
        return aliases[text.lower()]
    if text in metric_columns(topics, topic) or text in EFFICIENCY:
        return text
    scope, rest = (topic or AVERAGE), text
    if ":" in text:
        scope, rest = (part.strip() for part in text.split(":", 1))
        scope = scope.lower()
    try:
        measure = parse_measure(rest)
    except FreshStackError:
        return None
    if measure not in HEADLINE or (scope != AVERAGE and scope not in topics) or (topic and scope != topic):
        return None
    return column(scope, measure)


# The page's view written back into the address (`history.replaceState`: no reload, no history entry), run in
# the browser after each change of snapshot, topic, sort, order or page; defaults (the newest snapshot among them) are
# left out, so a plain visit keeps a plain address. Arguments: the topic box, sort box, order radio, page box and
# snapshot selector values, and the newest snapshot's name as the board listed it when the page loaded (a hidden
# box: the board may list a newer snapshot than it was laid out with, and a plain address opens the newest).
ADDRESS_SCRIPT = """(topic, sort, order, page, snapshot, newest) => {
    const url = new URL(window.location.href), all = %(all)s, head = %(head)s;
    const scope = topic === all ? "" : topic;
    const keep = (key, value) => value ? url.searchParams.set(key, value) : url.searchParams.delete(key);
    keep("snapshot", !snapshot || snapshot === newest ? "" : snapshot);
    keep("topic", scope);
    keep("sort", sort === (scope || %(average)s) + " " + head ? "" : sort);
    keep("order", order === "desc" ? "" : order);
    keep("page", Number(page) > 1 ? String(Math.floor(Number(page))) : "");
    window.history.replaceState(window.history.state, "", url);
    return [];
}"""


def address_script(all_topics: str) -> str:
    """`ADDRESS_SCRIPT` for a page whose topic box names every topic `all_topics`."""
    quoted = {"all": all_topics, "head": HEADLINE[0].name, "average": AVERAGE}
    return ADDRESS_SCRIPT % {k: json.dumps(v, ensure_ascii=False) for k, v in quoted.items()}
