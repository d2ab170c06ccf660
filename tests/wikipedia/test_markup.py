from collections import Counter

import pytest

from luke_allennlp.resources.titles import Namespaces
from luke_allennlp.wikipedia.dump import WikiDump
from luke_allennlp.wikipedia.markup import clean_wikitext


def anchors(markup: str, **kwargs):
    clean = clean_wikitext(markup, **kwargs)
    return clean.text, [(clean.text[link.start : link.end], link.target) for link in clean.links]


@pytest.mark.parametrize(
    "markup, text, links",
    [
        ("The [[cat]] sat.", "The cat sat.", [("cat", "Cat")]),
        ("A [[Felis catus|house cat]] slept.", "A house cat slept.", [("house cat", "Felis catus")]),
        ("Two [[bus]]es and [[bus]]-stops.", "Two buses and bus-stops.", [("buses", "Bus"), ("bus", "Bus")]),
        ("See [[Moon#Orbit|its orbit]].", "See its orbit.", [("its orbit", "Moon")]),
        ("See [[Moon#Orbit]].", "See Moon#Orbit.", [("Moon#Orbit", "Moon")]),
        ("A [[:Cat]] too.", "A Cat too.", [("Cat", "Cat")]),
        ("In [[new_york_City]].", "In new york City.", [("new york City", "New york City")]),
        ("The [[Mercury (planet)|]] is hot.", "The Mercury is hot.", [("Mercury", "Mercury (planet)")]),
        ("[[AT&amp;T|A&amp;T]] and [[Caf%C3%A9]]", "A&T and Café", [("A&T", "AT&T"), ("Café", "Café")]),
        ("[[ Moon | the  Moon ]] rose", "the Moon rose", [("the Moon", "Moon")]),
        ("[[Moon|''the'' '''Moon''']]", "the Moon", [("the Moon", "Moon")]),
        ("Its [[#History|history]] section", "Its history section", []),
    ],
)
def test_links_become_spans_of_the_clean_text(markup, text, links):
    assert anchors(markup) == (text, links)


@pytest.mark.parametrize(
    "markup, text",
    [
        ("A{{Infobox|name=X|born={{birth date|1900|1|1}}}} B", "A B"),
        ("A {{unclosed B", "A {{unclosed B"),
        ("A\n{| class=x\n| [[Inside]] || cell\n|-\n|\n{| nested\n| x\n|}\n|}\nB", "A\nB"),
        ("A\n{|\n| never closed\nmore", "A"),
        (
            'Claim.<ref name="r">{{cite web|url=http://x}}</ref> Next.<ref name=r/> End<ref>[[Gone]]</ref>.',
            "Claim. Next. End.",
        ),
        ("A<!-- hidden [[Secret]] --> B<!-- unclosed", "A B"),
        ("x <math>a^2 + b^2</math> y <gallery>File:a.jpg|cap</gallery> z", "x y z"),
        ('<span style="color:red">kept</span> <b>bold</b> <sup>2</sup>', "kept bold 2"),
        ("one<br/>two<br>three", "one two three"),
        ("'''Bold''' and ''italic'' and '''''both'''''", "Bold and italic and both"),
        ("== History ==\ntext\n=== Early ===\nmore", "History\ntext\nEarly\nmore"),
        ("* first\n** second\n# third\n: indented\n----\nend", "first\nsecond\nthird\nindented\nend"),
        ("[http://example.org an example] and [https://x.org] and [//y.org z]", "an example and and z"),
        ("__NOTOC__Text__TOC__ here", "Text here"),
        ("5&nbsp;km &ndash; far &amp; wide", "5 km – far & wide"),
        ("<nowiki>[[not a link]] {{nor this}}</nowiki>", "[[not a link]] {{nor this}}"),
        ("A\n\n\n  B  \n\n", "A\nB"),
    ],
)
def test_markup_is_dropped_and_text_kept(markup, text):
    clean = clean_wikitext(markup)
    assert clean.text == text
    assert clean.links == []


def test_non_article_links():
    clean = clean_wikitext(
        "[[File:Cat.jpg|thumb|A [[cat]] asleep]] Text [[Category:Cats]] [[Image:x.png]] [[fr:Chat]] [[zh-yue:貓]] "
        "[[wikt:cat|a word]] [[Help:Contents|help]] [[:Category:Cats]] [[Wikipedia:About]] [[Media:Meow.ogg|meow]]."
    )
    assert clean.text == "Text a word help Category:Cats Wikipedia:About meow."
    assert clean.links == []
    assert clean.link_counts == {"file": 2, "category": 1, "interlanguage": 2, "interwiki": 1, "other_namespace": 4}


def test_link_trail_stays_text_after_a_dropped_link():
    assert anchors("[[Category:X]]abc def") == ("abc def", [])


def test_headings_can_be_dropped_and_are_counted():
    clean = clean_wikitext("Intro.\n== History ==\nOld [[times]].\n==Notes==", headings=False)
    assert clean.text == "Intro.\nOld times."
    assert clean.dropped_headings == 2
    assert clean.paragraphs() == [(0, 6), (7, 17)]


def test_namespaces_from_the_dump_are_used():
    namespaces = Namespaces({"Fichier": 6, "Catégorie": 14})
    assert anchors("[[Fichier:a.jpg|vignette]] [[Catégorie:Chats]] [[chat]]", namespaces=namespaces) == (
        "chat",
        [("chat", "Chat")],
    )


def test_invalid_targets_are_text_not_entities():
    clean = clean_wikitext("a [[]] b [[x<y]] c [[|anchor]]")
    assert clean.links == []
    assert clean.link_counts["invalid"] == 3
    # A link nested in a link that is not an image: malformed, both counted as invalid; unclosed brackets
    # hide no link after them.
    nested = clean_wikitext("a [[x [[y]] z]] b [[ c [[Moon]]")
    assert nested.link_counts == {"invalid": 2, "entity": 1} and nested.total_links == 3
    assert [link.target for link in nested.links] == ["Moon"]


def test_a_real_article(shared_data):
    dump = WikiDump(shared_data / "wikipedia" / "enwiki-pages-articles-shortened-206.xml.bz2", max_pages=2)
    anarchism = [page for page in dump if page.title == "Anarchism"][0]
    clean = clean_wikitext(anarchism.text, dump.namespaces, headings=False)
    assert clean.text.startswith(
        "Anarchism is a political philosophy that advocates self-governed societies based on voluntary institutions."
    )
    first = [(clean.text[link.start : link.end], link.target) for link in clean.links[:4]]
    assert first == [
        ("political philosophy", "Political philosophy"),
        ("self-governed", "Self-governance"),
        ("stateless societies", "Stateless society"),
        ("hierarchical", "Hierarchy"),
    ]
    for marker in ("{{", "}}", "[[", "]]", "<ref", "'''", "==", "&nbsp;"):
        assert marker not in clean.text


# One link in every place the cleaning drops, and two in the running text (an article and an image).
EVERY_PLACE = (
    "Intro [[Alpha]].{{Infobox|leader=[[Beta|the ''Beta'']]|image=[[File:b.jpg|thumb|[[Gamma]] at night]]}}\n"
    "{|\n| [[Delta]] || [[Category:Tables]]\n|}\n"
    "Text<ref>{{cite web|publisher=[[Epsilon]]}}</ref> [[File:c.jpg|thumb|A [[Zeta|zeta]] caption]] end.\n"
    "<gallery>\nFile:d.jpg|[[Eta]]\n</gallery><!-- [[Theta]] --><nowiki>[[Iota]]</nowiki> <math>[[Kappa]]</math>\n"
    "== [[Lambda]] ==\n"
)


def test_every_link_is_accounted_for_by_place_and_kind():
    clean = clean_wikitext(EVERY_PLACE, headings=False)
    assert clean.text == "Intro Alpha.\nText end.\n[[Iota]]"  # (nowiki text is shown literally)
    assert clean.link_counts == {"entity": 1, "file": 1}
    assert clean.outside_counts == {
        ("template", "entity"): 2,
        ("template", "file"): 1,
        ("table", "entity"): 1,
        ("table", "category"): 1,
        ("reference", "entity"): 1,
        ("media", "entity"): 2,
        ("heading", "entity"): 1,
        ("comment", "entity"): 1,
        ("nowiki", "entity"): 1,
        ("other_element", "entity"): 1,
    }
    assert clean.total_links == EVERY_PLACE.count("[[") == 14
    # Links to articles where they are shown, with their anchors as plain text; none from comments, nowiki, <math>.
    assert sorted((link.place, link.target, link.anchor) for link in clean.outside_links) == [
        ("heading", "Lambda", "Lambda"),
        ("media", "Eta", "Eta"),
        ("media", "Zeta", "zeta"),
        ("reference", "Epsilon", "Epsilon"),
        ("table", "Delta", "Delta"),
        ("template", "Beta", "the Beta"),
        ("template", "Gamma", "Gamma"),
    ]
    # With headings kept, the heading's link is one of the running text.
    kept = clean_wikitext(EVERY_PLACE)
    assert kept.link_counts["entity"] == 2 and ("heading", "entity") not in kept.outside_counts


def test_scoped_links_account_for_every_link():
    clean = clean_wikitext(EVERY_PLACE, headings=False)
    entities, kinds, outside = clean.scoped_links("text")
    assert entities == [("Alpha", "Alpha")] and kinds == {"file": 1}
    assert outside == {
        "template": 3,
        "table": 2,
        "media": 2,
        "reference": 1,
        "heading": 1,
        "comment": 1,
        "nowiki": 1,
        "other_element": 1,
    }
    entities, kinds, outside = clean.scoped_links("page")
    assert [target for _, target in entities] == ["Alpha", "Epsilon", "Eta", "Beta", "Gamma", "Delta", "Lambda", "Zeta"]
    assert kinds == {"file": 2, "category": 1} and outside == {"comment": 1, "nowiki": 1, "other_element": 1}
    for scope in ("text", "page"):
        entities, kinds, outside = clean.scoped_links(scope)
        assert len(entities) + sum(kinds.values()) + sum(outside.values()) == clean.total_links
    with pytest.raises(ValueError, match="must be in 'text' or 'page', not 'all'"):
        clean.scoped_links("all")


def test_every_link_of_the_206_page_dump_is_accounted_for(shared_data):
    """Each article's links, whatever the cleaning drops, against a plain count of `[[` in its markup (every one
    is closed in this dump). Before, a table-heavy article lost all but 6 of its 2,177 links."""
    dump = WikiDump(shared_data / "wikipedia" / "enwiki-pages-articles-shortened-206.xml.bz2")
    places = Counter()
    for page in dump:
        if page.is_article and page.text.strip():
            clean = clean_wikitext(page.text, dump.namespaces, headings=False)
            assert clean.total_links == page.text.count("[["), page.title
            entities, kinds, outside = clean.scoped_links("text")  # the running text's links, the others by place
            by_place = Counter(outside, text=len(entities) + sum(kinds.values()))
            places.update(by_place)
            if page.title == "Academy Award for Best Production Design":
                assert by_place == {"table": 2095, "template": 75, "text": 6, "comment": 1}
                assert clean.link_counts == {"entity": 3, "category": 3} and len(clean.outside_links) == 2170
    assert places == {"text": 24497, "table": 3361, "template": 2002, "media": 1240, "reference": 1180, "comment": 94}


def test_interlanguage_links_are_kept_aside_not_in_the_text():
    clean = clean_wikitext(
        "Tokyo is in [[Japan]].<!-- [[ko:도쿄]] --> [[:de:Tokio|German]]\n\n[[de:Tokio]]\n[[ja:東京都]]\n[[zh-yue: 東京 ]]",
        Namespaces(case="case-sensitive"),
    )
    assert clean.text == "Tokyo is in Japan. German" and [link.target for link in clean.links] == ["Japan"]
    # [[:de:Tokio]] is a link shown in the text (interwiki), not the page's inter-language link
    assert clean.interlanguage_links == [("de", "Tokio"), ("ja", "東京都"), ("zh-yue", "東京")]
    assert clean.link_counts == {"entity": 1, "interwiki": 1, "interlanguage": 3}
    assert clean_wikitext("[[iPod]]", Namespaces(case="case-sensitive")).links[0].target == "iPod"
