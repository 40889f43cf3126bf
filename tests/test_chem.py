"""tq.chem against independent references: fermionic algebra against dense ladder matrices,
mappings against each other and OpenFermion, molecular Hamiltonians against PySCF's RHF, FCI and
CASCI, ansätze against dense exponentials, finite differences and FCI."""

from __future__ import annotations

import functools
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pyscf")

import tyxonq as tq  # noqa: E402
from conftest import jax_in_matrix, make_backend  # noqa: E402
from tyxonq.chem import (  # noqa: E402
    HEA,
    PUCCD,
    UCCSD,
    FermionOperator,
    KUpCCGSD,
    Molecule,
    from_openfermion,
    hartree_fock_bits,
    map_fermion_operator,
    number_operator,
    spin_squared,
    spin_z,
    to_openfermion,
)
from tyxonq.chem.encodings import encoding  # noqa: E402

MAPPINGS = ("jordan_wigner", "parity", "bravyi_kitaev")
CHEMICAL_ACCURACY = 1.6e-3


# -- independent references ----------------------------------------------------------------
def dense_annihilator(j: int, n: int) -> np.ndarray:
    """``a_j`` on ``n`` modes in the occupation basis (mode 0 the most significant bit)."""
    lower = np.array([[0.0, 1.0], [0.0, 0.0]])  # |0><1|
    factors = [np.diag([1.0, -1.0])] * j + [lower] + [np.eye(2)] * (n - j - 1)
    return functools.reduce(np.kron, factors)


def dense_fermion(operator: FermionOperator, n: int) -> np.ndarray:
    total = np.zeros((2 ** n, 2 ** n), dtype=complex)
    for term, coefficient in operator.terms.items():
        product = np.eye(2 ** n, dtype=complex)
        for mode, action in term:
            a = dense_annihilator(mode, n)
            product = product @ (a.T if action else a)
        total += coefficient * product
    return total


def encoding_unitary(mapping: str, n: int) -> np.ndarray:
    """The permutation taking occupation basis state ``f`` to qubit basis state ``beta f``."""
    beta = encoding(mapping, n).matrix
    unitary = np.zeros((2 ** n, 2 ** n))
    for index in range(2 ** n):
        f = np.array([(index >> (n - 1 - q)) & 1 for q in range(n)])
        b = (beta @ f) % 2
        unitary[int("".join(map(str, b)), 2), index] = 1
    return unitary


def sector_indices(n_orbitals: int, n_alpha: int, n_beta: int, mapping: str,
                   reduced: bool = False) -> np.ndarray:
    """Qubit basis states (blocked order) holding ``n_alpha`` and ``n_beta`` electrons."""
    n = 2 * n_orbitals
    inverse = encoding(mapping, n).inverse
    found = set()
    for index in range(2 ** n):
        bits = np.array([(index >> (n - 1 - q)) & 1 for q in range(n)])
        f = (inverse @ bits) % 2
        if f[:n_orbitals].sum() == n_alpha and f[n_orbitals:].sum() == n_beta:
            if reduced:
                bits = np.delete(bits, [n_orbitals - 1, n - 1])
            found.add(int("".join(map(str, bits)), 2))
    return np.array(sorted(found))


def sector_ground_energy(hamiltonian: tq.PauliSum, indices: np.ndarray) -> float:
    matrix = hamiltonian.to_sparse().tocsr()[indices][:, indices].toarray()
    return float(np.linalg.eigvalsh(matrix)[0])


@st.composite
def fermion_operators(draw, n: int):
    operator = FermionOperator()
    for _ in range(draw(st.integers(1, 5))):
        length = draw(st.integers(0, 4))
        term = tuple((draw(st.integers(0, n - 1)), draw(st.integers(0, 1))) for _ in range(length))
        operator += FermionOperator(term, complex(draw(st.floats(-2, 2)), draw(st.floats(-2, 2))))
    return operator


@functools.lru_cache(maxsize=None)
def molecule(name: str) -> Molecule:
    return Molecule({"h2": "H 0 0 0; H 0 0 0.74", "lih": "Li 0 0 0; H 0 0 1.6",
                     "water": "O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692"}[name])


# -- fermionic operators -------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_fermionic_algebra_matches_dense_ladder_matrices(data):
    """Products, sums, normal ordering and the Hermitian conjugate against products of dense
    ladder matrices; and Jordan-Wigner exactly equals the dense operator."""
    n = data.draw(st.integers(1, 4))
    a, b = data.draw(fermion_operators(n)), data.draw(fermion_operators(n))
    reference = dense_fermion(a, n) @ dense_fermion(b, n) + dense_fermion(b, n)
    product = a * b + b
    np.testing.assert_allclose(dense_fermion(product.normal_ordered(), n), reference, atol=1e-10)
    np.testing.assert_allclose(dense_fermion(a.dagger(), n), dense_fermion(a, n).conj().T, atol=1e-12)
    for term in product.normal_ordered().terms:  # creations first, modes descending in each group
        actions = [action for _, action in term]
        assert actions == sorted(actions, reverse=True)
        for action in (0, 1):
            modes = [mode for mode, act in term if act == action]
            assert modes == sorted(set(modes), reverse=True)
    mapped = map_fermion_operator(product, "jordan_wigner", n_modes=n, real=False)
    np.testing.assert_allclose(mapped.to_sparse().toarray(), reference, atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_every_mapping_is_the_operator_in_its_encoding(data):
    """Parity and Bravyi-Kitaev equal the dense operator conjugated by their basis change
    ``|f> -> |beta f>``."""
    n = data.draw(st.integers(1, 5))
    operator = data.draw(fermion_operators(n))
    for mapping in MAPPINGS:
        mapped = map_fermion_operator(operator, mapping, n_modes=n, real=False).to_sparse().toarray()
        change = encoding_unitary(mapping, n)
        np.testing.assert_allclose(mapped, change @ dense_fermion(operator, n) @ change.T, atol=1e-10)


def test_number_and_spin_operators():
    n_orbitals = 2
    modes = 2 * n_orbitals
    count = dense_fermion(number_operator(modes), modes)
    np.testing.assert_allclose(np.diag(count).real, [bin(i).count("1") for i in range(2 ** modes)])
    s2 = dense_fermion(spin_squared(n_orbitals), modes)
    np.testing.assert_allclose(s2, s2.conj().T, atol=1e-12)
    assert sorted(set(np.round(np.linalg.eigvalsh(s2), 10))) == [0.0, 0.75, 2.0]  # S(S+1)
    sz = dense_fermion(spin_z(n_orbitals), modes)
    np.testing.assert_allclose(s2 @ sz, sz @ s2, atol=1e-12)
    interleaved = dense_fermion(spin_z(n_orbitals, order="interleaved"), modes)
    assert np.diag(interleaved)[0b1000].real == 0.5 and np.diag(interleaved)[0b0100].real == -0.5


@pytest.mark.parametrize("text, error", [
    ("0^ x", "mode index"), ("1^^", "mode index"),
])
def test_bad_fermion_terms_are_refused(text, error):
    with pytest.raises(ValueError, match=error):
        FermionOperator(text)


def test_bad_mappings_are_refused():
    with pytest.raises(ValueError, match="mapping='jw'"):
        map_fermion_operator(FermionOperator("0^ 0"), "jw")
    with pytest.raises(ValueError, match="n_modes=1 is too few"):
        map_fermion_operator(FermionOperator("3^ 0"), n_modes=1)


def test_openfermion_round_trips():
    of = pytest.importorskip("openfermion")
    operator = FermionOperator("3^ 1", 0.5) + FermionOperator("2^ 0^ 1 3", -0.25j) + FermionOperator("", 0.1)
    assert from_openfermion(to_openfermion(operator)) == operator
    for mapping, theirs in (("jordan_wigner", of.jordan_wigner), ("bravyi_kitaev", of.bravyi_kitaev)):
        ours = map_fermion_operator(operator, mapping, n_modes=4, real=False)
        options = {} if mapping == "jordan_wigner" else {"n_qubits": 4}
        converted = from_openfermion(theirs(to_openfermion(operator), **options), n_qubits=4)
        np.testing.assert_allclose(ours.to_sparse().toarray(), converted.to_sparse().toarray(), atol=1e-12)
        assert from_openfermion(to_openfermion(ours), n_qubits=4).terms == ours.terms
    space = molecule("h2").active_space()
    interaction = of.InteractionOperator(space.constant, np.zeros((4, 4)), np.zeros((4, 4, 4, 4)))
    assert from_openfermion(interaction) == FermionOperator("", space.constant)


# -- molecules ------------------------------------------------------------------------------
@pytest.mark.parametrize("name, space", [("h2", None), ("lih", None), ("lih", (2, 3)), ("water", (4, 4))])
def test_hamiltonians_give_rhf_and_fci_energies_in_every_mapping(name, space):
    """The Hartree-Fock determinant's energy is RHF's; the lowest eigenvalue in the right
    electron-number sector is FCI's (CASCI's in an active space), in every mapping, with and
    without the parity mapping's two-qubit reduction."""
    mol = molecule(name)
    reference = mol.casci_energy(space)
    electrons, orbitals = space or (mol.n_electrons, mol.n_orbitals)
    n_alpha = n_beta = electrons // 2
    for mapping in MAPPINGS:
        for reduced in ((False, True) if mapping == "parity" else (False,)):
            h = mol.hamiltonian(space, mapping=mapping, two_qubit_reduction=reduced)
            assert h.n_qubits == 2 * orbitals - 2 * reduced
            indices = sector_indices(orbitals, n_alpha, n_beta, mapping, reduced)
            assert len(indices) == comb(orbitals, n_alpha) * comb(orbitals, n_beta)
            assert abs(sector_ground_energy(h, indices) - reference) < 1e-8
            bits = hartree_fock_bits(orbitals, n_alpha, n_beta, mapping, two_qubit_reduction=reduced)
            basis = int("".join(map(str, bits)), 2)
            assert abs(h.to_sparse()[basis, basis].real - mol.hf_energy) < 1e-8


def test_interleaved_order_is_the_blocked_one_relabelled():
    """The interleaved fermionic Hamiltonian is the blocked one with mode ``p + s n`` renamed
    ``2p + s``; mapped, the two have one spectrum (Jordan-Wigner strings differ: the Z chains
    follow the mode order)."""
    from tyxonq.chem import fermionic_hamiltonian

    space = molecule("lih").active_space((2, 3))
    n = space.n_orbitals
    blocked, interleaved = fermionic_hamiltonian(space), fermionic_hamiltonian(space, order="interleaved")
    renamed = FermionOperator.from_terms({tuple((2 * (m % n) + m // n, a) for m, a in term): c
                                          for term, c in blocked.terms.items()})
    assert renamed == interleaved
    spectra = [np.linalg.eigvalsh(h.to_sparse().toarray()) for h in
               (molecule("lih").hamiltonian((2, 3)),
                molecule("lih").hamiltonian((2, 3), order="interleaved"))]
    np.testing.assert_allclose(spectra[0], spectra[1], atol=1e-10)


def test_molecule_reports_its_sizes_and_energies():
    mol = molecule("lih")
    assert (mol.n_electrons, mol.n_orbitals, mol.n_alpha, mol.n_beta) == (4, 6, 2, 2)
    assert mol.fci_energy < mol.ccsd_energy < mol.hf_energy
    assert abs(mol.ccsd_energy - mol.fci_energy) < 1e-3
    radical = Molecule("H 0 0 0; H 0 0 0.74; H 0 0 1.48", spin=1)
    assert (radical.n_alpha, radical.n_beta) == (2, 1)
    h = radical.hamiltonian()
    assert abs(sector_ground_energy(h, sector_indices(3, 2, 1, "jordan_wigner")) - radical.fci_energy) < 1e-8


@pytest.mark.parametrize("build, error", [
    (lambda: Molecule("H 0 0 0"), "1 electrons cannot have spin=0"),
    (lambda: Molecule("H 0 0 0; H 0 0 0.74", basis="no-such-basis"), "basis='no-such-basis'"),
    (lambda: molecule("h2").hamiltonian(active_space=(2, 5)), "active_space=\\(2, 5\\)"),
    (lambda: molecule("lih").hamiltonian(active_space=(3, 3)), "frozen core"),
    (lambda: molecule("h2").hamiltonian(mapping="jw"), "mapping='jw'"),
    (lambda: molecule("h2").hamiltonian(mapping="jordan_wigner", two_qubit_reduction=True), "parity"),
    (lambda: UCCSD(molecule("h2"), init="hf"), "init='hf'"),
    (lambda: Molecule(), "atom="),
])
def test_bad_molecular_input_is_refused_by_name(build, error):
    with pytest.raises(ValueError, match=error):
        build()


# -- ansätze --------------------------------------------------------------------------------
def dense_ucc_state(ucc) -> callable:
    """The ansatz state by dense matrix exponentials of the mapped generators (scipy)."""
    from scipy.linalg import expm

    n = ucc.n_qubits

    def state(params):
        psi = np.zeros(2 ** n, dtype=complex)
        psi[int("".join(map(str, ucc.reference)), 2)] = 1
        for excitation, theta in zip(ucc.excitations, params):
            generator = map_fermion_operator(excitation.operator(), ucc.mapping,
                                             n_modes=2 * ucc.space.n_orbitals, real=False)
            matrix = generator.to_sparse().toarray()
            if ucc.two_qubit_reduction:
                keep = sector_indices(ucc.space.n_orbitals, ucc.space.n_alpha, ucc.space.n_beta, "parity")
                full = np.zeros((2 ** n, 2 ** n), dtype=complex)
                reduced = [int("".join(b for q, b in enumerate(format(i, f"0{n + 2}b"))
                                       if q not in (ucc.space.n_orbitals - 1, n + 1)), 2) for i in keep]
                full[np.ix_(reduced, reduced)] = matrix[np.ix_(keep, keep)]
                matrix = full
            psi = expm(theta * matrix) @ psi
        return psi

    return state


@pytest.mark.parametrize("mapping, reduced",
                         [("jordan_wigner", False), ("parity", True), ("bravyi_kitaev", False)])
def test_ucc_circuits_are_the_products_of_excitation_exponentials(mapping, reduced):
    ucc = UCCSD(molecule("lih"), active_space=(2, 3), mapping=mapping, two_qubit_reduction=reduced)
    params = np.random.default_rng(4).normal(scale=0.3, size=ucc.n_params)
    expected = dense_ucc_state(ucc)(params)
    got = ucc.circuit(params).state()
    np.testing.assert_allclose(abs(np.vdot(expected, got)), 1.0, atol=1e-10)
    np.testing.assert_allclose(got, expected, atol=1e-10)


@pytest.mark.parametrize("engine", ["statevector", "civector"])
def test_ucc_gradients_match_finite_differences(engine):
    ucc = UCCSD(molecule("lih"), active_space=(2, 3), engine=engine)
    params = np.random.default_rng(1).normal(scale=0.2, size=ucc.n_params)
    value, gradient = ucc.energy_and_grad(params)
    step = 1e-5
    for k in range(ucc.n_params):
        plus, minus = params.copy(), params.copy()
        plus[k] += step
        minus[k] -= step
        finite = (ucc.energy_and_grad(plus)[0] - ucc.energy_and_grad(minus)[0]) / (2 * step)
        assert abs(finite - gradient[k]) < 1e-7


def assert_backend_matches_numpy(ucc, params, backend_name):
    """``tq.value_and_grad(ucc.energy)`` on ``backend_name`` equals NumPy's ``energy_and_grad``."""
    value, gradient = ucc.energy_and_grad(params)
    K = make_backend(backend_name)
    with tq.use_backend(K):
        got_value, got_gradient = tq.value_and_grad(ucc.energy)(K.asarray(params, dtype=K.real_dtype))
    assert abs(float(K.to_numpy(got_value)) - value) < 1e-10
    np.testing.assert_allclose(K.to_numpy(got_gradient), gradient, atol=1e-10)


@pytest.mark.parametrize("backend_name", jax_in_matrix(["pytorch", "jax"]))
def test_ucc_energies_and_gradients_on_every_backend(backend_name):
    """``tq.value_and_grad(ansatz.energy)`` through the circuit on PyTorch and JAX equals
    NumPy's adjoint sweep."""
    ucc = UCCSD(molecule("h2"), engine="statevector")
    params = np.array([0.3, -0.2, 0.1])
    assert_backend_matches_numpy(ucc, params, backend_name)


def test_uccsd_reaches_fci_and_the_mappings_agree_at_the_optimum():
    h2 = molecule("h2")
    energies = [UCCSD(h2, mapping=mapping, two_qubit_reduction=mapping == "parity").kernel()
                for mapping in MAPPINGS]
    np.testing.assert_allclose(energies, h2.fci_energy, atol=1e-8)
    ccsd_start = UCCSD(h2, init="ccsd")
    assert abs(ccsd_start.energy_and_grad()[0] - h2.fci_energy) < 1e-6  # CCSD is exact for two electrons
    mp2_start = UCCSD(h2, init="mp2")
    assert h2.fci_energy < mp2_start.energy_and_grad()[0] < h2.hf_energy


def test_uccsd_is_chemically_accurate_for_lih_and_water():
    lih = molecule("lih")
    assert abs(UCCSD(lih).kernel() - lih.fci_energy) < CHEMICAL_ACCURACY
    water = molecule("water")
    ucc = UCCSD(water, active_space=(4, 4))
    assert abs(ucc.kernel() - water.casci_energy((4, 4))) < CHEMICAL_ACCURACY
    assert ucc.params is not None and ucc.optimization.success


def test_other_ansatze_improve_on_hartree_fock():
    h2 = molecule("h2")
    for ansatz in (PUCCD(h2), KUpCCGSD(h2, k=2), HEA(h2, layers=2)):
        energy = ansatz.kernel()
        assert h2.fci_energy - 1e-10 <= energy < h2.hf_energy - 1e-3
        assert abs(energy - h2.fci_energy) < CHEMICAL_ACCURACY
    assert PUCCD(molecule("lih"), active_space=(2, 3)).n_params == 2
    with pytest.raises(ValueError, match="closed shell"):
        PUCCD(Molecule("H 0 0 0; H 0 0 0.74; H 0 0 1.48", spin=1))
    with pytest.raises(ValueError, match="params has shape"):
        UCCSD(h2).energy(np.zeros(5))


# -- the particle-conserving engine ---------------------------------------------------------
@pytest.mark.parametrize("name, space, ansatz", [
    ("lih", (2, 3), UCCSD), ("lih", None, UCCSD), ("water", (4, 4), UCCSD), ("lih", (2, 3), PUCCD),
    ("lih", (2, 3), KUpCCGSD),
])
def test_the_ci_vector_engine_equals_the_state_vector_route(name, space, ansatz):
    """Values and gradients agree to 1e-10 at random amplitudes; the CI vector is the state
    vector's part in the electron-number sector."""
    from tyxonq.chem.civector import SectorBasis

    mol = molecule(name)
    ci, state = ansatz(mol, active_space=space, engine="civector"), ansatz(mol, active_space=space,
                                                                          engine="statevector")
    assert ci.report()["engine"] == "civector" and state.report()["engine"] == "statevector"
    params = np.random.default_rng(7).normal(scale=0.3, size=ci.n_params)
    (a, ga), (b, gb) = ci.energy_and_grad(params), state.energy_and_grad(params)
    assert abs(a - b) < 1e-10
    np.testing.assert_allclose(ga, gb, atol=1e-10)
    basis = SectorBasis.of(ci.space.n_orbitals, ci.space.n_alpha, ci.space.n_beta)
    full = state.circuit(params).state()
    np.testing.assert_allclose(full[basis.indices], ci.ci.state(params), atol=1e-10)
    assert abs(np.linalg.norm(full[basis.indices]) - 1) < 1e-10  # nothing leaves the sector


@pytest.mark.parametrize("backend_name", jax_in_matrix(["numpy", "pytorch", "jax", "cupynumeric-logic"]))
def test_the_ci_vector_engine_differentiates_on_every_backend(backend_name):
    ucc = UCCSD(molecule("lih"), active_space=(2, 3), engine="civector")
    params = np.random.default_rng(3).normal(scale=0.3, size=ucc.n_params)
    assert_backend_matches_numpy(ucc, params, backend_name)


def test_amplitudes_name_their_orbitals():
    ucc = UCCSD(molecule("h2"))
    table = ucc.amplitudes()
    assert [row["excitation"] for row in table] == ucc.excitations
    assert table[0]["orbitals"] == ((1, "alpha"), (1, "beta"), (0, "alpha"), (0, "beta"))
    assert table[0]["amplitude"] == pytest.approx(ucc.initial_params()[0])
    assert tq.chem.kUpCCGSD is KUpCCGSD and tq.chem.pUCCD is PUCCD


def test_auto_takes_the_ci_vector_and_reports_it():
    ucc = UCCSD(molecule("lih"))
    assert ucc.report() == {"engine": "civector", "ci_dimension": 225, "state_dimension": 4096,
                            "n_params": 92}
    assert UCCSD(molecule("h2"), order="interleaved").report()["engine"] == "statevector"
    with pytest.raises(ValueError, match="engine='gpu'"):
        UCCSD(molecule("h2"), engine="gpu")


@pytest.mark.parametrize("geometry, space", [
    ("Li 0 0 0; H 0 0 1.6", None), ("O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692", (4, 4))])
def test_symmetry_drops_forbidden_excitations_and_no_energy(geometry, space):
    """With ``symmetry=True`` the ansatz keeps the excitations whose irreps multiply to the
    totally symmetric one: fewer amplitudes, the same optimised energy."""
    plain = UCCSD(Molecule(geometry), active_space=space)
    screened = UCCSD(Molecule(geometry, symmetry=True), active_space=space)
    assert screened.molecule.orbital_irreps is not None and plain.molecule.orbital_irreps is None
    assert screened.n_params < plain.n_params
    assert abs(screened.kernel() - plain.kernel()) < 1e-8
    with pytest.raises(TypeError, match="symmetry="):
        Molecule(geometry, symmetry="yes")
