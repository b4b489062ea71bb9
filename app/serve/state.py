"""What every route of `hayai serve` shares: the server's configuration (`ServerConfig`, from the
command line) and the `Server` an application holds (the batcher, the configuration, the memory
budget, the size limits that follow from them), found from a request by `server_of`.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from app.serve.batcher import Batcher
from app.serve.memory import MemoryBudget
from model.config import ImageCap

MAX_FILES = 64  # images in one POST /v1/ocr
FORM_SLACK = 64 * 1024  # a request's bytes beyond its images: JSON, multipart headers, text parts


@dataclass(frozen=True)
class ServerConfig:
    model_id: str  # what /v1/models lists and every answer names, e.g. "hayai-v2.1"
    variant: str
    device: str
    precision: str
    max_new_tokens: int  # the default and the most a request may ask for
    api_key: str | None = None
    max_image_bytes: int = 20_000_000
    max_image_pixels: int = 25_000_000  # --max-image-pixels, beside the model's own cap:
    image_cap: ImageCap = ImageCap()  # model/config.py's, in the same words as every command's
    max_memory_bytes: int = 1_024_000_000  # --max-queue-mb: what requests may hold together
    # --allow-host: the Host names a keyless server answers besides loopback ones
    allow_hosts: tuple[str, ...] = ()
    created: int = 0  # when the model was loaded (Unix time), for /v1/models


@dataclass
class Server:
    """What the routes share: the batcher, the configuration, the memory budget, the size limits."""

    batcher: Batcher
    config: ServerConfig
    budget: MemoryBudget

    @property
    def chat_limit(self) -> int:  # one image, base64 (4/3 of its bytes), and the rest of the JSON
        return self.config.max_image_bytes * 4 // 3 + 4 + FORM_SLACK

    @property
    def ocr_limit(self) -> int:
        return MAX_FILES * (self.config.max_image_bytes + FORM_SLACK)


def server_of(request: Request) -> Server:
    return request.app.state.server
