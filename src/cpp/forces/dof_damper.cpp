// PFAFF_FORCE(DofDamper, 0, 0)
// MuJoCo's per-dof damping of a ball or free joint (pfaff.simulate.forces_ball.DofDamper;
// coefs: one damping per dof): Q = -D v on the rotation (body frame, as MuJoCo's) and
// Q_p = -R^T D R v_p on a free joint's translation (MuJoCo damps the world-frame
// velocity); its power Q . v. Partials: dQ/dv = -D; free: dQ_p/dv_p = -R^T D R,
// dQ_p/d delta_w = -[R^T D R v_p]_x + R^T D R [v_p]_x
#include <string>

#include "algorithms/force_element.hpp"

namespace pfaff::force_elements
{
  void check_DofDamper(const Model & mo, const ForceSpec & s, const Check & c)
  {
    check_ball_joint(mo, s, c, s.free);
    const long nv = s.free ? 6 : 3;
    if (long(s.coefs.size()) != nv)
      c.fail("spec.coefs has " + std::to_string(s.coefs.size()) + " values, expected "
             + std::to_string(nv) + " (one damping per dof of the joint)");
    for (const double x : s.coefs)
      c.number(x, "spec.coefs[i] (damping)", 0.0, false);
  }

  bool DofDamper(const ForceSpec & s, const State & x, ForceTerms & out)
  {
    const int iv = s.iv;
    const int n = int(s.coefs.size());
    out.Qe.head(n).setZero();
    if (s.free)
    {
      const Mat3 R = quat_rotation(x.q.data() + s.iq + 3);
      const Vec3 c(s.coefs[0], s.coefs[1], s.coefs[2]);
      out.Qe.head<3>().noalias() = -(R.transpose() * (c.asDiagonal() * (R * x.v.segment<3>(iv))));
    }
    for (int j = s.free ? 3 : 0; j < n; ++j)
      out.Qe(j) = -s.coefs[size_t(j)] * x.v(iv + j);
    out.Q.segment(iv, n) += out.Qe.head(n);
    out.power += out.Qe.head(n).dot(x.v.segment(iv, n));
    return true;
  }

  void partials_DofDamper(const ForceSpec & s, Partials & p)
  {
    const int n = int(s.coefs.size());
    for (int j = s.free ? 3 : 0; j < n; ++j)
      p.dQv(s.iv + j, s.iv + j) -= s.coefs[size_t(j)];
    if (s.free)
    {
      const Mat3 R = quat_rotation(p.q->data() + s.iq + 3);
      const Vec3 c(s.coefs[0], s.coefs[1], s.coefs[2]);
      const Mat3 B = R.transpose() * c.asDiagonal() * R;
      const Vec3 vp = p.v->segment<3>(s.iv);
      p.dQv.block<3, 3>(s.iv, s.iv) -= B;
      p.dQq.block<3, 3>(s.iv, s.iv + 3) += -detail::skew(B * vp) + B * detail::skew(vp);
    }
  }
} // namespace pfaff::force_elements
