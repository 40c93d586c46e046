// The force elements' partial derivatives dQ/d delta (q perturbed as integrate(q, delta))
// and dQ/dv at one state: each element's own, analytic (src/cpp/forces/*.cpp,
// partials_Name; a Python law's by central differences), dispatched by forces.def. The
// NumPy reference of the derivatives is central differences of pfaff.simulate.forces' Q
// (System._force_partials). A point's position, Jacobian J (LOCAL_WORLD_ALIGNED, linear
// rows) and dJ/d delta_k (its kinematic Hessian's slices) come from the Differentiator's
// RNEA-derivatives pass, in which Pinocchio has the joint Jacobians of this q.
#include "algorithms/derivatives.hpp"

#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/algorithm/kinematics-derivatives.hpp"

namespace pfaff
{
  namespace
  {
    using ElementPartials = void (*)(const ForceSpec &, force_elements::Partials &);
    constexpr ElementPartials kPartials[] = {
#define PFAFF_FORCE(K, points, gravity) &force_elements::partials_##K,
#include "forces.def"
#undef PFAFF_FORCE
    };
  } // namespace

  bool Differentiator::needs_hessians() const
  {
    for (const ForcePoint & fp : fpoints_)
      if (fp.p1 >= 0)
        return true;
    return false;
  }

  void Differentiator::point_kin(int point, force_elements::PointKin & k)
  {
    const auto & model = mo_.model;
    const Point & p = points_[size_t(point)];
    k.p = (dd_.oMi[p.joint] * p.placement).translation();
    J6_.setZero(6, model.nv);
    pinocchio::getFrameJacobian(model, dd_, p.joint, p.placement, pinocchio::LOCAL_WORLD_ALIGNED, J6_);
    k.J = J6_.topRows<3>();
    k.H.resize(6, model.nv, model.nv);
    k.H.setZero();
    pinocchio::getFrameKinematicHessian(
      model, dd_, p.joint, p.placement, pinocchio::LOCAL_WORLD_ALIGNED, k.H);
  }

  void Differentiator::force_partials(const VecX & q, const VecX & v)
  {
    const int nv = mo_.model.nv;
    force_elements::Partials & p = fq_;
    p.model = &mo_.model;
    p.q = &q;
    p.v = &v;
    p.t = d_.t_;
    p.dQq.setZero(nv, nv);
    p.dQv.setZero(nv, nv);
    for (const ForcePoint & fp : fpoints_)
    {
      if (fp.p1 >= 0) // the element's points: d = p1 - p2, J = J1 - J2
      {
        point_kin(fp.p1, p.k1);
        p.d = p.k1.p;
        p.J = p.k1.J;
        p.two = fp.p2 >= 0;
        if (p.two)
        {
          point_kin(fp.p2, p.k2);
          p.d -= p.k2.p;
          p.J -= p.k2.J;
        }
      }
      const ForceSpec & s = mo_.force_elements.specs[size_t(fp.e)];
      kPartials[int(s.kind)](s, p);
    }
  }
} // namespace pfaff
