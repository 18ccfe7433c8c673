#include "device/outer_krylov.h"

#include "backend/cuda/vector_backend.cuh"
#include "solvers/krylov/bicgstab_method.h"
#include "solvers/krylov/cg_method.h"
#include "solvers/krylov/gmres_method.h"
#include "solvers/krylov/idr_method.h"

namespace jaxamg::device {

bool krylov_kind_of(const std::string& name, KrylovKind* kind) {
  static const struct {
    const char* name;
    KrylovKind kind;
  } table[] = {{"CG", KrylovKind::kCg},
               {"PCG", KrylovKind::kPcg},
               {"PCGF", KrylovKind::kPcgf},
               {"BICGSTAB", KrylovKind::kBicgstab},
               {"PBICGSTAB", KrylovKind::kPbicgstab},
               {"GMRES", KrylovKind::kGmres},
               {"FGMRES", KrylovKind::kFgmres},
               {"IDR", KrylovKind::kIdr},
               {"IDRMSYNC", KrylovKind::kIdrmsync}};
  for (const auto& e : table) {
    if (name == e.name) {
      *kind = e.kind;
      return true;
    }
  }
  return false;
}

namespace {

// *out = 1 if the method's `stop` slot (or its `converged` slot, when it has
// one) is set, else 0.
struct ExportStop {
  int stop, converged;
  double* out;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    *out = s[stop] != 0.0 || (converged >= 0 && s[converged] != 0.0) ? 1.0 : 0.0;
  }
};

bool is_gmres(KrylovKind k) { return k == KrylovKind::kGmres || k == KrylovKind::kFgmres; }
bool is_bicgstab(KrylovKind k) {
  return k == KrylovKind::kBicgstab || k == KrylovKind::kPbicgstab;
}

bool is_idr(KrylovKind k) { return k == KrylovKind::kIdr || k == KrylovKind::kIdrmsync; }

// The shadow space's rows start at this process's first global row.
IdrShape idr_shape(const KrylovShape& k) {
  IdrShape sh;
  sh.s = k.subspace < 1 ? 1 : k.subspace;
  sh.synchronised = k.kind == KrylovKind::kIdrmsync;
  sh.preconditioned = k.preconditioned;
  sh.first_row = k.first_row;
  return sh;
}

GmresShape gmres_shape(const KrylovShape& k) {
  GmresShape sh;
  sh.cycle = k.restart < 1 ? 1 : k.restart;
  sh.window = k.window > 0 && k.window < sh.cycle ? k.window : sh.cycle;
  sh.flexible = k.kind == KrylovKind::kFgmres;
  sh.preconditioned = k.preconditioned;
  return sh;
}

int slot_count(const KrylovShape& k) {
  if (is_gmres(k.kind)) {
    return GmresMethod<cuda::VectorBackend<double>>::layout(gmres_shape(k)).count();
  }
  if (is_idr(k.kind)) return IdrMethod<cuda::VectorBackend<double>>::layout(idr_shape(k)).count();
  return is_bicgstab(k.kind) ? static_cast<int>(BicgstabSlots::kCount)
                             : static_cast<int>(CgSlots::kCount);
}

}  // namespace

template <class T>
struct OuterKrylov<T>::Impl {
  using Backend = cuda::VectorBackend<T>;

  // The caller's operator as the methods call it.
  struct Op {
    DeviceOperator<T>* op;
    void matvec(const T* x, T* y) const { op->matvec(x, y); }
    void precondition(const T* r, T* z) const { op->precondition(r, z); }
    void residual(const T* x, T* r) const { op->residual(x, r); }
  };

  Impl(const KrylovShape& s, std::size_t n, cudaStream_t stream, std::size_t capacity,
       const Reducer* reducer)
      : shape(s), be(n, slot_count(s), stream) {
    if (reducer || capacity > n) be.distribute(capacity, reducer);
    if (is_gmres(s.kind)) {
      gmres = std::make_unique<GmresMethod<Backend>>(be, gmres_shape(s), s.track_residual);
    } else if (is_idr(s.kind)) {
      idr = std::make_unique<IdrMethod<Backend>>(be, idr_shape(s));
    } else if (is_bicgstab(s.kind)) {
      bicgstab = std::make_unique<BicgstabMethod<Backend>>(be, s.preconditioned);
    } else {
      cg = std::make_unique<CgMethod<Backend>>(be, s.preconditioned, s.kind == KrylovKind::kPcgf);
    }
  }

  KrylovShape shape;
  Backend be;
  std::unique_ptr<CgMethod<Backend>> cg;
  std::unique_ptr<BicgstabMethod<Backend>> bicgstab;
  std::unique_ptr<GmresMethod<Backend>> gmres;
  std::unique_ptr<IdrMethod<Backend>> idr;
};

template <class T>
OuterKrylov<T>::OuterKrylov(const KrylovShape& shape, std::size_t n, cudaStream_t stream,
                            std::size_t capacity, const Reducer* reducer)
    : impl_(std::make_unique<Impl>(shape, n, stream, capacity, reducer)) {}

template <class T>
OuterKrylov<T>::~OuterKrylov() = default;

template <class T>
void OuterKrylov<T>::set_stream(cudaStream_t stream) {
  impl_->be.set_stream(stream);
}

template <class T>
void OuterKrylov<T>::init(const T* r) {
  Impl& m = *impl_;
  if (m.cg) {
    m.be.set_slot(CgSlots::kInit, 1.0);
    m.cg->init(r);
  } else if (m.bicgstab) {
    m.be.set_slot(BicgstabSlots::kInit, 1.0);
    m.bicgstab->init(r);
  } else if (m.idr) {
    m.be.set_slot(IdrSlots::kInit, 1.0);
    m.idr->init(r);
  } else {
    m.be.set_slot(GmresSlots::kInit, 1.0);
    m.gmres->init(r);
  }
}

template <class T>
void OuterKrylov<T>::iteration(DeviceOperator<T>& op, T* x, T* r, double* stopped) {
  Impl& m = *impl_;
  typename Impl::Op o{&op};
  if (m.cg) {
    m.cg->iteration(o, x, r);
    m.be.update(ExportStop{CgSlots::kStop, -1, stopped});
  } else if (m.bicgstab) {
    m.bicgstab->iteration(o, x, r);
    m.be.update(ExportStop{BicgstabSlots::kStop, -1, stopped});
  } else if (m.idr) {
    m.idr->iteration(o, x, r);
    m.be.update(ExportStop{IdrSlots::kStop, -1, stopped});
  } else {
    m.gmres->iteration(o, x, r);
    m.be.update(ExportStop{GmresSlots::kStop, GmresSlots::kConverged, stopped});
  }
}

template <class T>
void OuterKrylov<T>::finalize(DeviceOperator<T>& op, T* x) {
  Impl& m = *impl_;
  typename Impl::Op o{&op};
  if (m.gmres) m.gmres->finalize(o, x, backend::kAllLanes);
}

template <class T>
bool OuterKrylov<T>::capturable() const {
  return !impl_->gmres && !impl_->idr;
}

template <class T>
IterationResult OuterKrylov<T>::outcome() const {
  const Impl& m = *impl_;
  const std::vector<double> s = m.be.read_slots();
  if (m.cg) return CgMethod<typename Impl::Backend>::outcome(s.data());
  if (m.bicgstab) return BicgstabMethod<typename Impl::Backend>::outcome(s.data());
  if (m.idr) return IdrMethod<typename Impl::Backend>::outcome(s.data());
  return GmresMethod<typename Impl::Backend>::outcome(s.data());
}

template <class T>
std::vector<double> OuterKrylov<T>::slots() const {
  return impl_->be.read_slots();
}

template <class T>
void OuterKrylov<T>::reset_traffic() {
  impl_->be.reset_traffic();
}

template <class T>
double OuterKrylov<T>::traffic() const {
  return impl_->be.read_traffic();
}

template class OuterKrylov<float>;
template class OuterKrylov<double>;

}  // namespace jaxamg::device
