"""Parts of :mod:`benchmarks.build_store`.

``timeline`` watches a build's process tree while it runs: where its wall time goes against its CPU time, per process
and per part of the build, and the wall time the same work would take on a quiet machine.
"""
