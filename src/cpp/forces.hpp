// Built-in force elements of the compiled core (pfaff.simulate.forces): a generalized
// force Q(q, v) added to the applied torque at every RK4 stage, the potential of the
// springs and the power of the dampers (issue 19, item 2).
//
//   point spring   Q = -(J1 - J2)^T e T(s),  T = k s + k3 s^3,  s = |p1 - p2| - L0,
//                  V = k s^2 / 2 + k3 s^4 / 4   (L0 = 0, k3 = 0: Q = -k (J1 - J2)^T d)
//   point damper   Q = -c s' (J1 - J2)^T e,  s' = e . (J1 - J2) v  (none below 1e-12 m)
//   joint spring   Q_i = -k (q_i - rest),  V = k (q_i - rest)^2 / 2
//   joint damper   Q_i = -c v_i
//   coordinate spring  s = sum_j c_j q_j - rest,  Q_j = -k s c_j,  V = k s^2 / 2
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
    CoordinateSpring // V = k (sum_j c_j q_j - rest)^2 / 2 on several joint coordinates
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
  };

  /// The force elements of one system: Q, the springs' potential V and the dampers' power.
  class ForceElements
  {
  public:
    void add(const ForceSpec & spec)
    {
      if (spec.iqs.size() != spec.coefs.size() || spec.ivs.size() != spec.coefs.size())
        throw std::invalid_argument("coordinate spring: one q index, v index, coefficient each");
      specs.push_back(spec);
    }
    bool empty() const { return specs.empty(); }
    void resize(int nv);
    /// Q (nv), V [J] and power [W] at (q, v) from the frames last computed; returns
    /// false (Q unchanged from zero) for a point spring whose points coincide.
    bool evaluate(const std::vector<FrameKin> & frames, const Eigen::VectorXd & q,
                  const Eigen::VectorXd & v);

    std::vector<ForceSpec> specs;
    Eigen::VectorXd Q;
    double V = 0.0, power = 0.0;

  private:
    void two_points(const std::vector<FrameKin> & frames, const ForceSpec & s);
    Eigen::Matrix<double, 3, Eigen::Dynamic> J_, Jb_;
    Eigen::Vector3d d_;
    Eigen::VectorXd Qe_;
  };
} // namespace pfaff
