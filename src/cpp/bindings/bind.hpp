// What the binding files share (bindings.cpp, bind_control.cpp): the caster of an array
// argument (Given, check.hpp) and fields whose setter checks the array it is given.
// Every array that crosses from Python into C++ goes through one of them, then through a
// Check at the binding: a wrong shape, a NaN or a list of strings is a ValueError naming
// the entry point and the argument, never undefined behaviour in the core.
#pragma once

#include <memory>
#include <string>
#include <type_traits>

#include <nanobind/nanobind.h>
#include <nanobind/eigen/dense.h>
#include <nanobind/ndarray.h>

#include "model/check.hpp"

namespace nanobind::detail
{
  /// pfaff::Given<VecX | MatX>: a float64 array of any shape and strides as it is, other
  /// arrays, lists and numbers through numpy.asarray(x, float64); the values copied when
  /// the number of dimensions fits, the shape kept for the Check. It accepts any object
  /// (Check refuses what is no array of numbers), so nanobind's overload error, which
  /// names no argument, is never what a user sees.
  template <class T>
  struct type_caster<pfaff::Given<T>>
  {
    static constexpr int N = T::ColsAtCompileTime == 1 ? 1 : 2;
    NB_TYPE_CASTER(
      pfaff::Given<T>, const_name<N == 1>(
                         "numpy.ndarray[dtype=float64, shape=(*)]",
                         "numpy.ndarray[dtype=float64, shape=(*, *)]"))

    using Array = ndarray<const double, device::cpu>;

    bool from_python(handle src, uint32_t flags, cleanup_list * cleanup) noexcept
    {
      value = pfaff::Given<T>();
      if (src.is_none())
      {
        value.not_array = "None";
        return true;
      }
      const uint32_t exact = flags & ~uint32_t(cast_flags::convert);
      make_caster<Array> arr;
      if (arr.from_python(src, exact, cleanup))
      {
        take(arr.value);
        return true;
      }
      try // lists, integers, float32: NumPy's own conversion to float64
      {
        object np = module_::import_("numpy");
        object a = np.attr("asarray")(src, np.attr("float64"));
        if (arr.from_python(a, exact, cleanup))
        {
          take(arr.value);
          return true;
        }
      }
      catch (const std::exception &) // python_error: the error is dropped with it
      {
      }
      value.not_array = std::string("a ") + Py_TYPE(src.ptr())->tp_name;
      return true;
    }

  private:
    void take(const Array & a)
    {
      value.ndim = a.ndim();
      if (a.ndim() != std::size_t(N)) // the shape only for the message: no allocation per call
      {
        for (std::size_t i = 0; i < a.ndim(); ++i)
          value.shape.push_back(Eigen::Index(a.shape(i)));
        return;
      }
      const double * p = a.data();
      const Eigen::Index r = Eigen::Index(a.shape(0));
      if constexpr (N == 1)
      {
        value.x.resize(r);
        for (Eigen::Index i = 0; i < r; ++i)
          value.x(i) = p[i * a.stride(0)];
      }
      else
      {
        const Eigen::Index c = Eigen::Index(a.shape(1));
        value.x.resize(r, c);
        for (Eigen::Index j = 0; j < c; ++j)
          for (Eigen::Index i = 0; i < r; ++i)
            value.x(i, j) = p[i * a.stride(0) + j * a.stride(1)];
      }
    }
  };

  /// None reaches the caster too (as it does for std::optional), so it is named
  template <class T>
  struct has_arg_defaults<pfaff::Given<T>> : std::true_type
  {
  };
} // namespace nanobind::detail

namespace pfaff
{
  using GVec = Given<Eigen::VectorXd>;
  using GMat = Given<Eigen::MatrixXd>;

  /// A Python callable the core keeps (a law or rows written in Python, shared by a
  /// System's clones): released with the GIL held, as a System may be freed off
  /// Python's thread; left alone once the interpreter is finalizing.
  inline std::shared_ptr<nanobind::object> held_callable(nanobind::callable fn)
  {
    return std::shared_ptr<nanobind::object>(
      new nanobind::object(std::move(fn)), [](nanobind::object * o) {
        if (Py_IsInitialized())
        {
          nanobind::gil_scoped_acquire gil;
          delete o;
        }
        else // the interpreter is gone: its reference is left, the holder freed
        {
          o->release();
          delete o;
        }
      });
  }

  /// A field of a bound struct read as def_rw reads it, set through a Check of the array:
  /// a fixed-size Eigen field needs its exact shape, a dynamic one the right number of
  /// dimensions; both finite. ``where`` names the struct, ``meaning`` the shape.
  template <class Cls, class C, class E>
  void field(Cls & cls, const char * where, const char * name, E C::*m, const char * meaning)
  {
    constexpr bool is_vec = E::ColsAtCompileTime == 1;
    using G = std::conditional_t<is_vec, GVec, GMat>;
    cls.def_prop_rw(
      name, [m](const C & c) -> const E & { return c.*m; },
      [m, where, name, meaning](C & c, const G & x) {
        const Check ck{where};
        if constexpr (is_vec)
          ck.vec(x, E::RowsAtCompileTime, name, meaning);
        else
          ck.mat(x, E::RowsAtCompileTime, E::ColsAtCompileTime, name, meaning);
        c.*m = x.x;
      });
  }
} // namespace pfaff
