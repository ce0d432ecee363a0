"""import_image: types sniffed from bytes, size caps, Pillow downscaling and the path without Pillow."""

from __future__ import annotations

import base64
import io
import json
import os
from pathlib import Path

import pytest
from PIL import Image

from tooldeck.catalog import build_toolbox
from tooldeck.core.errors import ToolError
from tooldeck.core.output import ImagePart, TextPart
from tooldeck.core.toolbox import Toolbox, ToolResult
from tooldeck.imaging import prepare_image, sniff_image_type
from tooldeck.runtime import Runtime


def image_bytes(fmt: str, size: tuple[int, int], *, noise: bool = False) -> bytes:
    if noise:
        img = Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3))
    else:
        img = Image.new("RGB", size, (200, 30, 30))
    buf = io.BytesIO()
    img.save(buf, fmt)
    return buf.getvalue()


def call(box: Toolbox, args: dict[str, object]) -> ToolResult:
    return box.call_sync("import_image", json.dumps(args))


def decoded(res: ToolResult) -> tuple[str, ImagePart, bytes]:
    assert not res.is_error, res.text
    assert res.output is not None
    text, image = res.output.parts
    assert isinstance(text, TextPart) and isinstance(image, ImagePart)
    return text.text, image, base64.b64decode(image.base64_data)


@pytest.mark.parametrize(
    ("fmt", "mime"), [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")]
)
def test_each_format_is_returned_as_an_image_part(box: Toolbox, root: Path, fmt: str, mime: str) -> None:
    data = image_bytes(fmt, (40, 30))
    (root / "pic.bin").write_bytes(data)  # the name says nothing: the bytes decide
    text, image, raw = decoded(call(box, {"path": "pic.bin"}))
    assert image.mime_type == mime and raw == data
    assert image.data_uri.startswith(f"data:{mime};base64,")
    assert text == f"pic.bin: {fmt} 40x30, {len(data)} bytes"


def test_type_comes_from_the_bytes_not_the_name(box: Toolbox, root: Path) -> None:
    (root / "photo.png").write_bytes(image_bytes("JPEG", (10, 10)))
    _text, image, _raw = decoded(call(box, {"path": "photo.png"}))
    assert image.mime_type == "image/jpeg"
    (root / "fake.png").write_text("not an image at all\n")
    res = call(box, {"path": "fake.png"})
    assert res.is_error and res.error is not None and res.error.code == "unsupported"
    assert "PNG, JPEG, GIF or WebP" in res.text
    (root / "fake.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    assert call(box, {"path": "fake.svg"}).error.code == "unsupported"  # type: ignore[union-attr]


def test_large_image_is_scaled_down_with_pillow(box: Toolbox, root: Path) -> None:
    data = image_bytes("PNG", (3000, 1200))
    (root / "wide.png").write_bytes(data)
    text, image, raw = decoded(call(box, {"path": "wide.png"}))
    with Image.open(io.BytesIO(raw)) as img:
        assert img.size == (2048, 819) and img.format == "PNG"
    assert image.mime_type == "image/png"
    assert "scaled down from 3000x1200" in text


def test_heavy_image_is_scaled_until_under_the_byte_cap(root: Path, runtime: Runtime) -> None:
    runtime.settings["images"] = {"max_bytes": 300_000}
    data = image_bytes("PNG", (600, 600), noise=True)  # ~1 MB of noise: compresses badly
    assert len(data) > 300_000
    (root / "noise.png").write_bytes(data)
    _text, _image, raw = decoded(call(build_toolbox(runtime), {"path": "noise.png"}))
    assert len(raw) <= 300_000
    with Image.open(io.BytesIO(raw)) as img:
        assert max(img.size) < 600


def test_without_pillow_small_images_pass_untouched_and_big_ones_are_refused(root: Path, runtime: Runtime) -> None:
    runtime.settings["images"] = {"pillow": False, "max_bytes": 200_000}
    box = build_toolbox(runtime)
    wide = image_bytes("PNG", (3000, 1200))  # large in pixels, small in bytes
    (root / "wide.png").write_bytes(wide)
    text, _image, raw = decoded(call(box, {"path": "wide.png"}))
    assert raw == wide and "3000x1200" in text and "scaled" not in text
    (root / "noise.png").write_bytes(image_bytes("PNG", (400, 400), noise=True))
    res = call(box, {"path": "noise.png"})
    assert res.is_error and res.error is not None and res.error.code == "too_large"
    assert "tooldeck[images]" in res.text


def test_prepare_image_without_pillow_by_parameter() -> None:
    jpeg = image_bytes("JPEG", (5000, 100))
    kept = prepare_image(jpeg, "x.jpg", use_pillow=False)
    assert kept.data == jpeg and not kept.scaled and kept.size is None  # no decoder: JPEG size unknown
    scaled = prepare_image(jpeg, "x.jpg")
    assert scaled.scaled and scaled.size == (2048, 41)
    with pytest.raises(ToolError) as exc:
        prepare_image(jpeg, "x.jpg", use_pillow=False, max_bytes=100)
    assert exc.value.code == "too_large"
    assert sniff_image_type(b"RIFF\x00\x00\x00\x00WAVE") is None


def test_paths_follow_the_workspace_rules(box: Toolbox, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.png"
    outside.write_bytes(image_bytes("PNG", (4, 4)))
    assert call(box, {"path": str(outside)}).error.code == "outside_roots"  # type: ignore[union-attr]
    (root / "link.png").symlink_to(outside)
    assert call(box, {"path": "link.png"}).error.code == "outside_roots"  # type: ignore[union-attr]
    (root / "dir.png").mkdir()
    assert call(box, {"path": "dir.png"}).error.code == "not_a_file"  # type: ignore[union-attr]
    assert call(box, {"path": "none.png"}).error.code == "not_found"  # type: ignore[union-attr]


def test_a_huge_file_is_refused_without_reading(box: Toolbox, root: Path) -> None:
    big = root / "huge.png"
    with big.open("wb") as fh:
        fh.write(image_bytes("PNG", (4, 4)))
        fh.truncate(40 * 1024 * 1024)  # sparse: costs no disk
    res = call(box, {"path": "huge.png"})
    assert res.is_error and res.error is not None and res.error.code == "too_large"
    assert "it was not read" in res.text
