// See yz_box.hpp; the Python each block mirrors is named in its comment.
#include "yz_box.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Geometry>

#include "pinocchio/spatial.hpp" // skew

namespace pfaff
{
  namespace
  {
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
    grasp.A_S = A_S;
    grasp.E_P = E_P;
    grasp.E_F = E_F;
    grasp.E_P_rate.setZero(E_P.rows(), E_P.cols());
    grasp.E_F_rate.setZero(E_F.rows(), E_F.cols());
    grasp.I_B = I_B;
  }

  // DualPandaPlant.object_state, grasp_state (rigid_matrices), Q_r, measure
  void yz_box_terms(
    YZRigidBox & box, const ControlVec & q, const ControlVec & v, const ControlVec & lam)
  {
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
    box.F_h.noalias() = box.F_sel * lam;
    box.w_env.noalias() = box.E_sel * lam;
    box.f_F.noalias() = -g.E_F * (g.T.transpose() * box.w_env);
    box.f_IS.noalias() = g.A_S.transpose() * (g.S.transpose() * box.F_h);
  }

  void yz_box_sample(
    YZRigidBox & box, YZServo & servo, const ControlVec & q, const ControlVec & v,
    const ControlVec & lam, const ControlMat & M, const ControlVec & h, const ControlVec & qd,
    const ControlMat & J, const ControlVec & Jdqd, const ControlVec & r_Pd,
    const ControlVec & r_Pd_dot, const ControlVec & r_Pd_dd, const ControlVec & f_Fd,
    const ControlVec & f_ISd, const ControlVec & held)
  {
    yz_box_terms(box, q, v, lam);
    yz_servo(
      servo, box.r_P, box.rP_dot, box.f_F, box.f_IS, r_Pd, r_Pd_dot, r_Pd_dd, f_Fd, f_ISd,
      box.u1, box.u2, box.u3);
    yz_torque(
      M, h, qd, J, Jdqd, box.grasp, box.Q_r, box.rd, box.u1, box.u2, box.u3, held,
      servo.trapezoid, box.work, box.out);
    // the force at the start of the next hold: the reading plus the torque step's
    // effect through K of eq. (31)
    servo.start_F = box.f_F;
    servo.start_I = box.f_IS;
    if (servo.trapezoid)
    {
      servo.start_F += box.out.dF;
      servo.start_I += box.out.dfIS;
    }
    servo.has_start = true;
  }
} // namespace pfaff
