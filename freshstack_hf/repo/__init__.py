"""The dataset repo: one folder = one Hub dataset repo of parquet configs, a card and a manifest."""
