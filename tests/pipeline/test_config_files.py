"""read_config_file: every bad config file is refused with ONE line that starts with the
file's path, with bounded work (no alias expansion, no deep recursion, no huge reads),
before anything else looks at the values (issue 21)."""

from __future__ import annotations

import pickle
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
import yaml

from tauray.pipeline.files import MAX_ALIAS_NODES, MAX_BYTES, MAX_DEPTH, MAX_NODES, ConfigFileError, read_config_file

REPO = Path(__file__).resolve().parents[2]


def _file(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def _refused(path: Path | str, reason: str | None = None, *, kind: str | None = None) -> ConfigFileError:
    """The file is refused with a ConfigFileError whose message is ``f"{path}: {reason}"``:
    one line, no chained traceback."""
    with pytest.raises(ConfigFileError) as info:
        read_config_file(path)
    exc = info.value
    msg = str(exc)
    assert msg.startswith(f"{path}: "), msg
    assert "\n" not in msg and "\r" not in msg and "Traceback" not in msg, msg
    assert exc.__cause__ is None and (exc.__context__ is None or exc.__suppress_context__), msg
    if reason is not None:
        assert msg == f"{path}: {reason}"
    if kind is not None:
        assert exc.kind == kind, (exc.kind, msg)
    return exc


# --------------------------------------------------------------------------- good files


def test_repository_sweep_files_read_as_tomllib_reads_them():
    files = sorted((REPO / "tauray" / "data" / "sweeps").glob("*.toml"))
    assert files
    for path in files:
        assert read_config_file(path) == tomllib.loads(path.read_text(encoding="utf-8")), path


def test_plain_yaml_reads_as_safe_load_reads_it(tmp_path):
    text = """
        name: s
        agents: [oracle]
        users: [scripted]
        trials: 2
        budget_usd: 1.5
        scenarios: [{domain: telecom, split: small}]
        models: {j: {model: openai/judge-json, api_base: null}}
        """.replace("\n        ", "\n")
    for name in ("s.yaml", "s.yml", "S.YAML"):
        assert read_config_file(_file(tmp_path, name, text)) == yaml.safe_load(text)
    assert read_config_file(str(tmp_path / "s.yaml"))["trials"] == 2


def test_yaml_anchors_and_merge_keys_still_work_and_give_independent_copies(tmp_path):
    path = _file(tmp_path, "s.yaml", (
        "defaults: &d {concurrency: 4, timeout: 30}\n"
        "models:\n"
        "  a: {<<: *d, model: x}\n"
        "  b:\n    <<: *d\n    model: y\n    timeout: 5\n"
        "list: &l [1, 2]\n"
        "again: *l\n"))
    data = read_config_file(path)
    assert data["models"] == {"a": {"concurrency": 4, "timeout": 30, "model": "x"},
                              "b": {"concurrency": 4, "timeout": 5, "model": "y"}}
    assert data["again"] == [1, 2] and data["again"] is not data["list"]  # a tree, not a DAG


def test_utf8_byte_order_mark_is_accepted(tmp_path):
    assert read_config_file(_file(tmp_path, "s.toml", b"\xef\xbb\xbfname = \"s\"\n")) == {"name": "s"}
    assert read_config_file(_file(tmp_path, "s.yaml", b"\xef\xbb\xbfname: s\n")) == {"name": "s"}


# --------------------------------------------------------------------------- the file itself


def test_missing_file(tmp_path):
    _refused(tmp_path / "nope.toml", "no such file", kind="missing")


def test_directory_given_as_the_file(tmp_path):
    (tmp_path / "sweeps.yaml").mkdir()
    _refused(tmp_path / "sweeps.yaml", "is a directory, not a file; give the path of a .toml, .yaml or .yml file",
             kind="directory")
    _refused(tmp_path, kind="directory")


@pytest.mark.parametrize("name, shown", [("sweep.json", "'.json'"), ("sweep.txt", "'.txt'"), ("sweep", None)])
def test_wrong_extension_names_the_accepted_ones(tmp_path, name, shown):
    path = _file(tmp_path, name, '{"name": "s"}')
    what = f"unsupported file type {shown}" if shown else "no file extension"
    _refused(path, f"{what}; a config file is .toml, .yaml or .yml", kind="extension")


def test_file_too_large_is_refused_without_parsing(tmp_path):
    line = b'k = "' + b"x" * 98 + b'"\n'          # 105 bytes of valid TOML, repeated
    path = _file(tmp_path, "big.toml", line * (MAX_BYTES // len(line) + 1))
    size = path.stat().st_size
    assert size > MAX_BYTES == 5_000_000
    _refused(path, f"the file is {size:,} bytes, over the 5 MB limit for a config file", kind="too_large")


@pytest.mark.parametrize("name", ["s.toml", "s.yaml"])
@pytest.mark.parametrize("content", [b"", b"  \n\n\t\n", b"\xef\xbb\xbf"])
def test_empty_file(tmp_path, name, content):
    _refused(_file(tmp_path, name, content), "the file is empty", kind="empty")


@pytest.mark.parametrize("name, content", [("s.toml", "# only a comment\n"), ("s.yaml", "# only a comment\n"),
                                           ("s.yaml", "---\n...\n"), ("s.yaml", "{}\n")])
def test_file_without_settings(tmp_path, name, content):
    _refused(_file(tmp_path, name, content), "the file holds no settings", kind="empty")


# --------------------------------------------------------------------------- encoding


@pytest.mark.parametrize("name", ["s.toml", "s.yaml"])
def test_not_utf8_names_the_byte_offset_and_line(tmp_path, name):
    path = _file(tmp_path, name, b"name = 'a'\nx = 'caf\xe9'\n" if name.endswith("toml") else b"name: a\nx: caf\xe9\n")
    offset = path.read_bytes().index(b"\xe9")
    _refused(path, f"not UTF-8 text (byte 0xe9 at offset {offset}, line 2); save the file as UTF-8", kind="encoding")
    _refused(_file(tmp_path, name, b"\xffname: a\n"),
             "not UTF-8 text (byte 0xff at offset 0, line 1); save the file as UTF-8")


def test_utf8_bom_does_not_shift_the_reported_offset(tmp_path):
    _refused(_file(tmp_path, "s.yaml", b"\xef\xbb\xbfa: \xff\n"),
             "not UTF-8 text (byte 0xff at offset 6, line 1); save the file as UTF-8")


@pytest.mark.parametrize("codec, label", [("utf-16", "UTF-16"), ("utf-32", "UTF-32")])
def test_utf16_or_utf32_with_byte_order_mark(tmp_path, codec, label):
    path = _file(tmp_path, "s.yaml", "name: s\n".encode(codec))
    _refused(path, f"saved as {label} (it starts with a {label} byte-order mark); save the file as UTF-8",
             kind="encoding")


def test_nul_bytes_mean_not_a_text_file(tmp_path):
    path = _file(tmp_path, "s.yaml", "name: s\n".encode("utf-16-le"))
    _refused(path, "not a text file (a NUL byte at offset 1, line 1); save the file as UTF-8 text", kind="encoding")


def test_yaml_control_character_is_one_line(tmp_path):
    _refused(_file(tmp_path, "s.yaml", "a: 1\nb: x\x07y\n"),
             "the control character U+0007 is not allowed in YAML (line 2, column 5); remove it", kind="syntax")


# --------------------------------------------------------------------------- syntax


def test_toml_syntax_error_names_line_and_column(tmp_path):
    _refused(_file(tmp_path, "s.toml", 'name = "s"\ntrials = \n'),
             "not valid TOML: Invalid value (at line 2, column 10)", kind="syntax")


def test_toml_duplicate_key_is_one_line(tmp_path):
    _refused(_file(tmp_path, "s.toml", "a = 1\na = 2\n"),
             "not valid TOML: Cannot overwrite a value (at line 2, column 6)")


def test_yaml_syntax_error_is_one_line_with_location(tmp_path):
    _refused(_file(tmp_path, "s.yaml", "name: [unclosed\n"),
             "not valid YAML: expected ',' or ']', but got '<stream end>' (line 2, column 1) "
             "while parsing a flow sequence (line 1, column 7)", kind="syntax")


@pytest.mark.parametrize("content, where", [("a:\n\tb: 1\n", "line 2, column 1"), ("a:\t1\n", "line 1, column 3"),
                                            ("a: [1,\t2]\n", "line 1, column 7")])
def test_yaml_tabs(tmp_path, content, where):
    _refused(_file(tmp_path, "s.yaml", content),
             f"a tab character ({where}); YAML indents and separates with spaces, not tabs", kind="tab")


def test_yaml_several_documents(tmp_path):
    _refused(_file(tmp_path, "s.yaml", "a: 1\n---\nb: 2\n"),
             "more than one YAML document (another starts at line 2, column 1); a config file is a single document",
             kind="documents")
    _refused(_file(tmp_path, "t.yaml", "---\na: 1\n---\n"), kind="documents")


@pytest.mark.parametrize("content, kind", [("- a\n- b\n", "a list"), ("just text\n", "a text value"),
                                           ("42\n", "a number"), ("true\n", "true/false")])
def test_yaml_top_level_not_a_mapping(tmp_path, content, kind):
    _refused(_file(tmp_path, "s.yaml", content),
             f"the top level is {kind}, not a mapping of settings (key: value lines)", kind="top_level")


# --------------------------------------------------------------------------- YAML semantics


def test_yaml_duplicate_key_names_the_key_and_both_lines(tmp_path):
    _refused(_file(tmp_path, "s.yaml", "agents: [a]\nusers: [b]\nagents: [c]\n"),
             "duplicate key 'agents' (line 3, column 1; first at line 1); a key may appear once in a mapping",
             kind="duplicate_key")
    _refused(_file(tmp_path, "t.yaml", "models:\n  m: {model: x, model: y}\n"),
             "duplicate key 'model' (line 2, column 17; first at line 2); a key may appear once in a mapping")


@pytest.mark.parametrize("content, shown, kind", [("yes: 1\n", "'yes'", "true/false"),
                                                  ("1: a\n", "'1'", "a number"),
                                                  ("~: a\n", "'~'", "null"),
                                                  ("2024-01-01: a\n", "'2024-01-01'", "a date")])
def test_yaml_key_that_is_not_text(tmp_path, content, shown, kind):
    _refused(_file(tmp_path, "s.yaml", content),
             f"the key {shown} reads as {kind}, not text (line 1, column 1); quote it", kind="key_type")


def test_yaml_collection_used_as_a_key(tmp_path):
    _refused(_file(tmp_path, "s.yaml", "? [a, b]\n: 1\n"),
             "a list used as a key (line 1, column 3); keys are text", kind="key_type")


@pytest.mark.parametrize("content, tag", [("a: !!python/object/apply:os.system [ls]\n",
                                           "!!python/object/apply:os.system"),
                                          ("a: !!python/name:os.system ''\n", "!!python/name:os.system"),
                                          ("a: !mine 3\n", "!mine")])
def test_yaml_unsafe_or_unknown_tag_is_one_line(tmp_path, content, tag):
    _refused(_file(tmp_path, "s.yaml", content),
             f"the YAML tag '{tag}' is not allowed (line 1, column 4); write plain values", kind="tag")


# --------------------------------------------------------------------------- bounded work


def test_yaml_alias_bomb_is_refused_fast_before_expansion(tmp_path):
    """A few hundred bytes that expand to 10^9 nodes when walked; refused while composing, after a few
    hundred nodes, by the alias limit (not by time, memory or recursion)."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    path = _file(tmp_path, "bomb.yaml", "\n".join(lines) + "\n")
    assert path.stat().st_size < 500
    start = time.process_time()
    exc = _refused(path, f"YAML aliases expand to more than {MAX_ALIAS_NODES} nodes (an alias bomb?); "
                         "write the values out", kind="aliases")
    assert time.process_time() - start < 2.0
    assert MAX_ALIAS_NODES == 10_000 and exc.kind == "aliases"


def test_yaml_alias_limit_counts_expansions_not_plain_values(tmp_path):
    """A long plain list is fine; the same count reached only through aliases is not."""
    plain = "items: [" + ", ".join(str(i) for i in range(MAX_ALIAS_NODES + 50)) + "]\n"
    assert len(read_config_file(_file(tmp_path, "plain.yaml", plain))["items"]) == MAX_ALIAS_NODES + 50
    wide = "a: &a [" + ", ".join(["x"] * 100) + "]\nb: [" + ", ".join(["*a"] * 120) + "]\n"   # 120 × 101 > 10000
    _refused(_file(tmp_path, "wide.yaml", wide), kind="aliases")


@pytest.mark.slow  # about 5 s on 2 cores: too long for the fast loop
def test_yaml_node_count_is_bounded_even_without_aliases(tmp_path):
    """A 1 MB list of short values (about 14 s for PyYAML per 5 MB) stops at MAX_NODES. (The bounds
    in these tests are this process's CPU seconds, which a loaded machine does not inflate.)"""
    path = _file(tmp_path, "s.yaml", "items:\n" + "- x\n" * (MAX_NODES + 10))
    start = time.process_time()
    _refused(path, f"more than {MAX_NODES} YAML nodes (line {MAX_NODES - 1}, column 3); "
                   "a config file holds settings, not bulk data", kind="nodes")
    assert time.process_time() - start < 10.0 and MAX_NODES == 100_000


def test_yaml_undefined_alias_and_duplicate_anchor(tmp_path):
    _refused(_file(tmp_path, "s.yaml", "a: *nope\n"), "not valid YAML: found undefined alias 'nope' (line 1, column 4)",
             kind="syntax")
    _refused(_file(tmp_path, "t.yaml", "a: &x 1\nb: &x 2\n"),
             "the anchor &x is defined twice (line 2, column 4; first at line 1); give each anchor its own name",
             kind="syntax")


def test_yaml_alias_cycle(tmp_path):
    _refused(_file(tmp_path, "s.yaml", "a: &a [1, *a]\n"),
             "the alias *a refers to a node that contains it (line 1, column 11); YAML cycles are not allowed",
             kind="cycle")


def test_yaml_deep_nesting_is_refused_fast(tmp_path):
    path = _file(tmp_path, "s.yaml", "a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    start = time.process_time()
    _refused(path, f"nested more than {MAX_DEPTH} levels deep (line 1, column {2 + MAX_DEPTH + 1})", kind="depth")
    assert time.process_time() - start < 2.0 and MAX_DEPTH == 64
    ok = "a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"        # 64 levels with the top mapping
    assert read_config_file(_file(tmp_path, "ok.yaml", ok))["a"] == eval("[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1))


def test_yaml_deep_nesting_through_aliases(tmp_path):
    deep = "[" * 40 + "]" * 40
    path = _file(tmp_path, "s.yaml", f"a: &a {deep}\nb: " + "[" * 29 + "*a" + "]" * 29 + "\n")
    _refused(path, f"nested more than {MAX_DEPTH} levels deep (line 2, column 33)", kind="depth")


def test_toml_deep_nesting_past_the_recursion_limit_is_not_called_invalid(tmp_path):
    path = _file(tmp_path, "s.toml", "a = " + "[" * 5000 + "]" * 5000 + "\n")
    _refused(path, f"nested more than {MAX_DEPTH} levels deep", kind="depth")
    path = _file(tmp_path, "t.toml", "a = " + "{b=" * 5000 + "1" + "}" * 5000 + "\n")
    _refused(path, f"nested more than {MAX_DEPTH} levels deep", kind="depth")


def test_toml_deep_nesting_that_tomllib_accepts(tmp_path):
    _refused(_file(tmp_path, "s.toml", "a = " + "[" * 100 + "]" * 100 + "\n"),
             f"nested more than {MAX_DEPTH} levels deep (under 'a')", kind="depth")
    _refused(_file(tmp_path, "t.toml", "x = 1\n" + ".".join(["k"] * 200) + " = 1\n"),
             f"nested more than {MAX_DEPTH} levels deep (under 'k')", kind="depth")
    ok = "a = " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"
    assert read_config_file(_file(tmp_path, "ok.toml", ok))


# --------------------------------------------------------------------------- the error and the module


def test_error_is_a_value_error_that_pickles(tmp_path):
    exc = _refused(tmp_path / "nope.yaml", kind="missing")
    assert isinstance(exc, ValueError)
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is ConfigFileError and str(back) == str(exc)
    assert (back.path, back.reason, back.kind) == (exc.path, exc.reason, exc.kind) == (str(tmp_path / "nope.yaml"),
                                                                                     "no such file", "missing")


@pytest.mark.slow
def test_module_is_cheap_to_import():
    code = ("import sys, tauray.pipeline.files; "
            "heavy = [m for m in ('pydantic', 'ray', 'litellm', 'pandas') if m in sys.modules]; "
            "assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
