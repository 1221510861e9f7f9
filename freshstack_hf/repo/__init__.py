"""The dataset repo: one folder = one Hub dataset repo of parquet configs, a card and a manifest.

Its layout (`layout`), tables (`tables`), manifest (`manifest`) and card (`card`, `card_build`); reading and writing
it (`reader`, `writer`, `dataset` for `Dataset`), checking it (`check`) and its revisions (`revisions`, `targets`);
the official release schema in and out (`official`), a board export's folder (`board_folder`), and the results a
model repo shows (`eval_results`).
"""
