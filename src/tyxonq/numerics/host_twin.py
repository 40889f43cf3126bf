"""Running whole functions in a backend's place on its NumPy host twin: ``K``'s arrays read in place,
results handed back as ``K``'s arrays (:func:`on_host_twin`). What the twin would compute by other
means than ``K`` is refused (:class:`TwinRefusal`): random draws (they come from ``K``'s own
streams), and what a simulator refuses there (:func:`refuse_in_place`: a truncated simulation's
gradient). PyTorch's CPU tensors and JAX's concrete CPU arrays cost NumPy's price per small
operation there, and no autograd graph."""

from __future__ import annotations

import functools
import math
import weakref
from typing import Any, Callable

import numpy as np

from .autodiff import split_arrays
from .cache_registry import register_cache
from .protocol import ArrayBackend

__all__ = ["TwinRefusal", "TwinDrawError", "draw_free_twin", "in_place_of", "refuse_in_place",
           "refuse_larger_in_place", "reads_on_host", "on_host_twin", "host_first"]


class TwinRefusal(RuntimeError):
    """A function run on a backend's host twin in the backend's place (:func:`on_host_twin`) did
    something whose result there would differ from the backend's own: it runs on the backend
    itself (:func:`host_first`). Raised by :func:`refuse_in_place`."""


class TwinDrawError(TwinRefusal):
    """A function run on a backend's host twin in the backend's place drew random numbers: the
    twin's random streams are not the backend's, so such a function runs on the backend itself."""


class _RefusingDraws:
    """Mixed into a host twin's class (:func:`draw_free_twin`): once ``_owner`` names the backend
    it computes for, random draws raise :class:`TwinDrawError`, so that seeded draws always come
    from that backend's own streams."""

    _owner: str | None = None  # unset while constructing: the default generator is made then
    _owner_entries: float = math.inf  # the largest array the owner computes on its twin

    def _refused(self) -> None:
        if self._owner is not None:
            raise TwinDrawError(f"random numbers drawn on the NumPy host twin of the {self._owner} backend: "
                                f"they come from {self._owner}'s own streams, so the function runs there")

    def rng(self, seed: int | None = None) -> Any:
        self._refused()
        return super().rng(seed)  # type: ignore[misc]

    def normal(self, *args: Any, **kwargs: Any) -> Any:
        self._refused()
        return super().normal(*args, **kwargs)  # type: ignore[misc]

    def uniform(self, *args: Any, **kwargs: Any) -> Any:
        self._refused()
        return super().uniform(*args, **kwargs)  # type: ignore[misc]

    def choice(self, *args: Any, **kwargs: Any) -> Any:
        self._refused()
        return super().choice(*args, **kwargs)  # type: ignore[misc]


_DRAW_FREE_CLASSES: dict[type, type] = {}


def draw_free_twin(K: ArrayBackend) -> ArrayBackend:
    """The host twin of ``K`` (NumPy of ``K``'s precision) that runs whole functions in ``K``'s
    place (:func:`on_host_twin`), made once and kept on ``K``: it refuses random draws
    (:class:`TwinDrawError`), which must come from ``K``'s own streams.

    Examples
    --------
    >>> from tyxonq.numerics import NumpyBackend
    >>> twin = draw_free_twin(NumpyBackend(dtype="complex64"))
    >>> twin.zeros(1).dtype.name, twin.name
    ('complex64', 'numpy')
    >>> twin.uniform(size=2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tyxonq.numerics.host_twin.TwinDrawError: random numbers drawn on the NumPy host twin of ...
    """
    if getattr(K, "_draw_free_twin", None) is None:
        host = type(K.host_twin())
        if host not in _DRAW_FREE_CLASSES:
            _DRAW_FREE_CLASSES[host] = type(f"DrawFree{host.__name__}", (_RefusingDraws, host), {})
        twin = _DRAW_FREE_CLASSES[host](dtype=K.precision)
        twin._owner = K.name  # noqa: SLF001 - set once made
        twin._owner_entries = K.host_twin_entries()  # noqa: SLF001 - what K hands its twin
        K._draw_free_twin = twin  # noqa: SLF001 - a cache on the backend itself
    return K._draw_free_twin  # noqa: SLF001


def in_place_of() -> str | None:
    """The name of the backend whose place the active backend takes (a host twin running a
    function for it, :func:`on_host_twin`), else ``None``.

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("pytorch")
    >>> in_place_of(), on_host_twin(K, lambda: in_place_of())()
    (None, 'pytorch')
    """
    from .selection import get_backend

    return getattr(get_backend(), "_owner", None)


def refuse_in_place(what: str) -> None:
    """Raise :class:`TwinRefusal` where the active backend is a host twin in another's place
    (:func:`in_place_of`): ``what`` is computed there by other means than on that backend (a
    truncated simulation's gradient: parameter shift here, autograd through the truncation
    there), so the function runs on the backend itself. Elsewhere nothing happens.

    Examples
    --------
    >>> import tyxonq as tq
    >>> refuse_in_place("a truncated simulation's gradient")  # on the active backend: nothing
    >>> on_host_twin(tq.get_backend("pytorch"), lambda: refuse_in_place("it"))()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tyxonq.numerics.host_twin.TwinRefusal: it on the NumPy host twin of the pytorch backend ...
    """
    owner = in_place_of()
    if owner is not None:
        raise TwinRefusal(f"{what} on the NumPy host twin of the {owner} backend differs from {owner}'s "
                          f"own, so the function runs on {owner}")


def refuse_larger_in_place(entries: float, what: str) -> None:
    """Raise :class:`TwinRefusal` where the active backend is a host twin in another's place
    (:func:`in_place_of`) and ``what`` has more ``entries`` than that backend computes on its twin
    (:meth:`~tyxonq.numerics.protocol.ArrayBackend.host_twin_entries`: PyTorch's threaded
    kernels are faster above 2^18 on the CPU), so the function runs on the backend itself.

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("pytorch")
    >>> on_host_twin(K, lambda: refuse_larger_in_place(2 ** 10, "a state"))()  # small: nothing
    >>> on_host_twin(K, lambda: refuse_larger_in_place(2 ** 24, "a state"))()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tyxonq.numerics.host_twin.TwinRefusal: a state of 16777216 entries on the NumPy host twin of ...
    """
    from .selection import get_backend

    if entries > getattr(get_backend(), "_owner_entries", math.inf):
        refuse_in_place(f"{what} of {int(entries)} entries")


def reads_on_host(K: ArrayBackend, args: Any) -> bool:
    """Whether a function of ``args`` may run on ``K``'s host twin in its place
    (:func:`on_host_twin`): ``K`` has a host twin and compiles nothing now, and each argument is an
    array the twin reads (in host memory, nothing tracks or traces it) or a number.

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("pytorch")
    >>> reads_on_host(K, [K.zeros(2)]), reads_on_host(K, [K.requires_grad(K.zeros(2, "float64"))])
    (True, False)
    """
    return (K.host_twin() is not K and not K.compiling()
            and all(K.host_readable(arg) if K.is_array(arg) else isinstance(arg, (int, float))
                    for arg in args))


def on_host_twin(K: ArrayBackend, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` run in ``K``'s place on its host twin, active while it runs (NumPy of ``K``'s
    precision, :func:`draw_free_twin`): ``K``'s arrays among the arguments read in place, array
    results handed back as ``K``'s arrays. Raises where ``fn`` cannot run there: it calls ``K``'s
    own functions, reads a tracked array, or draws random numbers (:class:`TwinDrawError`: those
    come from ``K``'s streams). Meant for arguments :func:`reads_on_host` accepts.

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("pytorch")
    >>> energy = on_host_twin(K, lambda t: tq.Circuit(1).rx(0, t[0]).expectation_ps(z=[0]))
    >>> value = energy(K.asarray([3.141592653589793], "float64"))
    >>> type(value).__name__, round(float(value), 6)
    ('Tensor', -1.0)
    """
    from .selection import use_backend

    def read(arg: Any) -> Any:
        return K.to_numpy(arg) if K.is_array(arg) else arg

    @functools.wraps(fn)
    def in_place(*args: Any, **kwargs: Any) -> Any:
        host = [read(arg) for arg in args]
        named = {name: read(arg) for name, arg in kwargs.items()}
        with use_backend(draw_free_twin(K)):
            result = fn(*host, **named)
        arrays, rebuild = split_arrays(result, lambda leaf: isinstance(leaf, (np.ndarray, np.generic)))
        return rebuild([K.asarray(array) for array in arrays])

    return in_place


_ROUTES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

register_cache("host-twin routes", lambda: len(_ROUTES), _ROUTES.clear)


def host_first(K: ArrayBackend, fn: Callable[..., Any], key: Any = None,
               role: str = "") -> Callable[..., Any]:
    """``fn`` run on ``K``'s host twin in ``K``'s place (:func:`on_host_twin`) where its arguments
    allow (:func:`reads_on_host`; never in a distributed run, whose ranks share ``K``'s work),
    else on ``K``; for functions whose results are the same values either way (an objective's
    value and gradient, not an autograd graph).

    The first call decides, per ``key`` (``fn`` by default; kept while it lives), ``role`` (what
    is computed from it: ``"value"``, ``"gradient"``; one may run on the twin where the other
    cannot) and backend: where
    it fails on the twin (``fn`` calls ``K``'s own functions or reads a tracked array) it is
    repeated on ``K``, which runs every later call, without a warning (``K``'s own path, the same
    values); where it succeeds, later errors are ``fn``'s own and propagate. A refusal on the twin
    (:class:`TwinRefusal`: a random draw, a result computed by other means than on ``K``) moves to
    ``K`` whenever it happens.

    Examples
    --------
    >>> import tyxonq as tq
    >>> K = tq.get_backend("pytorch")
    >>> names = []
    >>> def energy(t):
    ...     names.append(tq.get_backend().name)
    ...     return tq.Circuit(1).rx(0, t[0]).expectation_ps(z=[0])
    >>> value = host_first(K, energy)(K.asarray([0.0], "float64"))
    >>> names, type(value).__name__, round(float(value), 6)
    (['numpy'], 'Tensor', 1.0)
    """
    from .distributed import joined

    twin = on_host_twin(K, fn)
    key = fn if key is None else key
    try:
        routes = _ROUTES.setdefault(key, {})
    except TypeError:  # not weakly referenceable: decided for this function only
        routes = {}

    @functools.wraps(fn)
    def routed(*args: Any, **kwargs: Any) -> Any:
        trusted = routes.get((K.name, role))
        if trusted is not False and reads_on_host(K, (*args, *kwargs.values())) and not joined():
            try:
                value = twin(*args, **kwargs)
            except TwinRefusal:
                routes[K.name, role] = False
            except Exception:  # noqa: BLE001 - decided on the first call only
                if trusted:
                    raise
                routes[K.name, role] = False
            else:
                routes[K.name, role] = True
                return value
        return fn(*args, **kwargs)

    return routed
