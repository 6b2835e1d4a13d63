"""Server plumbing: the Dash app's creation, the HTTP servers, access control, request guards, background jobs.

Nothing here draws a page or computes an explanation (issue 24's rooms; ``docs/architecture.md``).
"""
