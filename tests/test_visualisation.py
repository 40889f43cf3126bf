"""Circuit figures (c.draw("mpl"), "latex", "text") for every simulator, and tq.plot's result
plots: made on matplotlib's Agg canvas, checked element by element (every element carries a
gid), placed in the text diagram's columns, and one figure compared with a stored image."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tyxonq as tq

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

IMAGES = Path(__file__).resolve().parent / "images"


def elements(figure, gid):
    return figure.axes[0].findobj(lambda artist: artist.get_gid() == gid)


def centre_y(artist):
    if hasattr(artist, "get_center"):
        return artist.get_center()[1]
    if hasattr(artist, "get_y") and hasattr(artist, "get_height"):
        return artist.get_y() + artist.get_height() / 2
    return artist.get_position()[1]


def centre_x(artist):
    if hasattr(artist, "get_center"):
        return artist.get_center()[0]
    return artist.get_x() + artist.get_width() / 2


def feature_circuit(kind=tq.Circuit):
    """One of each element: gates with angles, controls, a CNOT, a swap, a barrier, a measurement
    with a condition on its bit, a reset, a channel and a Pauli rotation."""
    c = kind(4)
    c.h(0).rx(1, theta=0.3).cx(0, 2).cz(1, 3).swap(2, 3).barrier()
    bit = c.measure(1)
    c.cond(bit).x(2)
    c.reset(1)
    if kind is not tq.MPSCircuit:
        c.depolarizing(3, p=0.1)
    c.exp_pauli("XZ", theta=0.7, qubits=[0, 2])
    return c


@pytest.mark.parametrize("kind", [tq.Circuit, tq.DMCircuit, tq.MPSCircuit])
def test_every_element_is_drawn_once(kind):
    c = feature_circuit(kind)
    figure = c.draw("mpl")
    assert type(figure).__name__ == "Figure"
    count = {gid: len(elements(figure, gid)) for gid in
             ("gate", "control", "measure", "reset", "channel", "pauli_rotation", "condition", "barrier",
              "wire")}
    assert count == {"gate": 3, "control": 3, "measure": 2, "reset": 1,  # H, RX, the conditioned X
                     "channel": 0 if kind is tq.MPSCircuit else 1, "pauli_rotation": 1, "condition": 1,
                     "barrier": 2, "wire": 4}  # cx's control, cz's two dots; the meter and its pointer
    assert len([a for a in elements(figure, "target") if hasattr(a, "get_center")]) == 1  # one ⊕
    assert len(elements(figure, "swap")) == 4  # two strokes on each of two qubits


def test_the_stabilizer_figure_shows_detectors_and_observables_the_text_leaves_out():
    c = tq.StabilizerCircuit(3).h(0).cx(0, 1).cx(1, 2)
    first, second = c.measure(0), c.measure(1)
    c.detector([first, second])
    c.detector([second])
    c.observable_include(second)
    figure = c.draw("mpl")
    assert len(elements(figure, "detector")) == 2 and len(elements(figure, "observable")) == 1
    texts = [t.get_text() for t in figure.axes[0].texts]
    assert {"D0", "D1", "L0", "c"} <= set(texts)  # and the classical row's label
    assert "D" not in c.draw()  # the text diagram has no classical row
    detector_rows = {round(centre_y(box), 6) for box in elements(figure, "detector")}
    assert detector_rows == {-3.0}  # below the three qubits


def test_qubit_order_and_columns_follow_the_text_diagram():
    c = tq.Circuit(3).h(2).x(0).cx(0, 1).ry(2, theta=0.1)
    figure = c.draw("mpl")
    boxes = sorted(elements(figure, "gate"), key=lambda box: (centre_x(box), -centre_y(box)))
    labels = [t.get_text() for t in figure.axes[0].texts if t.get_text() in ("H", "X", "RY")]
    assert sorted(labels) == ["H", "RY", "X"]
    # qubit q on row -q; H (qubit 2) and X (qubit 0) share the first column, RY the CNOT's, as in
    # print(c): "q0: ─X────●────" over "q2: ─H─RY(0.1)─"
    assert [round(centre_y(box)) for box in boxes] == [0, -2, -2]
    assert centre_x(boxes[0]) == centre_x(boxes[1]) < centre_x(boxes[2])
    (dot,) = [a for a in elements(figure, "control")]
    assert centre_x(dot) == centre_x(boxes[2])
    assert str(c).splitlines() == ["q0: ─X────●────", "q1: ──────X────", "q2: ─H─RY(0.1)─"]


@st.composite
def circuits(draw):
    n = draw(st.integers(1, 5))
    c = tq.Circuit(n)
    expected = {"gate": 0, "measure": 0, "channel": 0, "barrier": 0}
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["h", "rx", "cx", "measure", "channel", "barrier", "rzz"]))
        q = draw(st.integers(0, n - 1))
        if kind in ("cx", "rzz") and n < 2:
            continue
        other = draw(st.integers(0, n - 1).filter(lambda p, q=q: p != q)) if n > 1 else q
        if kind == "h":
            c.h(q)
        elif kind == "rx":
            c.rx(q, theta=draw(st.floats(-3, 3)))
        elif kind == "cx":
            c.cx(q, other)
            continue
        elif kind == "rzz":
            c.rzz(q, other, theta=0.5)
        elif kind == "measure":
            c.measure(q)
        elif kind == "channel":
            c.amplitude_damping(q, gamma=0.1)
        else:
            c.barrier()
        expected["gate" if kind in ("h", "rx", "rzz") else kind] += 1
    return c, expected


@settings(max_examples=25, deadline=None)
@given(case=circuits(), fold=st.sampled_from([None, 0, 3]))
def test_random_circuits_draw_every_operation(case, fold):
    c, expected = case
    figure = c.draw("mpl", fold=fold)
    assert len(elements(figure, "gate")) == expected["gate"]
    assert len(elements(figure, "measure")) == 2 * expected["measure"]
    assert len(elements(figure, "channel")) == expected["channel"]
    assert len(elements(figure, "barrier")) == 2 * expected["barrier"]
    latex = c.draw("latex").splitlines()
    assert len(latex) == c.num_qubits + 2 and latex[0] == r"\begin{quantikz}"
    assert len({row.count(" & ") for row in latex[1:-1]}) == 1  # every row as many columns
    assert sum(row.count(r"\meter") for row in latex) == expected["measure"]


def test_long_circuits_fold_into_blocks():
    c = tq.templates.brickwork(4, [0.1] * 40, 10)
    whole = c.draw("mpl", fold=0)
    assert elements(whole, "fold") == []
    columns = len({round(centre_x(box), 6) for box in elements(whole, "gate")})
    folded = c.draw("mpl", fold=5)
    blocks = len(elements(folded, "wire")) // c.num_qubits  # a wire per qubit in each block
    assert blocks >= columns // 5 >= 2
    assert len(elements(folded, "fold")) == 2 * (blocks - 1)  # » ends a block, « starts the next
    assert len(elements(folded, "gate")) == len(elements(whole, "gate"))
    automatic = c.draw("mpl")
    assert len(elements(automatic, "gate")) == len(elements(whole, "gate"))


def test_drawing_into_given_axes():
    from matplotlib.figure import Figure

    figure = Figure()
    left, right = figure.subplots(1, 2)
    assert tq.Circuit(2).h(0).cx(0, 1).draw("mpl", ax=right, title="Bell") is figure
    assert right.get_title() == "Bell" and len(right.patches) > 0 and len(left.patches) == 0


def test_latex_cells():
    c = tq.Circuit(3).h(0).cx(0, 2).swap(1, 2).crz(1, 0, theta=0.5)
    c.measure(2)
    rows = c.draw("latex").splitlines()[1:-1]
    assert rows[0].split(" & ")[:3] == [r"\lstick{$q_{0}$}", r"\gate{\mathrm{H}}", r"\ctrl{2}"]
    assert r"\targ{}" in rows[2] and r"\swap{1}" in rows[1] and r"\targX{}" in rows[2]
    assert r"\ctrl{-1}" in rows[1] and r"\gate{\mathrm{RZ}(0.5)}" in rows[0]
    assert r"\meter[label style={below}]{c_{0}}" in rows[2]


@pytest.mark.parametrize("bad, error, match", [
    ({"output": "png"}, ValueError, "output"),
    ({"output": "text", "width": 0}, ValueError, "width"),
    ({"output": "mpl", "fold": -1}, ValueError, "fold"),
    ({"output": 80}, TypeError, "output"),
])
def test_bad_drawing_arguments_are_refused(bad, error, match):
    output = bad.pop("output")
    with pytest.raises((ValueError, TypeError), match=match):
        tq.Circuit(2).h(0).draw(output, **bad)


def test_a_figure_matches_the_stored_image(tmp_path):
    """Rendered by the matplotlib of this repository's tests; another minor version may place text
    a pixel apart, so the comparison is skipped there (the element checks above still run)."""
    from matplotlib.testing.compare import compare_images

    stored = IMAGES / "feature_circuit.png"
    made_with = (IMAGES / "matplotlib_version.txt").read_text().strip()
    if ".".join(matplotlib.__version__.split(".")[:2]) != ".".join(made_with.split(".")[:2]):
        pytest.skip(f"the stored image was made with matplotlib {made_with}")
    path = tmp_path / "feature_circuit.png"
    feature_circuit().draw("mpl").savefig(path, dpi=60)
    assert compare_images(str(stored), str(path), tol=8) is None


# -- tq.plot ---------------------------------------------------------------------------------------
def test_counts_keep_the_top_outcomes_and_sum_the_rest():
    samples = {"00": 50, "01": 5, "10": 20, "11": 25}
    figure = tq.plot.counts(samples, top=2)
    axes = figure.axes[0]
    assert [label.get_text() for label in axes.get_xticklabels()] == ["00", "11", "other"]
    assert [bar.get_height() for bar in elements(figure, "count")] == [50, 25, 25]
    fractions = tq.plot.counts(samples, top=None, probabilities=True)
    assert sum(bar.get_height() for bar in elements(fractions, "count")) == pytest.approx(1.0)


def test_counts_of_a_sampled_circuit():
    samples = tq.Circuit(3).h(0).cx(0, 1).cx(1, 2).sample(400, seed=5)
    figure = tq.plot.counts(samples, title="GHZ")
    assert figure.axes[0].get_title() == "GHZ"
    assert sum(bar.get_height() for bar in elements(figure, "count")) == 400


@pytest.mark.parametrize("bad, error", [({}, TypeError), ([("00", 1)], TypeError), ({"0": -1}, ValueError)])
def test_bad_counts_are_refused(bad, error):
    with pytest.raises(error, match="samples|count"):
        tq.plot.counts(bad)


def test_expectations_draw_a_line_per_observable():
    h = tq.hamiltonians.heisenberg(4)
    times = np.linspace(0, 1, 5)
    observables = [tq.PauliSum([(1.0, "ZIII")]), tq.PauliSum([(1.0, "IZII")])]
    values = tq.evolve(h, tq.Circuit(4).x(0), times, observables=observables)
    figure = tq.plot.expectations(times, values, labels=["Z0", "Z1"])
    lines = elements(figure, "expectation")
    assert len(lines) == 2
    np.testing.assert_allclose(lines[1].get_ydata(), np.asarray(values)[:, 1])
    with pytest.raises(ValueError, match="one row per time"):
        tq.plot.expectations(times[:3], values)
    with pytest.raises(ValueError, match="labels"):
        tq.plot.expectations(times, values, labels=["Z0"])


def test_a_plan_plot_shows_every_step():
    c = tq.templates.brickwork(20, [0.1] * 80, 4)
    report = tq.rehearse(c.expectation_ps, z=[10])
    figure = tq.plot.plan(report)
    (width,) = elements(figure, "width")
    assert list(width.get_ydata()) == [w for w, _ in report.steps]
    assert max(width.get_ydata()) == report.width
    assert sum(f for _, f in report.steps) == report.flops
    bars = figure.axes[1].findobj(lambda a: a.get_gid() == "flops")
    np.testing.assert_allclose([bar.get_height() for bar in bars], [np.log10(f) for _, f in report.steps])
    mps = tq.rehearse(tq.MPSCircuit(3).h(0).expectation_ps, z=[0])
    with pytest.raises(ValueError, match="no contraction steps"):
        tq.plot.plan(mps)
    with pytest.raises(TypeError, match="ContractionReport"):
        tq.plot.plan("report")
