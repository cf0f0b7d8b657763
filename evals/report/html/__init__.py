"""``report.html``: page.py assembles the page from its sections (results.py, cache.py,
scenarios.py); base.py holds the stylesheet, escaping and the shared blocks."""
