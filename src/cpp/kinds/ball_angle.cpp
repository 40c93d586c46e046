// theta(q) - value = 0: a ball joint's rotation angle held (constraints.ball_angle.BallAngle;
// a ball limit held at its bound)
// its line of kinds.def, which CMake gathers (name, rows, window, holonomic):
// PFAFF_KIND(BallAngle, 1, 0, 1)
#include <cmath>
#include <string>

#include "model/check.hpp"
#include "model/core.hpp"
#include "algorithms/kind_derivatives.hpp"

namespace pfaff::kinds
{
  void check_BallAngle(const Model & mo, const Spec & s, const Check & c)
  {
    bool ball = false; // a joint with 4 coordinates at iq and 3 velocities at iv
    for (pinocchio::JointIndex j = 1; j < mo.model.joints.size(); ++j)
      ball = ball
             || (mo.model.idx_qs[j] == s.iq && mo.model.nqs[j] == 4
                 && mo.model.idx_vs[j] == s.iv && mo.model.nvs[j] == 3);
    if (!ball)
      c.fail("spec.iq = " + std::to_string(s.iq) + ", spec.iv = " + std::to_string(s.iv)
             + " are not a ball joint's coordinates (4 q, 3 v)");
    if (!(s.value > 0.0 && s.value < M_PI))
      c.fail("spec.value = " + std::to_string(s.value) + ", valid: an angle in (0, pi)");
  }

  // theta = ball_angle(q), u its axis; A = u^T on the joint's velocities w; the drift
  // u' . w = |w_perp|^2 g, g = 1 / (2 tan(theta / 2)), w_perp = w - (u . w) u
  void BallAngle(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    Vec3 u;
    const double th = ball_angle(out.q.data() + s.iq, &u);
    d.phi(out.hrow) = th - s.value;
    d.A.row(out.row).setZero();
    d.A.block<1, 3>(out.row, s.iv) = u.transpose();
    if (!out.with_drift)
    {
      d.drift(out.row) = 0.0;
      return;
    }
    const Vec3 w = d.vref_->segment<3>(s.iv);
    const double uw = u.dot(w);
    d.drift(out.row) = (w.dot(w) - uw * uw) / (2.0 * std::tan(0.5 * th));
  }

  // along delta_j (q moved as q exp(delta) on the joint): theta' = u_j,
  //   du/d delta = (I - u u^T) g + [u]_x / 2,
  //   d drift/d delta_j = -2 (u . w) (w . du_j) g + (|w|^2 - (u . w)^2) g' u_j,
  //   g' = -1 / (4 sin^2(theta / 2)),  d drift/dw = 2 g w_perp
  void derive_BallAngle(KindDerivatives & kd, const Spec & s, int row)
  {
    const int nv = kd.nv, m = kd.m;
    Vec3 u;
    const double th = ball_angle(kd.q->data() + s.iq, &u);
    const double g = 1.0 / (2.0 * std::tan(0.5 * th));
    const double sh = std::sin(0.5 * th), gp = -1.0 / (4.0 * sh * sh);
    Mat3 du = g * (Mat3::Identity() - u * u.transpose());
    du(0, 1) -= 0.5 * u(2);
    du(0, 2) += 0.5 * u(1);
    du(1, 0) += 0.5 * u(2);
    du(1, 2) -= 0.5 * u(0);
    du(2, 0) -= 0.5 * u(1);
    du(2, 1) += 0.5 * u(0);
    const Vec3 w = kd.v->segment<3>(s.iv), al = kd.a->segment<3>(s.iv);
    const double uw = u.dot(w), N = w.dot(w) - uw * uw;
    for (int j = 0; j < 3; ++j)
    {
      const int k = s.iv + j;
      kd.dAB.block<1, 3>(k * m + row, s.iv) = du.col(j).transpose();
      kd.X(row, k) = al.dot(du.col(j)) - 2.0 * uw * w.dot(du.col(j)) * g + N * gp * u(j);
    }
    kd.X.block<1, 3>(row, nv + s.iv) = (2.0 * g * (w - uw * u)).transpose();
  }
} // namespace pfaff::kinds
