// The types of the compiled step core (core.hpp): the frames' kinematics, the
// constraint kinds and specs, a row-space factorisation, the stamps of what a Data
// holds, the options and a run's status. Conventions as core.hpp states them.
#pragma once

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>

#include "pinocchio/multibody.hpp"

#include "model/forces.hpp"
#include "model/rolling.hpp"
#include "tables/tables.hpp"

struct mjModel_;

namespace pfaff
{
  using VecX = Eigen::VectorXd;
  using MatX = Eigen::MatrixXd;
  using Vec3 = Eigen::Vector3d;
  using Mat3 = Eigen::Matrix3d;
  using Matrix3x = Eigen::Matrix<double, 3, Eigen::Dynamic>;
  using Matrix6x = Eigen::Matrix<double, 6, Eigen::Dynamic>;
  using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  /// the pinocchio::Model of its serialisation: binary (Model.saveToBinary) or text
  /// (Model.saveToString); std::invalid_argument naming the format otherwise (model_io.cpp)
  pinocchio::Model load_model(const std::string & data, bool binary);

  /// A frame slot (System::add_frame, System::observe): the model's frame and its
  /// parent joint, fixed at set-up (a Model's).
  struct FrameSlot
  {
    pinocchio::FrameIndex id = 0;
    pinocchio::JointIndex joint = 0; // parent joint
    /// the columns [c0, c1) that hold every nonzero of the frame's Jacobian: from its
    /// kinematic tree's first column to its joint's last (Pinocchio numbers a tree's
    /// joints depth first, so its supporting joints lie there); empty on the world
    int c0 = 0, c1 = 0;
  };

  /// Kinematics of one frame slot at one state (pfaff.mechanism.FrameState; a Data's).
  struct FrameKin
  {
    FrameKin() = default;
    /// zero kinematics on nv velocity coordinates (J: 6 x nv)
    explicit FrameKin(int nv) { J.setZero(6, nv); }
    Vec3 p = Vec3::Zero();
    Mat3 R = Mat3::Identity();
    Matrix6x J;
    Eigen::Matrix<double, 6, 1> drift = Eigen::Matrix<double, 6, 1>::Zero();
    Vec3 w = Vec3::Zero(); // angular velocity J_w v
  };

  /// The per-state terms of a mechanism given in closed form (a plant, Model::plant)
  /// that a Pinocchio model's passes give otherwise: M and h (dynamics), gravity's g and
  /// potential (extras); a Data's workspace (Data::plant_)
  struct PlantTerms
  {
    MatX M;  // nv x nv
    VecX h;  // nv: C(q, v) v + g(q)
    VecX g;  // nv: g(q)
    double potential = 0.0;
  };

  /// A mechanism given in closed form (pfaff.plant: its Mechanism.compute): at (q, v)
  /// (with_v false: a kinematics pass, zero velocity) the kinematics of the frames
  /// `names` into `frames` (one per name; null: none) -- p, R, J and, with_v, the drift
  /// and w = J_w v (else zero) --, with dynamics M and h, with extras g and the
  /// potential, into `out`; set by its binding (bind_plant.cpp), which takes the GIL
  /// around the call and checks what it returns.
  using PlantLaw = std::function<void(
    const VecX & q, const VecX & v, bool with_v, const std::vector<std::string> & names,
    std::vector<FrameKin> * frames, bool dynamics, bool extras, PlantTerms & out)>;

  /// The constraint kinds: one file per kind, src/cpp/kinds/<name>.cpp, whose line
  /// PFAFF_KIND(...) CMake gathers into kinds.def (in the build directory).
  enum class Kind
  {
#define PFAFF_KIND(K, rows, window, holonomic) K,
#include "kinds.def"
#undef PFAFF_KIND
  };

  /// The rows of a constraint written in Python (Kind::Python, kinds/python.cpp): at
  /// (q, v) it writes A (dim x nv), Phi (dim; holonomic rows only) and, with_drift, the
  /// drift (dim); set by its binding, which takes the GIL around the call.
  using RowsLaw = std::function<void(const VecX & q, const VecX & v, bool with_drift,
                                     Eigen::Ref<MatX> A, Eigen::Ref<VecX> phi,
                                     Eigen::Ref<VecX> drift)>;

  /// One built-in constraint block (pfaff.constraints.library / weld).
  struct Spec
  {
    Kind kind = Kind::PointOnPlane;
    int dim = 1;
    bool unilateral = false;
    int s1 = -1, s2 = -1; // frame slots (-1: none / world)
    bool has_p1 = false, has_p2 = false;
    Vec3 p1 = Vec3::Zero(), p2 = Vec3::Zero(); // point offsets in the frames
    MatX D;                                    // k x 3 unit directions
    bool D_identity = true;
    Vec3 n = Vec3::UnitZ();
    double d = 0.0;                            // plane
    Eigen::Vector2d c = Eigen::Vector2d::Zero();
    double rho = 1.0;                          // circle
    Vec3 target = Vec3::Zero();                // world point of PointsCoincide
    Mat3 R_off = Mat3::Identity();             // FrameAligned / Weld offset
    Mat3 R_right = Mat3::Identity();           // R_off R_target^T (world target)
    int iq = -1, iv = -1;
    bool unbounded = false;
    double value = 0.0; // locked joint
    int iq2 = -1, iv2 = -1;      // JointCoupling: joint 2 (-1: none, q_1 = c_0)
    std::vector<int> iqs, ivs;   // CoordinateLock: sum_j coefs_j q[iqs_j] = value
    std::vector<double> coefs;
    double c0 = 0.0, c1 = 1.0;   // JointCoupling: offset, ratio
    VecX scale;                  // Scaled: row factors (empty: none)
    int contact = -1;            // RollContact / RollTangent: Model::contacts index
    std::shared_ptr<const RowsLaw> law; // Python: its rows (shared by clones)
    bool pfaffian = false;              // Python: A v = 0 rows, no Phi (holonomic())
  };

  /// Whether the spec's rows are holonomic (Phi rows, Newton corrects them): kinds.def's
  /// fourth column (0: a Pfaffian kind, the rolling row), unless the spec itself says
  /// its rows are Pfaffian (a constraint written in Python)
  inline bool holonomic(const Spec & s)
  {
    static constexpr bool h[] = {
#define PFAFF_KIND(K, rows, window, holonomic) holonomic != 0,
#include "kinds.def"
#undef PFAFF_KIND
    };
    return h[int(s.kind)] && !s.pfaffian;
  }

  /// Whether the spec's kind is a window kind (kinds.def's third column): its rows are
  /// nonzero only on its frames' (spec.s1, spec.s2) columns and move with their
  /// supporting joints alone
  inline bool windowed(const Spec & s)
  {
    static constexpr bool w[] = {
#define PFAFF_KIND(K, rows, window, holonomic) window != 0,
#include "kinds.def"
#undef PFAFF_KIND
    };
    return w[int(s.kind)];
  }

  struct RowBlock;

  /// Row-space factorisation of A with the absolute threshold: A^+ = V1 W^T.
  /// QR (certified full row rank): V1 = Q, W = R^-1; pivoted QR (certified rank r < m,
  /// see pivoted_rows in row_space.cpp): V1 = Q_1, W = Pi Z T^-T; SVD: V1,
  /// W = U1 diag(1/sigma). Where A's rows fall into independent blocks (rows over
  /// kinematic trees that no other block's rows touch: find_blocks in row_space.cpp),
  /// each block is factored on its own and V1, W are block diagonal (nblocks > 0): then
  /// V1 and W are not formed; the products v1t, v1, wt, w (row_space.cpp) apply them
  /// block by block, and formed_V1, formed_W form them where a whole matrix is read.
  struct RowSpace
  {
    MatX V1, W;
    int n = 0, m = 0; // A's coordinates and rows (V1 is n x rank, W m x rank)
    MatX R; // pivoted QR: the m x m triangle of A^T Pi = Q R (sigma_of_factor)
    int rank = 0;
    double sigma_min = 0.0;
    bool deficient = false; // the last factorisation found rank < rows
    bool zero_rows = false; // rows of A exactly 0.0 were set aside: sigma_min(A) = 0
    bool svd = false;       // the SVD factored it (sigma_min is its own)
    unsigned long stamp = 0; // the pass that factored it (Stamps::pass; 0: none)
    int nblocks = 0;              // independent blocks factored apart (0: A as one)
    std::vector<RowBlock> blocks; // the first nblocks hold them (the rest: workspace)
  };

  /// One independent block of A's rows: the rows, the columns of the kinematic trees
  /// they touch (ascending), the block A(rows, cols), its factorisation and where its
  /// columns start in V1 and W.
  struct RowBlock
  {
    std::vector<int> rows, cols;
    MatX A;
    RowSpace rs;
    int off = 0;
    /// rank == cols.size(): V1 of the block is square, its rows fix the velocity of its
    /// trees (A_b v_b = 0 gives v_b = 0) and the acceleration (V1_b^T a_b = c_b gives
    /// a_b = V1_b c_b) whatever M is (a floating base welded to the world): the
    /// projections take these without G (gram_solve, accel, correct)
    bool full = false;
    /// the block's own QR workspace (row_space lends it to the factorisation): blocks of
    /// different sizes in one workspace would reallocate it block after block
    MatX QRs;
    VecX hcs;
  };

  /// What the per-state workspaces hold, as the stamps of the passes that wrote them
  /// (in the spirit of MuJoCo's mj_forwardSkip, which skips the stages that stand):
  /// every pass over a state (kinematics, M, h, the rows, a row space) takes the next
  /// value of `pass`, and each result keeps the stamps of what it was built from. A
  /// reuse is a stamp that matches (Data::mass_stands, Data::gram_stands,
  /// take_vel_factor, start_terms); no flag is cleared by hand where a workspace moves.
  struct Stamps
  {
    unsigned long pass = 0;   // the last stamp handed out (next)
    unsigned long epoch = 0;  // the pass of the last state set from outside (set_state)
    unsigned long kin = 0;    // data.oMi, data.J: the pass that placed the joints
    unsigned long mass = 0;   // M, data.M of Data::q_M_: its pass (which placed the joints)
    unsigned long bias = 0;   // h's pass: == mass for the fused pass (ov, oa in the world)
    unsigned long rows = 0;   // A, drift, Phi: the pass of evaluate (the contacts' geometry)
    unsigned long rows_kin = 0; // the kinematics pass A and Phi of Data::q_rows_ are from
    unsigned long factor = 0; // data.U, data.D: the factor of M of this mass pass
    unsigned long dense = 0;  // Data::M: data.M of this mass pass, both triangles (dense_M)
    unsigned long gram_rows = 0, gram_mass = 0; // llt_: G of the row space of stamp
                                                // gram_rows through M's factor of pass gram_mass
    unsigned long terms = 0;  // the start terms (M, h, frames, A, rs_) of (q_, v_): the
                              // last pass that wrote them (start_terms)
    unsigned long vel = 0, vel_epoch = 0; // rs_vel_ of stamp vel factors A_vel_ (the
                                          // correction's), in the state epoch vel_epoch
    unsigned long next() { return ++pass; }
  };

  /// the options of a run, one field per row of options.def (their defaults there)
  struct Options
  {
#define PFAFF_OPTION(type, name, value, doc) type name = value;
#include "tables/options.def"
#undef PFAFF_OPTION
  };

  /// Status of a run segment; code 0 = ok.
  struct Status
  {
    int code = status_code::ok; // how the run ended (status.def)
    std::string what;
    int index = -1;
    double value = 0.0;
    double t = 0.0;
    int step = 0;
    int iterations = 0;
    double extra = 0.0; // a second figure of the status (status.def)
  };

  /// Where a kind writes its rows in one evaluation pass: rows ``row ..`` of A and
  /// drift, holonomic rows ``hrow ..`` of Phi, at the configuration ``q``.
  struct RowOut
  {
    int row, hrow;
    const VecX & q;
    bool with_drift;
    /// the spec's column window [c0, c0 + w) (Model::row_cols): its rows of A are 0.0
    /// outside it, written once (Data::fit), so a writer fills only the window
    int c0, w;
    /// A and Phi of this q stand (evaluate: no kinematics pass since the last evaluate
    /// at this q) and the spec is not Scaled: a writer may write the drift alone
    bool rows_stand = false;
  };

  /// A model file compiled by MuJoCo (loaded from its mjb buffer, sim/contact.cpp),
  /// shared read-only by a System's clones; label: the file, for messages
  struct ContactWorld
  {
    std::shared_ptr<const mjModel_> m;
    std::string label;
  };

  /// A geom pair that may touch (sim/contact.hpp): `moving` on the body whose BODY frame
  /// is the frame slot `slot` (its point is held), `still` the plane's side: fixed in the
  /// world (slot2 -1) or on the body of frame slot `slot2` (a pair of two moving bodies)
  struct ContactPairC
  {
    int still = -1, moving = -1; // geom ids of the compiled mjModel
    int slot = -1;               // the moving geom's body frame slot (add_frame)
    Vec3 g_pos = Vec3::Zero();   // the moving geom's pose in its body frame
    Mat3 g_R = Mat3::Identity();
    int slot2 = -1;              // the still geom's body frame slot (-1: the world)
    Vec3 s_pos = Vec3::Zero();   // the still geom's pose in its body frame (slot2 >= 0)
    Mat3 s_R = Mat3::Identity();
    double restitution = 0.0, rest_speed = 0.0;
    double mu = 0.0; // Coulomb's friction coefficient (0: frictionless)
    // a point that slips through an impact takes Coulomb's impulse (Moreau's law,
    // algorithms/slip_impact.hpp), else it slips through frictionless
    bool slip_impulse = false;
    // (the radius of a held point is its own: ContactPoint::radius, per contact spec
    // Model::contact_spec_radius)
  };

  /// The friction mode of a held contact point (Model::contact_mode, per contact spec)
  struct ContactMode
  {
    bool stick = false;         // held tangentially too: two rows at anchor (a round
                                // geom: two RollingPoint rows, no anchor)
    Vec3 anchor = Vec3::Zero(); // where it stuck [m]: world, or the plane body's frame
    Vec3 s0 = Vec3::Zero();     // a slipping point's slip direction while its speed is 0
  };

  /// two unit tangents of the unit normal n, t1 x t2 = n (t1 across the axis least
  /// aligned with n: the same n gives the same pair)
  inline void tangent_basis(const Vec3 & n, Vec3 & t1, Vec3 & t2)
  {
    Eigen::Index k = 0;
    n.cwiseAbs().minCoeff(&k);
    t1 = n.cross(Vec3::Unit(k)).normalized();
    t2 = n.cross(t1);
  }

  /// A held contact row that slips with friction (Model::slip): Coulomb's force
  /// -mu f_n s at the body point (local, in frame slot `slot`) on the plane of normal n,
  /// s the unit slip velocity (s0 where the slip speed is 0); its generalised force is
  /// the row's (A_n - mu s^T J_p) times the normal multiplier. With a plane body (slot2
  /// >= 0) n is in its frame's axes, J_p and s relative to its material point (the
  /// opposite force acts on it)
  struct SlipRow
  {
    int row = -1, slot = -1;
    Vec3 local = Vec3::Zero(), n = Vec3::UnitZ(), s0 = Vec3::Zero();
    double mu = 0.0;
    int slot2 = -1;
    /// a round geom's radius: the slip and the force are those of the material point at
    /// its contact, radius below the held body point along -n (0: a vertex's own)
    double radius = 0.0;
    /// a rim's axis in the frame's axes (SlipRow's point the rim's lowest on the plane,
    /// its lever model/rim.hpp's; zero: not a rim)
    Vec3 axis = Vec3::Zero();
  };

  // -- joint limits (sim/limits.hpp: the run that holds and releases them) ----------
  /// lower <= q[iq] <= upper for the one-dof joint of coordinate iq (velocity iv)
  /// a unit quaternion's (x, y, z, w) rotation angle 2 atan2(|xyz|, |w|) in [0, pi]
  /// (MuJoCo's ball angle; q and -q the same rotation) and, into u where given, its unit
  /// axis sign(w) xyz / |xyz| (zero at the identity) (constraints.ball_angle)
  inline double ball_angle(const double * x, Vec3 * u = nullptr)
  {
    const Vec3 xyz(x[0], x[1], x[2]);
    const double s = xyz.norm();
    if (u)
      *u = s > 0.0 ? Vec3((x[3] >= 0.0 ? 1.0 : -1.0) / s * xyz) : Vec3::Zero();
    return 2.0 * std::atan2(s, std::abs(x[3]));
  }

  struct JointLimit
  {
    int iq = -1, iv = -1;
    double lower = 0.0, upper = 0.0;
    double restitution = 0.0; // Newton's e in [0, 1]
    double rest_speed = 0.0;  // an impact no faster than this is plastic [rad/s or m/s]
    // a fixed tendon's limit: lower <= sum_j coefs_j q[iqs_j] <= upper (its velocity
    // sum_j coefs_j v[ivs_j]); empty: the one coordinate q[iq] (velocity v[iv])
    std::vector<int> iqs, ivs;
    std::vector<double> coefs;
    // a ball joint's limit: its rotation angle (q[iq .. iq + 3], ball_angle) <= upper
    // (lower -inf), its rate u . v[iv .. iv + 2]
    bool ball = false;

    /// the limited value at q: q[iq], the tendon's length or the ball's angle
    double value(const VecX & q) const
    {
      if (ball)
        return ball_angle(q.data() + iq);
      if (coefs.empty())
        return q(iq);
      double x = 0.0;
      for (std::size_t j = 0; j < coefs.size(); ++j)
        x += coefs[j] * q(iqs[j]);
      return x;
    }
    /// its rate at (q, v): v[iv], the tendon's velocity or the ball's angular rate
    double rate(const VecX & q, const VecX & v) const
    {
      if (ball)
      {
        Vec3 u;
        ball_angle(q.data() + iq, &u);
        return u.dot(v.segment<3>(iv));
      }
      if (coefs.empty())
        return v(iv);
      double x = 0.0;
      for (std::size_t j = 0; j < coefs.size(); ++j)
        x += coefs[j] * v(ivs[j]);
      return x;
    }
  };

  /// The loop's rows (those before the held limits' rows): counts of Model's row lists
  struct LoopRows
  {
    int specs = -1; // -1: no limit added yet
    int m = 0, m_h = 0;
    std::size_t hol = 0, pf = 0, uni = 0;
  };

  /// A held limit: its index and side (0 lower, 1 upper), in the order it was taken up
  using Held = std::vector<std::pair<int, int>>;
} // namespace pfaff
