// Contours and the rolling-contact geometry (rolling.hpp; the NumPy reference is
// pfaff.manipulation.contours and pfaff.manipulation.rolling, operation by operation).
#include "model/rolling.hpp"
#include "model/check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace pfaff
{
  using contour_detail::pymod;

  void Contour::check(const char * where) const
  {
    const Check c{where};
    c.number(U, "contour.U (the period of u)", 0.0, true);
    if (kind != ContourKind::Spline)
      c.number(a, "contour.a (a semi-axis) [m]", 0.0, true)
        .number(b, "contour.b (a semi-axis) [m]", 0.0, true);
    if (kind == ContourKind::Superellipse && (p < 2 || p % 2))
      c.fail("contour.p = " + std::to_string(p)
             + ": a superellipse exponent is an even integer >= 2");
    if (kind != ContourKind::Spline)
      return;
    if (bx.size() < 2 || coef.size() != 8 * (bx.size() - 1))
      c.fail("a spline contour has " + std::to_string(bx.size()) + " breakpoints (contour.bx) "
             "and " + std::to_string(coef.size()) + " coefficients (contour.coef): expected "
             "at least 2 breakpoints and 8 coefficients per segment");
    if (!std::is_sorted(bx.begin(), bx.end()))
      c.fail("the spline contour's breakpoints (contour.bx) are not sorted");
    for (const double x : bx)
      c.number(x, "a breakpoint of contour.bx", -HUGE_VAL, false);
    for (const double x : coef)
      c.number(x, "a coefficient of contour.coef", -HUGE_VAL, false);
  }

  bool Contour::newton_foot(double cx, double cy, double & u, double tol) const
  {
    const double h = U / 64;
    double g[6];
    for (int i = 0; i < 50; ++i)
    {
      scalar(u, g);
      const double dx = cx - g[0], dy = cy - g[1];
      const double f = dx * g[2] + dy * g[3];
      const double df = -(g[2] * g[2] + g[3] * g[3]) + dx * g[4] + dy * g[5];
      if (df >= 0)
        return false; // not a distance minimum: outside the basin
      const double step = std::min(std::max(f / df, -h), h);
      u -= step;
      if (std::abs(step) < tol * U)
      {
        u = pymod(u, U);
        return true;
      }
    }
    return false;
  }

  bool Contour::foot_point(double cx, double cy, bool warm, double u0, double & u,
                           double tol) const
  {
    if (warm)
    {
      u = u0;
      if (newton_foot(cx, cy, u, tol))
        return true;
    }
    double best = std::numeric_limits<double>::infinity(), g[6];
    for (int k = 0; k < 256; ++k) // the nearest of 256 samples
    {
      const double us = k * (U / 256);
      scalar(us, g);
      const double d2 = (g[0] - cx) * (g[0] - cx) + (g[1] - cy) * (g[1] - cy);
      if (d2 < best)
        best = d2, u = us;
    }
    return newton_foot(cx, cy, u, tol);
  }

  void ContactGeometry::geometry(
    const RollingContact & c, const Eigen::Vector3d & po, const Eigen::Matrix3d & Ro,
    const Eigen::Matrix<double, 6, Eigen::Dynamic> & Jo, const Eigen::Matrix<double, 6, 1> & ao,
    const Eigen::Vector3d & pt, const Eigen::Matrix<double, 6, Eigen::Dynamic> & Jt,
    const Eigen::Matrix<double, 6, 1> & at, const Eigen::VectorXd & v, bool with_drift)
  {
    const double r00 = Ro(0, 0), r01 = Ro(0, 1), r10 = Ro(1, 0), r11 = Ro(1, 1);
    const double ex = pt(0) - po(0), ey = pt(1) - po(1);
    const double lx = r00 * ex + r10 * ey, ly = r01 * ex + r11 * ey;
    if (!c.contour.foot_point(lx, ly, warm, u, u))
      throw std::runtime_error(
        "rolling contact: the contact-point solver did not converge for the fingertip at ("
        + std::to_string(lx) + ", " + std::to_string(ly) + ") in the object frame");
    warm = true;
    double g[6];
    c.contour.scalar(u, g);
    const double sp = std::hypot(g[2], g[3]);
    const double tlx = g[2] / sp, tly = g[3] / sp;
    kappa = (g[2] * g[5] - g[3] * g[4]) / std::pow(sp, 3.0);
    t << r00 * tlx + r01 * tly, r10 * tlx + r11 * tly;
    n << t(1), -t(0);
    e << ex, ey;
    const double gwx = po(0) + r00 * g[0] + r01 * g[1], gwy = po(1) + r10 * g[0] + r11 * g[1];
    d = n(0) * (pt(0) - gwx) + n(1) * (pt(1) - gwy);
    JQ = Jt.topRows<2>() - Jo.topRows<2>();
    JQ.row(0) += ey * Jo.row(5); // - S e J_theta, S e = (-e_y, e_x)
    JQ.row(1) -= ex * Jo.row(5);
    Jrot = Jo.row(5) - Jt.row(5);
    if (!with_drift)
      return;
    omega = Jo.row(5).dot(v);
    w.noalias() = JQ * v;
    const Eigen::Vector2d rel = Jt.topRows<2>() * v - Jo.topRows<2>() * v; // c' - p'
    wdot << at(0) - ao(0) + ao(5) * ey + omega * rel(1),
      at(1) - ao(1) - ao(5) * ex - omega * rel(0);
    alpha = ao(5) - at(5);
    sdot = t.dot(w) / (1.0 + kappa * d);
  }
} // namespace pfaff
