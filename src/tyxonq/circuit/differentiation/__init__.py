"""Exact gradients without autograd: traced parameters (dual numbers) and the dispatch of traced
expectations to the adjoint sweep or parameter shift.
"""
