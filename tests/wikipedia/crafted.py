"""
A small dump written for the tests (our own text), with every case the dump processing must handle: links
through redirects (one chained), links to missing pages, a redirect loop, a page without text, a category page,
links inside templates and references (not counted), a name with two targets on one page.

Links, by page (17 counted; the one in the infobox is not):
- Lantern: candle -> Candle, oil -> Oil lamp (missing), paper lanterns -> Paper lantern, China -> China,
  Lamps -> Lamp -> Lantern, Nowhere land (missing)
- Candle: candle -> Candle, wick -> Wick, China, Rome, Latin (missing), unit of light -> Loop one (a loop)
- China: China, lanterns -> Lantern light -> Lamp -> Lantern, Rome, wick -> Wick, Rome -> Rome (band) (missing)
Article counts: China 3, Candle 2, Lantern 2, Rome 2, Wick 2, Paper lantern 1; 4 links to missing pages, 1 to a loop.
"""

from pathlib import Path

from luke_allennlp.wikipedia.dump import WikiPage, write_dump

LANTERN = """A '''lantern''' is a portable lighting device with a [[candle]] inside.<ref>{{cite book|title=Lights}}</ref> \
Some lanterns burn [[Oil lamp|oil]] instead of wax. The [[Paper lantern|paper lanterns]] of [[China]] are hung at \
festivals.
{{Infobox light|origin=[[Ignored]]}}
== See also ==
* [[Lamp]]s
* [[Nowhere land]]
[[Category:Lights]]"""
CANDLE = """A [[candle]] is a block of wax around a [[wick]]. Candles were made in [[China]] and in ancient \
[[Rome]] long ago. The word comes from [[Latin]]. It may also mean a [[Loop one|unit of light]]."""
CHINA = """[[China]] is a large country in East Asia. Paper [[Lantern light|lanterns]] are common there. Trade \
reached [[Rome]] and the [[wick]] makers of the west. A band called [[Rome (band)|Rome]] played there."""

PAGES = [
    WikiPage("Lantern", 10, 0, LANTERN),
    WikiPage("Candle", 20, 0, CANDLE),
    WikiPage("China", 30, 0, CHINA),
    WikiPage("Wick", 40, 0, "A wick draws melted wax up to the flame of a candle by capillary action."),
    WikiPage("Rome", 50, 0, "Rome is the capital of Italy."),
    WikiPage("Paper lantern", 60, 0, ""),
    WikiPage("Lamp", 70, 0, "#REDIRECT [[Lantern]]", redirect="Lantern"),
    WikiPage("Lantern light", 80, 0, "#REDIRECT [[Lamp]]", redirect="Lamp"),
    WikiPage("Loop one", 90, 0, "#REDIRECT [[Loop two]]", redirect="Loop two"),
    WikiPage("Loop two", 91, 0, "#REDIRECT [[Loop one]]", redirect="Loop one"),
    WikiPage("Category:Lights", 100, 14, "Pages about lights."),
]


def write_crafted_dump(path: Path) -> Path:
    write_dump(path, PAGES)
    return path
