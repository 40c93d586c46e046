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
// Workspaces are sized once (resize); no allocation per state.
#pragma once

#include <stdexcept>
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
    GravityCompensation
  };

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
  };

  /// The force elements of one system (a Model's; System::add_force).
  struct ForceSet
  {
    void add(const ForceSpec & spec)
    {
      if (spec.iqs.size() != spec.coefs.size() || spec.ivs.size() != spec.coefs.size())
        throw std::invalid_argument("coordinate spring: one q index, v index, coefficient each");
      for (int a : spec.axes)
        if (a < 0 || a > 2)
          throw std::invalid_argument("anchor element: axes are world axes 0, 1, 2");
      specs.push_back(spec);
      gravity = gravity || spec.kind == ForceKind::GravityCompensation;
    }
    bool empty() const { return specs.empty(); }

    std::vector<ForceSpec> specs;
    bool gravity = false; // an element needs g(q) (ForceTerms::evaluate's g, Vg)
  };

  /// A ForceSet's terms at one state (a Data's): Q, the springs' potential V and the
  /// dampers' power, with their workspaces.
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
                  const Eigen::VectorXd & g, double Vg);

    Eigen::VectorXd Q;
    double V = 0.0, power = 0.0;

  private:
    void two_points(const std::vector<FrameKin> & frames, const ForceSpec & s);
    Eigen::Matrix<double, 3, Eigen::Dynamic> J_, Jb_;
    Eigen::Vector3d d_;
    Eigen::VectorXd Qe_;
  };
} // namespace pfaff
