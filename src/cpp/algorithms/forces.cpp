// The force elements' dispatch (forces.def; one file per element in src/cpp/forces/)
// and the helpers they share (force_element.hpp).
#include "model/forces.hpp"

#include <cmath>

#include "algorithms/force_element.hpp"

namespace pfaff
{
  namespace
  {
    using Force = bool (*)(const ForceSpec &, const force_elements::State &, ForceTerms &);
    constexpr Force kForce[] = {
#define PFAFF_FORCE(K, points, gravity) &force_elements::K,
#include "forces.def"
#undef PFAFF_FORCE
    };
    constexpr int kPoints[] = {
#define PFAFF_FORCE(K, points, gravity) points,
#include "forces.def"
#undef PFAFF_FORCE
    };
    constexpr bool kGravity[] = {
#define PFAFF_FORCE(K, points, gravity) gravity != 0,
#include "forces.def"
#undef PFAFF_FORCE
    };
  } // namespace

  int force_points(ForceKind k) { return kPoints[int(k)]; }
  bool force_reads_gravity(ForceKind k) { return kGravity[int(k)]; }

  void ForceTerms::resize(int nv)
  {
    Q.setZero(nv);
    Qe.setZero(nv);
    J.setZero(3, nv);
    Jb.setZero(3, nv);
  }

  bool ForceTerms::evaluate(
    const ForceSet & fs, const std::vector<FrameKin> & frames, const VecX & q, const VecX & v,
    const VecX & g, double Vg, double t)
  {
    Q.setZero();
    V = power = 0.0;
    bool ok = true;
    const force_elements::State x{frames, q, v, g, Vg, t};
    for (const auto & s : fs.specs)
      if (!kForce[int(s.kind)](s, x, *this))
        ok = false;
    return ok;
  }
} // namespace pfaff

namespace pfaff::force_elements
{
  void two_points(const std::vector<FrameKin> & frames, const ForceSpec & s, ForceTerms & w)
  {
    Vec3 p, pb;
    point(frames[s.s1], s.has_p1, s.p1, p, w.J);
    if (s.s2 < 0)
      w.d = p - s.target;
    else
    {
      point(frames[s.s2], s.has_p2, s.p2, pb, w.Jb);
      w.d = p - pb;
      w.J -= w.Jb;
    }
  }

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

  void check_coordinates(const Model & mo, const ForceSpec & s, const Check & c)
  {
    if (s.iqs.size() != s.coefs.size() || s.ivs.size() != s.coefs.size())
      c.fail("spec.iqs, spec.ivs, spec.coefs: one q index, v index and coefficient each");
    for (size_t i = 0; i < s.iqs.size(); ++i)
    {
      c.index(s.iqs[i], mo.model.nq, "spec.iqs[i]", "a q index (nq)");
      c.index(s.ivs[i], mo.model.nv, "spec.ivs[i]", "a v index (nv)");
      c.number(s.coefs[i], "spec.coefs[i]", -HUGE_VAL, false);
    }
  }

  void check_ball_joint(const Model & mo, const ForceSpec & s, const Check & c, bool with_iq)
  {
    const long nq = s.free ? 7 : 4, nv = s.free ? 6 : 3;
    if (with_iq)
      c.index(s.iq, mo.model.nq - nq + 1, "spec.iq", "the joint's first q index (nq)");
    c.index(s.iv, mo.model.nv - nv + 1, "spec.iv", "the joint's first v index (nv)");
  }
} // namespace pfaff::force_elements
