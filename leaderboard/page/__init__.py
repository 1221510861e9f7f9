"""The Gradio page: `app` assembles the tabs registered in `tabs`, which share a `page.Page`."""
