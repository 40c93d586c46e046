// PFAFF_FORCE(PointDamper, 2, 0)
// A damper between two points (pfaff.simulate.forces_point.PointDamper): with d = p1 - p2,
// r = |d|, e = d / r, J = J1 - J2, the rate s' = e . J v and Q = -c s' J^T e (none below
// r = 1e-12 m); its power Q . v. Partials:
//   dQ_k = -c (ds'_k J^T e + s' (dJ_k^T e + J^T de_k)),  de_k = (I - e e^T) J_k / r,
//   ds'_k = de_k . (J v) + e . (dJ_k v);  dQ/dv = -c J^T e e^T J
#include "algorithms/force_element.hpp"

namespace pfaff::force_elements
{
  void check_PointDamper(const Model &, const ForceSpec &, const Check &) {}

  bool PointDamper(const ForceSpec & s, const State & x, ForceTerms & out)
  {
    two_points(x.frames, s, out);
    const double r = out.d.norm();
    if (r < 1e-12)
      return true;
    out.Qe.noalias() = out.J.transpose() * (out.d / r);
    const double rate = out.Qe.dot(x.v);
    out.Qe *= -s.c * rate;
    out.Q += out.Qe;
    out.power += out.Qe.dot(x.v);
    return true;
  }

  void partials_PointDamper(const ForceSpec & s, Partials & p)
  {
    const int nv = int(p.J.cols());
    const VecX & v = *p.v;
    Vec3 d = p.d;
    if (!p.two)
      d -= s.target;
    const double r = d.norm();
    if (r < 1e-12)
      return;
    const Vec3 e = d / r, u = p.J * v;
    const double rate = e.dot(u);
    const VecX JTe = p.J.transpose() * e;
    for (int k = 0; k < nv; ++k)
    {
      const Matrix3x dJk = p.dJ(k);
      const Vec3 de = (p.J.col(k) - e * e.dot(p.J.col(k))) / r;
      const double drate = de.dot(u) + e.dot(dJk * v);
      p.dQq.col(k) -= s.c * (drate * JTe + rate * (dJk.transpose() * e + p.J.transpose() * de));
    }
    p.dQv.noalias() -= s.c * (JTe * JTe.transpose());
  }
} // namespace pfaff::force_elements
