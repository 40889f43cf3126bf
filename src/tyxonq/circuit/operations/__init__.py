"""What circuits are made of, for every simulator: the gate table, operations and their checks, the
gate methods, drawing and gate fusion.
"""
