#!/usr/bin/env python3
"""Generate a realistic synthetic Obsidian vault for Kenning's benchmarks.

    python bench/gen_vault.py --n 10000 --out /tmp/vault10k [--seed 42] [--force]

Writes N notes (people, organizations, projects, meetings, topics; about 3 % in Japanese) of
200–800 words each, with YAML frontmatter, wikilinks in prose, typed ``## Facts`` lines in the
Kenning syntax and ``## Timeline`` entries, plus two files next to the vault:

* ``DIR.queries.json``: ``quality`` (10 queries, each for a distinctive fact planted in one known
  note; the query is paraphrased but keeps one rare word that occurs nowhere else),
  ``paraphrase`` (5 of those facts asked with no word in common) and ``latency`` (50 realistic
  queries for timing).
* ``DIR.touch.json``: 10 note paths to edit in incremental re-index tests.

The output has the same shape and size as the shared peer vaults (``/work/shared/bench``), so
Kenning's numbers compare with the peers measured there. Stdlib only; the same ``--seed`` and
``--n`` always give byte-identical output.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import shutil
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

MIN_WORDS, MAX_WORDS = 200, 800
JAPANESE_SHARE = 0.03
# Share of each kind of note; the rest of N goes to meetings.
KIND_SHARES = {"person": 0.28, "organization": 0.14, "project": 0.18, "topic": 0.06}
FOLDERS = {"person": "people", "organization": "organizations", "project": "projects",
           "meeting": "meetings", "topic": "topics"}

# --- vocabulary -------------------------------------------------------------------------------


def _w(text: str) -> list[str]:
    return text.split()


# None of these lists may contain a planted rare word (see PLANTED).

FIRST = _w("""
Ada Aiden Alba Amir Anika Arjun Astrid Beatriz Bruno Camila Casper Chiara Dalia Damian Elif
Emeka Esme Felix Fiona Gideon Greta Hamza Hedda Ines Ivan Jasper Jun Kamala Karim Kirsten
Lars Leila Linus Lucia Malik Mara Mateo Milan Nadia Nikolai Nora Oskar Paloma Quentin Rafael
Rania Ronan Rosa Sanjay Selma Soren Talia Teodor Uma Valeria Vikram Wanda Xavier Yara Yusuf
Zainab Zoltan Anouk Björn""")
LAST = _w("""
Abara Achterberg Bakker Barros Becker Bianchi Castillo Costa Dahl Delacroix Eriksen Farah
Ferrand Galvez Gruber Halvorsen Haddad Ibarra Ionescu Jansen Jovanovic Kaur Keller Kowalski
Lange Larsen Lindgren Lucero Madsen Marsh Mendes Moreau Mwangi Nakagawa Nieminen Novak Obi
Olsen Ortega Pereira Petrov Quinn Rahimi Reyes Rinaldi Sandoval Schreiber Serrano Sorensen
Strand Tamura Teixeira Toivonen Umar Varga Vasquez Voss Wagner Wojcik Yilmaz Zamora Zeller
Aalto""")
JP_SURNAMES = [("佐藤", "Sato"), ("鈴木", "Suzuki"), ("高橋", "Takahashi"), ("渡辺", "Watanabe"),
               ("伊藤", "Ito"), ("山本", "Yamamoto"), ("中村", "Nakamura"), ("小林", "Kobayashi"),
               ("加藤", "Kato"), ("吉田", "Yoshida"), ("山田", "Yamada"), ("松本", "Matsumoto"),
               ("井上", "Inoue"), ("木村", "Kimura"), ("清水", "Shimizu"), ("森", "Mori"),
               ("池田", "Ikeda"), ("橋本", "Hashimoto"), ("石川", "Ishikawa"), ("前田", "Maeda")]
JP_GIVEN = [("美咲", "Misaki"), ("健太", "Kenta"), ("陽子", "Yoko"), ("大輔", "Daisuke"),
            ("真由美", "Mayumi"), ("翔", "Sho"), ("恵", "Megumi"), ("拓也", "Takuya"),
            ("由紀", "Yuki"), ("誠", "Makoto"), ("彩", "Aya"), ("直樹", "Naoki"),
            ("智子", "Tomoko"), ("亮", "Ryo"), ("早紀", "Saki"), ("浩二", "Koji")]
ORG_PREFIX = _w("""
Amberline Anvil Arclight Ashgrove Bellwether Birchwood Blackwater Bramble Brightwell
Cedarview Cinder Clearbrook Copperfield Crestline Driftstone Eastgate Emberly Fairhaven
Fernbrook Foxhollow Glasswing Goldcrest Greyfield Halcyon Harborview Hawthorn Highmoor
Ironwood Ivory Keystone Lakeshore Larkspur Lodestar Maplehurst Meadowlark Millbrook
Moonstone Northgate Oakridge Pinecrest Quarry Redwood Riverbend Rosewater Saltmarsh
Silverline Stonebridge Summerfield Tidewater Timberline Trueform Upland Vanguard Westbrook
Whitecap Wildflower Willowmere Windmill Yarrow Zenith""")
ORG_SUFFIX = _w("""
Analytics Bank Biotech Capital Cloud Consulting Dynamics Energy Foods Freight Games Health
Insurance Labs Logistics Media Mobility Networks Partners Payments Retail Robotics Security
Software Studios Systems Telecom Travel Ventures Works""")
JP_ORG_NAMES = ["ミナト", "アサヒ", "サクラ", "ヒカリ", "ツバサ", "カエデ", "ミドリ", "ホクト",
                "アオバ", "コスモ", "ヤマト", "スバル", "ナギサ", "イズミ", "トキワ", "ハヤテ"]
JP_ORG_KINDS = ["システムズ", "テクノロジー", "ソフト", "データ", "ネットワークス", "ラボ"]
CODENAMES = _w("""
Albatross Antelope Badger Beacon Bison Bluebird Bobcat Caribou Cassowary Cheetah Condor
Cormorant Coyote Crane Curlew Dolphin Dunlin Egret Falcon Ferret Flamingo Gazelle Gecko
Gibbon Goshawk Grebe Heron Hornbill Ibex Jackdaw Jaguar Kingfisher Kite Koala Lemur Leopard
Lynx Magpie Manatee Marmot Marten Merlin Mongoose Moose Narwhal Nightjar Ocelot Orca Osprey
Otter Panther Pelican Penguin Petrel Plover Puffin Quokka Raven Redstart Sandpiper Seal
Shrike Skylark Sparrow Starling Stork Swift Tapir Tern Toucan Vole Walrus Warbler Wolverine
Wombat Wren Yak Zebra""")
PROJECT_KINDS = _w("""
Migration Rewrite Platform Portal Pipeline Gateway Dashboard Launch Pilot Refresh
Integration Audit Rollout Cleanup Revamp Consolidation Hardening Redesign Sync Service
Tooling Billing Search Onboarding""")
TOPIC_AREAS = _w("""
Billing Search Onboarding Caching Pricing Hiring Observability Incident Security Privacy
Compliance Localization Accessibility Retention Forecasting Procurement Partnerships
Analytics Deployment Testing Reliability Performance Documentation Support Payments Identity
Storage Networking Mobile Data Quality Experimentation Licensing Vendor Capacity
Infrastructure Backups Alerting Permissions Notifications Reporting Scheduling Sharding
Replication Encryption Inventory Contracts Renewals Feedback Budget Roadmap""")
TOPIC_ASPECTS = ["strategy", "costs", "metrics", "risks", "ownership", "roadmap", "practices",
                 "tooling", "backlog", "policy", "lessons", "standards", "reviews", "planning",
                 "guidelines"]
TOPIC_WORDS = [a.lower() for a in TOPIC_AREAS] + [
    "rate limiting", "schema changes", "on-call", "SSO", "data retention", "cost allocation",
    "release trains", "feature flags", "load balancing", "API versioning", "audit logs",
    "customer churn", "usage metering", "disaster recovery", "access reviews", "query latency"]
TOPIC_JA = ["課金", "認証", "監視", "キャッシュ", "検索", "移行", "請求", "セキュリティ", "可用性",
            "性能", "採用", "契約", "障害対応", "データ基盤", "テスト", "リリース計画"]
TECH = _w("""
Postgres Kafka Redis Kubernetes Terraform Snowflake BigQuery Airflow dbt Grafana Prometheus
Datadog Sentry Elasticsearch ClickHouse Spark Flink React TypeScript Go Rust Python Java
Kotlin Swift gRPC GraphQL Vault Consul Envoy Nginx RabbitMQ DynamoDB S3 Lambda Jenkins
ArgoCD Helm Vitess MySQL SQLite Temporal Pulumi OpenTelemetry""")
TEAMS = ["platform", "payments", "data", "mobile", "infrastructure", "security", "growth", "design",
         "sales", "finance", "support", "search", "identity", "billing"]
TEAMS_JA = ["基盤", "決済", "データ", "モバイル", "インフラ", "セキュリティ", "営業", "経理"]
ROLES = ["Staff engineer", "Engineering manager", "Product manager", "Designer", "Data scientist",
         "Account executive", "Head of finance", "Site reliability engineer", "CTO", "VP of sales",
         "Solutions architect", "Recruiter", "Security lead", "Customer success manager",
         "Principal engineer", "Partner", "Operations lead"]
ROLES_JA = ["部長", "課長", "エンジニア", "プロダクトマネージャー", "営業担当", "CTO"]
MEETING_KINDS = ["weekly sync", "design review", "planning", "retro", "customer call", "1-1",
                 "incident review", "kickoff", "board prep", "pricing review", "roadmap review",
                 "hiring debrief", "quarterly review", "vendor call"]
METRICS = ["p95 latency", "error budget burn", "weekly active teams", "time to first value",
           "net revenue retention", "cost per request", "mean time to recovery", "queue depth"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
WEEKDAYS_JA = ["月曜日", "火曜日", "水曜日", "木曜日", "金曜日"]
DOMAINS = {"person": ["work", "engineering", "product", "sales", "finance", "people"],
           "organization": ["work", "sales", "finance"],
           "project": ["engineering", "product", "work"],
           "meeting": ["work", "engineering", "product", "sales"],
           "topic": ["engineering", "product", "finance", "people"]}

SENTENCES = [
    "{P} works at {Porg} and leads the {team} team there.",
    "{P} joined {Porg} in {month} {year} as {Prole}.",
    "{O} invested in {O2} in {month} {year}, and {P} took the observer seat.",
    "{P} advises {O} on {topic} and {topic2}.",
    "{P} founded {O} in {year} after six years on the {team} team at {O2}.",
    "{J} depends on {J2} for {topic}, which is why the two teams plan together.",
    "The {team} team moved {topic} onto {tech} in {month}, and latency dropped by {pct} percent.",
    "{P} owns {J} and reports progress every {weekday}.",
    "During {M} we agreed to split the {topic} work into {small} milestones.",
    "{P} asked {P2} to write a one-page proposal on {topic} before {month}.",
    "Customer feedback from {O} says {topic} is still the main blocker for a wider rollout.",
    "The budget for {J} is {money} for the year, most of it for {tech} licences.",
    "We rejected {tech} for {topic} because the team would have to run it themselves.",
    "{P} thinks the {topic} dashboard tracks the wrong metric and suggested {metric} instead.",
    "There is an open question about who signs off on {topic} changes once {J} ships.",
    "{P} and {P2} disagree on whether {tech} or {tech2} is the better fit for {topic}.",
    "The renewal with {O} is due in {month}; {P} is preparing the usage numbers.",
    "Spend on {tech} grew {pct} percent quarter over quarter, mostly because of {topic}.",
    "A review in {month} found that our {topic} alerts fire too late to be useful.",
    "{P} reports to {Pmgr} and covers {topic} for the {team} team.",
    "Action item from last week: {P} to document the {topic} runbook and link it from {J}.",
    "{O} asked for a security questionnaire before expanding the contract.",
    "The {team} roadmap lists {topic}, {topic2} and {topic3} for next quarter.",
    "{P} attended {M} and raised concerns about {topic}.",
    "We decided to keep {tech} for {topic} until {J} is done.",
    "The estimate for {topic} is {small} weeks, assuming {tech} stays in scope.",
    "{P} paired with {P2} on {topic} and found {small} flaky tests in the {tech} suite.",
    "Hiring for the {team} team is on hold until {J} reaches its {month} milestone.",
    "{O} uses {J} in production and sends about {bignum} requests a day through it.",
    "The notes from {M} are the best summary of where {topic} stands.",
    "{P} prefers written updates over meetings and answers email in the morning.",
    "A prototype of {topic} built on {tech} has been running in staging since {month}.",
    "The contract with {O} caps {topic} support at {small} hours a month.",
    "{P} suggested that {O} pilot {J} with one team before a wider rollout.",
    "Legal flagged the {topic} clause in the {O} contract as too broad.",
    "{J} is part of the {J2} programme and shares its on-call rota.",
    "{P} presented the {topic} numbers to {O} and promised a follow-up in {month}.",
    "Most of the {topic} incidents this quarter came from one misconfigured {tech} cluster.",
    "{P} wants {metric} on the {team} dashboard before anyone changes {topic}.",
    "The trade-off between {topic} and {topic2} came up again, and nobody owns it yet.",
]
SENTENCES_JA = [
    "{P}さんは{Porg}で{team}チームを率いている。",
    "{O}は{year}年{mon}月に{O2}に出資した。",
    "{M}では、{topic}の予算について議論した。",
    "第{small}会議室で{J}の進捗を確認した。",
    "{P}さんから、エンジニアを{small}名採用する計画が共有された。",
    "{J}の予算は年間{yen}万円で、主に{tech}のライセンス費用である。",
    "{tech}から{tech2}への移行は{mon}月までに完了する予定。",
    "{O}の担当者は{topic}の改善を強く求めている。",
    "次回の定例会議は{mon}月{day}日、同じ会議室で行う。",
    "{P}さんは{J}の責任者として、毎週{weekday}に進捗を報告している。",
    "{topic}に関するアラートが遅すぎるという指摘があった。",
    "稟議の承認には約{small}週間かかる見込み。",
    "{O}との契約更新は{mon}月。利用状況のデータを{P}さんが準備している。",
    "{J}は{J2}に依存しているため、リリース計画を合わせる必要がある。",
    "宿題: {P}さんが{topic}の手順書を作成し、{J}からリンクする。",
    "{P}さんと{P2}さんは、{topic}に{tech}と{tech2}のどちらを使うかで意見が分かれている。",
]
SECTIONS = {"person": ["Background", "Working style", "Notes"],
            "organization": ["Overview", "Relationship history", "Notes"],
            "project": ["Goals", "Status", "Risks", "Notes"],
            "meeting": ["Agenda", "Discussion", "Decisions"],
            "topic": ["Summary", "Open questions", "Notes"]}
SECTIONS_JA = {"person": ["経歴", "メモ"], "organization": ["概要", "取引の経緯"],
               "project": ["目的", "進捗"], "meeting": ["議題", "内容", "決定事項"],
               "topic": ["概要", "メモ"]}

# (kind, fact, query keeping the rare word, rare word, zero-overlap paraphrase or None).
# {first} is the person's first name, {name} the note's title.
PLANTED = [
    ("person", "Outside work, {first} restores a vintage accordion and played it at the last "
     "company offsite.", "which colleague repairs an old accordion", "accordion",
     "teammate who fixes antique squeezeboxes"),
    ("organization", "{name} heats its Reykjavik office with geothermal water and cut its energy "
     "bill by a third.", "customer office in Reykjavik warmed by hot springs", "Reykjavik",
     "company whose Iceland branch runs on volcanic warmth"),
    ("project", "The nightly import crashed when a supplier began sending invoices as EBCDIC files "
     "exported from an old host system.", "which job broke on EBCDIC data from a vendor", "EBCDIC",
     None),
    ("meeting", "Legal confirmed that the trademark dispute in Paraguay is settled, so no rebrand "
     "is needed.", "did the Paraguay naming conflict end", "Paraguay", None),
    ("person", "{first} is training for a glider licence and logs every flight on weekends.",
     "who is learning to pilot a glider", "glider",
     "teammate taking lessons to soar without an engine"),
    ("organization", "{name} only signs contracts that were notarised in Liechtenstein.",
     "customer that requires a Liechtenstein notary", "Liechtenstein", None),
    ("project", "Load tests showed checkout stalling at 7,300 requests per second because of a "
     "single mutex in the tax calculator.", "which project hit a mutex bottleneck under load",
     "mutex", None),
    ("meeting", "We agreed to move the autumn offsite from Porto to a farmhouse outside Ljubljana.",
     "where was the team retreat near Ljubljana decided", "Ljubljana",
     "meeting that relocated our retreat to Slovenia"),
    ("person", "{first} keeps two beehives on the office roof and gives everyone a jar of honey in "
     "December.", "who hands out honey at the end of the year", "honey",
     "colleague practising apiculture at work"),
    ("topic", "An outage last spring was traced to clock drift on a Raspberry Pi forgotten in the "
     "server closet.", "incident caused by a Raspberry board nobody remembered", "Raspberry", None),
]

LATENCY = [
    "{person}", "{org}", "{project}", "{topic_note}", "who works at {org}",
    "what did we decide about {topic}", "{tech} migration risk", "{topic} budget",
    "meetings with {org}", "{codename} status", "why did we reject {tech}",
    "who owns {project}", "{person} role", "renewal with {org}", "{topic} incident",
    "open questions about {topic}", "{tech} latency", "{codename} design review",
    "who advises {org}", "{topic} roadmap next quarter", "{person} {topic}",
    "contract {topic} clause", "hiring plan {team} team", "{metric} dashboard",
    "which projects depend on {project}", "{org} security questionnaire", "{tech} vs {tech2}",
    "{team} team on-call", "investors in {org}", "what changed in {topic} since {month}",
    "{codename} kickoff action items", "{person} prefers", "spend on {tech}",
    "{topic} runbook", "pilot with {org}", "{topic} and {topic2} trade-off",
    "定例会議 予算", "エンジニア 採用", "{topic_ja} 移行", "{org} feedback {topic}",
    "{month} milestone {codename}", "{tech} prototype staging", "{person} attended",
    "flaky tests {tech} suite", "{topic} estimate weeks", "who reports to {person}",
    "{org} rollout blocker", "{codename} budget licences", "{topic} alerts too late",
    "{team} roadmap",
]

_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


def count_words(text: str) -> int:
    """Words in ``text``: whitespace tokens, with every two CJK characters counted as one word."""
    cjk = len(_CJK.findall(text))
    if not cjk:
        return len(text.split())
    return len(_CJK.sub(" ", text).split()) + (cjk + 1) // 2


# --- the world --------------------------------------------------------------------------------


@dataclass(eq=False)  # identity, not field-by-field: notes point at each other
class Note:
    kind: str
    title: str
    japanese: bool = False
    created: dt.date = dt.date(2025, 1, 1)
    domain: str = "work"
    # person
    first: str = ""
    aliases: list[str] = field(default_factory=list)
    org: Note | None = None
    role: str = ""
    team: str = ""
    email: str = ""
    manager: Note | None = None
    previous_org: Note | None = None
    # organization
    email_domain: str = ""
    people: list[Note] = field(default_factory=list)
    # project
    codename: str = ""
    owner: Note | None = None
    # meeting
    date: dt.date | None = None
    attendees: list[Note] = field(default_factory=list)
    # links to neighbours (projects of a person, related notes of a project/topic/meeting)
    related: list[Note] = field(default_factory=list)
    meetings: list[Note] = field(default_factory=list)

    @property
    def path(self) -> str:
        return f"{FOLDERS[self.kind]}/{self.title}.md"


def _counts(n: int) -> dict[str, int]:
    counts = {kind: max(1, round(n * share)) for kind, share in KIND_SHARES.items()}
    counts["meeting"] = max(1, n - sum(counts.values()))
    return counts


def _day(rng: random.Random, start: dt.date, end: dt.date) -> dt.date:
    return start + dt.timedelta(days=rng.randrange((end - start).days + 1))


class _Names:
    """Hands out titles unique across the whole vault (case-insensitively, for macOS)."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def take(self, candidates, fallback) -> str:
        for name in candidates:
            if name.lower() not in self.taken:
                self.taken.add(name.lower())
                return name
        i = 2
        while True:
            name = f"{fallback} {i}"
            if name.lower() not in self.taken:
                self.taken.add(name.lower())
                return name
            i += 1


def build_world(n: int, rng: random.Random) -> dict[str, list[Note]]:
    """All notes with their titles, attributes and neighbours (no text yet)."""
    counts = _counts(n)
    names = _Names()
    start, end = dt.date(2023, 6, 1), dt.date(2026, 6, 30)

    def japanese() -> bool:
        return rng.random() < JAPANESE_SHARE

    orgs: list[Note] = []
    prefix, suffix = ORG_PREFIX[:], ORG_SUFFIX[:]
    for _ in range(counts["organization"]):
        ja = japanese()
        if ja:
            cands = (f"株式会社{rng.choice(JP_ORG_NAMES)}{rng.choice(JP_ORG_KINDS)}"
                     for _ in range(20))
            title = names.take(cands, "株式会社コスモ")
        else:
            cands = (f"{rng.choice(prefix)} {rng.choice(suffix)}" for _ in range(40))
            title = names.take(cands, f"{rng.choice(prefix)} {rng.choice(suffix)}")
        slug = re.sub(r"[^a-z0-9]+", "", title.lower()) or f"org{len(orgs)}"
        note = Note("organization", title, japanese=ja, created=_day(rng, start, end),
                    domain=rng.choice(DOMAINS["organization"]), email_domain=f"{slug}.example")
        short = title.split()[0] if not ja else title.removeprefix("株式会社")
        note.aliases = [short] if short != title else []
        orgs.append(note)

    people: list[Note] = []
    for _ in range(counts["person"]):
        ja = japanese()
        if ja:
            pairs = [(rng.choice(JP_SURNAMES), rng.choice(JP_GIVEN)) for _ in range(20)]
            title = names.take((s[0] + g[0] for s, g in pairs), "佐藤美咲")
            sur, given = next(((s, g) for s, g in pairs if s[0] + g[0] == title), pairs[0])
            first = sur[0]
            aliases = [f"{sur[0]}さん", f"{given[1]} {sur[1]}"]
            email_local = f"{given[1]}.{sur[1]}".lower()
        else:
            pairs = [(rng.choice(FIRST), rng.choice(LAST)) for _ in range(40)]
            fallback = f"{rng.choice(FIRST)} {rng.choice(FIRST)[0]}. {rng.choice(LAST)}"
            title = names.take((f"{f} {la}" for f, la in pairs), fallback)
            first, last = title.split()[0], title.split()[-1]
            aliases = [first, f"{first[0]}. {last}"]
            email_local = re.sub(r"[^a-z.]", "", f"{first}.{last}".lower())
        org = rng.choice(orgs)
        note = Note("person", title, japanese=ja, created=_day(rng, start, end),
                    domain=rng.choice(DOMAINS["person"]), first=first, aliases=aliases, org=org,
                    role=rng.choice(ROLES_JA if ja else ROLES), team=rng.choice(TEAMS),
                    email=f"{email_local}@{org.email_domain}")
        org.people.append(note)
        people.append(note)
    for p in people:
        if len(people) > 1 and rng.random() < 0.6:
            p.manager = rng.choice([q for q in p.org.people if q is not p] or people)
            if p.manager is p:
                p.manager = None
        if len(orgs) > 1 and rng.random() < 0.15:
            p.previous_org = rng.choice([o for o in orgs if o is not p.org])

    projects: list[Note] = []
    for _ in range(counts["project"]):
        cands = (f"{rng.choice(CODENAMES)} {rng.choice(PROJECT_KINDS)}" for _ in range(40))
        title = names.take(cands, f"{rng.choice(CODENAMES)} {rng.choice(PROJECT_KINDS)}")
        note = Note("project", title, created=_day(rng, start, end),
                    domain=rng.choice(DOMAINS["project"]), codename=title.split()[0],
                    owner=rng.choice(people), org=rng.choice(orgs))
        note.aliases = [f"Project {title}", f"{note.codename} project"]
        projects.append(note)
    for p in people:
        p.related = rng.sample(projects, min(len(projects), rng.randint(1, 2)))

    topics: list[Note] = []
    for _ in range(counts["topic"]):
        cands = (f"{rng.choice(TOPIC_AREAS)} {rng.choice(TOPIC_ASPECTS)}" for _ in range(40))
        title = names.take(cands, f"{rng.choice(TOPIC_AREAS)} {rng.choice(TOPIC_ASPECTS)}")
        topics.append(Note("topic", title, created=_day(rng, start, end),
                           domain=rng.choice(DOMAINS["topic"]),
                           aliases=[title.split()[0].lower()]))
    for t in topics:
        t.related = rng.sample(projects, min(len(projects), rng.randint(1, 3)))
    for j in projects:
        j.related = rng.sample([q for q in projects if q is not j], min(len(projects) - 1, 2))
        if topics:
            j.related.append(rng.choice(topics))

    meetings: list[Note] = []
    mstart, mend = dt.date(2024, 1, 8), dt.date(2026, 10, 30)
    for _ in range(counts["meeting"]):
        ja = japanese()
        project = rng.choice(projects)
        day = _day(rng, mstart, mend)
        if ja:
            base = f"{day.isoformat()} {project.codename} 定例会議"
        else:
            base = f"{day.isoformat()} {project.codename} {rng.choice(MEETING_KINDS)}"
        title = names.take([base], base)
        note = Note("meeting", title, japanese=ja, created=day, date=day,
                    domain=rng.choice(DOMAINS["meeting"]), related=[project])
        note.attendees = rng.sample(people, min(len(people), rng.randint(2, 6)))
        if rng.random() < 0.5:
            note.related.append(rng.choice(orgs))
        meetings.append(note)
        for a in note.attendees:
            a.meetings.append(note)
        project.meetings.append(note)
    meetings.sort(key=lambda m: m.title)
    for p in people + projects:
        p.meetings.sort(key=lambda m: m.title)
    return {"person": people, "organization": orgs, "project": projects, "meeting": meetings,
            "topic": topics}


# --- writing notes ----------------------------------------------------------------------------


def _link(note: Note, rng: random.Random, p_link: float = 0.6) -> str:
    if rng.random() >= p_link:
        return note.title
    if note.kind == "person" and not note.japanese and rng.random() < 0.15:
        return f"[[{note.title}|{note.first}]]"
    return f"[[{note.title}]]"


def _q(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _fm_list(values: list[str]) -> str:
    return "[" + ", ".join(_q(v) for v in values) + "]"


class _Writer:
    """Renders one note's text from the world with its own random stream."""

    def __init__(self, note: Note, world: dict[str, list[Note]], seed: int) -> None:
        self.note = note
        self.w = world
        self.rng = random.Random(f"{seed}:{note.path}")

    def pick(self, kind: str, exclude: tuple[Note | None, ...] = ()) -> Note:
        """A neighbour of the note half the time, else any note of ``kind``; never ``exclude``."""
        rng, note = self.rng, self.note
        near = [x for x in (note.related + note.meetings + note.attendees
                            + [note.org, note.owner, note.manager])
                if x and x.kind == kind and x not in exclude]
        if near and rng.random() < 0.5:
            return rng.choice(near)
        pool = self.w[kind]
        for _ in range(8):
            choice = rng.choice(pool)
            if choice not in exclude:
                return choice
        return next((x for x in pool if x not in exclude), choice)

    def sentence(self) -> str:
        rng, ja = self.rng, self.note.japanese
        template = rng.choice(SENTENCES_JA if ja else SENTENCES)
        slots: dict[str, str] = {}
        chosen: dict[str, Note] = {}
        for key in re.findall(r"\{(\w+)\}", template):
            if key in slots:
                continue
            if key in ("P", "P2", "O", "O2", "J", "J2", "M"):
                kind = {"P": "person", "O": "organization", "J": "project", "M": "meeting"}[key[0]]
                first = chosen.get(key[0]) if key.endswith("2") else None
                note = self.pick(kind, exclude=(self.note, first))
                chosen[key] = note
                if kind == "meeting":
                    slots[key] = f"[[{note.title}]]"
                else:
                    slots[key] = _link(note, rng, 0.6 if kind == "person" else 0.7)
            elif key in ("Porg", "Pmgr", "Prole"):
                person = chosen["P"]
                if key == "Porg":
                    slots[key] = _link(person.org, rng, 0.7)
                elif key == "Pmgr":
                    if person.manager is None:
                        return self.sentence()
                    slots[key] = _link(person.manager, rng)
                else:
                    role = person.role.lower()
                    slots[key] = ("an " if role[0] in "aeiou" else "a ") + role
            elif key.startswith("topic"):
                if ja:
                    slots[key] = rng.choice(TOPIC_JA)
                elif self.w["topic"] and rng.random() < 0.12:
                    slots[key] = f"[[{self.pick('topic').title}]]"
                else:
                    slots[key] = rng.choice(TOPIC_WORDS)
            elif key.startswith("tech"):
                slots[key] = rng.choice(TECH)
            elif key == "team":
                slots[key] = rng.choice(TEAMS_JA if ja else TEAMS)
            elif key == "month":
                slots[key] = rng.choice(MONTHS)
            elif key == "mon":
                slots[key] = str(rng.randint(1, 12))
            elif key == "day":
                slots[key] = str(rng.randint(1, 28))
            elif key == "year":
                slots[key] = str(rng.randint(2019, 2026))
            elif key == "weekday":
                slots[key] = rng.choice(WEEKDAYS_JA if ja else WEEKDAYS)
            elif key == "pct":
                slots[key] = str(rng.randint(3, 45))
            elif key == "small":
                slots[key] = str(rng.randint(2, 12))
            elif key == "money":
                slots[key] = f"{rng.randint(2, 90) * 10}k USD"
            elif key == "yen":
                slots[key] = str(rng.randint(3, 90) * 100)
            elif key == "bignum":
                slots[key] = f"{rng.randint(2, 900) * 1000:,}"
            elif key == "metric":
                slots[key] = rng.choice(METRICS)
        return template.format(**slots)

    def frontmatter(self) -> list[str]:
        n, rng = self.note, self.rng
        updated = n.created + dt.timedelta(days=rng.randint(0, 120))
        lines = ["---", f"type: {n.kind}"]
        if n.aliases:
            lines.append(f"aliases: {_fm_list(n.aliases)}")
        lines.append(f"domain: {n.domain}")
        if n.kind == "person":
            lines += [f"organization: {_q(f'[[{n.org.title}]]')}", f"role: {_q(n.role)}",
                      f"emails: [{n.email}]"]
        elif n.kind == "organization":
            lines += [f"domains: [{n.email_domain}]",
                      f"key_people: {_fm_list([f'[[{p.title}]]' for p in n.people[:3]])}"]
        elif n.kind == "project":
            lines += ["status: active",
                      f"related: {_fm_list([f'[[{x.title}]]' for x in n.related])}"]
            if n.meetings:
                lines.append(f"see_also: {_fm_list([f'[[{n.meetings[-1].title}]]'])}")
        elif n.kind == "meeting":
            lines += [f"date: {n.date.isoformat()}",
                      f"attendees: {_fm_list([f'[[{p.title}]]' for p in n.attendees])}",
                      f"related: {_fm_list([f'[[{x.title}]]' for x in n.related])}"]
        elif n.kind == "topic":
            lines.append(f"related: {_fm_list([f'[[{x.title}]]' for x in n.related])}")
        lines += [f"created: {n.created.isoformat()}", f"updated: {updated.isoformat()}", "---"]
        return lines

    def summary(self) -> str:
        n, rng = self.note, self.rng
        if n.japanese:
            if n.kind == "person":
                return f"[[{n.org.title}]]の{n.role}。{rng.choice(TEAMS_JA)}チームを担当している。"
            if n.kind == "organization":
                return f"{rng.choice(TOPIC_JA)}の分野で取引のある会社。"
            return f"[[{n.related[0].title}]]の{rng.choice(TOPIC_JA)}について話し合った定例会議。"
        if n.kind == "person":
            return (f"{n.role} at [[{n.org.title}]] on the {n.team} team; works on "
                    + " and ".join(f"[[{j.title}]]" for j in n.related) + ".")
        if n.kind == "organization":
            return (f"{rng.choice(ORG_SUFFIX)} company that works with us on "
                    f"{rng.choice(TOPIC_WORDS)} and {rng.choice(TOPIC_WORDS)}.")
        if n.kind == "project":
            return (f"{n.kind.title()} led by [[{n.owner.title}]] to improve "
                    f"{rng.choice(TOPIC_WORDS)} using {rng.choice(TECH)}.")
        if n.kind == "meeting":
            return (f"{n.title.split(' ', 2)[2].capitalize()} for [[{n.related[0].title}]] with "
                    + ", ".join(p.title for p in n.attendees) + ".")
        return (f"What we know about {n.title.lower()}, collected from meetings and projects "
                f"such as [[{n.related[0].title}]].")

    def _source(self) -> str:
        pool = self.note.meetings or self.w["meeting"]
        return f"[source:: [[{self.rng.choice(pool).title}]]]"

    def facts(self) -> list[str]:
        n, rng = self.note, self.rng
        out: list[str] = []
        month = n.created.isoformat()[:7]
        since = f"[from:: {month}]"
        if n.kind == "person":
            if n.previous_org:
                out.append(f"- works_at:: [[{n.previous_org.title}]] [to:: {month}] "
                           f"[status:: superseded] [by:: [[{n.title}#^w1]]] {self._source()}")
            out.append(f"- works_at:: [[{n.org.title}]] {n.role} {since} [epistemic:: assertion] "
                       f"{self._source()} ^w1")
            if n.manager:
                out.append(f"- reports_to:: [[{n.manager.title}]] {since} {self._source()}")
            out.append(f"- member_of:: [[{n.related[0].title}]] {since} [epistemic:: assertion] "
                       f"{self._source()}")
            if rng.random() < 0.5:
                out.append(f"- Prefers {rng.choice(['written updates', 'short calls', 'pairing'])} "
                           f"for {rng.choice(TOPIC_WORDS)} [epistemic:: hypothesis] "
                           f"[confidence:: {rng.randint(4, 9) / 10}] {self._source()}")
        elif n.kind == "organization":
            other = self.pick("organization", exclude=(n,))
            if other is not n:
                rel = rng.choice(["invested_in", "related_to", "uses"])
                target = other if rel != "uses" else self.pick("project")
                out.append(f"- {rel}:: [[{target.title}]] {since} [epistemic:: assertion] "
                           f"{self._source()}")
            out.append(f"- Annual contract worth {rng.randint(2, 90) * 10}k USD "
                       f"[epistemic:: assertion] {self._source()}")
        elif n.kind == "project":
            out.append(f"- part_of:: [[{n.org.title}]] {since} [epistemic:: assertion] "
                       f"{self._source()}")
            for x in n.related[:2]:
                rel = "depends_on" if x.kind == "project" else "related_to"
                out.append(f"- {rel}:: [[{x.title}]] {since} {self._source()}")
            out.append(f"- Will miss the {rng.choice(MONTHS)} milestone [epistemic:: speculation] "
                       f"[confidence:: {rng.randint(2, 6) / 10}] {self._source()}")
        elif n.kind == "meeting":
            out.append(f"- informs:: [[{n.related[0].title}]] [from:: {n.date.isoformat()}] "
                       f"[epistemic:: assertion] [source:: [[{n.title}]]]")
        else:
            for x in n.related[:2]:
                out.append(f"- informs:: [[{x.title}]] {since} {self._source()}")
        return out

    def timeline(self) -> list[str]:
        rng = self.rng
        pool = self.note.meetings or rng.sample(self.w["meeting"], min(3, len(self.w["meeting"])))
        chosen = sorted(rng.sample(pool, min(len(pool), rng.randint(1, 4))), key=lambda m: m.date)
        verbs = ["Discussed", "Reviewed", "Agreed on", "Raised concerns about", "Signed off on"]
        return [f"- {m.date.isoformat()} — {rng.choice(verbs)} {rng.choice(TOPIC_WORDS)} in "
                f"[[{m.title}]]. [source:: [[{m.title}]]]" for m in chosen]

    def render(self, target_words: int, planted: str | None) -> str:
        n, rng = self.note, self.rng
        ja = n.japanese
        head = [*self.frontmatter(), f"# {n.title}", "", self.summary(), ""]
        if not ja and n.kind in ("person", "project", "organization", "topic", "meeting") and (
                n.kind == "meeting" or rng.random() < 0.5):
            head += ["## Facts", *self.facts(), ""]
        if not ja and n.kind in ("person", "project", "organization") and rng.random() < 0.4:
            head += ["## Timeline", *self.timeline(), ""]
        tail: list[str] = []
        if n.kind == "meeting" and not ja:
            tail = ["## Action items",
                    *(f"- [ ] {a.title}: follow up on {rng.choice(TOPIC_WORDS)} by "
                      f"{rng.choice(MONTHS)}." for a in n.attendees[:3]), ""]
        if not ja and rng.random() < 0.1 and self.w["meeting"]:
            m = self.pick("meeting", exclude=(n,))
            href = urllib.parse.quote(f"../{m.path}")
            tail += ["## See also", f"- [notes from {m.date.isoformat()}]({href})", ""]
        if n.kind == "project" and not ja and rng.random() < 0.2:
            name = n.codename.lower()
            head_code = [f"```yaml\n# {name}.yml\nservice: {name}\n"
                         f"backend: {rng.choice(TECH).lower()}\n"
                         f"replicas: {rng.randint(2, 12)}\n```", ""]
        else:
            head_code = []

        sections = (SECTIONS_JA if ja else SECTIONS)[n.kind]
        used = count_words("\n".join(head + head_code + tail + [f"## {s}" for s in sections]))
        if planted:
            used += count_words(planted)
        budget = max(0, target_words - used)
        paragraphs: list[list[str]] = []
        total = 0
        while True:
            sent = self.sentence()
            words = count_words(sent)
            # The margin covers rounding of CJK counts when sentences are joined.
            if total + words > budget and used + total >= MIN_WORDS + 15:
                break
            if not paragraphs or len(paragraphs[-1]) >= rng.randint(3, 6):
                paragraphs.append([])
            paragraphs[-1].append(sent)
            total += words
        if planted:
            para = paragraphs[len(paragraphs) // 2] if paragraphs else []
            para.insert(len(para) // 2, planted)
            if not paragraphs:
                paragraphs.append(para)

        body: list[str] = []
        per = max(1, -(-len(paragraphs) // len(sections)))
        for i, title in enumerate(sections):
            chunk = paragraphs[i * per:(i + 1) * per]
            if not chunk:
                continue
            body.append(f"## {title}")
            if i == 0 and head_code:
                body += head_code
            for para in chunk:
                body += [("" if ja else " ").join(para), ""]
        return "\n".join(head + body + tail).rstrip("\n") + "\n"


# --- main -------------------------------------------------------------------------------------


def generate(n: int, out: Path, seed: int = 42) -> dict:
    """Write the vault and its two JSON files; return a summary (notes, words)."""
    if n < 10:
        raise ValueError("--n must be at least 10 (ten planted facts need ten notes)")
    rng = random.Random(f"kenning-bench:{seed}:{n}")
    world = build_world(n, rng)
    everything = [note for kind in ("person", "organization", "project", "meeting", "topic")
                  for note in world[kind]]

    planted: dict[str, str] = {}
    quality, paraphrase = [], []
    for kind, fact, query, rare, hard in PLANTED:
        pool = [x for x in world[kind] if not x.japanese and x.path not in planted]
        if not pool:
            pool = [x for x in everything if not x.japanese and x.path not in planted]
        if not pool:  # only in vaults of a dozen notes with a Japanese one among them
            pool = [x for x in everything if x.path not in planted]
        target = rng.choice(pool)
        text = fact.format(first=target.first, name=target.title)
        planted[target.path] = text
        quality.append({"query": query, "target": target.path, "rare": rare, "fact": text})
        if hard:
            paraphrase.append({"query": hard, "target": target.path, "fact": text})

    total_words = 0
    for note in everything:
        writer = _Writer(note, world, seed)
        target_words = round(writer.rng.triangular(MIN_WORDS, MAX_WORDS, 770))
        text = writer.render(target_words, planted.get(note.path))
        total_words += count_words(text)
        path = out / note.path
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)

    latency = []
    topics_en = world["topic"] or []
    for template in LATENCY:
        slots = {
            "person": rng.choice(world["person"]).title,
            "org": rng.choice([o for o in world["organization"] if not o.japanese]
                              or world["organization"]).title,
            "project": rng.choice(world["project"]).title,
            "codename": rng.choice(world["project"]).codename,
            "topic_note": rng.choice(topics_en).title if topics_en else "billing",
            "topic": rng.choice(TOPIC_WORDS), "topic2": rng.choice(TOPIC_WORDS),
            "topic_ja": rng.choice(TOPIC_JA), "tech": rng.choice(TECH),
            "tech2": rng.choice(TECH), "team": rng.choice(TEAMS), "metric": rng.choice(METRICS),
            "month": rng.choice(MONTHS),
        }
        latency.append(template.format(**slots))
    candidates = sorted(note.path for note in everything if note.path not in planted)
    touch = rng.sample(candidates, min(10, len(candidates)))

    queries = {"seed": seed, "n": n, "quality": quality, "paraphrase": paraphrase,
               "latency": latency}
    Path(f"{out}.queries.json").write_text(
        json.dumps(queries, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    Path(f"{out}.touch.json").write_text(json.dumps(touch, indent=2) + "\n", encoding="utf-8")
    return {"notes": len(everything), "words": total_words,
            "japanese": sum(x.japanese for x in everything)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, required=True, help="number of notes (at least 10)")
    ap.add_argument("--out", type=Path, required=True, help="vault folder to create")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--force", action="store_true", help="replace --out if it already exists")
    args = ap.parse_args(argv)
    out: Path = args.out
    if out.exists() and any(out.iterdir()):
        if not args.force:
            ap.error(f"{out} exists and is not empty; pass --force to replace it")
        shutil.rmtree(out)
    started = time.perf_counter()
    try:
        info = generate(args.n, out, args.seed)
    except ValueError as exc:
        ap.error(str(exc))
    elapsed = time.perf_counter() - started
    print(f"wrote {info['notes']} notes ({info['japanese']} Japanese), {info['words']} words "
          f"(avg {info['words'] // info['notes']}) to {out} in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
