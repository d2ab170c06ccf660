from luke_allennlp.wikipedia.dump import WikiPage
from luke_allennlp.wikipedia.redirects import ARTICLE, LOOP, MISSING, WikiIndex


def page(title, redirect=None, namespace=0):
    return WikiPage(title=title, page_id=1, namespace=namespace, text="", redirect=redirect)


def test_redirects_resolve_transitively_and_loops_are_caught():
    index = WikiIndex.from_pages(
        [
            page("Cat"),
            page("Kitty", "Felis"),
            page("Felis", "Cat"),
            page("Ping", "Pong"),
            page("Pong", "Ping"),
            page("Into loop", "Ping"),
            page("Self", "Self"),
            page("Old name", "Never written"),
            page("Talk page", "Cat", namespace=1),
        ]
    )
    assert index.lookup("Cat") == ("Cat", ARTICLE)
    assert index.lookup("Kitty") == ("Cat", ARTICLE) and index.resolve("Felis") == "Cat"
    assert index.lookup("Ping") == (None, LOOP) and index.lookup("Into loop") == (None, LOOP)
    assert index.lookup("Self") == (None, LOOP)
    assert index.lookup("Old name") == ("Never written", MISSING) and index.resolve("Old name") is None
    assert index.lookup("Nowhere") == ("Nowhere", MISSING)
    assert index.lookup("Talk page") == ("Talk page", MISSING)  # only main-namespace pages count
    stats = index.stats
    assert (stats.redirects, stats.chained_redirects, stats.redirect_loops, stats.redirects_to_missing_pages) == (
        7,
        5,
        4,
        1,
    )


def test_a_title_read_twice_keeps_the_later_page():
    index = WikiIndex.from_pages([page("Cat", "Felis"), page("Felis"), page("Cat")])
    assert index.lookup("Cat") == ("Cat", ARTICLE)
    assert index.stats.duplicate_titles == 1
