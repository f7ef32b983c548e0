"""The static report: pages, links, offline-only content, figures, the
transcript of a failed conversation, and the ``tauray report`` command."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from tauray.pipeline.cli.report import register
from tauray.results.report.values import transcript_href
from tauray.results.tables.readers import conversations_df

from .figures import check_index_figures, elements, failed_telecom_conversation


def _pages(report_dir: Path) -> list[Path]:
    return sorted(report_dir.rglob("*.html"))


def test_report_pages_open_offline_and_links_resolve(report_dir, fixture_sweep):
    conv = conversations_df(fixture_sweep)
    pages = _pages(report_dir)
    assert len(pages) == 3 + len(conv)  # index, conversations, audit (runs are audited as they go)
    assert (report_dir / "audit.html").is_file()
    assert sorted(p.name for p in (report_dir / "assets").iterdir()) == ["report.css", "report.js"]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "Content-Security-Policy" in text and "default-src 'none'" in text
        for tag, attrs in elements(text):
            for name in ("src", "href"):
                target = attrs.get(name)
                if target is None:
                    continue
                assert not re.match(r"^[a-z]+:", target), f"{page.name}: {tag} {name}={target} leaves the folder"
                path = target.split("#")[0]
                if path:
                    assert (page.parent / path).resolve().is_file(), f"{page.name}: broken link {target}"
    listing = (report_dir / "conversations.html").read_text(encoding="utf-8")
    for row in conv.itertuples():
        assert transcript_href(row.run_id, row.conversation_id) in listing


def test_index_figures_equal_metric_functions(report_dir, fixture_sweep):
    checked = check_index_figures((report_dir / "index.html").read_text(encoding="utf-8"), fixture_sweep)
    assert checked["leaderboard"] >= 4 * 11 and checked["pass_k"] >= 4 * 4 * 2
    for kind in ("paired", "ab", "breakdown", "judge", "repairs", "cost", "totals", "stops"):
        assert checked.get(kind, 0) > 0, kind
    index = (report_dir / "index.html").read_text(encoding="utf-8")
    assert index.count('data-rater-a="') == 9  # predicates + two judge configs, 3 × 3 heatmap


def test_failed_telecom_transcript_shows_failed_predicate_and_user_db_field(report_dir, fixture_sweep):
    row = failed_telecom_conversation(fixture_sweep)
    text = (report_dir / transcript_href(row["run_id"], row["conversation_id"])).read_text(encoding="utf-8")
    els = elements(text)
    failed = [a for t, a in els if a.get("data-met") == "false"]
    assert [(a["data-side"], a["data-function"]) for a in failed] == [("user", "assert_service_status")]
    assert "Failed predicates: user:assert_service_status" in text
    user_fields = [a["data-field"] for t, a in els if a.get("data-db-side") == "user"]
    assert "device.airplane_mode" in user_fields
    assert not [a for t, a in els if a.get("data-db-side") == "agent"]
    m = re.search(r'data-field="device.airplane_mode"><td><code>[^<]*</code></td><td><code>(.*?)</code></td><td><code>(.*?)</code>', text)
    assert m and m.groups() == ("false", "true")
    assert text.count('data-kind="sync"') >= 1 and 'data-kind="tool_call"' in text
    assert text.count("data-judge-sample=") == 4 and "fixture verdict of the strict judge config" in text


def test_report_command(fixture_sweep, tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="tauray")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["report", str(fixture_sweep / "quiet"), "--out", str(tmp_path / "r"), "--json",
                              "--bootstrap", "200"])
    assert args.func(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["conversations"] == summary["transcripts"] == 16 and summary["judge_configs"] == 2
    assert summary["arms"] == ["openai/scripted-agent-quiet | openai/scripted-user"]
    assert (tmp_path / "r" / "index.html").is_file()
    args = parser.parse_args(["report", str(tmp_path / "missing")])
    assert args.func(args) == 2


def test_page_names_cannot_collide_and_table_text_is_escaped(fixture_sweep, tmp_path):
    from tauray.results.report.build import environment
    from tauray.results.report.pages import page_context
    from tauray.results.stats import analysis
    from tauray.results.tables.readers import plain_records as records

    assert transcript_href("a.b", "c") != transcript_href("a-b", "c")  # one slug, two runs
    assert transcript_href("r", "x/y") != transcript_href("r", "x-y")
    assert "/" not in transcript_href("r", "../../etc")[len("transcripts/"):].split("/", 1)[1]
    row = failed_telecom_conversation(fixture_sweep)
    t = analysis.transcript(fixture_sweep, row["conversation_id"], row["run_id"])
    hostile = '<script>alert(1)</script><img src="https://example.com/x">'
    msgs = t.messages.assign(content=t.messages["content"].astype(object).where(t.messages["role"] != "user", hostile))
    t = analysis.Transcript(**{**t.__dict__, "messages": msgs})
    context = page_context(t.conversation, "arm", records(t.messages), records(t.actions), records(t.predicates),
                           records(t.judge_verdicts), records(t.nl_assertions), t.db_diff)
    html = environment().get_template("transcript.html.j2").render(title=hostile, root="../../", **context)
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert [a for tag, a in elements(html) if tag == "img"] == []


def test_gold_replay_is_cached_across_pages(fixture_sweep, tmp_path):
    from tauray.pipeline.report import write_report
    from tauray.results.stats import analysis

    analysis._gold_dumps.cache_clear()
    write_report(fixture_sweep / "oracle-llmuser", tmp_path / "r", n_boot=50)
    info = analysis._gold_dumps.cache_info()
    assert info.misses <= 8 and info.hits >= 1  # 8 scenarios, 2 trials each: one replay per scenario
