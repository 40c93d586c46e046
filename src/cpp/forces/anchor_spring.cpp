// PFAFF_FORCE(AnchorSpring, 1, 0)
// A body point tied to a world anchor along world axes a
// (pfaff.simulate.forces_point.AnchorSpring): Q = -k sum_a J_a^T (p_a - target_a),
// V = k sum_a (p_a - target_a)^2 / 2;  dQ_k = -k sum_a (dJ_ak (p_a - target_a) + J_a^T J_ak)
#include "algorithms/force_element.hpp"

namespace pfaff::force_elements
{
  void check_AnchorSpring(const Model &, const ForceSpec & s, const Check & c) { check_axes(s, c); }

  bool AnchorSpring(const ForceSpec & s, const State & x, ForceTerms & out)
  {
    Vec3 p;
    point(x.frames[s.s1], s.has_p1, s.p1, p, out.J);
    for (int a : s.axes)
    {
      const double d = p(a) - s.target(a);
      out.Q.noalias() -= (s.k * d) * out.J.row(a).transpose();
      out.V += 0.5 * s.k * d * d;
    }
    return true;
  }

  void partials_AnchorSpring(const ForceSpec & s, Partials & p)
  {
    const int nv = int(p.J.cols());
    const Vec3 d = p.d - s.target;
    for (int k = 0; k < nv; ++k)
    {
      const Matrix3x dJk = p.dJ(k);
      for (int a : s.axes)
        p.dQq.col(k) -= s.k * (dJk.row(a).transpose() * d(a) + p.J.row(a).transpose() * p.J(a, k));
    }
  }
} // namespace pfaff::force_elements
