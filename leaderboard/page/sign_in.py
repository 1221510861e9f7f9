"""Hugging Face sign-in (`leaderboard --oauth`): what it needs, checked before anything starts, and what the page
says about who is signed in.

Gradio signs users in two ways, and fails on either only once the server is being built, with a traceback:

* on a Space (`SYSTEM=spaces`): real OAuth, with the app the Space's `hf_oauth: true` registers
  (`OAUTH_CLIENT_ID`, `OAUTH_CLIENT_SECRET`, `OAUTH_SCOPES`, `OPENID_PROVIDER_URL` set by the Hub);
* anywhere else: a mock for trying the page, which signs every visitor in as the Hugging Face account the
  machine is logged in to; Gradio asks the Hub who that is (`whoami`) once, when the server starts, so it needs
  a token (`hf auth login`, or `HF_TOKEN`) and the Hub (its `HF_ENDPOINT`) within reach.

Both need Gradio's OAuth libraries (authlib, itsdangerous; the `leaderboard` extra installs them).
`check_sign_in` tests the same conditions up front and raises one `FreshStackError` naming the fix.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import gradio as gr

from freshstack_hf.errors import FreshStackError
from leaderboard.page.page import READ
from leaderboard.sanitize import escape_markdown

LIBRARIES = ("authlib", "itsdangerous")
SPACE_VARIABLES = ("OAUTH_CLIENT_ID", "OAUTH_CLIENT_SECRET", "OAUTH_SCOPES", "OPENID_PROVIDER_URL")
EXTRA = "pip install 'freshstack-hf[leaderboard]' (or pip install 'gradio[oauth]')"


def on_space() -> bool:
    """Whether this process runs on a Hugging Face Space (Gradio's own test: `SYSTEM=spaces`)."""
    return os.environ.get("SYSTEM") == "spaces"


def missing_libraries() -> list[str]:
    """Gradio's OAuth libraries that cannot be imported here."""
    missing = []
    for name in LIBRARIES:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return missing


def check_sign_in() -> str:
    """Raise a `FreshStackError` naming the fix when `--oauth` cannot start here; else say which sign-in it is."""
    missing = missing_libraries()
    if missing:
        raise FreshStackError(f"--oauth needs Gradio's OAuth libraries, missing here: {', '.join(missing)}; {EXTRA}")
    if on_space():
        unset = [name for name in SPACE_VARIABLES if not os.environ.get(name)]
        if unset:
            raise FreshStackError(
                f"--oauth on a Space needs {', '.join(unset)}, which the Hub sets when the Space's README has "
                "`hf_oauth: true` (freshstack-hf space writes it)"
            )
        return "Hugging Face sign-in (this Space's OAuth app)"
    from huggingface_hub import get_token, whoami

    if get_token() is None:
        raise FreshStackError(
            "--oauth off a Space uses Gradio's mock sign-in, which signs visitors in as the Hugging Face account "
            "this machine is logged in to, and none is: run `hf auth login` (or set HF_TOKEN), or serve on a Space"
        )
    try:
        user = whoami()
    except Exception as exc:  # offline, an expired token, the Hub unreachable: Gradio would fail the same way
        raise FreshStackError(
            "--oauth off a Space uses Gradio's mock sign-in, which asks the Hub who this machine's token belongs "
            f"to, and that failed ({type(exc).__name__}: {str(exc)[:200]}); check the token and the network "
            "(HF_HUB_OFFLINE must be unset), or serve on a Space"
        ) from None
    if user.get("type") != "user":
        raise FreshStackError("--oauth off a Space needs a personal token (hf auth login), not an organisation's")
    return f"Gradio's mock sign-in off a Space: every visitor who signs in is {user.get('name')!r}"


def signed_in_note(username: str | None) -> str:
    """What the page says under the sign-in button."""
    if not username:
        return "Not signed in: sign in with Hugging Face to submit."
    return f"Signed in as **{escape_markdown(username)}**: your submissions are recorded under this name."


def sign_in_row(demo: Any) -> None:
    """The page's sign-in button and, beside it, who is signed in (filled when the page loads; Gradio passes the
    profile to the parameter annotated `gr.OAuthProfile | None`, a name it resolves in this module)."""
    with gr.Row():
        gr.LoginButton(elem_id="sign-in", size="md", scale=0, min_width=280)
        who = gr.Markdown(signed_in_note(None), elem_id="signed-in")

    def signed_in(profile: gr.OAuthProfile | None) -> str:
        return signed_in_note(profile.username if profile else None)

    demo.load(signed_in, None, who, api_name=False, **READ)
