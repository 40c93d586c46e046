// Checks of the arrays that cross from Python into C++ (design.md Sec. 1: a wrong size
// is a ValueError, never undefined behaviour). Called at the binding, once per call,
// never in the step loop. std::invalid_argument is raised as ValueError by nanobind.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace pfaff
{
  /// An array argument as Python gave it (the caster in bindings.cpp fills it): x holds
  /// its values when it has T's number of dimensions (1: a vector, 2: a matrix), shape
  /// the shape it came with, and not_array what it was when it is no array of numbers.
  /// Check::vec and Check::mat read shape first, so a 2-D q or a list of strings is a
  /// ValueError naming the argument, not nanobind's "incompatible function arguments".
  template <class T>
  struct Given
  {
    T x;
    std::size_t ndim = 0;              // its number of dimensions
    std::vector<Eigen::Index> shape;   // its shape, kept when ndim is not T's
    std::string not_array; // empty: an array of numbers
    operator const T &() const { return x; }
  };

  /// The shape checks of one bound entry point: ``where`` names it in the messages.
  struct Check
  {
    const char * where;

    [[noreturn]] void fail(const std::string & what) const
    {
      throw std::invalid_argument(std::string(where) + ": " + what);
    }

    static std::string shape(Eigen::Index r) { return "(" + std::to_string(r) + ",)"; }
    static std::string shape(Eigen::Index r, Eigen::Index c)
    {
      return "(" + std::to_string(r) + ", " + std::to_string(c) + ")";
    }
    static std::string shape(const std::vector<Eigen::Index> & s)
    {
      std::string out = "(";
      for (std::size_t i = 0; i < s.size(); ++i)
        out += std::to_string(s[i]) + (s.size() == 1 ? "," : i + 1 < s.size() ? ", " : "");
      return out + ")";
    }
    static std::string dim(Eigen::Index n) { return n >= 0 ? std::to_string(n) : "any"; }

    /// x of size n (and finite): ``meaning`` says what n is, e.g. "nv".
    template <class V>
    const Check & vec(const V & x, Eigen::Index n, const char * name, const char * meaning) const
    {
      if (x.size() != n)
        fail(std::string(name) + " has shape " + shape(x.size()) + ", expected " + shape(n)
             + " (" + meaning + ")");
      return finite(x, name);
    }

    /// a vector argument: 1-D first, then as vec above (n < 0: any size)
    template <class V>
    const Check & vec(
      const Given<V> & x, Eigen::Index n, const char * name, const char * meaning) const
    {
      given(x, 1, n, -1, name, meaning);
      return n >= 0 ? vec(x.x, n, name, meaning) : finite(x.x, name);
    }

    /// X of shape rows x cols (-1: any) and finite.
    template <class Mat>
    const Check & mat(
      const Mat & X, Eigen::Index rows, Eigen::Index cols, const char * name,
      const char * meaning) const
    {
      if ((rows >= 0 && X.rows() != rows) || (cols >= 0 && X.cols() != cols))
        fail(std::string(name) + " has shape " + shape(X.rows(), X.cols()) + ", expected ("
             + dim(rows) + ", " + dim(cols) + ") (" + meaning + ")");
      return finite(X, name);
    }

    /// a matrix argument: 2-D first, then as mat above
    template <class Mat>
    const Check & mat(
      const Given<Mat> & X, Eigen::Index rows, Eigen::Index cols, const char * name,
      const char * meaning) const
    {
      given(X, 2, rows, cols, name, meaning);
      return mat(X.x, rows, cols, name, meaning);
    }

    /// every entry finite
    template <class Mat>
    const Check & finite(const Mat & X, const char * name) const
    {
      for (Eigen::Index j = 0; j < X.cols(); ++j)
        for (Eigen::Index i = 0; i < X.rows(); ++i)
          if (!std::isfinite(X(i, j)))
            fail(std::string(name) + " has a non-finite entry " + std::to_string(X(i, j))
                 + " at " + (X.cols() == 1 ? shape(i) : shape(i, j)));
      return *this;
    }

    /// a finite number (and > lo when strict, >= lo otherwise)
    const Check & number(double x, const char * name, double lo, bool strict) const
    {
      if (!std::isfinite(x) || (strict ? !(x > lo) : !(x >= lo)))
        fail(std::string(name) + " = " + std::to_string(x) + ": expected a finite number "
             + (strict ? "> " : ">= ") + std::to_string(lo));
      return *this;
    }

    /// an index in [lo, n)
    const Check & index(long i, long n, const char * name, const char * meaning, long lo = 0) const
    {
      if (i < lo || i >= n)
        fail(std::string(name) + " = " + std::to_string(i) + " is out of range: expected "
             + std::to_string(lo) + " .. " + std::to_string(n - 1) + " (" + meaning + ")");
      return *this;
    }

  private:
    // the expected shape (rows,) or (rows, cols) of a ndim-dimensional argument, -1: any
    static std::string expected(std::size_t ndim, Eigen::Index rows, Eigen::Index cols)
    {
      return ndim == 1 ? "(" + dim(rows) + ",)" : "(" + dim(rows) + ", " + dim(cols) + ")";
    }

    // the messages' strings are built only on failure (once per call of every entry point)
    template <class T>
    void given(
      const Given<T> & x, std::size_t ndim, Eigen::Index rows, Eigen::Index cols,
      const char * name, const char * meaning) const
    {
      if (!x.not_array.empty())
        fail(std::string(name) + " is " + x.not_array + ", expected an array of numbers of shape "
             + expected(ndim, rows, cols) + " (" + meaning + ")");
      if (x.ndim != ndim)
        fail(std::string(name) + " has shape " + shape(x.shape) + ", expected "
             + expected(ndim, rows, cols) + " (" + meaning + ")");
    }
  };
} // namespace pfaff
