"""The page shell: the app's layout around every page, component ids, a view's state in its URL, the navbar's
row status line.

(issue 24's rooms; ``docs/architecture.md``)
"""
