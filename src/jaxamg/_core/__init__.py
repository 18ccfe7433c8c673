"""What every path of a solve shares, importing nothing of jaxamg above it:
matrix normalisation (``matrix``, ``structure``), input checks (``checks``),
``info`` and statistics (``info``, ``stats``), errors and status (``errors``,
``status``), the compiled modules and FFI calls (``native``, ``ffi``), the
configuration's defaults and rules (``default_config``, ``config_rules``),
process settings (``threads``, ``xla_setup``), the differentiable core
(``linear_solve``), the vectors smoothed aggregation keeps
(``aggregation_modes``), host products without a threaded BLAS
(``host_math``), collective ordering (``operand_order``) and the
Matrix Market reader of the command line (``mtx``)."""
