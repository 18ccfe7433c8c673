"""The single-process path of :func:`jaxamg.solve` (``solve``): checks, the
null-space projections of a singular system around the differentiable core,
and ``info``."""
