"""The retrieval track's tables as plain pandas. The Leaderboard table in one module an idea: its columns' names
(`table_columns`, below the rest), the frame of every row built once per store state (`leaderboard_table`), a model
row's efficiency cells (`table_efficiency`), the live columns of an embargoed snapshot (`table_live`), what the page
shows of it for one state of its filters (`table_filters`) and its downloads (`table_exports`); its rank column
with bootstrap intervals (`rank_column`) and the deep links that open it at a view (`deep_links`). And the
After-cutoff table (`window_table`).
"""
