// jaxamg._engine: the engine's LinearSolver for Python, without JAX.
//
// Used by the command-line interface and by tests; the JAX layer reaches the
// engine through the XLA FFI instead. One class dispatches on the value type
// chosen at construction, so Python code never picks a C++ template by name.
// Arrays must arrive with the solver's dtype (indices int32) and contiguous:
// the Python callers cast, and a mismatch is reported naming the argument
// rather than being converted silently here.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/linear_solver.h"
#include "config/config.h"
#include "core/engine_instance.h"
#include "core/error.h"
#include "owned_array.h"
#include "solvers/factory.h"

namespace nb = nanobind;
using jaxamg::Index;
using jaxamg::LinearSolver;

namespace {

// Read-only views: the engine copies what it keeps (unless setup is told
// copy=False), and NumPy arrays that are not writeable (views of JAX
// buffers, numpy.frombuffer) must be accepted too.
using Array = nb::ndarray<nb::ro, nb::ndim<1>, nb::device::cpu>;
// An (n, m) row-major array (near-null-space vectors, one column per vector).
using Matrix = nb::ndarray<nb::ro, nb::ndim<2>, nb::device::cpu, nb::c_contig>;

// Python's jaxamg.ConfigError (a ValueError subclass), looked up once at
// import; kept alive for the life of the process.
PyObject* g_config_error = nullptr;

std::string dtype_name(const nb::dlpack::dtype& t) {
  const char* kind = "?";
  switch (static_cast<nb::dlpack::dtype_code>(t.code)) {
    case nb::dlpack::dtype_code::Int: kind = "int"; break;
    case nb::dlpack::dtype_code::UInt: kind = "uint"; break;
    case nb::dlpack::dtype_code::Float: kind = "float"; break;
    case nb::dlpack::dtype_code::Bool: return "bool";
    case nb::dlpack::dtype_code::Complex: kind = "complex"; break;
    default: break;
  }
  return std::string(kind) + std::to_string(t.bits);
}

// Checks dtype and layout of one argument; returns its data pointer.
template <class T>
const T* data_of(const Array& a, const char* method, const char* arg, const char* want) {
  if (a.dtype() != nb::dtype<T>()) {
    const std::string msg = std::string("EngineSolver.") + method + ": `" + arg +
                            "` has dtype " + dtype_name(a.dtype()) + " but must be " + want +
                            "; cast it first, e.g. numpy.asarray(" + arg + ", dtype=numpy." +
                            want + ")";
    throw nb::type_error(msg.c_str());
  }
  if (a.size() > 1 && a.stride(0) != 1) {
    throw nb::value_error((std::string("EngineSolver.") + method + ": `" + arg +
                           "` is not contiguous (stride " + std::to_string(a.stride(0)) +
                           "); pass numpy.ascontiguousarray(" + arg + ")")
                              .c_str());
  }
  return static_cast<const T*>(a.data());
}

Index checked_index(std::size_t n, const char* method, const char* arg) {
  if (n > static_cast<std::size_t>(std::numeric_limits<Index>::max())) {
    throw nb::value_error((std::string("EngineSolver.") + method + ": `" + arg + "` has " +
                           std::to_string(n) + " entries, more than the engine's 32-bit " +
                           "indices allow (2147483647); split the problem across processes")
                              .c_str());
  }
  return static_cast<Index>(n);
}

// References to the arrays a borrowed matrix reads. They may be released
// from a thread without the GIL (a later setup drops the previous matrix
// with the GIL released), so the deleter takes it.
struct HeldArrays {
  Array indptr, indices, data;
};
std::shared_ptr<const void> hold(const Array& indptr, const Array& indices, const Array& data) {
  return std::shared_ptr<const HeldArrays>(new HeldArrays{indptr, indices, data},
                                           [](const HeldArrays* p) {
                                             nb::gil_scoped_acquire gil;
                                             delete p;
                                           });
}

class EngineSolver {
  // Helpers first: their deduced return types must be known where used.
  template <class T>
  struct Ref {
    using value_type = T;
    LinearSolver<T>& solver;
  };

  // Calls f with the solver of the chosen precision.
  template <class F>
  auto dispatch(F&& f) {
    if (d_) {
      Ref<double> ref{*d_};
      return f(ref);
    }
    Ref<float> ref{*f_};
    return f(ref);
  }

  // For the small accessors: wait for a running setup or solve without
  // holding the GIL, so that the thread running it can finish.
  template <class F>
  auto locked(F&& f) {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    return dispatch(f);
  }

 public:
  EngineSolver(const std::string& config, const std::string& dtype) : dtype_(dtype) {
    if (dtype == "float64") {
      d_ = std::make_unique<LinearSolver<double>>(config);
    } else if (dtype == "float32") {
      f_ = std::make_unique<LinearSolver<float>>(config);
    } else {
      throw nb::value_error(("EngineSolver: dtype must be 'float32' or 'float64', got '" + dtype +
                             "'; pass one of those two names")
                                .c_str());
    }
  }

  void setup(const Array& indptr, const Array& indices, const Array& data, Index block_dim,
             const std::optional<Matrix>& near_nullspace, bool copy) {
    const Index* rp = data_of<Index>(indptr, "setup", "indptr", "int32");
    const Index* ci = data_of<Index>(indices, "setup", "indices", "int32");
    if (indptr.size() < 2) {
      throw nb::value_error(("EngineSolver.setup: `indptr` has " + std::to_string(indptr.size()) +
                             " entries; a matrix with n >= 1 rows needs n + 1 row offsets")
                                .c_str());
    }
    if (indices.size() != data.size()) {
      throw nb::value_error(("EngineSolver.setup: `indices` has " + std::to_string(indices.size()) +
                             " entries but `data` has " + std::to_string(data.size()) +
                             "; pass one column index per stored value")
                                .c_str());
    }
    const Index n = checked_index(indptr.size() - 1, "setup", "indptr");
    const Index nnz = checked_index(data.size(), "setup", "data");
    dispatch([&](auto& s) {
      using T = typename std::decay_t<decltype(s)>::value_type;
      const T* v = data_of<T>(data, "setup", "data", dtype_.c_str());
      const T* B = nullptr;
      Index m = 0;
      if (near_nullspace) {
        if (near_nullspace->dtype() != nb::dtype<T>() ||
            near_nullspace->shape(0) != static_cast<std::size_t>(n)) {
          throw nb::value_error(("EngineSolver.setup: `near_nullspace` must be an (" +
                                 std::to_string(n) + ", m) array of " + dtype_ + ", got " +
                                 std::to_string(near_nullspace->shape(0)) + " rows of " +
                                 dtype_name(near_nullspace->dtype()) +
                                 "; pass one row per unknown in the solver's dtype")
                                    .c_str());
        }
        B = static_cast<const T*>(near_nullspace->data());
        m = checked_index(near_nullspace->shape(1), "setup", "near_nullspace");
      }
      if (copy) {
        nb::gil_scoped_release release;
        std::lock_guard<std::mutex> lock(mutex_);
        s.solver.setup(n, rp, ci, v, nnz, block_dim, B, m);
        return;
      }
      // The engine reads the arrays in place and holds them (through
      // nanobind's references) until it no longer does.
      std::shared_ptr<const void> keep = hold(indptr, indices, data);
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      s.solver.setup_borrowed(n, rp, ci, v, nnz, std::move(keep), block_dim, B, m);
    });
  }

  // True if the last setup reads the caller's arrays in place (copy=False
  // on an already canonical matrix).
  bool borrows_matrix() {
    return locked([](auto& s) { return s.solver.matrix_borrowed(); });
  }

  void resetup(const Array& data) { new_values(data, "resetup", false); }
  void replace_values(const Array& data) { new_values(data, "replace_values", true); }

  nb::tuple solve(const Array& b, std::optional<Array> x0, bool transpose) {
    return dispatch([&](auto& s) -> nb::tuple {
      using T = typename std::decay_t<decltype(s)>::value_type;
      const T* bp = data_of<T>(b, "solve", "b", dtype_.c_str());
      const Index n = checked_index(b.size(), "solve", "b");
      std::vector<T> x(b.size(), T(0));
      if (x0) {
        const T* xp = data_of<T>(*x0, "solve", "x0", dtype_.c_str());
        if (x0->size() != b.size()) {
          throw nb::value_error(("EngineSolver.solve: `x0` has " + std::to_string(x0->size()) +
                                 " entries but `b` has " + std::to_string(b.size()) +
                                 "; pass one initial value per row")
                                    .c_str());
        }
        if (!x.empty()) std::memcpy(x.data(), xp, x.size() * sizeof(T));
      }
      jaxamg::SolveResult r;
      {
        nb::gil_scoped_release release;
        std::lock_guard<std::mutex> lock(mutex_);
        r = s.solver.solve(bp, x.data(), n, x0.has_value(), transpose);
      }
      nb::dict info;
      info["iterations"] = r.iterations;
      // The engine reports -1 when the top solver does not monitor residuals.
      info["residual"] = r.residual < 0 ? nb::none() : nb::cast(r.residual);
      info["status"] = static_cast<int>(r.status);
      info["status_name"] = jaxamg::status_name(r.status);
      info["residual_history"] = nb::cast(r.history);
      info["setup_seconds"] = r.setup_seconds;
      info["solve_seconds"] = r.solve_seconds;
      return nb::make_tuple(jaxamg::bindings::owned_array<T>(std::move(x)), info);
    });
  }

  std::string take_log() {
    return locked([](auto& s) { return s.solver.take_log(); });
  }

  std::vector<std::pair<Index, Index>> hierarchy() {
    return locked([](auto& s) {
      std::vector<std::pair<Index, Index>> levels;
      for (const auto& l : s.solver.hierarchy()) levels.emplace_back(l.rows, l.nnz);
      return levels;
    });
  }

  std::vector<Index> prolongation_nnz() {
    return locked([](auto& s) {
      std::vector<Index> out;
      const auto levels = s.solver.hierarchy();
      for (std::size_t l = 0; l + 1 < levels.size(); ++l) out.push_back(levels[l].p_nnz);
      return out;
    });
  }

  Index rows() { return locked([](auto& s) { return s.solver.rows(); }); }
  Index nnz() { return locked([](auto& s) { return s.solver.nnz(); }); }
  const std::string& dtype() const { return dtype_; }

 private:
  void new_values(const Array& data, const char* method, bool keep_hierarchy) {
    dispatch([&](auto& s) {
      using T = typename std::decay_t<decltype(s)>::value_type;
      const T* v = data_of<T>(data, method, "data", dtype_.c_str());
      const Index nnz = checked_index(data.size(), method, "data");
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      if (keep_hierarchy) {
        s.solver.replace_values(v, nnz);
      } else {
        s.solver.resetup(v, nnz);
      }
    });
  }

  std::string dtype_;
  std::unique_ptr<LinearSolver<double>> d_;
  std::unique_ptr<LinearSolver<float>> f_;
  // setup and solve run without the GIL; one call at a time per solver.
  std::mutex mutex_;
};

std::vector<std::string> implemented_solvers() {
  // Both precisions register the same families; the double list is the
  // reference.
  const std::string names = jaxamg::implemented_solver_names<double>();
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < names.size()) {
    std::size_t end = names.find(", ", start);
    if (end == std::string::npos) end = names.size();
    if (end > start) out.push_back(names.substr(start, end - start));
    start = end + 2;
  }
  return out;
}

}  // namespace

NB_MODULE(_engine, m) {
  m.doc() = "The jaxamg C++ engine (CPU) without JAX: configure, set up and solve.";
  m.def("engine_instance", &jaxamg::engine_instance,
        "The address of a variable of the engine library this module uses (one per process).");

  nb::object config_error = nb::module_::import_("jaxamg._errors").attr("ConfigError");
  g_config_error = config_error.release().ptr();

  // The Python side of the one kind table (cpp/engine/core/error.h); an
  // internal failure goes on to nanobind's own translators.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    const jaxamg::Failure failure = jaxamg::classify(p);
    switch (failure.kind) {
      case jaxamg::ErrorKind::kConfig:
        PyErr_SetString(g_config_error, failure.message.c_str());
        return;
      case jaxamg::ErrorKind::kInvalidInput:
        PyErr_SetString(PyExc_ValueError, failure.message.c_str());
        return;
      case jaxamg::ErrorKind::kNotSupported:
        PyErr_SetString(PyExc_NotImplementedError, failure.message.c_str());
        return;
      case jaxamg::ErrorKind::kNumerical:
        PyErr_SetString(PyExc_RuntimeError, failure.message.c_str());
        return;
      case jaxamg::ErrorKind::kInternal: break;
    }
    std::rethrow_exception(p);
  });

  nb::class_<EngineSolver>(m, "EngineSolver",
                           "One configured engine solver for one sparsity pattern.")
      .def(nb::init<const std::string&, const std::string&>(), nb::arg("config"),
           nb::arg("dtype") = "float64",
           "Parses an AmgX JSON (or legacy text) config; dtype is 'float32' or 'float64'.")
      .def("setup", &EngineSolver::setup, nb::arg("indptr"), nb::arg("indices"), nb::arg("data"),
           nb::arg("block_dim") = 1, nb::arg("near_nullspace") = nb::none(),
           nb::arg("copy") = true,
           "Full setup on a square CSR matrix (int32 indptr/indices, values of the dtype);\n"
           "block_dim k > 1 declares k x k blocks (node-interleaved unknowns);\n"
           "near_nullspace: an (n, m) C-contiguous array of the dtype for smoothed\n"
           "aggregation (x_smoothed_aggregation 2).\n"
           "copy=False: if every row's columns are sorted and unique, the solver reads\n"
           "indptr, indices and data in place instead of copying them, and keeps\n"
           "references to them; do not modify them until the next setup (resetup and\n"
           "replace_values never write into them). Otherwise it copies as usual.")
      .def_prop_ro("borrows_matrix", &EngineSolver::borrows_matrix,
                   "True if the last setup reads the caller's arrays in place (copy=False).")
      .def("resetup", &EngineSolver::resetup, nb::arg("data"),
           "New values for the same pattern: keeps coarsening, recomputes the numbers.")
      .def("replace_values", &EngineSolver::replace_values, nb::arg("data"),
           "New values for the same pattern, keeping the whole hierarchy.")
      .def("solve", &EngineSolver::solve, nb::arg("b"), nb::arg("x0") = nb::none(),
           nb::arg("transpose") = false,
           "Solves A x = b (A^T x = b with transpose=True), starting from x0 if given.\n"
           "Returns (x, info); info has iterations, residual (the final monitored norm,\n"
           "None if not monitored), status (int, AmgX's values: 0 SUCCESS, 1 FAILED,\n"
           "2 DIVERGED, 3 NOT_CONVERGED), status_name, residual_history (initial norm,\n"
           "then one per iteration), setup_seconds and solve_seconds.")
      .def("take_log", &EngineSolver::take_log,
           "AmgX-layout statistics printed since the last call (then cleared).")
      .def("hierarchy", &EngineSolver::hierarchy,
           "(rows, nnz) per AMG level, finest first; empty without AMG.")
      .def("prolongation_nnz", &EngineSolver::prolongation_nnz,
           "Entries of each level's prolongation to the next, finest first (one fewer\n"
           "than the levels); empty without AMG.")
      .def_prop_ro("rows", &EngineSolver::rows)
      .def_prop_ro("nnz", &EngineSolver::nnz)
      .def_prop_ro("dtype", &EngineSolver::dtype);

  m.def(
      "canonical_config",
      [](const std::string& text) { return jaxamg::Config::parse(text).canonical(); },
      nb::arg("text"), "The parsed config as sorted 'scope:name=value;' entries.");
  m.def("implemented_solvers", &implemented_solvers,
        "AmgX solver names this build implements, sorted.");
}
