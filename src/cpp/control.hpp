// The per-sample linear algebra of pfaff.control.ProjectedController (Aghili eq. 45,
// 46, 51) in one call: pfaff.control.laws (task_acceleration, pidc_torque,
// force_control_torque) is the reference, equation by equation, and the tests hold
// the two to each other.
#pragma once

#include <Eigen/Core>
#include <Eigen/LU>
#include <Eigen/SVD>

namespace pfaff
{
  using ControlMat = Eigen::MatrixXd;
  using ControlVec = Eigen::VectorXd;

  /// Workspaces of task_acceleration and projected_torque (pfaff._core.ControlKernel:
  /// one per controller, so no allocation per call once the sizes are set).
  struct ControlWork
  {
    ControlMat JN, PM, Mc, V;
    ControlVec rhs, z, g, tmp, x;
    Eigen::JacobiSVD<ControlMat> svd;
    Eigen::PartialPivLU<ControlMat> lu;
  };

  /// u_p of eq. (40-41, 46): u_p = C v + N z, (J N) z = rhs_ref - J' v - J C v solved by
  /// the SVD with the directions at most rel_tol ||J||_F dropped; returns ok (J N square
  /// and none dropped) as laws.task_acceleration.
  bool task_acceleration(
    const ControlMat & J, const ControlVec & Jdv, const ControlMat & N, const ControlVec & Cv,
    const ControlVec & rhs_ref, double rel_tol, ControlWork & w, ControlVec & u_p);

  /// tau = f_par (+ f_perp): f_par = P (M u_p + h) (eq. 45), and with u_F (size > 0) the
  /// constraint-force part of eq. (51) with M_c = M + P M - (P M)^T; P = I - V1 V1^T.
  void projected_torque(
    const ControlMat & M, const ControlVec & h, const ControlMat & V1, const ControlVec & Cv,
    const ControlVec & u_p, const ControlVec & u_F, ControlWork & w, ControlVec & tau);
} // namespace pfaff
