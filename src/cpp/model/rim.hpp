// A cylinder's rim (a circle of radius r about its centre, across its unit axis a) on a
// still plane of unit normal n: the rim's point nearest the plane is c + l, the lever
//   l = r u,  u = -(n - s a) / rho,  s = n . a,  rho = sqrt(1 - s^2),
// u the unit direction in the rim's plane most against n (rho > 0: the rim is not flat on
// the plane). As the rim rolls that point moves over the body: with a' = w x a,
//   l' = r u',  u' = (s' a + s a') / rho - s s' (n - s a) / rho^3,  s' = n . a'.
// Templated on the scalar so that the kind's derivative rows take l's and l''s partials
// by forward automatic differentiation (Eigen's AutoDiffScalar).
#pragma once

#include <cmath>

#include <Eigen/Core>

namespace pfaff
{
  /// the rim's lever l (above) of axis a on the plane of normal n, and its rate ld along
  /// the angular velocity w
  template <typename T>
  void rim_lever(
    const Eigen::Matrix<T, 3, 1> & a, const Eigen::Matrix<T, 3, 1> & w,
    const Eigen::Vector3d & n, double r, Eigen::Matrix<T, 3, 1> & l,
    Eigen::Matrix<T, 3, 1> & ld)
  {
    using std::sqrt;
    const Eigen::Matrix<T, 3, 1> nt = n.cast<T>();
    const T s = nt.dot(a);
    const T rho = sqrt(T(1.0) - s * s);
    const Eigen::Matrix<T, 3, 1> g = nt - s * a; // n's part across the axis, |g| = rho
    l = (-r / rho) * g;
    const Eigen::Matrix<T, 3, 1> ad = w.cross(a);
    const T sd = nt.dot(ad);
    ld = r * ((sd * a + s * ad) / rho - (s * sd / (rho * rho * rho)) * g);
  }

  /// the lever alone (the contact point of a held rim, c + l)
  inline Eigen::Vector3d rim_lever(const Eigen::Vector3d & a, const Eigen::Vector3d & n, double r)
  {
    const double s = n.dot(a);
    return (-r / std::sqrt(1.0 - s * s)) * (n - s * a);
  }

  /// a held point's lever from its core to its contact: a rim's (axis its axis in the
  /// world), a round point's -radius n (axis zero), a vertex's zero (radius 0 too)
  inline Eigen::Vector3d contact_lever(
    double radius, const Eigen::Vector3d & axis, const Eigen::Vector3d & n)
  {
    return axis.squaredNorm() > 0.0 ? rim_lever(axis, n, radius)
                                    : Eigen::Vector3d(-radius * n);
  }
} // namespace pfaff
