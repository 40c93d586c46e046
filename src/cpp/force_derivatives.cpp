// The force elements' partial derivatives dQ/d delta (q perturbed as integrate(q, delta))
// and dQ/dv at one state, analytic for every ForceKind (forces.hpp gives Q; the NumPy
// reference of the derivatives is central differences of pfaff.simulate.forces' Q,
// System._force_partials). A point's position, Jacobian J (LOCAL_WORLD_ALIGNED, linear
// rows) and dJ/d delta_k (its kinematic Hessian's slices) come from the Differentiator's
// RNEA-derivatives pass, in which Pinocchio has the joint Jacobians of this q.
//
//   point spring   Q = -(T/r) J^T d:  dQ_k = -(T/r)(dJ_k^T d + J^T J_k) - (T'/r - T/r^2)(e.J_k) J^T d
//   point damper   Q = -c s' J^T e, s' = e.J v:  dQ_k = -c (ds'_k J^T e + s' (dJ_k^T e + J^T de_k)),
//                  de_k = (I - e e^T) J_k / r,  ds'_k = de_k.(J v) + e.(dJ_k v);  dQ/dv = -c J^T e e^T J
//   anchor spring  dQ_k = -k sum_a (dJ_ak (p_a - t_a) + J_a^T J_ak)
//   anchor damper  dQ_k = -c sum_a (dJ_ak (J_a v) + J_a^T (dJ_ak v));  dQ/dv = -c sum_a J_a^T J_a
//   point force    dQ_k = dJ_k^T F
//   ball spring    dQ_w/d delta_w = -k Jlog3(R_ref^T R); free: dQ_p/d delta_p = -k I,
//                  dQ_p/d delta_w = -k [R^T (p - p_ref)]_x
//   dof damper     dQ/dv = -D; free: dQ_p/dv_p = -R^T D R, dQ_p/d delta_w = -[R^T D R v]_x + R^T D R [v]_x
//   actuator       f' = (g1 ctrl + b1) in s, (g2 ctrl + b2) in s' where f is inside its range, else 0
//   Python law     central differences of the law (step 1e-6), as the NumPy reference
#include "derivatives.hpp"
#include "core_detail.hpp"

#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/algorithm/kinematics-derivatives.hpp"
#include "pinocchio/algorithm/rnea-derivatives.hpp"
#include "pinocchio/algorithm/joint-configuration.hpp"
#include "pinocchio/spatial.hpp"

namespace pfaff
{
  using detail::skew;

  bool Differentiator::needs_hessians() const
  {
    for (const ForcePoint & fp : fpoints_)
      if (fp.p1 >= 0)
        return true;
    return false;
  }

  void Differentiator::point_kin(int point, PointKin & k)
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
    const auto & model = mo_.model;
    const int nv = model.nv;
    dQq_.setZero(nv, nv);
    dQv_.setZero(nv, nv);
    for (const ForcePoint & fp : fpoints_)
    {
      const ForceSpec & s = mo_.force_elements.specs[size_t(fp.e)];
      switch (s.kind)
      {
      case ForceKind::JointSpring:
        dQq_(s.iv, s.iv) -= s.k;
        break;
      case ForceKind::JointDamper:
        dQv_(s.iv, s.iv) -= s.c;
        break;
      case ForceKind::CoordinateSpring:
        for (size_t j = 0; j < s.coefs.size(); ++j)
          for (size_t l = 0; l < s.coefs.size(); ++l)
            dQq_(s.ivs[j], s.ivs[l]) -= s.k * s.coefs[j] * s.coefs[l];
        break;
      case ForceKind::Actuator:
      {
        double rate;
        const double f = actuator_force(s, q, v, rate);
        if (!(f > s.flo && f < s.fhi))
          break; // clamped: constant in q and v
        const double fs = s.g1 * s.ctrl + s.b1, fr = s.g2 * s.ctrl + s.b2;
        for (size_t j = 0; j < s.coefs.size(); ++j)
          for (size_t l = 0; l < s.coefs.size(); ++l)
          {
            const double cc = s.gear * s.gear * s.coefs[j] * s.coefs[l];
            dQq_(s.ivs[j], s.ivs[l]) += cc * fs;
            dQv_(s.ivs[j], s.ivs[l]) += cc * fr;
          }
        break;
      }
      case ForceKind::BallSpring:
      {
        int iq = s.iq, iv = s.iv;
        if (s.free)
        {
          const Mat3 R = quat_rotation(q.data() + iq + 3);
          const Vec3 dp = q.segment<3>(iq) - Eigen::Map<const Vec3>(s.ref.data());
          dQq_.block<3, 3>(iv, iv).diagonal().array() -= s.k;
          dQq_.block<3, 3>(iv, iv + 3) -= s.k * skew(R.transpose() * dp);
          iq += 3;
          iv += 3;
        }
        const double * ref = s.ref.data() + (s.free ? 3 : 0);
        const Mat3 Rrel = quat_rotation(ref).transpose() * quat_rotation(q.data() + iq);
        Mat3 Jlog;
        pinocchio::Jlog3(Rrel, Jlog);
        dQq_.block<3, 3>(iv, iv) -= s.k * Jlog;
        break;
      }
      case ForceKind::DofDamper:
      {
        const int n = int(s.coefs.size());
        for (int j = s.free ? 3 : 0; j < n; ++j)
          dQv_(s.iv + j, s.iv + j) -= s.coefs[size_t(j)];
        if (s.free)
        {
          const Mat3 R = quat_rotation(q.data() + s.iq + 3);
          const Vec3 c(s.coefs[0], s.coefs[1], s.coefs[2]);
          const Mat3 B = R.transpose() * c.asDiagonal() * R;
          const Vec3 vp = v.segment<3>(s.iv);
          dQv_.block<3, 3>(s.iv, s.iv) -= B;
          dQq_.block<3, 3>(s.iv, s.iv + 3) += -skew(B * vp) + B * skew(vp);
        }
        break;
      }
      case ForceKind::GravityCompensation:
      {
        if (!gd_)
          gd_ = std::make_unique<pinocchio::Data>(model);
        dg_.setZero(nv, nv);
        pinocchio::computeGeneralizedGravityDerivatives(model, *gd_, q, dg_);
        dQq_ += dg_;
        break;
      }
      case ForceKind::PointSpring:
      case ForceKind::PointDamper:
      case ForceKind::AnchorSpring:
      case ForceKind::AnchorDamper:
      case ForceKind::PointForce:
        point_element(s, fp, v);
        break;
      case ForceKind::Python:
        python_partials(s, q, v);
        break;
      }
    }
  }

  // A law written in Python has no analytic partials: central differences of it, q
  // perturbed as integrate(q, +-h e_k), step h = 1e-6 (the NumPy reference's)
  void Differentiator::python_partials(const ForceSpec & s, const VecX & q, const VecX & v)
  {
    const auto & model = mo_.model;
    const int nv = model.nv;
    const double h = 1e-6, t = d_.t_;
    VecX e = VecX::Zero(nv), qp(model.nq), qm(model.nq), vp = v, vm = v;
    VecX Qp = VecX::Zero(nv), Qm = VecX::Zero(nv);
    for (int k = 0; k < nv; ++k)
    {
      e.setZero();
      e(k) = h;
      pinocchio::integrate(model, q, e, qp);
      pinocchio::integrate(model, q, -e, qm);
      (*s.law)(t, qp, v, Qp);
      (*s.law)(t, qm, v, Qm);
      dQq_.col(k) += (Qp - Qm) / (2.0 * h);
      vp(k) = v(k) + h;
      vm(k) = v(k) - h;
      (*s.law)(t, q, vp, Qp);
      (*s.law)(t, q, vm, Qm);
      dQv_.col(k) += (Qp - Qm) / (2.0 * h);
      vp(k) = vm(k) = v(k);
    }
  }

  void Differentiator::point_element(const ForceSpec & s, const ForcePoint & fp, const VecX & v)
  {
    const int nv = mo_.model.nv;
    point_kin(fp.p1, k1_);
    Vec3 d = k1_.p;
    J_ = k1_.J;
    if (fp.p2 >= 0)
    {
      point_kin(fp.p2, k2_);
      d -= k2_.p;
      J_ -= k2_.J;
    }
    else if (s.kind == ForceKind::PointSpring || s.kind == ForceKind::PointDamper
             || s.kind == ForceKind::AnchorSpring)
      d -= s.target;
    // slice k of dJ: the linear rows of the Hessians' slices k (point 1 minus point 2)
    auto dJ = [&](int k) -> Matrix3x {
      const Eigen::Map<const Matrix6x> h1(k1_.H.data() + 6 * nv * k, 6, nv);
      Matrix3x out = h1.topRows<3>();
      if (fp.p2 >= 0)
        out -= Eigen::Map<const Matrix6x>(k2_.H.data() + 6 * nv * k, 6, nv).topRows<3>();
      return out;
    };
    switch (s.kind)
    {
    case ForceKind::PointSpring:
    {
      const double r = d.norm();
      double a = s.k, b = 0.0; // Q = -a J^T d; b = d a / d r / r
      if (!(s.L0 == 0.0 && s.k3 == 0.0))
      {
        if (r == 0.0)
        {
          dQq_(0, 0) = std::numeric_limits<double>::quiet_NaN();
          return;
        }
        const double e = r - s.L0;
        const double T = s.k * e + s.k3 * e * e * e, Tp = s.k + 3.0 * s.k3 * e * e;
        a = T / r;
        b = (Tp / r - T / (r * r)) / r;
      }
      const VecX JTd = J_.transpose() * d;
      for (int k = 0; k < nv; ++k)
      {
        const Vec3 Jk = J_.col(k);
        dQq_.col(k) -= a * (dJ(k).transpose() * d + J_.transpose() * Jk) + b * d.dot(Jk) * JTd;
      }
      break;
    }
    case ForceKind::PointDamper:
    {
      const double r = d.norm();
      if (r < 1e-12)
        break;
      const Vec3 e = d / r, u = J_ * v;
      const double rate = e.dot(u);
      const VecX JTe = J_.transpose() * e;
      for (int k = 0; k < nv; ++k)
      {
        const Matrix3x dJk = dJ(k);
        const Vec3 de = (J_.col(k) - e * e.dot(J_.col(k))) / r;
        const double drate = de.dot(u) + e.dot(dJk * v);
        dQq_.col(k) -= s.c * (drate * JTe + rate * (dJk.transpose() * e + J_.transpose() * de));
      }
      dQv_.noalias() -= s.c * (JTe * JTe.transpose());
      break;
    }
    case ForceKind::AnchorSpring:
    case ForceKind::AnchorDamper:
    {
      const Vec3 u = J_ * v;
      for (int k = 0; k < nv; ++k)
      {
        const Matrix3x dJk = dJ(k);
        for (int a : s.axes)
        {
          if (s.kind == ForceKind::AnchorSpring)
            dQq_.col(k) -= s.k * (dJk.row(a).transpose() * d(a) + J_.row(a).transpose() * J_(a, k));
          else
            dQq_.col(k) -= s.c * (dJk.row(a).transpose() * u(a) + J_.row(a).transpose() * dJk.row(a).dot(v));
        }
      }
      if (s.kind == ForceKind::AnchorDamper)
        for (int a : s.axes)
          dQv_.noalias() -= s.c * (J_.row(a).transpose() * J_.row(a));
      break;
    }
    case ForceKind::PointForce:
      for (int k = 0; k < nv; ++k)
        dQq_.col(k) += dJ(k).transpose() * s.F;
      break;
    default:
      break;
    }
  }
} // namespace pfaff
