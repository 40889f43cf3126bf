"""Adapters for the peer simulators, one module per library.

Each module has ``supports(workload, option) -> bool`` (False: the library has no natural way to
do it; the suite reports "n/a") and ``build(spec, option) -> (run, canonical)`` like
:mod:`tyxonq_engine`. Modules import their library only inside ``build`` so the suite can ask
``supports`` without it. Helpers shared by several adapters live in :mod:`peers.common`.
"""
