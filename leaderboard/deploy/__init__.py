"""Deploying the board: a Hugging Face Space folder (`space`) and what its `app.py` runs (`space_app`)."""
