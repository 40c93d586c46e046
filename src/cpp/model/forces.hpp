// Force elements of the compiled core (pfaff.simulate.forces): a generalized force
// Q(t, q, v) added to the applied torque at every RK4 stage, the potential V of the
// conservative elements and the power Q . v of the others.
//
// One element is one file src/cpp/forces/<snake_case>.cpp (its formulas, its checks, its
// force and its analytic partials; force_element.hpp says what it defines), declared by
// its first line "// PFAFF_FORCE(Name, points, gravity)". CMake collects those lines
// into forces.def (in the build tree), from which the ForceKind enum, its binding and
// the dispatch tables are generated:
//   points   0; 1: the element reads the body point of frame slot s1 (at p1 with
//            has_p1); 2: also that of s2 (s2 = -1: the world point target). Their
//            slots are checked, and the derivative pass gives the element their
//            kinematics (force_element.hpp, Partials)
//   gravity  1: the element reads gravity's generalized force g(q) and its potential
// An element uses ForceSpec's fields below (a new field is declared here and bound in
// bind_forces.cpp). Workspaces are sized once (resize); no allocation per state.
#pragma once

#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace pfaff
{
  struct FrameKin;
  struct Model;
  struct Check;

  /// The force elements, in the order of forces.def (the files' names' order); nothing
  /// depends on their numbers (Python names them)
  enum class ForceKind
  {
#define PFAFF_FORCE(K, points, gravity) K,
#include "forces.def"
#undef PFAFF_FORCE
  };

  /// forces.def's points and gravity of an element (see above)
  int force_points(ForceKind k);
  bool force_reads_gravity(ForceKind k);

  /// A force law written in Python, called from the loop at its points in the step (as
  /// MuJoCo's callbacks are): Q (nv, written) and the potential V it returns at (t, q, v)
  /// (0 for a non-conservative law); set by the binding, which takes the GIL around
  /// the call and checks what the law returns.
  using ForceLaw = std::function<double(double, const Eigen::VectorXd &,
                                        const Eigen::VectorXd &, Eigen::VectorXd &)>;

  /// One force element's spec (the Python classes of pfaff.simulate.forces lower into it;
  /// each element reads the fields its file names).
  struct ForceSpec
  {
    ForceKind kind = ForceKind::PointSpring;
    int s1 = -1, s2 = -1; // frame slots (s2 = -1: the world point `target`)
    bool has_p1 = false, has_p2 = false;
    Eigen::Vector3d p1 = Eigen::Vector3d::Zero(), p2 = Eigen::Vector3d::Zero();
    Eigen::Vector3d target = Eigen::Vector3d::Zero();
    double k = 0.0, L0 = 0.0, k3 = 0.0, c = 0.0, rest = 0.0;
    int iq = -1, iv = -1;
    std::vector<int> iqs, ivs; // a transmission: the coordinates and their coefficients
    std::vector<double> coefs;
    std::vector<int> axes;                       // world axes (0, 1, 2)
    Eigen::Vector3d F = Eigen::Vector3d::Zero(); // a world force [N]
    // Actuator: the transmission (iqs, ivs, coefs), gear, offset (sum_j c_j ref_j), the
    // affine gain (g0, g1, g2) and bias (b0, b1, b2), the force range
    double gear = 1.0, offset = 0.0, g0 = 0.0, g1 = 0.0, g2 = 0.0, b0 = 0.0, b1 = 0.0,
           b2 = 0.0, flo = -HUGE_VAL, fhi = HUGE_VAL;
    // an element that reads a control: its index in System::set_ctrl's vector (-1: none)
    // and its value now (clamped)
    int ictrl = -1;
    double ctrl = 0.0;
    // Actuator with activation dynamics (MuJoCo's dyntype; actuator.cpp): dyn 0 none,
    // 1 integrator, 2 filter, 3 filterexact; tau_act its time constant (dynprm[0]);
    // the activation act0 at the time t0 from which ctrl is held, its range [alo, ahi];
    // actearly: the gain multiplies the activation early = the run's step dt ahead (set
    // from the options by ForceSet::set_step, never by the lowering), else early = 0;
    // iact its index in System::set_act's vector (-1: no activation)
    int dyn = 0, iact = -1;
    bool actearly = false;
    double tau_act = 0.0, act0 = 0.0, t0 = 0.0, alo = -HUGE_VAL, ahi = HUGE_VAL, early = 0.0;
    std::shared_ptr<const ForceLaw> law; // Python: the law (shared by clones)
    bool conservative = false;           // Python: V is its potential, else Q.v is power
    bool free = false;       // BallSpring, DofDamper: a free joint (else a ball joint)
    std::vector<double> ref; // BallSpring: the spring's reference q of the joint (4 or 7)
    // TendonSpring: the dead band [lo, hi] of sum_j coefs_j q_j where the spring is slack
    double lo = 0.0, hi = 0.0;
  };

  /// The force elements of one system (a Model's; System::add_force, which checks each
  /// spec first: check_force, model/builder.hpp).
  struct ForceSet
  {
    void add(const ForceSpec & spec)
    {
      specs.push_back(spec);
      gravity = gravity || force_reads_gravity(spec.kind);
    }
    bool empty() const { return specs.empty(); }
    /// the controls now: u[spec.ictrl] into the ctrl of each element that reads one
    void set_ctrl(const Eigen::VectorXd & u)
    {
      for (auto & s : specs)
        if (s.ictrl >= 0)
        {
          if (s.ictrl >= u.size())
            throw std::invalid_argument("set_ctrl: " + std::to_string(u.size())
                                        + " controls given, an actuator reads ctrl["
                                        + std::to_string(s.ictrl) + "]");
          s.ctrl = u(s.ictrl);
        }
    }

    /// the activations act[spec.iact] at the time t0 from which the ctrl now is held,
    /// into each element with activation dynamics
    void set_act(const Eigen::VectorXd & act, double t0)
    {
      for (auto & s : specs)
        if (s.iact >= 0)
        {
          if (s.iact >= act.size())
            throw std::invalid_argument("set_act: " + std::to_string(act.size())
                                        + " activations given, an actuator reads act["
                                        + std::to_string(s.iact) + "]");
          s.act0 = act(s.iact);
          s.t0 = t0;
        }
    }

    /// the step dt of the runs the Model takes (its options'): the look-ahead of each
    /// actearly element
    void set_step(double dt)
    {
      for (auto & s : specs)
        s.early = s.actearly ? dt : 0.0;
    }

    /// the activations at time t into act[spec.iact] (act sized by the caller)
    void activations(double t, Eigen::VectorXd & act) const;

    std::vector<ForceSpec> specs;
    bool gravity = false; // an element reads g(q) (ForceTerms::evaluate's g, Vg)
  };

  /// A ForceSet's terms at one state (a Data's): Q, the springs' potential V and the
  /// dampers' power, with the elements' workspaces; t: the time of the state (a Python
  /// law's).
  class ForceTerms
  {
  public:
    void resize(int nv);
    /// Q (nv), V [J] and power [W] of the elements fs at (q, v) from the frames last
    /// computed and, for an element that reads gravity, the generalized gravity g and
    /// its potential Vg at q; returns false where an element's force is undefined (a
    /// point spring whose points coincide: its Q left out)
    bool evaluate(const ForceSet & fs, const std::vector<FrameKin> & frames,
                  const Eigen::VectorXd & q, const Eigen::VectorXd & v,
                  const Eigen::VectorXd & g, double Vg, double t = 0.0);

    Eigen::VectorXd Q;
    double V = 0.0, power = 0.0;
    // the elements' workspaces (src/cpp/forces/*.cpp): a point's or two points'
    // Jacobian J (Jb: the second), d = p1 - p2, one element's Q
    Eigen::Matrix<double, 3, Eigen::Dynamic> J, Jb;
    Eigen::Vector3d d;
    Eigen::VectorXd Qe;
  };
} // namespace pfaff

namespace pfaff::force_elements
{
  /// each element's own checks of a spec (src/cpp/forces/<name>.cpp), which the set-up
  /// (check_force, model/builder.hpp) calls after the checks common to all elements
#define PFAFF_FORCE(K, points, gravity)                                                     \
  void check_##K(const pfaff::Model & mo, const ForceSpec & s, const pfaff::Check & c);
#include "forces.def"
#undef PFAFF_FORCE

  /// an Actuator's activation at time t (forces/actuator.cpp): act0 at t0 carried
  /// by its dynamics under the held ctrl (its ctrl where it has none)
  double activation(const ForceSpec & s, double t);
} // namespace pfaff::force_elements
