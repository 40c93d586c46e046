// |p_xy - c| - rho = 0: a point on a circle in the x-y plane (constraints.library.PointOnCircle)
// its line of kinds.def, which CMake gathers (name, rows, window, holonomic):
// PFAFF_KIND(PointOnCircle, 1, 1, 1)
#include <cmath>

#include "model/check.hpp"
#include "model/core.hpp"
#include "algorithms/kind_derivatives.hpp"

#include "pinocchio/algorithm/frames.hpp"

namespace pfaff::kinds
{
  void check_PointOnCircle(const Model & mo, const Spec & s, const Check & c)
  {
    c.index(s.s1, long(mo.frame_slots.size()), "spec.s1", "a frame slot of add_frame");
    c.number(s.rho, "spec.rho", 0.0, true);
  }

  void PointOnCircle(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    const int row = out.row;
    const int hrow = out.hrow;
    const bool with_drift = out.with_drift;
    Vec3 p1, a1 = Vec3::Zero();
    point_terms(d.frames[s.s1], s.has_p1, s.p1, out, p1, d.Jp1_, a1);
    const auto Jp = d.Jp1_.leftCols(out.w);
    const Eigen::Vector2d dc = p1.head<2>() - s.c; // from the centre
    const double r = dc.norm();
    const Eigen::Vector2d u = dc / r;
    d.phi(hrow) = r - s.rho;
    d.A.row(row).segment(out.c0, out.w).noalias() = u.transpose() * Jp.topRows<2>();
    if (with_drift)
    {
      const Eigen::Vector2d vp = Jp.topRows<2>() * d.vref_->segment(out.c0, out.w);
      const double uv = u.dot(vp);
      d.drift(row) = u.dot(a1.head<2>()) + (vp.dot(vp) - uv * uv) / r;
    }
    else
      d.drift(row) = 0.0;
  }

  // |p_xy - c| - rho: u = (p_xy - c) / r, A = u^T J_xy,
  //   A a + drift = u . p'' + (|p'|^2 - (u . p')^2) / r,  p' = J_xy v, p'' the point's
  // classical acceleration at the state's a; along delta_j u' = (I - u u^T) J_j / r,
  // r' = u . J_j, p'_j = H_j v, p''_j = the acceleration's partial (point_partials)
  void derive_PointOnCircle(KindDerivatives & kd, const Spec & s, int row)
  {
    const auto & model = kd.mo.model;
    const int nv = kd.nv, m = kd.m;
    const VecX & v = *kd.v;
    const double sc = s.scale.size() ? s.scale(0) : 1.0;
    const KindDerivatives::Point pt = kd.point(s.s1, s.has_p1, s.p1);
    auto & dd = kd.dd;
    const pinocchio::SE3 oMp = dd.oMi[pt.joint] * pt.placement;
    const Vec3 p = oMp.translation();
    kd.point_partials(pt);
    kd.J6.setZero(6, nv);
    pinocchio::getFrameJacobian(
      model, dd, pt.joint, pt.placement, pinocchio::LOCAL_WORLD_ALIGNED, kd.J6);
    const Eigen::Matrix<double, 2, Eigen::Dynamic> J = kd.J6.topRows<2>();
    // the classical acceleration of the point from the joint's spatial motion (world)
    const auto & ov = dd.ov[pt.joint];
    const auto & oa = dd.oa[pt.joint];
    const Vec3 vp3 = ov.linear() + ov.angular().cross(p);
    const Vec3 ap3 = oa.linear() + oa.angular().cross(p) + ov.angular().cross(vp3);
    const Eigen::Vector2d d = p.head<2>() - s.c;
    const double r = d.norm();
    const Eigen::Vector2d u = d / r, vp = vp3.head<2>(), ap = ap3.head<2>();
    const double uv = u.dot(vp), N = vp.dot(vp) - uv * uv;
    for (int j = 0; j < nv; ++j)
    {
      const Eigen::Map<const Matrix6x> dJ(kd.H.data() + 6 * nv * j, 6, nv);
      const Eigen::Vector2d Jj = J.col(j);
      const Eigen::Vector2d du = (Jj - u * u.dot(Jj)) / r;
      const double dr = u.dot(Jj);
      auto dA = kd.dAB.row(j * m + row);
      dA.noalias() = du.transpose() * J;
      dA.noalias() += u.transpose() * dJ.topRows<2>();
      dA *= sc;
      const Eigen::Vector2d dvp = dJ.topRows<2>() * v;
      const Eigen::Vector2d dap = kd.aq.col(j).head<2>();
      kd.X(row, j) = sc * (du.dot(ap) + u.dot(dap)
                         + (2.0 * vp.dot(dvp) - 2.0 * uv * (du.dot(vp) + u.dot(dvp))) / r
                         - N * dr / (r * r));
      kd.X(row, nv + j) =
        sc * (u.dot(kd.av.col(j).head<2>()) + (2.0 * vp.dot(Jj) - 2.0 * uv * u.dot(Jj)) / r);
    }
  }
} // namespace pfaff::kinds
