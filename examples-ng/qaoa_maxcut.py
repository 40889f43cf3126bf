"""QAOA for MaxCut on a random 3-regular graph, against the brute-force maximum cut.

H = sum_edges w/2 Z_i Z_j, so the expected cut is sum w/2 - <H>. The approximation ratio is the
expected cut of the optimised QAOA state over the maximum cut found by enumerating all 2^n
assignments. Layers start from a linear ramp (a standard QAOA initialisation) plus a few random
restarts; L-BFGS-B uses exact gradients (autograd or adjoint), with angles γ·w_ij chained exactly.

Run:  python examples-ng/qaoa_maxcut.py [--quick] [--backend numpy|pytorch] [--nodes 12] [--layers 3]
"""

from __future__ import annotations

import argparse
import sys
import time

import networkx as nx
import numpy as np

import tyxonq as tq


def brute_force_maxcut(graph: nx.Graph) -> float:
    n = graph.number_of_nodes()
    assignments = np.arange(2 ** n)
    cut = np.zeros(2 ** n)
    for a, b in graph.edges:
        differ = ((assignments >> a) & 1) != ((assignments >> b) & 1)
        cut += graph.edges[a, b].get("weight", 1.0) * differ
    return float(cut.max())


def cut_value(graph: nx.Graph, bits: str) -> float:
    """Weight of the edges cut by an assignment (qubit q is character q)."""
    return sum(graph.edges[a, b].get("weight", 1.0) for a, b in graph.edges if bits[a] != bits[b])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="6 nodes, p = 2 (used by the tests)")
    parser.add_argument("--backend", default="numpy", choices=["numpy", "pytorch", "cupynumeric"])
    parser.add_argument("--nodes", type=int, default=12)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--restarts", type=int, default=4)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--target", type=float, default=0.85,
                        help="expected-cut approximation ratio required (p = 3 on 3-regular "
                             "graphs tops out near 0.88-0.89)")
    args = parser.parse_args(argv)
    nodes, layers = (6, 2) if args.quick else (args.nodes, args.layers)
    target = 0.8 if args.quick else args.target

    K = tq.set_backend(args.backend)
    graph = nx.random_regular_graph(3, nodes, seed=args.seed)
    hamiltonian = tq.hamiltonians.maxcut(graph)
    total_weight = sum(graph.edges[e].get("weight", 1.0) for e in graph.edges)
    best_cut = brute_force_maxcut(graph)

    def energy(params):
        return tq.templates.qaoa(graph, params[:layers], params[layers:]).expectation(hamiltonian)

    ramp = (np.arange(layers) + 0.5) / layers
    starts = [np.concatenate([0.8 * ramp, 0.8 * (1 - ramp)])]
    rng = np.random.default_rng(args.seed)
    starts += [rng.uniform(0, np.pi / 2, 2 * layers) for _ in range(0 if args.quick else args.restarts)]
    start = time.perf_counter()
    results = [tq.optimize.minimize(energy, x0, method="L-BFGS-B", maxiter=300, progress=False)
               for x0 in starts]
    elapsed = time.perf_counter() - start
    best = min(results, key=lambda r: r.fun)
    expected_cut = total_weight / 2 - best.fun
    ratio = expected_cut / best_cut
    circuit = tq.templates.qaoa(graph, best.x[:layers], best.x[layers:])
    counts = circuit.sample(1000, seed=args.seed)
    sampled_cut = max(cut_value(graph, bits) for bits in counts)
    likely = max(counts, key=counts.get)

    print(f"QAOA MaxCut, random 3-regular graph: {nodes} nodes, {graph.number_of_edges()} edges, "
          f"p = {layers}")
    print(f"  backend               {K.name}; {len(starts)} starts, {elapsed:.2f} s")
    print(f"  maximum cut           {best_cut:.4f} (brute force over {2 ** nodes} assignments)")
    print(f"  QAOA expected cut     {expected_cut:.4f}")
    print(f"  approximation ratio   {ratio:.4f}  <C>/C_max (required {target})")
    print(f"  sampled solutions     best of 1000 shots cuts {sampled_cut:.4f} "
          f"(ratio {sampled_cut / best_cut:.4f}); most likely {likely} cuts "
          f"{cut_value(graph, likely):.4f}")
    print(f"  angles gamma          {np.round(best.x[:layers], 4).tolist()}")
    print(f"  angles beta           {np.round(best.x[layers:], 4).tolist()}")
    return 0 if ratio >= target else 1


if __name__ == "__main__":
    sys.exit(main())
