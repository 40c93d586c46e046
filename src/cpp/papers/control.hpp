// The per-sample linear algebra of the controllers in one call each:
// - pfaff.control.ProjectedController (Aghili eq. 45, 46, 51): pfaff.control.laws
//   (task_acceleration, pidc_torque, force_control_torque) is the reference, and for the
//   built-in tasks (FrameTask, JointTask, StackedTask) pfaff.control.tasks;
// - pfaff.control.YZController (Yoshikawa & Zheng eq. 31-37): its NumPy law
//   (YZController._torque) is the reference.
// The tests hold each to its reference.
#pragma once

#include <Eigen/Core>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>

#include <vector>

namespace pfaff
{
  using ControlMat = Eigen::MatrixXd;
  using ControlVec = Eigen::VectorXd;

  /// Workspaces of task_acceleration and projected_torque (pfaff._papers.ControlKernel:
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

  /// One block of rows of a built-in task (pfaff.control.tasks). frame >= 0: a FrameTask
  /// on frames[frame] of task_terms -- the world position rows `rows` (0, 1, 2) of the
  /// point fixed in the frame at `point` (the origin without has_point), then the three
  /// orientation rows if `orientation`; frame < 0: a JointTask on the joints `rows`
  /// (nq == nv).
  struct TaskBlock
  {
    int frame = -1;
    std::vector<int> rows;
    bool orientation = false;
    bool has_point = false;
    Eigen::Vector3d point = Eigen::Vector3d::Zero();
  };

  /// A frame as the snapshot holds it (pfaff.mechanism.FrameState): origin p, rotation R,
  /// world-aligned Jacobian J (6 x nv, rows linear, angular) and drift J' v.
  struct TaskFrame
  {
    Eigen::Vector3d p;
    Eigen::Matrix3d R;
    ControlMat J;
    Eigen::Matrix<double, 6, 1> drift;
  };

  /// The task of a ProjectedController: its blocks and the per-sample terms (no
  /// allocation per call once the sizes are set).
  struct TaskLaw
  {
    std::vector<TaskBlock> blocks;
    ControlMat J, Jp;   // J_theta (k x nv); a point's position Jacobian (3 x nv)
    ControlVec Jdv, e, rhs;
  };

  /// J_theta, J_theta' v and theta_d - theta of the task at one state, as
  /// FrameTask / JointTask / StackedTask compute them: a point's rows J_v - [R r]_x J_w
  /// and a_o + alpha x r + w x (w x r); orientation rows J_w, the angular drift and
  /// log3(exp3(theta_d) R^T); joint rows e_i, 0 and theta_d - q_i. Sizes law.J, law.Jdv,
  /// law.e.
  void task_terms(
    TaskLaw & law, const std::vector<TaskFrame> & frames, const ControlVec & q,
    const ControlVec & v, const ControlVec & theta_d);

  /// pfaff._papers.ControlKernel: the workspaces of one ProjectedController and, for a
  /// built-in task, the task (task_law evaluates its rows from the frames).
  struct ControlKernel
  {
    ControlWork work;
    TaskLaw task;
    std::vector<TaskFrame> frames;
  };

  /// u_p of eq. (46) (task_acceleration) and tau of eq. (45, 51) (projected_torque) from
  /// the task's J, J' v and PD reference rhs_ref; returns task_acceleration's ok.
  bool projected_control(
    const ControlMat & J, const ControlVec & Jdv, const ControlVec & rhs_ref,
    const ControlMat & M, const ControlVec & h, const ControlMat & V1, const ControlVec & Cv,
    const ControlMat & N, double rel_tol, const ControlVec & u_F, ControlWork & w,
    ControlVec & tau, ControlVec & u_p);

  /// projected_control with the built-in task of k (k.frames set): its rows by
  /// task_terms and the PD of eq. (46), rhs = theta_d'' + G_D (theta_d' - J v) + G_P e;
  /// the error e stays in k.task.e.
  bool task_law(
    ControlKernel & k, const ControlVec & q, const ControlVec & v, const ControlVec & theta_d,
    const ControlVec & dtheta_d, const ControlVec & ddtheta_d, const ControlVec & kp,
    const ControlVec & kd, const ControlMat & M, const ControlVec & h, const ControlMat & V1,
    const ControlVec & Cv, const ControlMat & N, double rel_tol, const ControlVec & u_F,
    ControlVec & tau, ControlVec & u_p);

  /// Workspaces of yz_torque (pfaff._papers.YZKernel: one per controller).
  struct YZWork
  {
    ControlMat E, StJ, W_S, W_S_rate, WWt, K;
    ControlVec rhs, b, v1, v2, v3, Jq, F, x, rhsK, dX;
    Eigen::PartialPivLU<ControlMat> lu;
    Eigen::CompleteOrthogonalDecomposition<ControlMat> cod;
  };

  /// What yz_torque returns: the arm torque of eq. (32) and its parts; with the
  /// trapezoid estimate, the change of f_F and f_IS that the torque step tau_arm - held
  /// makes through K of eq. (31) (else empty).
  struct YZOut
  {
    ControlVec tau_arm, q_dd, r_dd, F_hSd, dF, dfIS;
  };

  /// The grasp and object terms of one sample (YZController's GraspState, eq. 3-22).
  struct YZGrasp
  {
    ControlMat S, W, S_rate, W_rate, A_S, T, T_rate, E_P, E_F, E_P_rate, E_F_rate, I_B;
  };

  /// Eq. (35), (34), (37), (33), (36), (32) from the servo inputs u1, u2, u3 (eq. 41-43)
  /// at one sample: M, h, q', J, J' q' of the arms, the grasp g, Q_r of eq. (5) and r'.
  /// trapezoid: also dX = K^-1 [tau_arm - held; 0] (eq. 31).
  void yz_torque(
    const ControlMat & M, const ControlVec & h, const ControlVec & qd, const ControlMat & J,
    const ControlVec & Jdqd, const YZGrasp & g, const ControlVec & Q_r, const ControlVec & rd,
    const ControlVec & u1, const ControlVec & u2, const ControlVec & u3, const ControlVec & held,
    bool trapezoid, YZWork & w, YZOut & out);
} // namespace pfaff
