#pragma once
/// @file
/// spmv::Array<T>, the array type of the hub formats (Coo, Csr): a std::vector<T> in everything a
/// user sees (resize() and Array(n) value-initialise, copies, comparisons, conversion to and from
/// std::vector<T>), plus resize_for_overwrite(n), which grows without writing the new elements.
/// The readers use it for arrays they fill at once: std::vector's resize zero-fills on one thread
/// before the threads overwrite the same memory (bench/results/README.md has what it cost).
#include <algorithm>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace spmv {

namespace detail {

/// std::allocator that default-initialises where std::vector would value-initialise; Array puts
/// the zeros back everywhere except resize_for_overwrite.
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() noexcept = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}  // NOLINT: allocators convert
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

}  // namespace detail

template <class T>
class Array : public std::vector<T, detail::DefaultInitAllocator<T>> {
  using Base = std::vector<T, detail::DefaultInitAllocator<T>>;

 public:
  using Base::Base;
  using typename Base::size_type;
  using Base::operator=;
  Array() = default;
  explicit Array(size_type n) : Base(n, T()) {}
  Array(size_type n, const typename Base::allocator_type& a) : Base(n, T(), a) {}
  explicit Array(const std::vector<T>& v) : Base(v.begin(), v.end()) {}
  explicit operator std::vector<T>() const { return std::vector<T>(this->begin(), this->end()); }

  /// As std::vector: new elements are value-initialised (zero for numbers).
  void resize(size_type n) {
    const size_type old = this->size();
    Base::resize(n);
    if (n > old) std::fill(this->begin() + static_cast<std::ptrdiff_t>(old), this->end(), T());
  }
  void resize(size_type n, const T& value) { Base::resize(n, value); }
  /// Grows to n elements leaving the new ones unwritten (trivial types: indeterminate until the
  /// caller writes them); shrinking is as resize.
  void resize_for_overwrite(size_type n) { Base::resize(n); }
  /// As std::vector: the new element is value-initialised.
  T& emplace_back() { return Base::emplace_back(T()); }
  typename Base::iterator emplace(typename Base::const_iterator pos) { return Base::emplace(pos, T()); }
  using Base::emplace;
  using Base::emplace_back;

  friend bool operator==(const Array& a, const std::vector<T>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
};

}  // namespace spmv
