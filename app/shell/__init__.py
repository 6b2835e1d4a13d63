"""The page shell: the app's layout around every page, component ids, a view's state in its URL.

(issue 24's rooms; ``docs/architecture.md``)
"""
