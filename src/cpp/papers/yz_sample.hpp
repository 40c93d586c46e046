// One compiled sample of YZController (Yoshikawa & Zheng, IJRR 1993) on a plant whose
// terms the core knows -- a box held by rigid grasps, a planar object held by pins: the
// object and grasp terms (eq. 3-22), the measured forces (eq. 27), the servo compensators
// (eq. 41-43) and the law (eq. 31-37, yz_torque) in one call.
// References: the plants' object_state, grasp_state, Q_r, measure
// (pfaff.systems.dual_panda.DualPandaPlant, pfaff.systems.yz_planar.YZPlanarPlant) and
// YZController._law; the tests hold each to its reference.
#pragma once

#include <vector>

#include "papers/control.hpp"

namespace pfaff
{
  /// The servo state of eq. (41)-(43) (YZController's int_F, int_I, _prev, _start) and
  /// its gains. The compiled law owns it; YZController's reset, set_mode and interrupt
  /// clear its flags. K_IF, K_II: one value, or one per component.
  struct YZServo
  {
    ControlVec K_V, K_P, K_IF, K_II;
    double dt = 2e-3;
    bool trapezoid = true, unloaded = false;
    bool has_int_F = false, has_int_I = false, has_prev = false, has_start = false;
    ControlVec int_F, int_I, prev_F, prev_I, start_F, start_I;
  };

  /// u1, u2, u3 of eq. (41)-(43) from the measured r_P, r_P', f_F, f_IS and the
  /// reference, the integrals of the force errors over the last hold updated first
  /// (the trapezoid of the estimated force at the hold's start and the reading at its
  /// end, or the reading alone); as YZController._law.
  void yz_servo(
    YZServo & s, const ControlVec & r_P, const ControlVec & rP_dot, const ControlVec & f_F,
    const ControlVec & f_IS, const ControlVec & r_Pd, const ControlVec & r_Pd_dot,
    const ControlVec & r_Pd_dd, const ControlVec & f_Fd, const ControlVec & f_ISd,
    ControlVec & u1, ControlVec & u2, ControlVec & u3);

  /// What one compiled sample of YZController computes (the plant's terms, the servo's
  /// inputs and the law's parts; the tests read them): the grasp terms (eq. 3-22), r, r',
  /// Q_r (eq. 5), r_P, r_P', the measured hand wrenches F_h and forces f_F, f_IS (eq. 27,
  /// 12), u1, u2, u3 (eq. 41-43) and yz_torque's out. mode: the object-constraint set.
  struct YZSample
  {
    int mode = 0;
    YZGrasp grasp;
    YZWork work;
    YZOut out;
    ControlVec r, rd, Q_r, r_P, rP_dot, F_h, f_F, f_IS, u1, u2, u3;
  };

  /// A box as a free flyer (q at iq: p, quaternion x y z w; v at iv: body-frame linear,
  /// angular) held by k rigid grasps (S_i = diag(R_B R_i, R_B R_i), W_i = [[I, 0],
  /// [[R_B c_i]_x, I]]), r = (p, Z-Y-Z angles of R_B R_C) (eq. 6-7), linear object
  /// constraints (E_P, E_F constant, r_P = E_P r + P_off), the controller's inertia I_B
  /// (mass I_B(0, 0)) under gravity g. The hand wrenches are the rows F_sel lambda of the
  /// multipliers, the environment's wrench on the box w_env = E_sel lambda. The constant
  /// A_S, E_P, E_F (zero rates) and I_B stand in grasp (set_object). One
  /// object-constraint set: mode 0.
  struct YZRigidBox : YZSample
  {
    int iq = 0, iv = 0;
    Eigen::Matrix3d R_C = Eigen::Matrix3d::Identity();
    ControlMat R_hands, c_hands; // 3 x 3k: [R_1 .. R_k]; 3 x k: [c_1 .. c_k]
    ControlMat F_sel, E_sel;
    ControlVec P_off;
    Eigen::Vector3d g = Eigen::Vector3d::Zero();
    ControlVec w_env;
    /// the constant terms of grasp: A_S (eq. 12), E_P, E_F (eq. 19, 21; their rates
    /// zero) and I_B
    void set_object(
      const ControlMat & A_S, const ControlMat & E_P, const ControlMat & E_F,
      const ControlMat & I_B);
  };

  /// One object-constraint set of a YZPinnedPlane (eq. 17-22): the position functions
  /// linear, r_P = E_P r + P_off; each hypersurface a body point o_i of the object on the
  /// line n_i . x = level_i (objects.planar_contact_surface: p_i = n_i . (x + R o_i) -
  /// level_i); the constraint forces f_F = f_sel lambda (the first f_sel.cols()
  /// multipliers).
  struct PlaneObjectSet
  {
    ControlMat E_P, offsets, normals, f_sel; // (3 - C) x 3, C x 2, C x 2, C x m
    ControlVec P_off, levels;
  };

  /// A planar object, r = (x, y, theta) at q[iq], its rate at v[iv] (T = I, eq. 4), held
  /// by k pins at the body points c_hands (2 x k): S_i = diag(R, 1) [I_2 0]^T, W_i =
  /// [[I_2, 0], [[-r_y, r_x], 1]] with r_i = R c_i (eq. 9, 11); no gravity (Q_r = 0,
  /// Sec. 5). The hand wrenches F_h = F_sel lambda (the first F_sel.cols() multipliers);
  /// A_S and I_B constant (set_object); the object-constraint sets indexed by mode
  /// (add_set). Reference: pfaff.systems.yz_planar.YZPlanarPlant.
  struct YZPinnedPlane : YZSample
  {
    int iq = 0, iv = 0;
    ControlMat c_hands, F_sel;
    std::vector<PlaneObjectSet> sets;
    void set_object(const ControlMat & A_S, const ControlMat & I_B);
    /// a set of E_P, P_off and the hypersurfaces (offsets, normals, levels), f_sel;
    /// returns its mode
    int add_set(
      const ControlMat & E_P, const ControlVec & P_off, const ControlMat & offsets,
      const ControlMat & normals, const ControlVec & levels, const ControlMat & f_sel);
  };

  /// The object terms of (q, v) and the measured forces of lambda into the plant's
  /// sample (r, rd, grasp, Q_r, r_P, rP_dot, F_h, f_F, f_IS): the plant's object_state,
  /// grasp_state, Q_r, measure (DualPandaPlant, YZPlanarPlant).
  void yz_terms(YZRigidBox & box, const ControlVec & q, const ControlVec & v,
                const ControlVec & lam);
  void yz_terms(YZPinnedPlane & plane, const ControlVec & q, const ControlVec & v,
                const ControlVec & lam);

  /// The rest of a sample after the plant's terms: yz_servo, yz_torque (s.out), and the
  /// force estimate at the start of the next hold into the servo.
  void yz_law(
    YZSample & s, YZServo & servo, const ControlMat & M, const ControlVec & h,
    const ControlVec & qd, const ControlMat & J, const ControlVec & Jdqd,
    const ControlVec & r_Pd, const ControlVec & r_Pd_dot, const ControlVec & r_Pd_dd,
    const ControlVec & f_Fd, const ControlVec & f_ISd, const ControlVec & held);
} // namespace pfaff
