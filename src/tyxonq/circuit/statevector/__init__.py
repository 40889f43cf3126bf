"""State-vector simulation: placing small matrices on qubits, fused blocks' matrices, block sweeps
and the adjoint sweep.
"""
