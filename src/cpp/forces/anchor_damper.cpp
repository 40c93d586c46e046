// PFAFF_FORCE(AnchorDamper, 1, 0)
// A body point's world velocity damped along world axes a
// (pfaff.simulate.forces_point.AnchorDamper): Q = -c sum_a J_a^T J_a v, its power Q . v;
// dQ_k = -c sum_a (dJ_ak (J_a v) + J_a^T (dJ_ak v)),  dQ/dv = -c sum_a J_a^T J_a
#include "algorithms/force_element.hpp"

namespace pfaff::force_elements
{
  void check_AnchorDamper(const Model &, const ForceSpec & s, const Check & c) { check_axes(s, c); }

  bool AnchorDamper(const ForceSpec & s, const State & x, ForceTerms & out)
  {
    Vec3 p;
    point(x.frames[s.s1], s.has_p1, s.p1, p, out.J);
    for (int a : s.axes)
    {
      const double rate = out.J.row(a).dot(x.v);
      out.Q.noalias() -= (s.c * rate) * out.J.row(a).transpose();
      out.power -= s.c * rate * rate;
    }
    return true;
  }

  void partials_AnchorDamper(const ForceSpec & s, Partials & p)
  {
    const int nv = int(p.J.cols());
    const VecX & v = *p.v;
    const Vec3 u = p.J * v;
    for (int k = 0; k < nv; ++k)
    {
      const Matrix3x dJk = p.dJ(k);
      for (int a : s.axes)
        p.dQq.col(k) -= s.c * (dJk.row(a).transpose() * u(a) + p.J.row(a).transpose() * dJk.row(a).dot(v));
    }
    for (int a : s.axes)
      p.dQv.noalias() -= s.c * (p.J.row(a).transpose() * p.J.row(a));
  }
} // namespace pfaff::force_elements
