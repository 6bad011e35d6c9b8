"""Query rewrites from an OpenAI-compatible `/v1/chat/completions` endpoint (Ollama, llama.cpp, vLLM, LM Studio...).

`ragls.rag.expansion` searches each rewrite beside the question and fuses the rankings; this module only asks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragls.embedders.http_json import ProviderError, endpoint_url, post_json
from ragls.embedders.options import check_keys, optional_string, positive_int, seconds
from ragls.errors import ConfigError

SETTING = "ragls.queryExpansion"
DEFAULT_COUNT = 3
MAX_COUNT = 8
DEFAULT_TIMEOUT_S = 5.0
MAX_REWRITE_CHARS = 500
_KEYS = {"url", "model", "apiKey", "count", "timeout"}
_LIST_MARKER = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s*")
PROMPT = (
    "You rewrite questions about a code base into search queries for a code search engine. "
    "Write {count} different search queries for the user's question: use the identifiers, API names, file names "
    "and technical terms the code that answers it is likely to contain, and synonyms of the question's words. "
    "Answer with one query per line and nothing else: no numbering, no quotes, no explanations."
)


@dataclass(frozen=True)
class ExpansionSetting:
    """The `queryExpansion` setting read: the expander and how long a search waits for its rewrites."""

    expander: ChatQueryExpander
    timeout: float


def expansion_from_setting(setting: str | Mapping[str, Any] | None) -> ExpansionSetting | None:
    """None for null or "none"; else the endpoint the object names. A bad object raises ConfigError."""
    if setting is None or setting == "none":
        return None
    if not isinstance(setting, Mapping):
        raise ConfigError(f'{SETTING}: expected "none" or an object with url and model, got {setting!r}')
    check_keys(setting, _KEYS, SETTING, "")
    count = positive_int(setting, "count", DEFAULT_COUNT, SETTING, maximum=MAX_COUNT)
    timeout = seconds(setting, "timeout", DEFAULT_TIMEOUT_S, SETTING)
    api_key = optional_string(setting, "apiKey", SETTING)
    expander = ChatQueryExpander(setting.get("url"), setting.get("model"), api_key, count, timeout)
    return ExpansionSetting(expander, timeout)


class ChatQueryExpander:
    """Asks the model for `count` rewrites of a question (temperature 0), one a line; returns the distinct ones."""

    def __init__(
        self, url: Any, model: Any, api_key: str | None = None, count: int = DEFAULT_COUNT, timeout: float = 5.0
    ) -> None:
        if not isinstance(url, str) or not url:
            raise ConfigError(f"{SETTING}.url: expected the chat endpoint's URL, e.g. http://127.0.0.1:11434")
        if not isinstance(model, str) or not model:
            raise ConfigError(f"{SETTING}.model: expected the chat model's name, e.g. qwen2.5-coder:1.5b")
        self.url = endpoint_url(url, f"{SETTING}.url", "/v1/chat/completions")
        self.model = model
        self.name = f"chat:{model}"
        self.count = count
        self.timeout = timeout
        self._api_key = api_key

    def rewrites(self, query: str) -> list[str]:
        payload = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": PROMPT.format(count=self.count)},
                {"role": "user", "content": query},
            ],
            "temperature": 0,
            "max_tokens": 60 * self.count,
            "stream": False,
        }
        answer = post_json(self.url, payload, self._api_key, self.timeout, SETTING)
        try:
            content = answer["choices"][0]["message"]["content"]
            if not isinstance(content, str):
                raise TypeError(f"content is {type(content).__name__}")
        except (KeyError, IndexError, TypeError) as error:
            raise ProviderError(f"{self.url} gave an answer that is not a chat completion ({error})") from None
        return parse_rewrites(content, query, self.count)


def parse_rewrites(content: str, query: str, count: int) -> list[str]:
    """The answer's lines without list markers and quotes, each once, never the question itself, at most `count`."""
    seen = {query.strip().casefold()}
    rewrites: list[str] = []
    for line in content.splitlines():
        text = _LIST_MARKER.sub("", line).strip().strip("\"'`").strip()
        if not text or len(text) > MAX_REWRITE_CHARS or text.casefold() in seen:
            continue
        seen.add(text.casefold())
        rewrites.append(text)
        if len(rewrites) == count:
            break
    return rewrites
