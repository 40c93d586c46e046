// PFAFF_FORCE(BallSpring, 0, 0)
// A ball (or free) joint's spring about its reference q_ref (MuJoCo's mju_subQuat;
// pfaff.simulate.forces_ball.BallSpring): Q_w = -k log(q_ref^-1 q) on the rotation and,
// on a free joint's translation, Q_p = -k R^T (p - p_ref) (Pinocchio's body-frame
// velocity); V = k (|log|^2 + |p - p_ref|^2) / 2. Partials:
//   dQ_w/d delta_w = -k Jlog3(R_ref^T R); free: dQ_p/d delta_p = -k I,
//   dQ_p/d delta_w = -k [R^T (p - p_ref)]_x
#include <string>

#include "algorithms/force_element.hpp"

#include "pinocchio/spatial.hpp"

namespace pfaff::force_elements
{
  void check_BallSpring(const Model & mo, const ForceSpec & s, const Check & c)
  {
    check_ball_joint(mo, s, c, true);
    const long nq = s.free ? 7 : 4;
    if (long(s.ref.size()) != nq)
      c.fail("spec.ref has " + std::to_string(s.ref.size()) + " values, expected "
             + std::to_string(nq) + " (the joint's spring reference q)");
    for (const double x : s.ref)
      c.number(x, "spec.ref[i]", -HUGE_VAL, false);
  }

  bool BallSpring(const ForceSpec & s, const State & x, ForceTerms & out)
  {
    int iq = s.iq, iv = s.iv;
    double x2 = 0.0;
    if (s.free)
    {
      const Vec3 dp = x.q.segment<3>(iq) - Eigen::Map<const Vec3>(s.ref.data());
      out.Q.segment<3>(iv).noalias() -= s.k * (quat_rotation(x.q.data() + iq + 3).transpose() * dp);
      x2 += dp.squaredNorm();
      iq += 3;
      iv += 3;
    }
    const Vec3 w = sub_quat(x.q.data() + iq, s.ref.data() + (s.free ? 3 : 0));
    out.Q.segment<3>(iv) -= s.k * w;
    out.V += 0.5 * s.k * (x2 + w.squaredNorm());
    return true;
  }

  void partials_BallSpring(const ForceSpec & s, Partials & p)
  {
    const VecX & q = *p.q;
    int iq = s.iq, iv = s.iv;
    if (s.free)
    {
      const Mat3 R = quat_rotation(q.data() + iq + 3);
      const Vec3 dp = q.segment<3>(iq) - Eigen::Map<const Vec3>(s.ref.data());
      p.dQq.block<3, 3>(iv, iv).diagonal().array() -= s.k;
      p.dQq.block<3, 3>(iv, iv + 3) -= s.k * detail::skew(R.transpose() * dp);
      iq += 3;
      iv += 3;
    }
    const double * ref = s.ref.data() + (s.free ? 3 : 0);
    const Mat3 Rrel = quat_rotation(ref).transpose() * quat_rotation(q.data() + iq);
    Mat3 Jlog;
    pinocchio::Jlog3(Rrel, Jlog);
    p.dQq.block<3, 3>(iv, iv) -= s.k * Jlog;
  }
} // namespace pfaff::force_elements
