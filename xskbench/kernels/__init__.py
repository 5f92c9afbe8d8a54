"""numba-only kernels: rings, the event engine and the datapaths.

Every kernel takes the machine arena ``m`` (one int64 array holding all state), the cost
arrays and scalars — never objects — so that ``cache=True`` works across processes.
Time is virtual, in millicycles (``MC`` per CPU cycle), which keeps it integer and exact.
"""
