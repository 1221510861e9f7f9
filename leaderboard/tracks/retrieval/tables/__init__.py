"""The retrieval track's tables as plain pandas: the Leaderboard table (`leaderboard_table`: built, filtered, sorted
and exported), its rank column with bootstrap intervals (`rank_column`), the deep links that open it at a view
(`deep_links`), and the After-cutoff table (`window_table`).
"""
