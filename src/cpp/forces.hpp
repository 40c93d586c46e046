// Built-in force elements of the compiled core (pfaff.simulate.forces): a generalized
// force Q(q, v) added to the applied torque at every RK4 stage, the potential of the
// springs and the power of the dampers.
//
//   point spring   Q = -(J1 - J2)^T e T(s),  T = k s + k3 s^3,  s = |p1 - p2| - L0,
//                  V = k s^2 / 2 + k3 s^4 / 4   (L0 = 0, k3 = 0: Q = -k (J1 - J2)^T d)
//   point damper   Q = -c s' (J1 - J2)^T e,  s' = e . (J1 - J2) v  (none below 1e-12 m)
//   joint spring   Q_i = -k (q_i - rest),  V = k (q_i - rest)^2 / 2
//   joint damper   Q_i = -c v_i
//   coordinate spring  s = sum_j c_j q_j - rest,  Q_j = -k s c_j,  V = k s^2 / 2
//   anchor spring  Q = -k J_a^T (p_a - target_a),  V = k |p_a - target_a|^2 / 2 (rows a)
//   anchor damper  Q = -c J_a^T J_a v
//   point force    Q = J_p^T F,  V = -F . p
//   gravity compensation  Q = g(q),  V = -V_g(q)
//   actuator       MuJoCo's affine actuator on a transmission s = gear (sum_j c_j q_j + offset):
//                  f = clamp((g0 + g1 s + g2 s') ctrl + b0 + b1 s + b2 s', flo, fhi),
//                  Q_j = gear c_j f  (power f s')
//   ball spring    a ball (or free) joint's rotation about its spring reference (MuJoCo's
//                  mju_subQuat): Q_w = -k log(q_ref^-1 q), and on a free joint's
//                  translation Q_p = -k R^T (p - p_ref) (Pinocchio's body-frame velocity);
//                  V = k (|log|^2 + |p - p_ref|^2) / 2
//   dof damper     MuJoCo's per-dof damping of a ball or free joint: Q = -D v on the
//                  rotation (body frame, as MuJoCo's), Q_p = -R^T D R v_p on a free joint's
//                  translation (MuJoCo's damps the world-frame velocity)
// Workspaces are sized once (resize); no allocation per state.
#pragma once

#include <cmath>
#include <stdexcept>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace pfaff
{
  struct FrameKin;

  enum class ForceKind
  {
    PointSpring,
    PointDamper,
    JointSpring,
    JointDamper,
    CoordinateSpring, // V = k (sum_j c_j q_j - rest)^2 / 2 on several joint coordinates
    AnchorSpring,     // a body point to a world anchor along the world axes `axes`
    AnchorDamper,     // a body point's world velocity along `axes`
    PointForce,       // a constant world force F on a body point
    GravityCompensation,
    Actuator,   // MuJoCo's affine actuator, ctrl set by System::set_ctrl
    BallSpring, // a ball or free joint's spring (iq: its first q, iv: its first v; ref)
    DofDamper,  // a ball or free joint's per-dof damping (coefs: one per dof)
    Python      // a law written in Python (ForceSpec::law), called at every stage
  };

  /// A force law written in Python, called from the loop at its points in the step (as
  /// MuJoCo's callbacks are): Q (nv, written) and the potential V it returns at (t, q, v)
  /// (0 for a non-conservative law); set by the binding, which takes the GIL around
  /// the call and checks what the law returns.
  using ForceLaw = std::function<double(double, const Eigen::VectorXd &,
                                        const Eigen::VectorXd &, Eigen::VectorXd &)>;

  /// One built-in force element (the Python classes of pfaff.simulate.forces).
  struct ForceSpec
  {
    ForceKind kind = ForceKind::PointSpring;
    int s1 = -1, s2 = -1; // frame slots (s2 = -1: the world point `target`)
    bool has_p1 = false, has_p2 = false;
    Eigen::Vector3d p1 = Eigen::Vector3d::Zero(), p2 = Eigen::Vector3d::Zero();
    Eigen::Vector3d target = Eigen::Vector3d::Zero();
    double k = 0.0, L0 = 0.0, k3 = 0.0, c = 0.0, rest = 0.0;
    int iq = -1, iv = -1;
    std::vector<int> iqs, ivs; // CoordinateSpring: the coordinates and their coefficients
    std::vector<double> coefs;
    std::vector<int> axes;                       // AnchorSpring, AnchorDamper: world axes
    Eigen::Vector3d F = Eigen::Vector3d::Zero(); // PointForce [N]
    // Actuator: the transmission (iqs, ivs, coefs), gear, offset (sum_j c_j ref_j), the
    // affine gain (g0, g1, g2) and bias (b0, b1, b2), the force range, the control
    // index (ictrl, into System::set_ctrl's vector) and its value now (clamped)
    double gear = 1.0, offset = 0.0, g0 = 0.0, g1 = 0.0, g2 = 0.0, b0 = 0.0, b1 = 0.0,
           b2 = 0.0, flo = -HUGE_VAL, fhi = HUGE_VAL, ctrl = 0.0;
    int ictrl = -1;
    std::shared_ptr<const ForceLaw> law; // Python: the law (shared by clones)
    bool conservative = false;           // Python: V is its potential, else Q.v is power
    bool free = false;       // BallSpring, DofDamper: a free joint (else a ball joint)
    std::vector<double> ref; // BallSpring: the spring's reference q of the joint (4 or 7)
  };

  /// The force elements of one system (a Model's; System::add_force).
  struct ForceSet
  {
    void add(const ForceSpec & spec)
    {
      if (spec.kind != ForceKind::DofDamper
          && (spec.iqs.size() != spec.coefs.size() || spec.ivs.size() != spec.coefs.size()))
        throw std::invalid_argument("coordinate spring: one q index, v index, coefficient each");
      for (int a : spec.axes)
        if (a < 0 || a > 2)
          throw std::invalid_argument("anchor element: axes are world axes 0, 1, 2");
      specs.push_back(spec);
      gravity = gravity || spec.kind == ForceKind::GravityCompensation;
    }
    bool empty() const { return specs.empty(); }
    /// the actuators' controls now: u[spec.ictrl] into each Actuator's ctrl
    void set_ctrl(const Eigen::VectorXd & u)
    {
      for (auto & s : specs)
        if (s.kind == ForceKind::Actuator)
        {
          if (s.ictrl < 0 || s.ictrl >= u.size())
            throw std::invalid_argument("set_ctrl: " + std::to_string(u.size())
                                        + " controls given, an actuator reads ctrl["
                                        + std::to_string(s.ictrl) + "]");
          s.ctrl = u(s.ictrl);
        }
    }

    std::vector<ForceSpec> specs;
    bool gravity = false; // an element needs g(q) (ForceTerms::evaluate's g, Vg)
  };

  /// MuJoCo's mju_subQuat: the rotation vector of qb^-1 qa (quaternions x, y, z, w)
  Eigen::Vector3d sub_quat(const double * qa, const double * qb);
  /// the rotation of a unit quaternion (x, y, z, w)
  Eigen::Matrix3d quat_rotation(const double * q);
  /// an Actuator's force at (q, v) before its force range is applied, and its
  /// transmission's rate s' (rate); clamped to [flo, fhi] it is the force applied
  double actuator_force(const ForceSpec & s, const Eigen::VectorXd & q,
                        const Eigen::VectorXd & v, double & rate);

  /// A ForceSet's terms at one state (a Data's): Q, the springs' potential V and the
  /// dampers' power, with their workspaces; t: the time of the state (a Python law's).
  class ForceTerms
  {
  public:
    void resize(int nv);
    /// Q (nv), V [J] and power [W] of the elements fs at (q, v) from the frames last
    /// computed and, for a gravity compensation, the generalized gravity g and its
    /// potential Vg at q; returns false (Q unchanged from zero) for a point spring whose
    /// points coincide.
    bool evaluate(const ForceSet & fs, const std::vector<FrameKin> & frames,
                  const Eigen::VectorXd & q, const Eigen::VectorXd & v,
                  const Eigen::VectorXd & g, double Vg, double t = 0.0);

    Eigen::VectorXd Q;
    double V = 0.0, power = 0.0;

  private:
    void two_points(const std::vector<FrameKin> & frames, const ForceSpec & s);
    Eigen::Matrix<double, 3, Eigen::Dynamic> J_, Jb_;
    Eigen::Vector3d d_;
    Eigen::VectorXd Qe_;
  };
} // namespace pfaff
