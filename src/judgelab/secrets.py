"""Secrets in URLs and on the command line: the one place they are masked or removed.

A judge's endpoint may carry credentials (``http://user:pw@host/v1``) or a key in its query string;
the command line may hold an ``--api-key`` value. Nothing judgelab writes (run.json, a store's
run identity, a lock file, an error line) holds them: :func:`mask_url_secrets` masks them in free
text, :func:`url_without_credentials` removes them from one URL, :func:`masked_argv` masks a
command line.
"""
from __future__ import annotations

import re
import sys
from urllib.parse import urlsplit, urlunsplit

__all__ = ["mask_url_secrets", "masked_argv", "url_without_credentials", "SECRET_OPTIONS"]

#: the options whose value is a secret (masked in a recorded command line)
SECRET_OPTIONS = frozenset({"--api-key"})

_URL_SECRET = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?:[^/\s@?#]*@)?(?P<rest>[^\s?#]*)(?P<tail>[?#]\S*)?")


def mask_url_secrets(text: str) -> str:
    """``text`` with every URL's credentials (``user:pw@``) and query string or fragment masked.

    Example:
        >>> mask_url_secrets("openai:m@http://u:pw@host:8000/v1?key=sk-1 and https://x/y")
        'openai:m@http://***@host:8000/v1?*** and https://x/y'
    """
    def mask(match: re.Match[str]) -> str:
        credentials = "***@" if "@" in match.group(0).split("//", 1)[1].split("/", 1)[0] else ""
        tail = match.group("tail")
        return f"{match.group('scheme')}{credentials}{match.group('rest')}" + (tail[0] + "***" if tail else "")

    return _URL_SECRET.sub(mask, text)


def url_without_credentials(url: str) -> str:
    """``url`` without its credentials (``user:password@``), query string and fragment.

    Example:
        >>> url_without_credentials("http://user:pw@host:8000/v1?key=s")
        'http://host:8000/v1'
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def masked_argv(argv: list[str] | None = None) -> list[str]:
    """The command line with the values of secret options replaced by ``***`` and the credentials
    and query strings of URLs masked (:func:`mask_url_secrets`)."""
    args = list(sys.argv if argv is None else argv)
    out: list[str] = []
    hide_next = False
    for arg in args:
        if hide_next:
            out.append("***")
            hide_next = False
            continue
        name, eq, _ = arg.partition("=")
        if name in SECRET_OPTIONS:
            if eq:
                out.append(f"{name}=***")
            else:
                out.append(arg)
                hide_next = True
            continue
        out.append(mask_url_secrets(arg))
    return out
