"""A standard-library client for the ragls language server's retrieval protocol (see clients/README.md)."""

__version__ = "0.1.0"

from ragls_client.client import RaglsClient
from ragls_client.errors import RaglsError

__all__ = ["RaglsClient", "RaglsError", "__version__"]
