// The storage of one CSR array (row offsets, column indices or values).
//
// It behaves as a std::vector (and keeps one inside), with one addition: it
// can borrow an array that its caller owns (`CsrArray::borrow`), so that a
// solver can read the user's matrix in place instead of copying it. A
// borrowed array is read-only: the first non-const access (operator[],
// data(), begin(), resize, ...) first copies the values into owned storage,
// so code that modifies a matrix never writes into the caller's memory.
// Code that only reads a borrowed matrix must therefore reach it through a
// const reference (the solvers hold `shared_ptr<const CsrMatrix>`), or it
// pays for that copy.
//
// A copy (construction or assignment) always owns its values; a move keeps
// the borrowed view.
#pragma once
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace jaxamg {

template <class T>
class CsrArray {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;

  CsrArray() = default;
  explicit CsrArray(size_type n) : own_(n) { sync(); }
  CsrArray(size_type n, const T& value) : own_(n, value) { sync(); }
  CsrArray(std::initializer_list<T> values) : own_(values) { sync(); }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  CsrArray(It first, It last) : own_(first, last) {
    sync();
  }
  // Implicit, so that a std::vector built elsewhere can be moved in.
  CsrArray(std::vector<T> values) : own_(std::move(values)) { sync(); }  // NOLINT

  CsrArray(const CsrArray& o) : own_(o.begin(), o.end()) { sync(); }
  CsrArray(CsrArray&& o) noexcept { take(o); }
  CsrArray& operator=(const CsrArray& o) {
    if (this != &o) {
      std::vector<T> copy(o.begin(), o.end());
      own_.swap(copy);
      drop_view();
      sync();
    }
    return *this;
  }
  CsrArray& operator=(CsrArray&& o) noexcept {
    if (this != &o) {
      std::vector<T>().swap(own_);
      drop_view();
      take(o);
    }
    return *this;
  }
  CsrArray& operator=(std::vector<T> values) {
    own_ = std::move(values);
    drop_view();
    sync();
    return *this;
  }

  // A view of `n` values at `data`, owned by the caller. `keep_alive` (may be
  // null) is held for as long as the view is used, e.g. the object that owns
  // the memory; otherwise the caller keeps the memory alive and unchanged.
  static CsrArray borrow(const T* data, size_type n, std::shared_ptr<const void> keep_alive) {
    CsrArray a;
    if (n == 0) return a;
    a.view_ = data;
    a.ptr_ = const_cast<T*>(data);  // written only after own() has replaced it
    a.n_ = n;
    a.keep_alive_ = std::move(keep_alive);
    return a;
  }
  bool borrowed() const { return view_ != nullptr; }
  // Copies a borrowed view into owned storage (no-op if owned).
  void own() {
    if (!view_) return;
    std::vector<T> copy(view_, view_ + n_);
    own_.swap(copy);
    drop_view();
    sync();
  }

  // Read access: no copy.
  size_type size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const T* data() const { return ptr_; }
  const T& operator[](size_type i) const { return ptr_[i]; }
  const_iterator begin() const { return ptr_; }
  const_iterator end() const { return ptr_ + n_; }
  const_iterator cbegin() const { return ptr_; }
  const_iterator cend() const { return ptr_ + n_; }
  const T& front() const { return ptr_[0]; }
  const T& back() const { return ptr_[n_ - 1]; }

  // Write access: owns first.
  T* data() {
    own();
    return ptr_;
  }
  T& operator[](size_type i) {
    if (view_) own();
    return ptr_[i];
  }
  iterator begin() { return data(); }
  iterator end() { return data() + n_; }
  T& front() { return data()[0]; }
  T& back() { return data()[n_ - 1]; }

  // The std::vector operations the engine uses, on owned storage.
  size_type capacity() const { return view_ ? n_ : own_.capacity(); }
  void reserve(size_type n) { mutate([&] { own_.reserve(n); }); }
  void resize(size_type n) { mutate([&] { own_.resize(n); }); }
  void resize(size_type n, const T& value) { mutate([&] { own_.resize(n, value); }); }
  void assign(size_type n, const T& value) {
    drop_view();
    own_.assign(n, value);
    sync();
  }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  void assign(It first, It last) {
    std::vector<T> values(first, last);  // `first` may point into this array
    own_.swap(values);
    drop_view();
    sync();
  }
  void clear() {
    drop_view();
    own_.clear();
    sync();
  }
  void push_back(const T& value) { mutate([&] { own_.push_back(value); }); }
  template <class... A>
  T& emplace_back(A&&... args) {
    own();
    T& r = own_.emplace_back(std::forward<A>(args)...);
    sync();
    return r;
  }
  template <class It>
  iterator insert(const_iterator pos, It first, It last) {
    const difference_type at = pos - ptr_;
    own();
    auto it = own_.insert(own_.begin() + at, first, last);
    sync();
    return ptr_ + (it - own_.begin());
  }
  void shrink_to_fit() { mutate([&] { own_.shrink_to_fit(); }); }
  void swap(CsrArray& o) noexcept {
    CsrArray t(std::move(o));
    o = std::move(*this);
    *this = std::move(t);
  }
  void swap(std::vector<T>& v) {
    own();
    own_.swap(v);
    sync();
  }

  // A copy as a std::vector, for code that keeps a snapshot of a pattern (as
  // tests do; the engine passes data() and size()). Named rather than an
  // implicit conversion, so that copying a borrowed array is never silent.
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  friend bool operator==(const CsrArray& a, const CsrArray& b) {
    return a.n_ == b.n_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const CsrArray& a, const CsrArray& b) { return !(a == b); }

 private:
  template <class F>
  void mutate(F&& f) {
    own();
    f();
    sync();
  }
  void sync() {
    ptr_ = own_.data();
    n_ = own_.size();
  }
  void drop_view() {
    view_ = nullptr;
    keep_alive_.reset();
  }
  void take(CsrArray& o) noexcept {
    own_ = std::move(o.own_);
    view_ = o.view_;
    keep_alive_ = std::move(o.keep_alive_);
    ptr_ = view_ ? const_cast<T*>(view_) : own_.data();
    n_ = o.n_;
    o.own_.clear();
    o.view_ = nullptr;
    o.keep_alive_.reset();
    o.sync();
  }

  std::vector<T> own_;
  const T* view_ = nullptr;  // the borrowed values, or null when owned
  std::shared_ptr<const void> keep_alive_;
  T* ptr_ = nullptr;  // view_ or own_.data()
  size_type n_ = 0;
};

}  // namespace jaxamg
