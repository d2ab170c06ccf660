import bz2

import pytest

from luke_allennlp.wikipedia.dump import DumpError, WikiDump, WikiPage, write_dump

PAGES = [
    WikiPage("Lantern", 1, 0, "A '''lantern''' holds a [[candle]]."),
    WikiPage("Lamp", 2, 0, "#REDIRECT [[Lantern]]", redirect="Lantern"),
    WikiPage("Candle", 3, 0, "A [[wick]] in wax & <b>tallow</b>."),
    WikiPage("Category:Lights", 4, 14, "Pages about lights."),
]


@pytest.mark.parametrize("name", ["dump.xml", "dump.xml.bz2", "dump.xml.gz"])
def test_pages_stream_from_plain_and_compressed_dumps(tmp_path, name):
    write_dump(tmp_path / name, PAGES)
    dump = WikiDump(tmp_path / name)
    assert list(dump) == PAGES
    assert [page.is_article for page in PAGES] == [True, False, True, False]
    stats = dump.stats
    assert (stats.pages, stats.article_pages, stats.redirect_pages, stats.non_article_pages) == (4, 2, 1, 1)
    assert dump.namespaces.split("Category:Lights")[0] == 14
    assert [page.title for page in WikiDump(tmp_path / name, max_pages=2)] == ["Lantern", "Lamp"]


def test_the_real_dumps(shared_data):
    sample = list(WikiDump(shared_data / "wikipedia" / "enwiki-pages-articles-sample.xml.bz2"))
    assert len(sample) == 3
    assert (sample[0].title, sample[0].page_id, sample[0].redirect) == (
        "AccessibleComputing",
        10,
        "Computer accessibility",
    )
    dump = WikiDump(shared_data / "wikipedia" / "enwiki-pages-articles-shortened-206.xml.bz2")
    titles = [page.title for page in dump]
    assert len(titles) == 206 and titles[1] == "Anarchism"
    stats = dump.stats.as_dict()
    assert {k: stats[k] for k in ("pages", "article_pages", "redirect_pages", "non_article_pages", "dump_errors")} == {
        "pages": 206,
        "article_pages": 106,
        "redirect_pages": 99,
        "non_article_pages": 1,
        "dump_errors": 0,
    }


def test_a_dump_cut_mid_page_keeps_the_pages_before(tmp_path):
    write_dump(tmp_path / "full.xml", PAGES)
    text = (tmp_path / "full.xml").read_text()
    cut = text.index("A [[wick]]")
    (tmp_path / "cut.xml").write_text(text[:cut])
    dump = WikiDump(tmp_path / "cut.xml")
    assert [page.title for page in dump] == ["Lantern", "Lamp"]
    assert (
        len(dump.stats.errors) == 1 and "cut.xml: dump ends early or is malformed after 2 pages" in dump.stats.errors[0]
    )
    assert dump.stats.as_dict()["dump_errors"] == 1


def test_a_truncated_bz2_dump(shared_data, tmp_path):
    data = (shared_data / "wikipedia" / "enwiki-pages-articles-shortened-206.xml.bz2").read_bytes()
    (tmp_path / "cut.xml.bz2").write_bytes(data[: len(data) // 2])
    dump = WikiDump(tmp_path / "cut.xml.bz2")
    pages = list(dump)
    assert 0 < len(pages) < 206
    assert len(dump.stats.errors) == 1


@pytest.mark.parametrize(
    "content, message",
    [
        (b"title,count\nCat,3\n", r"not\.a\.dump: not a MediaWiki XML export \(ParseError"),
        (b"<html><body>Not found</body></html>", r"not\.a\.dump: not a MediaWiki XML export \(root element <html>"),
        (b"", r"not\.a\.dump: not a MediaWiki XML export"),
        (bz2.compress(b"\x00\x01binary"), r"not\.a\.dump: not a MediaWiki XML export"),
    ],
)
def test_a_file_that_is_not_a_dump_is_named(tmp_path, content, message):
    (tmp_path / "not.a.dump").write_bytes(content)
    with pytest.raises(DumpError, match=message):
        list(WikiDump(tmp_path / "not.a.dump"))


def test_missing_file():
    with pytest.raises(FileNotFoundError, match="no-such.xml: no such dump file"):
        WikiDump("no-such.xml")


def test_odd_pages(tmp_path):
    (tmp_path / "odd.xml").write_text(
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.3/">\n'
        "<page><title>some_title &amp; more</title><id>7</id><revision><text>x</text></revision></page>\n"
        "<page><title>Empty</title><ns>0</ns><id>8</id><revision><text /></revision></page>\n"
        "<page><title>   </title><ns>0</ns><revision><text>nameless</text></revision></page>\n"
        "<page><title>Old redirect</title><revision><text>#redirect: [[some title#part]]</text></revision></page>\n"
        "<page><title>Template:Box</title><id>x</id><revision><text>{{{1}}}</text></revision></page>\n"
        "<page><title>History</title><id>9</id><revision><text>first</text></revision>"
        "<revision><text>second</text></revision></page>\n"
        "</mediawiki>\n"
    )  # export 0.3: no <ns>, no <redirect>
    dump = WikiDump(tmp_path / "odd.xml")
    pages = list(dump)
    assert [(p.title, p.page_id, p.namespace, p.redirect) for p in pages] == [
        ("Some title & more", 7, 0, None),
        ("Empty", 8, 0, None),
        ("Old redirect", -1, 0, "Some title"),
        ("Template:Box", -1, 10, None),
        ("History", 9, 0, None),
    ]
    assert pages[-1].text == "second"  # the last revision
    assert (dump.stats.pages_without_title, dump.stats.pages_without_text) == (1, 1)


def test_streaming_keeps_memory_flat(shared_data):
    import tracemalloc

    tracemalloc.start()
    try:
        largest = max(
            len(page.text)
            for page in WikiDump(shared_data / "wikipedia" / "enwiki-pages-articles-shortened-206.xml.bz2")
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the dump is 6.1 MB of XML; its largest page 0.18 MB of text: only about one page is held at a time
    assert peak < 10 * largest < 2_000_000


NON_LATIN = [
    WikiPage("Москва", 1, 0, "Москва — столица [[Россия|России]]."),
    WikiPage("القاهرة", 2, 0, "القاهرة عاصمة [[مصر]]."),
    WikiPage("北京市", 3, 0, "北京市是[[中华人民共和国]]的首都。"),
    WikiPage("東京", 4, 0, "#転送 [[東京都]]", redirect="東京都"),
]


@pytest.mark.parametrize("encoding", ["utf-8", "UTF-16", "ISO-8859-5", "Shift_JIS", "GB18030", "Big5"])
def test_a_dump_is_read_in_the_encoding_it_declares(tmp_path, encoding):
    # expat reads UTF-8, UTF-16 (byte order mark) and one-byte encodings; multi-byte ones are decoded by Python.
    # Characters an encoding lacks are written as character references, which any encoding reads back.
    write_dump(tmp_path / "dump.xml.bz2", NON_LATIN, encoding=encoding)
    data = bz2.decompress((tmp_path / "dump.xml.bz2").read_bytes())
    if encoding != "utf-8":
        assert data.decode(encoding).startswith(f'<?xml version="1.0" encoding="{encoding}"?>')
    assert data.startswith(b"\xff\xfe") == (encoding == "UTF-16")
    assert list(WikiDump(tmp_path / "dump.xml.bz2")) == NON_LATIN


def test_bytes_not_in_the_declared_encoding_are_a_dump_error(tmp_path):
    (tmp_path / "bad.xml").write_bytes(
        '<?xml version="1.0" encoding="Shift_JIS"?>\n<mediawiki><page><title>'.encode()
        + b"\x81\xff</title></page></mediawiki>"
    )
    with pytest.raises(DumpError, match=r"bad\.xml: .*UnicodeDecodeError: 'shift_jis' codec can't decode byte 0x81"):
        list(WikiDump(tmp_path / "bad.xml"))
    (tmp_path / "unknown.xml").write_bytes(b'<?xml version="1.0" encoding="x-klingon"?>\n<mediawiki/>')
    with pytest.raises(DumpError, match=r"unknown\.xml: declares the encoding 'x-klingon', which Python does not know"):
        list(WikiDump(tmp_path / "unknown.xml"))


def test_siteinfo_gives_the_language_case_rule_and_namespaces(tmp_path):
    pages = [WikiPage("iPhone", 1, 0, "x"), WikiPage("Kategorie:Städte", 2, 14, "y"), WikiPage("istanbul", 3, 0, "z")]
    write_dump(tmp_path / "wiktionary.xml", pages, namespaces={14: "Kategorie"}, dbname="dewiki", case="case-sensitive")
    dump = WikiDump(tmp_path / "wiktionary.xml")
    assert [page.title for page in dump] == ["iPhone", "Kategorie:Städte", "istanbul"]  # case-sensitive: as written
    assert dump.language == "de" and dump.namespaces.case == "case-sensitive"
    assert dump.namespaces.split("Kategorie:Städte")[0] == 14 and dump.namespaces.split("Bild:x.png")[0] == 6
    write_dump(tmp_path / "trwiki-20240101-pages-articles.xml", pages)  # no dbname: the file name says tr
    dump = WikiDump(tmp_path / "trwiki-20240101-pages-articles.xml")
    assert [page.title for page in dump] == ["İPhone", "Kategorie:Städte", "İstanbul"] and dump.language == "tr"
    assert WikiDump(tmp_path / "trwiki-20240101-pages-articles.xml", language="az").language == "az"
    write_dump(tmp_path / "plain.xml", pages, lang="fr")  # only xml:lang
    dump = WikiDump(tmp_path / "plain.xml")
    list(dump)
    assert dump.language == "fr"
