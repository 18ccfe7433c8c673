"""The distributed (MPI) path of :func:`jaxamg.solve`, each rank with its
block of rows: the communicator and agreed checks (``comm``, ``validate``),
the collective core and its derivatives (``solve``), reductions and gathers
(``reduce``, ``allgather``) and the null-space projections across ranks
(``nullspace``). Named after the engine's ``dist`` layer; ``jaxamg._mpi`` is
the compiled MPI module."""
