"""Parts of :mod:`benchmarks.load`: the gunicorn server over a store (``server``), a browser-like viewer
(``viewer``) and what the viewers measured (``tally``)."""
