"""Tensor-network contraction: networks per result kind, the light cone, path finders, cached plans
and the pairwise executor, and binding parameters to a network.
"""
