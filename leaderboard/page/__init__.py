"""The Gradio page: `app` assembles the tabs registered in `tabs`, which share a `page.Page`; `submit_form` is the
widget group every submit form lays out (name, description, link, button) and the outcome its tab answers in.
"""
