"""
Writes `demo/data/demo-pages-articles.xml.bz2`: the small Wikipedia-format dump that `make demo` pretrains on.

Its pages are the project's own: articles about invented people, organisations and places (the names of
the NER demo), written from a fixed set of facts in MediaWiki markup, with `[[links]]`, piped links,
redirects, templates, references and categories, as a real `pages-articles` dump has. Because every page
states the same facts, a masked entity can be predicted from its context, which is what pretraining
teaches. The output is deterministic; rerun this script only to change the sample.
"""

import bz2
import random
from pathlib import Path
from typing import Dict, List
from xml.sax.saxutils import escape

from ner_demo import FIRST, LAST, LOC, MISC, ORG

OUT = Path(__file__).resolve().parent / "data" / "demo-pages-articles.xml.bz2"
# Redirect pages: alias -> article.
REDIRECTS = {"Acme": "Acme Corp", "UN": "United Nations", "NYC": "New York", "Munich FC": "Bayern Munich"}
ALIASES = {target: alias for alias, target in REDIRECTS.items()}
JOBS = ["engineer", "journalist", "economist", "footballer", "lawyer", "diplomat", "architect", "chemist"]


def link(title: str, anchor: str = "") -> str:
    return f"[[{title}|{anchor}]]" if anchor else f"[[{title}]]"


def build_facts(rng: random.Random) -> Dict[str, Dict]:
    orgs = [" ".join(o) for o in ORG]
    places = [" ".join(p) for p in LOC]
    nationalities = [" ".join(m) for m in MISC if m[0] in ("German", "Japanese", "French")]
    people = sorted({f"{rng.choice(FIRST)} {rng.choice(LAST)}" for _ in range(150)})[:90]
    facts: Dict[str, Dict] = {}
    for org in orgs:
        facts[org] = {"kind": "org", "city": rng.choice(places), "founded": rng.randint(1850, 1990), "staff": []}
    for place in places:
        facts[place] = {"kind": "place", "people": [], "orgs": [o for o in orgs if facts[o]["city"] == place]}
    for person in people:
        employer = rng.choice(orgs)
        facts[person] = {"kind": "person", "employer": employer, "city": rng.choice(places), "job": rng.choice(JOBS),
                         "nationality": rng.choice(nationalities), "born": rng.randint(1940, 1995)}  # fmt: skip
        facts[employer]["staff"].append(person)
        facts[facts[person]["city"]]["people"].append(person)
    for org in orgs:
        facts[org]["founder"] = rng.choice(facts[org]["staff"]) if facts[org]["staff"] else None
    return facts


def person_page(name: str, f: Dict, facts: Dict, rng: random.Random) -> str:
    employer, city = f["employer"], f["city"]
    colleagues = [p for p in facts[employer]["staff"] if p != name]
    lines = [
        "{{Infobox person\n| name = " + name + f"\n| birth_date = {f['born']}\n| occupation = {f['job']}\n}}}}",
        f"'''{name}''' (born {f['born']}) is a {link(f['nationality'])} {f['job']} who works for {link(employer)} "
        f"in {link(city)}.<ref>{{{{cite news |title=Profile |work=Demo Times}}}}</ref>",
        "",
        "== Career ==",
        f"{name.split()[0]} joined {link(ALIASES.get(employer, employer), employer)} after studying in {link(rng.choice(list(p for p in facts if facts[p]['kind'] == 'place')))}.",
        f"At {link(employer)}, {name.split()[1]} worked with {link(rng.choice(colleagues)) if colleagues else 'a small team'}.",
        f"In {f['born'] + 30}, {name.split()[1]} moved to {link(city)}, where {link(employer)} has an office.",
        "",
        "== Personal life ==",
        f"{name} lives in {link(city)} and is a fan of the {link('World Cup')}.<!-- unverified -->",
        "",
        f"[[Category:{f['nationality']} people]]",
    ]
    return "\n".join(lines)


def org_page(name: str, f: Dict, facts: Dict) -> str:
    short = name.split()[0]
    lines = [
        f"'''{name}''' is an organisation founded in {f['founded']} and based in {link(f['city'])}.",
        f"Its headquarters are in {link(f['city'])}."
        + (f" It was founded by {link(f['founder'])}." if f["founder"] else ""),
        "",
        "== People ==",
        *[f"* {link(p)} is a {facts[p]['job']} at {link(name, short)}." for p in f["staff"]],
        "",
        '{| class="wikitable"\n|-\n! Year !! Event\n|-\n| ' + str(f["founded"]) + " || founded\n|}",
        f"[[Category:Organisations in {f['city']}]]",
    ]
    return "\n".join(lines)


def place_page(name: str, f: Dict) -> str:
    lines = [f"'''{name}''' is a place. Several organisations and people are associated with it."]
    lines += [f"{link(o)} has its headquarters in {name}." for o in f["orgs"]]
    lines += [f"{link(p)} lives in {name}." for p in f["people"]]
    lines += ["", "== See also ==", f"* {link('List of places')}", "", "[[Category:Places]]"]
    return "\n".join(lines)


def page_xml(page_id: int, title: str, text: str, redirect: str = "") -> str:
    redirect_tag = f'    <redirect title="{escape(redirect)}" />\n' if redirect else ""
    return (
        f"  <page>\n    <title>{escape(title)}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n{redirect_tag}"
        f"    <revision>\n      <id>{page_id + 1000}</id>\n      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
        f'      <text xml:space="preserve">{escape(text)}</text>\n    </revision>\n  </page>\n'
    )


def main() -> None:
    rng = random.Random(7)
    facts = build_facts(rng)
    pages: List[str] = []
    for title, f in facts.items():
        kind = f["kind"]
        text = (
            person_page(title, f, facts, rng)
            if kind == "person"
            else org_page(title, f, facts)
            if kind == "org"
            else place_page(title, f)
        )
        pages.append(page_xml(len(pages) + 1, title, text))
    for nationality in ("German", "Japanese", "French", "World Cup"):
        pages.append(
            page_xml(len(pages) + 1, nationality, f"'''{nationality}''' is mentioned on many pages of this sample.")
        )
    for alias, target in REDIRECTS.items():
        pages.append(page_xml(len(pages) + 1, alias, f"#REDIRECT [[{target}]]", redirect=target))
    header = ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">\n'
              "  <siteinfo>\n    <sitename>luke_allennlp demo</sitename>\n    <case>first-letter</case>\n"
              '    <namespaces>\n      <namespace key="0" case="first-letter" />\n'
              '      <namespace key="14" case="first-letter">Category</namespace>\n    </namespaces>\n  </siteinfo>\n')  # fmt: skip
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with bz2.open(OUT, "wt", encoding="utf-8") as f:
        f.write(header + "".join(pages) + "</mediawiki>\n")
    print(f"{OUT}: {len(pages)} pages")


if __name__ == "__main__":
    main()
