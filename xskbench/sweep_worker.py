"""Dask worker preload of the local sweep cluster (sweep._dask): the worker ignores SIGINT.

A Ctrl-C on a terminal reaches the whole process group; the sweep's own process stops the
sweep (one line, the cache consistent) and closes the cluster, so a worker has nothing to do
with the signal but would print its own KeyboardInterrupt traceback.
"""
import signal


def dask_setup(worker):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
