"""
The dump's article titles and redirects, with redirects resolved transitively and loops detected.
"""

import logging
from dataclasses import dataclass
from typing import Dict, Iterable, Optional, Set, Tuple

from luke_allennlp.wikipedia.dump import WikiPage

logger = logging.getLogger(__name__)

ARTICLE, MISSING, LOOP = "article", "missing", "loop"


@dataclass
class RedirectStats:
    redirects: int = 0
    chained_redirects: int = 0  # redirects reaching their page through another redirect
    redirect_loops: int = 0  # redirects that never reach a page (A -> B -> A), their feeders included
    redirects_to_missing_pages: int = 0
    duplicate_titles: int = 0  # a title read twice: the later page wins


class WikiIndex:
    """
    Which titles are articles, and where each redirect leads.

    # Parameters

    articles : `Iterable[str]`
        Titles of main-namespace pages that are not redirects.
    redirects : `Dict[str, str]`
        Redirect title -> target title (both normalised), as written in the dump.
    """

    def __init__(self, articles: Iterable[str], redirects: Dict[str, str], duplicate_titles: int = 0) -> None:
        self.articles: Set[str] = articles if isinstance(articles, set) else set(articles)
        self.stats = RedirectStats(redirects=len(redirects), duplicate_titles=duplicate_titles)
        # Redirect title -> the title its chain ends at (an article, or a page the dump lacks); None in a loop.
        self._resolved: Dict[str, Optional[str]] = {}
        for source in redirects:
            self._follow(source, redirects)

    def _follow(self, source: str, redirects: Dict[str, str]) -> None:
        path, seen, title = [], set(), source
        while title in redirects and title not in self._resolved:
            if title in seen:  # a loop: nothing on the path leads anywhere
                break
            seen.add(title)
            path.append(title)
            title = redirects[title]
        end = self._resolved[title] if title in self._resolved else None if title in seen else title
        for t in path:
            self._resolved[t] = end
        if end is None:
            self.stats.redirect_loops += len(path)
        elif end not in self.articles:
            self.stats.redirects_to_missing_pages += len(path)
        self.stats.chained_redirects += sum(1 for t in path if redirects[t] in redirects)

    def lookup(self, title: str) -> Tuple[Optional[str], str]:
        """
        Where a link to `title` leads: `(article, "article")`; `(title, "missing")` with the title its redirects
        end at when the dump has no such article; `(None, "loop")` for a redirect loop.
        """
        end = self._resolved.get(title, title)
        if end is None:
            return None, LOOP
        return end, ARTICLE if end in self.articles else MISSING

    def resolve(self, title: str) -> Optional[str]:
        """The article a title leads to through redirects, or None."""
        end, status = self.lookup(title)
        return end if status == ARTICLE else None

    @classmethod
    def from_pages(cls, pages: Iterable[WikiPage]) -> "WikiIndex":
        """Collects titles and redirects from streamed pages (a first pass over the dump)."""
        collector = TitleCollector()
        for page in pages:
            collector.add(page)
        return collector.index()


class TitleCollector:
    """Gathers article titles and redirects while a dump streams by; `index()` resolves them."""

    def __init__(self) -> None:
        self.articles: Set[str] = set()
        self.redirects: Dict[str, str] = {}
        self.duplicates = 0

    def add(self, page: WikiPage) -> None:
        if page.namespace != 0:
            return
        if page.title in self.articles or page.title in self.redirects:
            self.duplicates += 1
            self.articles.discard(page.title)
            self.redirects.pop(page.title, None)
        if page.redirect is not None:
            self.redirects[page.title] = page.redirect
        else:
            self.articles.add(page.title)

    def index(self) -> WikiIndex:
        index = WikiIndex(self.articles, self.redirects, self.duplicates)
        logger.info("%d articles, %s", len(index.articles), index.stats)
        return index
