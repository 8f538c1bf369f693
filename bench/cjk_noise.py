#!/usr/bin/env python3
"""CJK queries about things nobody wrote down: do they come back empty, while real ones hit?

    python bench/cjk_noise.py                 # both vaults, keyword-only and hybrid
    python bench/cjk_noise.py --modes keyword # no embedding model needed

Three vaults, each in a temporary folder: examples/workspace (English notes and one Chinese
note, 部署流程), a vault written here with Chinese, Japanese, Korean, Russian and English
notes, and the same with 260 English filler notes (large enough for the first pass). Each
query goes through the real CLI (`python -m memcli search --json`), first with no vectors
(keyword-only), then after `mem reindex` (hybrid, all-MiniLM-L6-v2) or, for the third vault,
`mem reindex --no-refine` (hybrid, the static first pass); vectors need the `local` extra. A true query counts when its note ranks first; a nonsense query
(a question about something no note mentions) when the result is empty. A table on
stdout; `--json` prints the counts and the failures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

NOTES = {
    "shanghai-meeting": (
        "上海客户会议纪要",
        "三月二日在上海和客户开会。对方希望四月底之前交付第一版，报价控制在二十万元以内。"
        "王经理负责合同，李工负责技术方案。下次会议定在三月十六日，地点在浦东办公室。",
    ),
    "team-lunch": (
        "团队聚餐的安排",
        "每月最后一个周五中午团队聚餐，预算每人一百元。小张对海鲜过敏，订餐时要避开海鲜。",
    ),
    "backup-policy": ("数据库备份策略", "生产数据库每天凌晨三点做全量备份，备份文件保留三十天，每周验证一次恢复。"),
    "tokyo-trip": (
        "東京出張の予定",
        "来週の火曜日から東京へ出張します。ホテルは新宿で、会議は水曜日の午後二時からです。"
        "帰りの新幹線は木曜日の夕方に予約しました。",
    ),
    "coffee": ("コーヒーの好み", "ユーザーは毎朝ブラックコーヒーを飲みます。砂糖とミルクは入れません。"),
    "seoul-office": ("서울 사무실 이전", "다음 달에 서울 사무실을 강남으로 이전합니다. 이사 업체는 이미 계약했습니다."),
    "dacha": (
        "Поездка на дачу",
        "В субботу пользователь едет на дачу к родителям. Нужно купить семена огурцов и новый шланг для полива.",
    ),
    "cat": ("The user's cat", "The user's cat is called Miso and eats twice a day."),
}
TRUE = {
    "cjk": [
        ("上海会议", "shanghai-meeting"),
        ("报价", "shanghai-meeting"),
        ("客户希望什么时候交付", "shanghai-meeting"),
        ("合同谁负责", "shanghai-meeting"),
        ("团队聚餐", "team-lunch"),
        ("海鲜过敏", "team-lunch"),
        ("聚餐预算", "team-lunch"),
        ("数据库备份", "backup-policy"),
        ("备份保留多久", "backup-policy"),
        ("恢复验证", "backup-policy"),
        ("東京出張", "tokyo-trip"),
        ("新幹線の予約", "tokyo-trip"),
        ("ホテルは新宿", "tokyo-trip"),
        ("コーヒーの好み", "coffee"),
        ("砂糖とミルク", "coffee"),
        ("서울 사무실", "seoul-office"),
        ("사무실 이전", "seoul-office"),
        ("이사 업체", "seoul-office"),
        ("семена огурцов", "dacha"),
        ("поездка на дачу", "dacha"),
    ],
    "example": [
        ("部署流程", "deployment-process"),
        ("回滚", "deployment-process"),
        ("灰度发布", "deployment-process"),
        ("冒烟测试", "deployment-process"),
        ("错误率", "deployment-process"),
        ("镜像标签", "deployment-process"),
    ],
}
NONSENSE = [
    "量子计算机的冷却系统",
    "火星探测器的燃料",
    "如何种植番茄",
    "股票市场的走势",
    "足球比赛的结果",
    "北极熊的栖息地",
    "钢琴课的时间表",
    "汽车保险怎么买",
    "古代丝绸之路",
    "宠物狗的疫苗",
    "太阳能电池板效率",
    "围棋比赛规则",
    "量子コンピュータの冷却",
    "富士山の天気",
    "猫の予防接種",
    "野球の試合結果",
    "ピアノの練習",
    "電気自動車の充電",
    "歌舞伎の歴史",
    "ラーメンの作り方",
    "한국 전쟁의 역사",
    "피아노 레슨 일정",
    "축구 경기 결과",
    "김치 만드는 법",
    "주식 시장 전망",
    "우주 정거장",
    "квантовый компьютер",
    "курс доллара",
    "история войны",
    "xqzv blorp",
    "quantum computer cooling",
]


FILLER_WORDS = (
    "garden tomato bicycle office meeting invoice budget travel hotel train coffee cat dog music "
    "piano report server deploy database backup"
).split()


def write_cjk(root: Path, fillers: int = 0) -> None:
    day = root / "memory" / "2026-03-02"
    day.mkdir(parents=True)
    for name, (description, body) in NOTES.items():
        (day / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\n# {description}\n\n{body}\n", encoding="utf-8"
        )
    import random

    rnd = random.Random(1)
    for i in range(fillers):
        (day / f"filler-{i}.md").write_text(
            f"# Note {i}\n\n{' '.join(rnd.choice(FILLER_WORDS) for _ in range(30))}.\n", encoding="utf-8"
        )


def mem(ws: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "memcli", "-w", str(ws), *args], capture_output=True, text=True, env=env, timeout=600
    )


def run(ws: Path, mode: str, true: list) -> dict:
    failures = []
    hits_first = empty = 0
    for query, want in true:
        found = [Path(r["path"]).stem for r in json.loads(mem(ws, "search", query, "--json").stdout)["results"]]
        hits_first += bool(found) and found[0] == want
        if not (found and found[0] == want):
            failures.append({"query": query, "want": want, "got": found[:3]})
    for query in NONSENSE:
        found = [Path(r["path"]).stem for r in json.loads(mem(ws, "search", query, "--json").stdout)["results"]]
        empty += not found
        if found:
            failures.append({"query": query, "want": None, "got": found[:3]})
    return {
        "mode": mode,
        "true_first": hits_first,
        "true": len(true),
        "nonsense_empty": empty,
        "nonsense": len(NONSENSE),
        "failures": failures,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modes", default="keyword,hybrid")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("example", "cjk", "cjk+260"):
            ws = Path(tmp) / name
            if name == "example":
                shutil.copytree(ROOT / "examples" / "workspace", ws)
            else:
                write_cjk(ws, 260 if name == "cjk+260" else 0)
            for mode in args.modes.split(","):
                if mode == "hybrid":
                    done = mem(ws, "reindex", *(["--no-refine"] if name == "cjk+260" else []))
                    if done.returncode:
                        print(done.stderr, file=sys.stderr)
                        return 1
                    mode = "first-pass" if name == "cjk+260" else mode
                out.append({"vault": name, **run(ws, mode, TRUE[name.split("+")[0]])})
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=1))
        return 0
    for r in out:
        print(
            f"{r['vault']:8} {r['mode']:10} true queries first {r['true_first']}/{r['true']}  "
            f"nonsense empty {r['nonsense_empty']}/{r['nonsense']}"
        )
        for f in r["failures"]:
            print(f"    {f['query']}: want {f['want']}, got {f['got']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
