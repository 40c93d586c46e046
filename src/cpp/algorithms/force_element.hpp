// What the force elements' files share (src/cpp/forces/<snake_case>.cpp, one per
// element, each declared by its first line "// PFAFF_FORCE(Name, points, gravity)";
// CMake collects those lines into forces.def): the state a force is evaluated at, the
// derivative pass's view of one element, a body point's terms and the checks two or
// more elements make. Each file defines, in pfaff::force_elements,
//   Name(spec, state, terms)   its Q added to terms.Q, its potential to terms.V (a
//                              conservative element) or its power Q.v to terms.power;
//                              false where the force is undefined (terms unchanged)
//   partials_Name(spec, p)     its dQ/d delta added to p.dQq (q perturbed as
//                              integrate(q, delta)) and dQ/dv to p.dQv, analytic
//   check_Name(model, spec, c) its own checks of a spec (check_force, builder.hpp, makes the
//                              ones common to all elements and those of its points;
//                              declared in model/forces.hpp, where the set-up reads it)
#pragma once

#include <memory>
#include <vector>

#include <unsupported/Eigen/CXX11/Tensor>

#include "model/check.hpp"
#include "model/core.hpp"
#include "model/core_detail.hpp"

namespace pfaff::force_elements
{
  /// The state an element's force is evaluated at (ForceTerms::evaluate)
  struct State
  {
    const std::vector<FrameKin> & frames; // the frame slots' kinematics at (q, v)
    const VecX & q;
    const VecX & v;
    const VecX & g; // gravity's generalized force at q (gravity 1 in forces.def), and
    double Vg;      // its potential
    double t;       // the time of the state (a Python law's)
  };

  /// A body point's position, Jacobian J (LOCAL_WORLD_ALIGNED, linear rows) and
  /// kinematic Hessian H (6 x nv x nv; slice k: dJ/d delta_k) at one q
  struct PointKin
  {
    Vec3 p;
    Matrix3x J;
    Eigen::Tensor<double, 3> H;
  };

  /// The derivative pass's view of one element (a Differentiator's, reused from state to
  /// state): the state, the partials the elements add to and, for an element with
  /// points (forces.def), their kinematics from the pass in which Pinocchio has the
  /// joint Jacobians of this q.
  struct Partials
  {
    const pinocchio::Model * model = nullptr;
    const VecX * q = nullptr;
    const VecX * v = nullptr;
    double t = 0.0; // a Python law's time
    MatX dQq, dQv;  // dQ/d delta, dQ/dv (nv x nv), summed over the elements
    // the element's points: k1 (s1's), k2 (s2's where two), d = p1 - p2 (p1 without a
    // second point) and J = J1 - J2
    PointKin k1, k2;
    bool two = false;
    Vec3 d;
    Matrix3x J;
    // a gravity compensation's derivative pass and dg/d delta
    std::unique_ptr<pinocchio::Data> gd;
    MatX dg;

    /// slice k of dJ/d delta: the linear rows of the Hessians' slices k (point 1 minus
    /// point 2)
    Matrix3x dJ(int k) const
    {
      const Eigen::Index nv = J.cols();
      Matrix3x out = Eigen::Map<const Matrix6x>(k1.H.data() + 6 * nv * k, 6, nv).topRows<3>();
      if (two)
        out -= Eigen::Map<const Matrix6x>(k2.H.data() + 6 * nv * k, 6, nv).topRows<3>();
      return out;
    }
  };

  /// A point fixed in frame f at off (the origin without has): its world position
  /// p = o + R r and Jacobian J = J_v - [R r]_x J_w (FrameState.point, point_jacobian)
  inline void point(const FrameKin & f, bool has, const Vec3 & off, Vec3 & p, Matrix3x & J)
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
    J.noalias() -= detail::skew(r) * f.J.bottomRows<3>();
  }

  /// the world axes (spec.axes) an anchor element acts along: each 0, 1 or 2
  inline void check_axes(const ForceSpec & s, const Check & c)
  {
    for (int a : s.axes)
      c.index(a, 3, "spec.axes[i]", "a world axis: 0, 1, 2");
  }

  /// a two-point element's d = p1 - p2 into w.d and J = J1 - J2 into w.J (s2 = -1: p2
  /// is the world point target); w.Jb a workspace
  void two_points(const std::vector<FrameKin> & frames, const ForceSpec & s, ForceTerms & w);
  /// MuJoCo's mju_subQuat: the rotation vector of qb^-1 qa (quaternions x, y, z, w)
  Vec3 sub_quat(const double * qa, const double * qb);
  /// the rotation of a unit quaternion (x, y, z, w)
  Mat3 quat_rotation(const double * q);
  /// a transmission's coordinates: one q index, v index and finite coefficient each
  void check_coordinates(const Model & mo, const ForceSpec & s, const Check & c);
  /// a ball (4 q, 3 v) or free (7 q, 6 v) joint's first q index (with_iq) and v index
  void check_ball_joint(const Model & mo, const ForceSpec & s, const Check & c, bool with_iq);

#define PFAFF_FORCE(K, points, gravity)                                                     \
  bool K(const ForceSpec & s, const State & x, ForceTerms & out);                           \
  void partials_##K(const ForceSpec & s, Partials & p);
#include "forces.def"
#undef PFAFF_FORCE
} // namespace pfaff::force_elements
