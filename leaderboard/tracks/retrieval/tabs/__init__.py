"""The retrieval track's tabs, one module each, registered in `leaderboard.page.tabs`: the Leaderboard
(`leaderboard_tab`, with what its events answer in `snapshot_tables`), After cutoff (`window_tab`), Reference
(`reference_tab`), Detail (`detail_tab`), Plots (`plots_tab`), Over time (`over_time_tab`), Drift (`drift_tab`),
Holes (`holes_tab`), Submit (`submit_tab`) and About (`about_tab`) tabs; and what they share on one page, each built
once (`retrieval_page`: the board, its rank intervals, the published figures, the snapshot list).

A tab lays out widgets and wires them to the track's plain code (`tables`, `views`, `submissions`), which is tested
without Gradio.
"""
