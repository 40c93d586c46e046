// Built-in force elements (see forces.hpp; pfaff.simulate.forces is the reference).
#include "forces.hpp"

#include <algorithm>
#include <cmath>

#include "core.hpp"

namespace pfaff
{
  namespace
  {
    Mat3 skew3(const Vec3 & r)
    {
      Mat3 S;
      S << 0.0, -r.z(), r.y(), r.z(), 0.0, -r.x(), -r.y(), r.x(), 0.0;
      return S;
    }

    // FrameState.point / point_jacobian: p = o + R r, J = J_v - [R r]_x J_w
    void point(const FrameKin & f, bool has, const Vec3 & off, Vec3 & p, Matrix3x & J)
    {
      if (!has)
      {
        p = f.p;
        J = f.J.topRows<3>();
        return;
      }
      const Vec3 r = f.R * off;
      p = f.p + r;
      J = f.J.topRows<3>();
      J.noalias() -= skew3(r) * f.J.bottomRows<3>();
    }
  } // namespace

  Vec3 sub_quat(const double * qa, const double * qb)
  {
    // qdif = qb^-1 qa (Pinocchio's order x, y, z, w); its rotation vector, the angle
    // wrapped into (-pi, pi] as mju_quat2Vel does
    const Eigen::Quaterniond a(qa[3], qa[0], qa[1], qa[2]), b(qb[3], qb[0], qb[1], qb[2]);
    const Eigen::Quaterniond dq = b.conjugate() * a;
    const Vec3 axis = dq.vec();
    const double s = axis.norm();
    if (s == 0.0)
      return Vec3::Zero();
    double angle = 2.0 * std::atan2(s, dq.w());
    if (angle > M_PI)
      angle -= 2.0 * M_PI;
    return axis * (angle / s);
  }

  Mat3 quat_rotation(const double * q)
  {
    return Eigen::Quaterniond(q[3], q[0], q[1], q[2]).normalized().toRotationMatrix();
  }

  double actuator_force(const ForceSpec & s, const VecX & q, const VecX & v, double & rate)
  {
    double len = s.offset;
    rate = 0.0;
    for (size_t j = 0; j < s.coefs.size(); ++j)
    {
      len += s.coefs[j] * q(s.iqs[j]);
      rate += s.coefs[j] * v(s.ivs[j]);
    }
    len *= s.gear;
    rate *= s.gear;
    return (s.g0 + s.g1 * len + s.g2 * rate) * s.ctrl + s.b0 + s.b1 * len + s.b2 * rate;
  }

  void ForceTerms::resize(int nv)
  {
    Q.setZero(nv);
    Qe_.setZero(nv);
    J_.setZero(3, nv);
    Jb_.setZero(3, nv);
  }

  // d_ = p1 - p2, J_ = J1 - J2
  void ForceTerms::two_points(const std::vector<FrameKin> & frames, const ForceSpec & s)
  {
    Vec3 p, pb;
    point(frames[s.s1], s.has_p1, s.p1, p, J_);
    if (s.s2 < 0)
      d_ = p - s.target;
    else
    {
      point(frames[s.s2], s.has_p2, s.p2, pb, Jb_);
      d_ = p - pb;
      J_ -= Jb_;
    }
  }

  bool ForceTerms::evaluate(
    const ForceSet & fs, const std::vector<FrameKin> & frames, const VecX & q, const VecX & v,
    const VecX & g, double Vg, double t)
  {
    Q.setZero();
    V = power = 0.0;
    bool ok = true;
    for (const auto & s : fs.specs)
    {
      switch (s.kind)
      {
      case ForceKind::PointSpring:
      {
        two_points(frames, s);
        const double r = d_.norm();
        if (s.L0 == 0.0 && s.k3 == 0.0)
        {
          Q.noalias() -= s.k * (J_.transpose() * d_);
          V += 0.5 * s.k * r * r;
          break;
        }
        if (r == 0.0)
        {
          ok = false; // direction undefined (the NumPy engine raises)
          break;
        }
        const double e = r - s.L0;
        const double T = s.k * e + s.k3 * e * e * e;
        V += 0.5 * s.k * e * e + 0.25 * s.k3 * e * e * e * e;
        Q.noalias() -= (T / r) * (J_.transpose() * d_);
        break;
      }
      case ForceKind::PointDamper:
      {
        two_points(frames, s);
        const double r = d_.norm();
        if (r < 1e-12)
          break;
        Qe_.noalias() = J_.transpose() * (d_ / r);
        const double rate = Qe_.dot(v);
        Qe_ *= -s.c * rate;
        Q += Qe_;
        power += Qe_.dot(v);
        break;
      }
      case ForceKind::JointSpring:
      {
        const double x = q(s.iq) - s.rest;
        Q(s.iv) -= s.k * x;
        V += 0.5 * s.k * x * x;
        break;
      }
      case ForceKind::CoordinateSpring:
      {
        double x = -s.rest;
        for (size_t j = 0; j < s.coefs.size(); ++j)
          x += s.coefs[j] * q(s.iqs[j]);
        for (size_t j = 0; j < s.coefs.size(); ++j)
          Q(s.ivs[j]) -= s.k * x * s.coefs[j];
        V += 0.5 * s.k * x * x;
        break;
      }
      case ForceKind::JointDamper:
      {
        const double f = -s.c * v(s.iv);
        Q(s.iv) += f;
        power += f * v(s.iv);
        break;
      }
      case ForceKind::AnchorSpring:
      {
        Vec3 p;
        point(frames[s.s1], s.has_p1, s.p1, p, J_);
        for (int a : s.axes)
        {
          const double d = p(a) - s.target(a);
          Q.noalias() -= (s.k * d) * J_.row(a).transpose();
          V += 0.5 * s.k * d * d;
        }
        break;
      }
      case ForceKind::AnchorDamper:
      {
        Vec3 p;
        point(frames[s.s1], s.has_p1, s.p1, p, J_);
        for (int a : s.axes)
        {
          const double rate = J_.row(a).dot(v);
          Q.noalias() -= (s.c * rate) * J_.row(a).transpose();
          power -= s.c * rate * rate;
        }
        break;
      }
      case ForceKind::PointForce:
      {
        Vec3 p;
        point(frames[s.s1], s.has_p1, s.p1, p, J_);
        Q.noalias() += J_.transpose() * s.F;
        V -= s.F.dot(p);
        break;
      }
      case ForceKind::GravityCompensation:
        Q += g;
        V -= Vg;
        break;
      case ForceKind::Actuator:
      {
        double rate;
        const double f = std::min(std::max(actuator_force(s, q, v, rate), s.flo), s.fhi);
        for (size_t j = 0; j < s.coefs.size(); ++j)
          Q(s.ivs[j]) += s.gear * s.coefs[j] * f;
        power += f * rate;
        break;
      }
      case ForceKind::BallSpring:
      {
        int iq = s.iq, iv = s.iv;
        double x2 = 0.0;
        if (s.free)
        {
          const Vec3 dp = q.segment<3>(iq) - Eigen::Map<const Vec3>(s.ref.data());
          Q.segment<3>(iv).noalias() -= s.k * (quat_rotation(q.data() + iq + 3).transpose() * dp);
          x2 += dp.squaredNorm();
          iq += 3;
          iv += 3;
        }
        const Vec3 w = sub_quat(q.data() + iq, s.ref.data() + (s.free ? 3 : 0));
        Q.segment<3>(iv) -= s.k * w;
        V += 0.5 * s.k * (x2 + w.squaredNorm());
        break;
      }
      case ForceKind::Python:
      {
        Qe_.setZero();
        const double Ve = (*s.law)(t, q, v, Qe_);
        Q += Qe_;
        if (s.conservative)
          V += Ve;
        else
          power += Qe_.dot(v);
        break;
      }
      case ForceKind::DofDamper:
      {
        int iv = s.iv;
        const int n = int(s.coefs.size());
        Qe_.head(n).setZero();
        if (s.free)
        {
          const Mat3 R = quat_rotation(q.data() + s.iq + 3);
          const Vec3 c(s.coefs[0], s.coefs[1], s.coefs[2]);
          Qe_.head<3>().noalias() = -(R.transpose() * (c.asDiagonal() * (R * v.segment<3>(iv))));
        }
        for (int j = s.free ? 3 : 0; j < n; ++j)
          Qe_(j) = -s.coefs[size_t(j)] * v(iv + j);
        Q.segment(iv, n) += Qe_.head(n);
        power += Qe_.head(n).dot(v.segment(iv, n));
        break;
      }
      }
    }
    return ok;
  }
} // namespace pfaff
