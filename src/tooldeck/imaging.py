"""Images for vision models: type sniffed from the bytes, size held to a cap.

Why sniff: a file's name is a claim, its first bytes are a fact. A ``.png``
that is really a zip (or a text file) must not be sent to a model as an
image, and a JPEG named ``.png`` must be sent as ``image/jpeg`` or the
client may fail to decode it.

Why downscale: vision APIs cap an image's size (bytes and pixels) and bill
by pixels; a 6000 px screenshot is no better for a model than a 2048 px one.
Scaling needs Pillow, an optional extra (``tooldeck[images]``); without it an
image under the byte cap is sent as it is and a bigger one is refused with a
message saying how to get it through.
"""

from __future__ import annotations

import base64
import binascii
import io
import struct
from dataclasses import dataclass

from tooldeck.core.errors import ErrorCode, ToolError

MAX_SEND_BYTES = 4 * 1024 * 1024  # an encoded image over this is scaled down (or refused)
MAX_SIDE = 2048  # a longer side over this is scaled down when Pillow is available
MAX_PIXELS = 100_000_000  # refuse to decode anything bigger (decompression bombs)

_PIL_FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WEBP"}


def image_refusal(data_uri: str, max_bytes: int = MAX_SEND_BYTES) -> str | None:
    """Why an image given as a ``data:`` URI cannot go to a model as it is, or
    None: one limit for every image a conversation sends (inline ``<img>``,
    a tool's image result): a known type, at most ``max_bytes`` decoded."""
    head, sep, payload = data_uri.partition(",")
    mime = head.removeprefix("data:").split(";", 1)[0]
    if not (sep and head.startswith("data:") and head.endswith(";base64")):
        return "it is not a base64 data URI"
    if mime not in _PIL_FORMATS:
        return f"{mime or 'an unknown type'} is not PNG, JPEG, GIF or WebP"
    size = len(payload) * 3 // 4 - payload[-2:].count("=")
    if size > max_bytes:
        return f"it is {size} bytes, over the {max_bytes}-byte image limit; scale it down or crop it"
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return "its data is not valid base64"
    if sniff_image_type(data) is None:
        return f"its bytes are not a {mime} image"
    return None


def sniff_image_type(data: bytes) -> str | None:
    """The MIME type of PNG, JPEG, GIF or WebP bytes, from their magic number."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def header_size(data: bytes, mime: str) -> tuple[int, int] | None:
    """Width and height read from a PNG or GIF header (no decoder needed)."""
    if mime == "image/png" and len(data) >= 24 and data[12:16] == b"IHDR":
        w, h = struct.unpack(">II", data[16:24])
        return int(w), int(h)
    if mime == "image/gif" and len(data) >= 10:
        w, h = struct.unpack("<HH", data[6:10])
        return int(w), int(h)
    return None


def pillow_available() -> bool:
    try:
        import PIL.Image  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class PreparedImage:
    data: bytes
    mime: str
    size: tuple[int, int] | None  # (width, height) when known
    original_size: tuple[int, int] | None
    original_bytes: int
    scaled: bool

    @property
    def data_uri(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


def prepare_image(
    data: bytes,
    shown: str,
    *,
    max_bytes: int = MAX_SEND_BYTES,
    max_side: int = MAX_SIDE,
    use_pillow: bool = True,
) -> PreparedImage:
    """``data`` checked and, if too big and Pillow is usable, scaled down.

    ``use_pillow=False`` takes the no-Pillow path even where Pillow is
    installed (hosts that want bytes untouched; tests of that path)."""
    mime = sniff_image_type(data)
    if mime is None:
        raise ToolError(
            ErrorCode.UNSUPPORTED,
            f"{shown} is not a PNG, JPEG, GIF or WebP image (judged by its bytes, not its name); "
            "convert it to one of those formats first",
        )
    dims = header_size(data, mime)
    if not (use_pillow and pillow_available()):
        if len(data) > max_bytes:
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"{shown} is {len(data)} bytes, over the {max_bytes}-byte image limit, and cannot be scaled "
                "down here (install tooldeck[images] for Pillow); crop or compress it first",
                {"limit": max_bytes, "size": len(data)},
            )
        return PreparedImage(data, mime, dims, dims, len(data), False)
    return _with_pillow(data, mime, shown, max_bytes, max_side)


def _with_pillow(data: bytes, mime: str, shown: str, max_bytes: int, max_side: int) -> PreparedImage:
    from PIL import Image, UnidentifiedImageError

    try:
        img = Image.open(io.BytesIO(data))
        width, height = img.size
        if width * height > MAX_PIXELS:
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"{shown} is {width}x{height} pixels, over the {MAX_PIXELS}-pixel limit; crop it first",
            )
        if len(data) <= max_bytes and max(width, height) <= max_side:
            return PreparedImage(data, mime, (width, height), (width, height), len(data), False)
        img.load()
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError, SyntaxError) as exc:
        raise ToolError(ErrorCode.UNSUPPORTED, f"{shown} could not be decoded as an image ({exc})") from exc
    side = min(max_side, max(width, height))
    for _attempt in range(8):
        out_mime, encoded, size = _encode_scaled(img, mime, side)
        if len(encoded) <= max_bytes:
            return PreparedImage(encoded, out_mime, size, (width, height), len(data), True)
        side = int(side * 0.7)
        if side < 64:
            break
    raise ToolError(
        ErrorCode.TOO_LARGE,
        f"{shown} stays over the {max_bytes}-byte image limit even scaled down; crop it first",
        {"limit": max_bytes},
    )


def _encode_scaled(img: object, mime: str, side: int) -> tuple[str, bytes, tuple[int, int]]:
    """``img`` scaled so its longer side is at most ``side``, encoded.
    An animated GIF keeps only its first frame (as PNG)."""
    from PIL import Image

    assert isinstance(img, Image.Image)
    frame = img.copy()
    frame.thumbnail((side, side), Image.Resampling.LANCZOS)
    out_mime = "image/png" if mime == "image/gif" else mime
    fmt = _PIL_FORMATS[out_mime]
    if fmt == "JPEG" and frame.mode not in ("RGB", "L"):
        frame = frame.convert("RGB")
    buf = io.BytesIO()
    options = {"quality": 85} if fmt in ("JPEG", "WEBP") else {"optimize": True}
    frame.save(buf, fmt, **options)
    return out_mime, buf.getvalue(), frame.size
