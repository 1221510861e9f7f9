"""The page's tabs, in the order they are shown: the one place a tab is registered.

A tab is one module with its layout and its wiring (a `leaderboard.page.page.PageTab`); `build_app` builds every tab
listed here that `shown` keeps for the page. Add a tab by writing its module and listing its class below.
"""

from __future__ import annotations

from leaderboard.page.admin_tab import AdminTab
from leaderboard.page.page import PageTab, Settings
from leaderboard.tracks.answers.answers_tab import AnswersTab
from leaderboard.tracks.reranking.rerank_tab import RerankTab
from leaderboard.tracks.retrieval.tabs.about_tab import AboutTab
from leaderboard.tracks.retrieval.tabs.detail_tab import DetailTab
from leaderboard.tracks.retrieval.tabs.drift_tab import DriftTab
from leaderboard.tracks.retrieval.tabs.holes_tab import HolesTab
from leaderboard.tracks.retrieval.tabs.leaderboard_tab import LeaderboardTab
from leaderboard.tracks.retrieval.tabs.over_time_tab import OverTimeTab
from leaderboard.tracks.retrieval.tabs.plots_tab import PlotsTab
from leaderboard.tracks.retrieval.tabs.reference_tab import ReferenceTab
from leaderboard.tracks.retrieval.tabs.submit_tab import SubmitTab
from leaderboard.tracks.retrieval.tabs.window_tab import WindowTab

TABS: tuple[type[PageTab], ...] = (
    LeaderboardTab,
    RerankTab,
    WindowTab,
    OverTimeTab,
    AnswersTab,
    ReferenceTab,
    DetailTab,
    PlotsTab,
    DriftTab,
    HolesTab,
    SubmitTab,
    AboutTab,
    AdminTab,  # only for `--admin` users, and only shown to them
)


def check_inputs(settings: Settings) -> list[str]:
    """What every tab says about the files named for it (`PageTab.check_inputs`), in the order of the tabs."""
    return [line for tab in TABS for line in tab.check_inputs(settings)]
