"""The one precedence of a setting (docs/configuration.md): environment, then
the configuration files, then the stored value, then the default, and what a
project file (which the model can write) may set there: only its safe subset,
never an endpoint or a key unless the person approved its bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.runtime import Runtime
from tooldeck.settings import settings_service
from tooldeck.state.approvals import Approvals

MODEL_VARS = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "TOOLDECK_MODEL")


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    for var in MODEL_VARS:
        monkeypatch.delenv(var, raising=False)
    paths = {"root": tmp_path / "proj", "state": tmp_path / "state", "user": tmp_path / "config.toml"}
    paths["root"].mkdir()
    paths["state"].mkdir()
    monkeypatch.setenv("TOOLDECK_CONFIG", str(paths["user"]))
    return paths


def runtime(files: dict[str, Path]) -> Runtime:
    return Runtime.for_dirs([files["root"]], state_dir=files["state"])


def test_the_person_file_sits_between_the_environment_and_the_store(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    files["user"].write_text('[editing]\nfuzzy_threshold = 0.75\n[models]\ndefault_model = "from-file"\n')
    svc = settings_service(runtime(files))
    svc.set("editing.fuzzy_threshold", 0.6, by="tool")
    svc.set("models.default_model", "stored-one", by="tool")
    assert (svc.get("editing.fuzzy_threshold"), svc.source("editing.fuzzy_threshold")) == (0.75, "config")
    assert svc.get("models.default_model") == "from-file"
    monkeypatch.setenv("TOOLDECK_MODEL", "from-env")
    assert (svc.get("models.default_model"), svc.source("models.default_model")) == ("from-env", "env")
    files["user"].write_text("")
    svc.set("editing.verbose", True, by="tool")  # a write re-reads the layers
    assert (svc.get("editing.fuzzy_threshold"), svc.source("editing.fuzzy_threshold")) == (0.6, "stored")
    assert svc.source("tree.default_mode") == "default"


def test_a_value_of_the_wrong_type_in_a_file_is_skipped(files: dict[str, Path]) -> None:
    files["user"].write_text('[editing]\nfuzzy_threshold = "high"\n[output]\nbudget_tokens = 5\n')
    svc = settings_service(runtime(files))
    assert svc.source("editing.fuzzy_threshold") == "default"
    assert svc.get("output.budget_tokens") == 20_000  # below the minimum: not taken


def test_the_person_file_sets_the_endpoint(files: dict[str, Path]) -> None:
    files["user"].write_text('[models]\nbase_url = "http://127.0.0.1:9/v1"\napi_key = "sk-person"\n')
    svc = settings_service(runtime(files))
    assert svc.get("models.base_url") == "http://127.0.0.1:9/v1" and svc.get("models.api_key") == "sk-person"
    shown = svc.describe("models.api_key")
    assert shown["is_set"] is True and shown["source"] == "config" and "value" not in shown


def test_a_project_file_sets_only_its_safe_subset(files: dict[str, Path]) -> None:
    project = files["root"] / ".tooldeck.toml"
    project.write_text(
        '[models]\ndefault_model = "project-model"\nbase_url = "http://127.0.0.1:9/v1"\napi_key = "sk-model"\n'
        "[output]\nbudget_tokens = 5000\n"
    )
    svc = settings_service(runtime(files))
    assert svc.get("models.default_model") == "project-model"  # safe: picks among the person's endpoints
    for key in ("models.base_url", "models.api_key", "output.budget_tokens"):
        assert svc.source(key) == "default", key
    with pytest.raises(ToolError) as info:  # and a tool still cannot store the endpoint
        svc.set("models.base_url", "http://127.0.0.1:9/v1", by="tool")
    assert info.value.code == ErrorCode.DENIED


def test_an_approved_project_file_applies_whole(files: dict[str, Path]) -> None:
    project = files["root"] / ".tooldeck.toml"
    project.write_text('[models]\nbase_url = "http://127.0.0.1:9/v1"\n[output]\nbudget_tokens = 5000\n')
    Approvals(files["state"]).allow([project])
    rt = runtime(files)
    svc = settings_service(rt)
    assert svc.get("models.base_url") == "http://127.0.0.1:9/v1"
    assert svc.source("output.budget_tokens") == "config"
    rt.start()
    assert rt.budget_tokens == 5000
