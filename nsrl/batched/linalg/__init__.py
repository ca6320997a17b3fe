"""Linear algebra of the batched engines: sparse kernels, certified solves, low-rank updates.

CPI+'s shared subspace lives here too. Engines call these; no scheme decision lives here.
"""
