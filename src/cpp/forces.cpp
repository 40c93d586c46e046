// Built-in force elements (see forces.hpp; pfaff.simulate.forces is the reference).
#include "forces.hpp"

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
    const VecX & g, double Vg)
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
      }
    }
    return ok;
  }
} // namespace pfaff
