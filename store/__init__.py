"""Build-then-serve: explanations computed once into a versioned store (Dash-free, beside ``app/``)."""
