"""A board's store as a Hugging Face dataset folder: written (`board_export`), read back (`board_import`)."""
