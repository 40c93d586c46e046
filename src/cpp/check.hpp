// Checks of the arrays that cross from Python into C++ (design.md Sec. 1: a wrong size
// is a ValueError, never undefined behaviour). Called at the binding, once per call,
// never in the step loop. std::invalid_argument is raised as ValueError by nanobind.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>

#include <Eigen/Core>

namespace pfaff
{
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

    /// x of size n (and finite): ``meaning`` says what n is, e.g. "nv".
    template <class V>
    const Check & vec(const V & x, Eigen::Index n, const char * name, const char * meaning) const
    {
      if (x.size() != n)
        fail(std::string(name) + " has shape " + shape(x.size()) + ", expected " + shape(n)
             + " (" + meaning + ")");
      return finite(x, name);
    }

    /// X of shape rows x cols (-1: any) and finite.
    template <class Mat>
    const Check & mat(
      const Mat & X, Eigen::Index rows, Eigen::Index cols, const char * name,
      const char * meaning) const
    {
      if ((rows >= 0 && X.rows() != rows) || (cols >= 0 && X.cols() != cols))
      {
        const std::string r = rows >= 0 ? std::to_string(rows) : std::string("any");
        const std::string c = cols >= 0 ? std::to_string(cols) : std::string("any");
        fail(std::string(name) + " has shape " + shape(X.rows(), X.cols()) + ", expected ("
             + r + ", " + c + ") (" + meaning + ")");
      }
      return finite(X, name);
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
  };
} // namespace pfaff
