"""Settings are read once (issue 12): python -m app hands its flags to create_app, never through os.environ."""
import ast
import os
from argparse import Namespace
from pathlib import Path

import pytest

from workspace.errors import CandorError
from workspace.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def _args(**given):
    base = dict(model=None, data=None, target=None, target_class=None, trust_pickle=False, torch_class=None,
                torch_kwargs=None, classes=None, torch_output=None, text_model=None)
    return Namespace(**{**base, **given})


def test_main_does_not_assign_to_os_environ():
    """app/__main__.py talks to the server through Settings: no os.environ[...] =, .update, .setdefault or putenv."""
    tree = ast.parse((ROOT / "app" / "__main__.py").read_text())
    writes = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
        writes += [ast.unparse(t) for t in targets if "environ" in ast.unparse(t)]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            call = ast.unparse(node.func)
            if ("environ" in call and node.func.attr in ("update", "setdefault", "pop", "clear")) or call == "os.putenv":
                writes.append(call)
    assert writes == []


def test_main_hands_its_flags_to_create_app_as_settings(monkeypatch, tmp_path):
    """--model/--data/--target/--target-class reach create_app(settings=...) and leave the environment untouched."""
    import app.__main__ as cli
    import app.serve.server

    for name in ("CANDOR_MODEL", "CANDOR_DATA", "CANDOR_TARGET", "CANDOR_CLASS", "CANDOR_TRUST_PICKLE",
                 "CANDOR_BIND_HOSTS", "CANDOR_ALLOWED_HOSTS", "CANDOR_USERS_FILE", "CANDOR_AUTH_HEADER",
                 "CANDOR_RESEARCHER_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    seen = []

    def fake_create_app(*a, settings=None, **kw):
        seen.append(settings)
        raise CandorError("stop here")

    monkeypatch.setattr(app.serve.server, "create_app", fake_create_app)
    monkeypatch.setattr(cli, "_check_port_free", lambda host, port: None)
    before = dict(os.environ)
    code = cli.main(["--model", "m.skops", "--data", "d.csv", "--target", "label", "--target-class", "b",
                     "--port", "8999"])
    assert code == 2 and dict(os.environ) == before
    (s,) = seen
    assert (s.model, s.data, s.target, s.target_class, s.trust_pickle) == (Path("m.skops"), Path("d.csv"), "label",
                                                                          "b", False)
    assert s.bind_hosts == ("127.0.0.1",)


def test_defaults_without_any_variable():
    s = Settings.from_env({})
    assert (s.model, s.warm, s.max_cells, s.max_upload_mb, s.model_timeout_s, s.max_model_unpacked_mb) == \
        (None, True, 20e6, 50.0, 120.0, 1024)
    assert s.limit("CANDOR_MAX_JOBS_PER_USER") == 2.0 and s.allowed_hosts == () and s.database_url is None


@pytest.mark.parametrize("name, value, message", [
    ("CANDOR_MAX_CELLS", "lots", "CANDOR_MAX_CELLS='lots' is not a positive number"),
    ("CANDOR_MAX_UPLOAD_MB", "-5", "CANDOR_MAX_UPLOAD_MB='-5' is not a positive number"),
    ("CANDOR_MAX_JOBS", "0", "CANDOR_MAX_JOBS='0' is not a positive number"),
    ("CANDOR_MODEL_TIMEOUT_S", "nan", "CANDOR_MODEL_TIMEOUT_S='nan' is not a positive number"),
    ("CANDOR_MAX_MODEL_UNPACKED_MB", "1.5", "CANDOR_MAX_MODEL_UNPACKED_MB must be a positive whole number of MiB, "
                                            "got '1.5'"),
    ("CANDOR_MAX_CALLBACK_KB", "8", "CANDOR_MAX_CALLBACK_KB must be a whole number of KiB from 16 to 1,048,576, "
                                    "got '8'"),
    ("CANDOR_MAX_CALLBACK_KB", "lots", "CANDOR_MAX_CALLBACK_KB must be a positive whole number of KiB, got 'lots'"),
    ("CANDOR_WARM", "yes", "CANDOR_WARM must be 1, 0 or sync, got 'yes'"),
    ("CANDOR_TRUST_PICKLE", "true", "CANDOR_TRUST_PICKLE must be 0 or 1, got 'true'"),
])
def test_a_bad_value_is_one_line_naming_its_variable(name, value, message):
    with pytest.raises(CandorError) as err:
        Settings.from_env({name: value})
    assert str(err.value) == message


def test_zero_turns_off_only_the_memory_ceiling_and_the_timeout():
    s = Settings.from_env({"CANDOR_MAX_MEMORY_MB": "0", "CANDOR_MODEL_TIMEOUT_S": "0", "CANDOR_MAX_CELLS": "1e3"})
    assert (s.max_memory_mb, s.model_timeout_s, s.max_cells) == (0.0, 0.0, 1000.0)


def test_environment_values_are_parsed():
    env = {"CANDOR_MODEL": "m.pt", "CANDOR_DATA": "d.csv", "CANDOR_TARGET": "y", "CANDOR_CLASS": "b",
           "CANDOR_TRUST_PICKLE": "1", "CANDOR_TORCH_CLASSES": "a,b", "CANDOR_TORCH_KWARGS": '{"n": 3}',
           "CANDOR_WARM": "sync", "CANDOR_ALLOWED_HOSTS": "a.example, b.example", "CANDOR_CACHE_DIR": "/x/cache",
           "DATABASE_URL": "sqlite:///s.db"}
    s = Settings.from_env(env)
    assert (s.model, s.target_class, s.trust_pickle, s.warm) == (Path("m.pt"), "b", True, "sync")
    assert (s.torch.classes, s.torch.kwargs) == (("a", "b"), {"n": 3})
    assert (s.allowed_hosts, s.cache_dir, s.database_url) == (("a.example", "b.example"), Path("/x/cache"),
                                                             "sqlite:///s.db")


def test_a_model_without_its_data_and_target_is_refused():
    with pytest.raises(CandorError, match=r"^--model, --data and --target go together \(CANDOR_MODEL"):
        Settings.from_env({"CANDOR_MODEL": "m.skops"})
    with pytest.raises(CandorError, match=r"^--target-class \(CANDOR_CLASS\) goes with --model$"):
        Settings.from_env({"CANDOR_CLASS": "b"})


def test_flags_over_the_environment():
    env = {"CANDOR_MODEL": "env.skops", "CANDOR_DATA": "env.csv", "CANDOR_TARGET": "t", "CANDOR_TRUST_PICKLE": "1",
           "CANDOR_MAX_CELLS": "500"}
    kept = Settings.from_args(_args(), env)
    assert (kept.model, kept.trust_pickle, kept.max_cells) == (Path("env.skops"), True, 500.0)
    flags = Settings.from_args(_args(model="m.skops", data="d.csv", target="y"), env)
    assert (flags.model, flags.data, flags.target, flags.trust_pickle) == (Path("m.skops"), Path("d.csv"), "y", False)
    with pytest.raises(CandorError, match="--torch-kwargs must be a JSON object, got list"):
        Settings.from_args(_args(model="m.pt", data="d.csv", target="y", torch_kwargs="[1]"), {})


def test_text_model_flag_needs_a_saved_folder(tmp_path):
    with pytest.raises(CandorError, match=r"--text-model .*: no config.json there"):
        Settings.from_args(_args(text_model=str(tmp_path)), {})
    (tmp_path / "config.json").write_text("{}")
    assert Settings.from_args(_args(text_model=str(tmp_path)), {}).text_model == tmp_path.resolve()


def test_installed_settings_win_over_the_environment(monkeypatch, tmp_path):
    """After create_app(settings=...), deep readers (limits, uploads) use the object, not a later environment."""
    from workspace import limits, settings, uploads

    monkeypatch.setenv("CANDOR_MAX_CELLS", "7")
    assert limits.setting("CANDOR_MAX_CELLS") == 7.0  # nothing installed: the environment now
    try:
        settings.install(Settings(max_cells=1234.0, upload_dir=tmp_path / "up"))
        assert limits.setting("CANDOR_MAX_CELLS") == 1234.0
        assert uploads.upload_dir() == (tmp_path / "up").resolve()
    finally:
        settings.install(None)
