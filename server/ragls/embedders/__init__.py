"""Neural embedding providers behind `ragls.index.embedding.EmbeddingProvider` (the optional `ragls[dense]` extra).

Nothing here imports onnxruntime, tokenizers or the model at import time: `provider_from_setting("auto")` is
cheap and silent when the extra is absent, and each provider loads its model when it is constructed.
"""

from __future__ import annotations

from ragls.embedders.directory import OnnxDirectoryProvider
from ragls.embedders.endpoint import OpenAIEndpointProvider
from ragls.embedders.minilm import MiniLMProvider, minilm_available
from ragls.embedders.runtime import EmbeddingError
from ragls.embedders.settings import provider_from_setting
from ragls.embedders.wordpiece import WordPieceTokenizer

__all__ = [
    "EmbeddingError",
    "MiniLMProvider",
    "OnnxDirectoryProvider",
    "OpenAIEndpointProvider",
    "WordPieceTokenizer",
    "minilm_available",
    "provider_from_setting",
]
