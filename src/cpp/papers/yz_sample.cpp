// See yz_sample.hpp; the Python each block mirrors is named in its comment.
#include "papers/yz_sample.hpp"
#include "model/check.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <Eigen/Geometry>

#include "pinocchio/spatial.hpp" // skew

namespace pfaff
{
  namespace
  {
    // the first n multipliers (a selection matrix's columns), or an error naming it
    Eigen::Ref<const ControlVec> multipliers(const ControlVec & lam, Eigen::Index n,
                                             const char * what)
    {
      if (lam.size() < n)
        throw std::invalid_argument(
          std::string(what) + " reads " + std::to_string(n) + " multipliers; lambda has "
          + std::to_string(lam.size()));
      return lam.head(n);
    }

    // a gain of eq. (42)-(43): one value for every component, or one per component
    double gain(const ControlVec & K, Eigen::Index i) { return K.size() == 1 ? K(0) : K(i); }

    // YZController._hold_mean: the force over a hold, trapezoid of its start and end
    void hold_error(
      const YZServo & s, const ControlVec & prev, const ControlVec & start,
      const ControlVec & end, ControlVec & integral)
    {
      const bool mean = s.trapezoid && s.has_start;
      for (Eigen::Index i = 0; i < end.size(); ++i)
        integral(i) += s.dt * (prev(i) - (mean ? 0.5 * (start(i) + end(i)) : end(i)));
    }
  } // namespace

  // YZController._law, eq. (41)-(43)
  void yz_servo(
    YZServo & s, const ControlVec & r_P, const ControlVec & rP_dot, const ControlVec & f_F,
    const ControlVec & f_IS, const ControlVec & r_Pd, const ControlVec & r_Pd_dot,
    const ControlVec & r_Pd_dd, const ControlVec & f_Fd, const ControlVec & f_ISd,
    ControlVec & u1, ControlVec & u2, ControlVec & u3)
  {
    const Eigen::Index C = f_Fd.size(), k = f_ISd.size();
    bool prev_I = s.has_prev, prev_F = s.has_prev;
    if (!s.has_int_I) // the integrators start at -f_d / K (unloaded) or 0
    {
      s.int_I.resize(k);
      for (Eigen::Index i = 0; i < k; ++i)
        s.int_I(i) = s.unloaded ? -f_ISd(i) / gain(s.K_II, i) : 0.0;
      s.has_int_I = true;
      prev_I = false;
    }
    if (!s.has_int_F || s.int_F.size() != C)
    {
      s.int_F.resize(C);
      for (Eigen::Index i = 0; i < C; ++i)
        s.int_F(i) = s.unloaded ? -f_Fd(i) / gain(s.K_IF, i) : 0.0;
      s.has_int_F = true;
      prev_F = false;
    }
    if (prev_F)
      hold_error(s, s.prev_F, s.start_F, f_F, s.int_F);
    if (prev_I)
      hold_error(s, s.prev_I, s.start_I, f_IS, s.int_I);
    s.prev_F = f_Fd;
    s.prev_I = f_ISd;
    s.has_prev = true;
    u1 = r_Pd_dd.array() + s.K_V.array() * (r_Pd_dot - rP_dot).array()
         + s.K_P.array() * (r_Pd - r_P).array();
    u2.resize(C);
    for (Eigen::Index i = 0; i < C; ++i)
      u2(i) = f_Fd(i) + gain(s.K_IF, i) * s.int_F(i);
    u3.resize(k);
    for (Eigen::Index i = 0; i < k; ++i)
      u3(i) = f_ISd(i) + gain(s.K_II, i) * s.int_I(i);
  }

  void YZRigidBox::set_object(
    const ControlMat & A_S, const ControlMat & E_P, const ControlMat & E_F,
    const ControlMat & I_B)
  {
    const Check c{"YZRigidBox.set_object"};
    c.mat(A_S, -1, -1, "A_S", "6k x internal forces").mat(I_B, 6, 6, "I_B", "the box's inertia");
    c.mat(E_P, E_P.rows() <= 6 ? -1 : 6, 6, "E_P", "at most 6 position functions of r");
    c.mat(E_F, 6 - E_P.rows(), 6, "E_F", "6 - E_P's rows, eq. 17-18");
    grasp.A_S = A_S;
    grasp.E_P = E_P;
    grasp.E_F = E_F;
    grasp.E_P_rate.setZero(E_P.rows(), E_P.cols());
    grasp.E_F_rate.setZero(E_F.rows(), E_F.cols());
    grasp.I_B = I_B;
  }

  // DualPandaPlant.object_state, grasp_state (rigid_matrices), Q_r, measure
  void yz_terms(
    YZRigidBox & box, const ControlVec & q, const ControlVec & v, const ControlVec & lam)
  {
    if (box.mode != 0)
      throw std::invalid_argument(
        "YZRigidBox: mode " + std::to_string(box.mode) + "; the box has one "
        "object-constraint set, mode 0");
    const Eigen::Vector3d p = q.segment<3>(box.iq);
    const Eigen::Quaterniond quat(q(box.iq + 6), q(box.iq + 3), q(box.iq + 4), q(box.iq + 5));
    const Eigen::Matrix3d R = quat.toRotationMatrix();
    const Eigen::Vector3d vel = R * v.segment<3>(box.iv), w = R * v.segment<3>(box.iv + 3);
    // r = (p, zyz(R R_C)), theta in (0, pi) (dual_panda.zyz_angles)
    const Eigen::Matrix3d Rr = R * box.R_C;
    const double phi = std::atan2(Rr(1, 2), Rr(0, 2));
    const double theta = std::acos(std::max(-1.0, std::min(1.0, Rr(2, 2))));
    const double psi = std::atan2(Rr(2, 1), -Rr(2, 0));
    box.r.resize(6);
    box.r << p, phi, theta, psi;
    // T = diag(I, T_r) of eq. (6-7), r' = T^-1 (v, w), T' along r' (objects.euler_zyz_T*)
    const double sp = std::sin(phi), cp = std::cos(phi);
    const double st = std::sin(theta), ct = std::cos(theta);
    Eigen::Matrix3d Tr;
    Tr << 0.0, -sp, cp * st, 0.0, cp, sp * st, 1.0, 0.0, ct;
    box.rd.resize(6);
    box.rd.head<3>() = vel;
    box.rd.tail<3>() = Tr.partialPivLu().solve(w);
    const double dp = box.rd(3), dth = box.rd(4);
    YZGrasp & g = box.grasp;
    g.T.setIdentity(6, 6);
    g.T.bottomRightCorner<3, 3>() = Tr;
    g.T_rate.setZero(6, 6);
    g.T_rate.bottomRightCorner<3, 3>() << 0.0, -cp * dp, -sp * st * dp + cp * ct * dth, 0.0,
      -sp * dp, cp * st * dp + sp * ct * dth, 0.0, 0.0, -st * dth;
    // S, W, S', W' of the rigid grasps (rigid_matrices, eq. 9, 11)
    const Eigen::Index nk = box.c_hands.cols();
    const Eigen::Matrix3d wx = pinocchio::skew(w);
    g.S.setZero(6 * nk, 6 * nk);
    g.S_rate.setZero(6 * nk, 6 * nk);
    g.W.setZero(6, 6 * nk);
    g.W_rate.setZero(6, 6 * nk);
    for (Eigen::Index i = 0; i < nk; ++i)
    {
      const Eigen::Matrix3d RC = R * box.R_hands.middleCols<3>(3 * i);
      const Eigen::Matrix3d RCd = wx * RC;
      for (int b = 0; b < 2; ++b)
      {
        g.S.block<3, 3>(6 * i + 3 * b, 6 * i + 3 * b) = RC;
        g.S_rate.block<3, 3>(6 * i + 3 * b, 6 * i + 3 * b) = RCd;
      }
      const Eigen::Vector3d ri = R * box.c_hands.col(i);
      g.W.block<6, 6>(0, 6 * i).setIdentity();
      g.W.block<3, 3>(3, 6 * i) = pinocchio::skew(ri);
      g.W_rate.block<3, 3>(3, 6 * i) = pinocchio::skew(w.cross(ri)); // [r]_x' = [w x r]_x
    }
    box.r_P = box.P_off;
    box.r_P.noalias() += g.E_P * box.r;
    box.rP_dot.noalias() = g.E_P * box.rd;
    // eq. (5): Q_r = I_B T' r' + (-m g, w x I w)
    box.Q_r.noalias() = g.I_B * (g.T_rate * box.rd);
    box.Q_r.head<3>() -= g.I_B(0, 0) * box.g;
    box.Q_r.tail<3>() += w.cross(g.I_B.bottomRightCorner<3, 3>() * w);
    // measure: F_h, f_F = -E_F T^T w_env (eq. 27); F_hS = S^T F_h, f_IS = A_S^T F_hS
    box.F_h.noalias() = box.F_sel * multipliers(lam, box.F_sel.cols(), "F_sel");
    box.w_env.noalias() = box.E_sel * multipliers(lam, box.E_sel.cols(), "E_sel");
    box.f_F.noalias() = -g.E_F * (g.T.transpose() * box.w_env);
    box.f_IS.noalias() = g.A_S.transpose() * (g.S.transpose() * box.F_h);
  }

  void YZPinnedPlane::set_object(const ControlMat & A_S, const ControlMat & I_B)
  {
    const Check c{"YZPinnedPlane.set_object"};
    c.mat(A_S, -1, -1, "A_S", "2k x internal forces").mat(I_B, 3, 3, "I_B", "the inertia");
    grasp.A_S = A_S;
    grasp.I_B = I_B;
    grasp.T.setIdentity(3, 3);
    grasp.T_rate.setZero(3, 3);
  }

  int YZPinnedPlane::add_set(
    const ControlMat & E_P, const ControlVec & P_off, const ControlMat & offsets,
    const ControlMat & normals, const ControlVec & levels, const ControlMat & f_sel)
  {
    const Check c{"YZPinnedPlane.add_set"};
    const Eigen::Index C = levels.size(), p = 3 - C;
    c.index(C, 4, "levels' size C", "C hypersurfaces, eq. 17-18: C + dim r_P = 3");
    c.vec(levels, C, "levels", "C").mat(E_P, p, 3, "E_P", "3 - C rows, C = levels' size");
    c.vec(P_off, p, "P_off", "3 - C").mat(offsets, C, 2, "offsets", "C x 2");
    c.mat(normals, C, 2, "normals", "C x 2").mat(f_sel, C, -1, "f_sel", "C x multipliers");
    sets.push_back({E_P, offsets, normals, f_sel, P_off, levels});
    return static_cast<int>(sets.size()) - 1;
  }

  // YZPlanarPlant.object_state, grasp_state (pin_matrices, ObjectConstraints with
  // planar_contact_surface), Q_r, measure
  void yz_terms(
    YZPinnedPlane & plane, const ControlVec & q, const ControlVec & v, const ControlVec & lam)
  {
    if (plane.mode < 0 || plane.mode >= static_cast<int>(plane.sets.size()))
      throw std::invalid_argument(
        "YZPinnedPlane: mode " + std::to_string(plane.mode) + " has no object-constraint "
        "set; valid: 0 .. " + std::to_string(static_cast<int>(plane.sets.size()) - 1));
    const PlaneObjectSet & set = plane.sets[static_cast<std::size_t>(plane.mode)];
    plane.r = q.segment<3>(plane.iq);
    plane.rd = v.segment<3>(plane.iv);
    const double c = std::cos(plane.r(2)), s = std::sin(plane.r(2)), w = plane.rd(2);
    Eigen::Matrix2d R, dR; // R(theta) and dR/dtheta
    R << c, -s, s, c;
    dR << -s, -c, c, -s;
    YZGrasp & g = plane.grasp;
    const Eigen::Index nk = plane.c_hands.cols();
    g.S.setZero(3 * nk, 2 * nk);
    g.S_rate.setZero(3 * nk, 2 * nk);
    g.W.setZero(3, 3 * nk);
    g.W_rate.setZero(3, 3 * nk);
    for (Eigen::Index i = 0; i < nk; ++i)
    {
      g.S.block<2, 2>(3 * i, 2 * i) = R;
      g.S_rate.block<2, 2>(3 * i, 2 * i) = w * dR;
      const Eigen::Vector2d ri = R * plane.c_hands.col(i);
      g.W.block<3, 3>(0, 3 * i).setIdentity();
      g.W(2, 3 * i) = -ri.y();
      g.W(2, 3 * i + 1) = ri.x();
      g.W_rate(2, 3 * i) = -w * ri.x();
      g.W_rate(2, 3 * i + 1) = -w * ri.y();
    }
    // eq. (19-22): E_P constant; a contact row (n, n . R' o) and its rate (0, 0,
    // -(n . R o) theta')
    const Eigen::Index C = set.levels.size();
    g.E_P = set.E_P;
    g.E_P_rate.setZero(3 - C, 3);
    g.E_F.resize(C, 3);
    g.E_F_rate.setZero(C, 3);
    for (Eigen::Index i = 0; i < C; ++i)
    {
      const Eigen::Vector2d n = set.normals.row(i).transpose().normalized();
      const Eigen::Vector2d o = set.offsets.row(i).transpose();
      g.E_F.row(i) << n.x(), n.y(), n.dot(dR * o);
      g.E_F_rate(i, 2) = -n.dot(R * o) * w;
    }
    plane.r_P = set.P_off;
    plane.r_P.noalias() += g.E_P * plane.r;
    plane.rP_dot.noalias() = g.E_P * plane.rd;
    plane.Q_r.setZero(3);
    // measure: the pins' forces and the constraint forces from the multipliers;
    // f_IS = A_S^T S^T F_h (S has orthonormal columns)
    plane.F_h.noalias() = plane.F_sel * multipliers(lam, plane.F_sel.cols(), "F_sel");
    plane.f_F.noalias() = set.f_sel * multipliers(lam, set.f_sel.cols(), "f_sel");
    plane.f_IS.noalias() = g.A_S.transpose() * (g.S.transpose() * plane.F_h);
  }

  void yz_law(
    YZSample & s, YZServo & servo, const ControlMat & M, const ControlVec & h,
    const ControlVec & qd, const ControlMat & J, const ControlVec & Jdqd,
    const ControlVec & r_Pd, const ControlVec & r_Pd_dot, const ControlVec & r_Pd_dd,
    const ControlVec & f_Fd, const ControlVec & f_ISd, const ControlVec & held)
  {
    const YZGrasp & g = s.grasp;
    if (r_Pd.size() != g.E_P.rows() || r_Pd_dot.size() != g.E_P.rows()
        || r_Pd_dd.size() != g.E_P.rows() || f_Fd.size() != g.E_F.rows()
        || f_ISd.size() != g.A_S.cols())
      throw std::invalid_argument(
        "YZ sample in mode " + std::to_string(s.mode) + ": the reference gives r_Pd of size "
        + std::to_string(r_Pd.size()) + ", f_Fd " + std::to_string(f_Fd.size()) + ", f_ISd "
        + std::to_string(f_ISd.size()) + "; the object-constraint set has "
        + std::to_string(g.E_P.rows()) + " position functions, "
        + std::to_string(g.E_F.rows()) + " hypersurfaces and "
        + std::to_string(g.A_S.cols()) + " internal forces (eq. 41-43)");
    yz_servo(
      servo, s.r_P, s.rP_dot, s.f_F, s.f_IS, r_Pd, r_Pd_dot, r_Pd_dd, f_Fd, f_ISd, s.u1,
      s.u2, s.u3);
    yz_torque(
      M, h, qd, J, Jdqd, s.grasp, s.Q_r, s.rd, s.u1, s.u2, s.u3, held, servo.trapezoid,
      s.work, s.out);
    // the force at the start of the next hold: the reading plus the torque step's
    // effect through K of eq. (31)
    servo.start_F = s.f_F;
    servo.start_I = s.f_IS;
    if (servo.trapezoid)
    {
      servo.start_F += s.out.dF;
      servo.start_I += s.out.dfIS;
    }
    servo.has_start = true;
  }
} // namespace pfaff
