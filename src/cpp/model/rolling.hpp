// Rolling of a fingertip disc on a planar contour (pfaff.manipulation.rolling,
// pfaff.manipulation.contours; Arimoto & Yoshida 2010 Sec. 6, eq. 67 and 71).
//
// A Contour gives gamma(u) and its first two derivatives (Contour.scalar) and the foot
// point of a point c (Contour.foot_point: (c - gamma) . gamma' = 0 by Newton's method,
// warm-started). A RollingContact is one fingertip (frame slot s_tip, radius r) on the
// contour of a planar body (slot s_obj), a Model's; its ContactGeometry at the last
// state is a Data's: the contact row Q = d - r (holonomic) and the rolling row
// t . w + r (omega - phi') = 0 (Pfaffian) read it (src/cpp/kinds/rolling.cpp,
// Kind::RollContact / Kind::RollTangent).
#pragma once

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

namespace pfaff
{
  enum class ContourKind
  {
    Circle,       // gamma = a (cos u, sin u)
    Ellipse,      // gamma = (a cos u, b sin u)
    Superellipse, // gamma = rho(u) (cos u, sin u), (X/a)^p + (Y/b)^p = 1
    Spline        // periodic cubic pieces on the breakpoints bx (8 coefficients each)
  };

  namespace contour_detail
  {
    /// Python's float modulo (the sign of the divisor)
    inline double pymod(double x, double y)
    {
      double r = std::fmod(x, y);
      if (r != 0.0 && ((y < 0.0) != (r < 0.0)))
        r += y;
      return r;
    }
    /// x^e: std::pow for a double; for a forward-mode derivative type (Eigen's
    /// AutoDiffScalar) with its derivative e x^(e-1) x', 0 where e = 0 (also at x = 0)
    template<class T>
    T power(const T & x, double e)
    {
      if constexpr (std::is_arithmetic_v<T>)
        return std::pow(x, e);
      else
      {
        const double xv = x.value();
        const double de = e == 0.0 ? 0.0 : e * std::pow(xv, e - 1.0);
        return T(std::pow(xv, e), typename T::DerType(de * x.derivatives()));
      }
    }
    /// u modulo the period U (its derivative unchanged)
    template<class T>
    T wrap(const T & u, double U)
    {
      if constexpr (std::is_arithmetic_v<T>)
        return pymod(u, U);
      else
        return T(pymod(u.value(), U), u.derivatives());
    }
    template<class T>
    double value(const T & x)
    {
      if constexpr (std::is_arithmetic_v<T>)
        return x;
      else
        return x.value();
    }
  } // namespace contour_detail

  /// A closed contour in the body frame (the built-in classes of contours.py).
  struct Contour
  {
    ContourKind kind = ContourKind::Ellipse;
    double a = 1.0, b = 1.0;
    int p = 2;
    double U = 6.283185307179586; // period of u
    std::vector<double> bx;       // Spline: breakpoints (segments + 1)
    std::vector<double> coef;     // Spline: (c3x, c3y, c2x, c2y, c1x, c1y, c0x, c0y) each
    /// std::invalid_argument naming `where` and what is wrong (sizes, finite numbers)
    void check(const char * where) const;
    /// g = (x, y, x', y', x'', y'') at u (Contour.scalar)
    void scalar(double u, double g[6]) const { eval(u, g); }
    /// scalar's g for a double or a forward-mode derivative type T (Eigen's
    /// AutoDiffScalar): g's derivatives along u's (the third derivative of gamma in
    /// those of x'', y'')
    template<class T>
    void eval(T u, T g[6]) const;
    /// the foot point of (cx, cy) (Contour.foot_point): Newton from u0 when warm, else
    /// (or when that leaves the basin) from the nearest of 256 samples; false when it
    /// fails from both
    bool foot_point(double cx, double cy, bool warm, double u0, double & u,
                    double tol = 1e-13) const;

  private:
    bool newton_foot(double cx, double cy, double & u, double tol) const;
  };

  /// One fingertip on one contour (System::add_contact; a Model's).
  struct RollingContact
  {
    Contour contour;
    int s_obj = -1, s_tip = -1; // frame slots of the object and the fingertip centre
    double r = 0.0;             // fingertip radius
  };

  /// The geometry of a RollingContact at the last state (ContactGeometry; a Data's).
  struct ContactGeometry
  {
    ContactGeometry() = default;
    /// no geometry yet, on nv velocity coordinates
    explicit ContactGeometry(int nv)
    {
      JQ.setZero(2, nv);
      Jrot.setZero(nv);
    }
    // warm start of the foot-point solver (the last contact parameter)
    double u = 0.0;
    bool warm = false;
    unsigned long stamp = 0; // the System::evaluate pass the geometry belongs to (Stamps::rows)
    // geometry: world tangent, outward normal, c - p, relative velocity w and the
    // velocity part of w', curvature, distance, object rate, alpha = the velocity part
    // of theta'' - phi'', s'
    Eigen::Vector2d t, n, e, w, wdot;
    double kappa = 0.0, d = 0.0, omega = 0.0, alpha = 0.0, sdot = 0.0;
    Eigen::Matrix<double, 2, Eigen::Dynamic> JQ; // J_c - J_o(c), linear rows
    Eigen::RowVectorXd Jrot;                      // J_theta - J_phi
    /// the geometry of contact c from its two frames (p, R, J with rows (linear,
    /// angular), drift); v and the drifts only with_drift. std::runtime_error when the
    /// foot point fails.
    void geometry(const RollingContact & c, const Eigen::Vector3d & po, const Eigen::Matrix3d & Ro,
                  const Eigen::Matrix<double, 6, Eigen::Dynamic> & Jo,
                  const Eigen::Matrix<double, 6, 1> & ao, const Eigen::Vector3d & pt,
                  const Eigen::Matrix<double, 6, Eigen::Dynamic> & Jt,
                  const Eigen::Matrix<double, 6, 1> & at, const Eigen::VectorXd & v,
                  bool with_drift);
  };

  template<class T>
  void Contour::eval(T u, T g[6]) const
  {
    using contour_detail::power;
    using std::cos;
    using std::sin;
    switch (kind)
    {
    case ContourKind::Circle: {
      const T c = cos(u), s = sin(u);
      g[0] = a * c, g[1] = a * s, g[2] = -a * s, g[3] = a * c, g[4] = -a * c, g[5] = -a * s;
      return;
    }
    case ContourKind::Ellipse: {
      const T c = cos(u), s = sin(u);
      g[0] = a * c, g[1] = b * s, g[2] = -a * s, g[3] = b * c, g[4] = -a * c, g[5] = -b * s;
      return;
    }
    case ContourKind::Superellipse: {
      const T c = cos(u), s = sin(u);
      const double pp = p;
      const T X = c / a, Y = s / b;
      const T Xp2 = power(X, pp - 2), Yp2 = power(Y, pp - 2);
      const T Xp1 = Xp2 * X, Yp1 = Yp2 * Y, Xp = Xp1 * X, Yp = Yp1 * Y;
      const T F = Xp + Yp;
      const T F1 = pp * (-Xp1 * s / a + Yp1 * c / b);
      const T F2 = pp
                   * ((pp - 1) * Xp2 * power(T(s / a), 2.0) - Xp
                      + (pp - 1) * Yp2 * power(T(c / b), 2.0) - Yp);
      const T rho = power(F, -1.0 / pp);
      const T rho1 = -rho / (pp * F) * F1;
      const T rho2 = -(1.0 / pp)
                     * ((-1.0 / pp - 1) * rho / power(F, 2.0) * power(F1, 2.0) + rho / F * F2);
      g[0] = rho * c, g[1] = rho * s;
      g[2] = rho1 * c - rho * s, g[3] = rho1 * s + rho * c;
      g[4] = (rho2 - rho) * c - 2 * rho1 * s, g[5] = (rho2 - rho) * s + 2 * rho1 * c;
      return;
    }
    case ContourKind::Spline: {
      u = contour_detail::wrap(u, U);
      const double uv = contour_detail::value(u);
      const int nseg = int(bx.size()) - 1;
      int k = int(std::upper_bound(bx.begin(), bx.end(), uv) - bx.begin()) - 1;
      k = std::min(std::max(k, 0), nseg - 1);
      const double * c = &coef[8 * size_t(k)];
      const T h = u - bx[size_t(k)];
      g[0] = ((c[0] * h + c[2]) * h + c[4]) * h + c[6];
      g[1] = ((c[1] * h + c[3]) * h + c[5]) * h + c[7];
      g[2] = (3 * c[0] * h + 2 * c[2]) * h + c[4];
      g[3] = (3 * c[1] * h + 2 * c[3]) * h + c[5];
      g[4] = 6 * c[0] * h + 2 * c[2];
      g[5] = 6 * c[1] * h + 2 * c[3];
      return;
    }
    }
  }
} // namespace pfaff
