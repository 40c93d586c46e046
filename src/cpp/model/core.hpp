// pfaff._core: the compiled step core (design.md Sec. 1, 8).
//
// The NumPy engine (pfaff.linalg, pfaff.dynamics, pfaff.constraints, pfaff.simulate) is
// the reference, equation by equation; this file follows its conventions:
//   M a + h = tau - F,  F = A^T lambda,  A a = -drift,  P = I - A^+ A  (absolute rank_tol)
//   frames: world-aligned at the origin (LOCAL_WORLD_ALIGNED), J rows (linear, angular),
//   drift = classical acceleration of the origin and angular acceleration at a = 0.
// Pinocchio's shape: a `Model` (what does not change from state to state), made by a
// ModelBuilder (model/builder.hpp) and read-only once built, and a `Data` built from a
// Model alone (the per-state workspace and the Stamps of what it holds); the algorithms
// (src/cpp/algorithms) are free functions over them that fill the Data once per state,
// and `step` moves a StepState. A System (sim/system.hpp) holds one Model, one Data, a
// Stepper (the state, the Recorder) and a held law. docs/internals.md, "Where things
// live", maps the files.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/core_types.hpp"

namespace pfaff
{
  struct Check;

  /// What does not change from state to state (pinocchio::Model's role): the options,
  /// the multibody model, the frame slots, the rolling contacts, the force elements,
  /// the constraint specs and their row counts, the explicit Runge-Kutta method and the
  /// Lie-group structure of the stages.
  struct Model
  {
    explicit Model(const std::string & model_data, bool binary = false);
    int nq() const { return model.nq; }
    int nv() const { return model.nv; }
    int rows() const { return m; }
    int holonomic_rows() const { return m_h; }
    int stages() const { return int(tab_b_.size()); }

    Options opt;
    pinocchio::Model model;
    // the frame slots the rows and force elements read (add_frame), and the frames
    // observed at controller samples only (observe): Data::frames, Data::obs_frames
    // hold their kinematics, slot by slot
    std::vector<FrameSlot> frame_slots, obs_slots;
    // the rolling contacts (add_contact): Data::contact_geometry holds their geometry
    std::vector<RollingContact> contacts;
    // the force elements (add_force): Data::felems holds their Q, V, power
    ForceSet force_elements;
    std::vector<Spec> specs;
    /// per row of A, the column window (c0, w) it lives in (RowOut; a spec's rows share
    /// one): the union of its spec's frames' columns for a window kind (kinds.def), else
    /// the whole row
    std::vector<std::pair<int, int>> row_cols;
    int m = 0, m_h = 0;
    std::vector<int> hol_rows, pf_rows, uni_rows; // holonomic, Pfaffian, unilateral
    // the explicit Runge-Kutta method (System::set_tableau): a, b of its Butcher tableau
    // and its nodes c (c_i = sum_j a_ij: stage i's time t + c_i dt)
    MatX tab_a_;
    VecX tab_b_, tab_c_;
    // an adaptive step's pair (set_adaptive): SciPy's a, b, c, error weights e (E5) and
    // e3 (DOP853's E3, else empty), its order; ad_stages_ 0: the fixed-step tableau
    int ad_stages_ = 0, ad_order_ = 4;
    MatX ad_A_;
    VecX ad_B_, ad_C_, ad_E_, ad_E3_;
    // Runge-Kutta-Munthe-Kaas stages where q lives on a Lie group (nq != nv): d integrate
    // / d theta is block diagonal, one block per joint, (idx_v, nv) of the multi-dof ones
    bool lie_ = false;
    std::vector<std::pair<int, int>> lie_blocks_;
    // the kinematic tree (the subtree of a joint whose parent is the universe) of each
    // velocity coordinate: M and its factor have no entry between two trees, so rows of
    // A over disjoint sets of trees factor apart (row_space's blocks)
    std::vector<int> col_tree;
    int ntrees = 0;
    /// every row of A (one_block_h: every holonomic row) is a window kind's and together
    /// they join all the trees they touch: A is one block (row_space does not look for
    /// blocks; where entries happen to be exactly 0.0 the whole-A factorisation takes
    /// them as it does any A)
    bool one_block = false, one_block_h = false;
    bool rows_in_one_block(bool holonomic_only) const;
    /// (first column, columns) of each tree where every tree's columns are consecutive
    /// and in order (empty otherwise): M's diagonal blocks (dense_M)
    std::vector<std::pair<int, int>> tree_cols;
    /// the model has mimic joints (Pinocchio's extended columns): frame_terms takes the
    /// frames' Jacobians from getFrameJacobian, else from the joints' columns directly
    bool mimic = false;
    /// the joint limits (limits.hpp: add_limit) and the count of the loop's rows, those
    /// before the held limits' LockedJoint rows (set_held_rows toggles them)
    std::vector<JointLimit> limits;
    LoopRows loop;
    /// the contact pairs (sim/contact.hpp: add_contact_pair), unilateral constraints
    /// L + k after the L limits, their file's compiled MuJoCo model, and the held
    /// contact points' rows (a held entry (L + k, j) names contact_specs[j], of pair
    /// contact_spec_pair[j])
    ContactWorld contact_world;
    std::vector<ContactPairC> contact_pairs;
    std::vector<Spec> contact_specs;
    std::vector<int> contact_spec_pair;
    /// per contact spec, the radius of its held point (a sphere's, a capsule's, a
    /// cylinder's lying on its side, 0: a vertex): its contact point c lies radius below
    /// the held core point along the normal, and c's material point is what sticks
    /// (rolls without slipping) or slips
    std::vector<double> contact_spec_radius;
    /// per contact spec, its friction mode (stick: set_held_rows adds its tangential
    /// rows after the held rows, in held order), and the held rows that slip with
    /// friction (accel then solves the non-symmetric system of algorithms/friction.cpp)
    std::vector<ContactMode> contact_mode;
    std::vector<SlipRow> slip;
    /// a contact pair has friction (the record keeps two tangential rows per point)
    bool friction() const
    {
      for (const auto & c : contact_pairs)
        if (c.mu > 0.0)
          return true;
      return false;
    }
    /// the unilateral constraints: limits, then contact pairs
    int unilaterals() const { return int(limits.size() + contact_pairs.size()); }
    /// a mechanism given in closed form (System.set_plant; null: Pinocchio's model): the
    /// per-state terms (terms.cpp) come from it, and `model` is a chain of nv prismatic
    /// joints holding the sizes, the frame names and the tree M's factor walks
    std::shared_ptr<const PlantLaw> plant;
  };

  /// The per-state workspace (pinocchio::Data's role): Pinocchio's passes, the frame
  /// slots' kinematics, the contacts' geometry, the force elements' terms, M, h, A,
  /// drift, Phi, the factorisations and what each holds (Stamps). Built from a Model
  /// alone (as pinocchio::Data(model)); a pass over a state allocates nothing.
  struct Data
  {
    explicit Data(const Model & mo);
    /// size what depends on the Model's set-up (its frame slots, contacts, force
    /// elements, rows, stages) to mo, keeping what already fits; a new stamp, so that
    /// nothing computed before stands (Data(mo) calls it, and System's set-up after
    /// each change of its Model)
    void fit(const Model & mo);

    pinocchio::Data data;
    // sample() and gravity_terms(): g and the potential, leaving data's passes as they are
    pinocchio::Data data_g;
    // the kinematics of the Model's frame slots at the last pass (frame_slots), and of
    // the frames observed at controller samples (obs_slots)
    std::vector<FrameKin> frames, obs_frames;
    // the geometry of the Model's rolling contacts at the last evaluate pass
    std::vector<ContactGeometry> contact_geometry;
    // the Model's force elements' Q, V, power at the last pass, and the time of the
    // state it is at (a stage's t + c_i dt; a Python law reads it)
    ForceTerms felems;
    double t_ = 0.0;

    // per-state terms
    MatX M, A, A_h, P, Mc, PM, Qp;
    VecX h, drift, phi;
    double kinetic = 0.0, potential = 0.0; // potential: gravity's + the force elements'
    double potential_gravity = 0.0;
    VecX g_fe_; // a gravity compensation element's g(q) and potential (gravity_terms)
    double Vg_fe_ = 0.0;
    const VecX * vref_ = nullptr; // the velocity of the state being evaluated
    VecX slip_lam_, slip_F_;      // accel's multipliers and force with slipping rows
    VecX coulomb_lam_; // per Model::slip row: its multiplier with every friction on
    // a plant's terms (Model::plant), the names of the frame slots and of the observed
    // frames it is asked for (fit), and the zero velocity of its kinematics passes
    PlantTerms plant_;
    std::vector<std::string> plant_names_, plant_obs_names_;
    VecX v0_;

    // what the workspaces hold, and the configuration of the last mass pass
    Stamps st_;
    VecX q_M_;
    VecX q_rows_; // the q of the last evaluate (Stamps::rows_kin)
    /// the mass pass of q stands: M, data.M and the joints' placements are still those
    /// of q (bitwise), no kinematics pass since
    bool mass_stands(const VecX & q) const
    {
      return st_.mass != 0 && st_.kin == st_.mass && q.size() == q_M_.size() && q == q_M_;
    }
    /// llt_ (llt_b_, block by block) holds G = V1^T M^-1 V1 of rs through the factor of
    /// the M that stands
    bool gram_stands(const RowSpace & rs) const
    {
      return rs.stamp != 0 && st_.gram_rows == rs.stamp && st_.gram_mass == st_.mass
             && st_.factor == st_.mass;
    }

    // factorisations and their workspaces
    Eigen::PartialPivLU<MatX> lu_;
    Eigen::JacobiSVD<MatX> svd_;
    Eigen::JacobiSVD<MatX> svd_R_; // values only
    Eigen::ColPivHouseholderQR<MatX> cpqr_;
    MatX S_, Y_, Kt_, H_; // pivoted_rows: W through K^T = R11^-1 R12, H = I + K^T K
    Eigen::LLT<MatX> lltH_;
    MatX Ya_, Ga_; // metric_gram: U^-1 V1 and G = V1^T M^-1 V1
    VecX sqrt_dinv_; // D^-1/2 of M's factor M = U D U^T (mass_factor)
    MatX V1f_, Wf_;  // formed_V1, formed_W of a blocked row space (accel's variants 1, 2)
    VecX Mv_;        // M v (dynamics_state's kinetic energy)
    VecX ya_, yf_; // accel: c - V1^T M^-1 f; a full block's c_b (full_accel)
    MatX QRs_; // row_space's Householder QR of A^T and its coefficients
    VecX hcs_;
    Eigen::LLT<MatX> llt_;
    // metric_gram of a blocked row space: each block's U^-1 V1, G and its factor (llt_b_)
    std::vector<MatX> Yb_, Gb_;
    std::vector<Eigen::LLT<MatX>> llt_b_;
    bool stage_kept_ = false; // the last RK stage was on the manifold (stage)
    // kkt.cpp: the saddle-point matrix K, its LU, its and A's SVD, the largest cond(K)
    MatX K_;
    Eigen::PartialPivLU<MatX> kkt_lu_;
    Eigen::JacobiSVD<MatX> kkt_svd_, kkt_svd_A_;
    VecX kkt_rhs_;
    double kkt_cond_max_ = 0.0;
    std::vector<VecX> ad_K_; // adaptive.cpp: the pair's stages, y = (q, v, w), f(y), ...
    VecX ad_y_, ad_f_, ad_yn_, ad_fn_, ad_yi_, ad_dy_, ad_err_, ad_err3_, ad_scale_, ad_a0_;
    bool newton_idle_ = false; // the last correction took no Newton step (correct)
    double newton_K_ = 1.0; // Newton's last quadratic rate step_k / step_{k-1}^2 (correct)
    std::vector<int> uf_, row_tree_, block_of_; // find_blocks: union-find over trees,
                                           // a row's tree, a tree's block
    std::vector<int> kept_rows_; // zero_rows_qr: the rows of A not exactly 0.0
    MatX Ac_;                    // zero_rows_qr: those rows, transposed
    VecX y_, vn_;
    Matrix3x Jp1_, Jp2_;
    Matrix3x Gjw_; // the angular-velocity rows of an orientation block (3 x nv)
    // the row spaces of the step's start, a stage, Newton's A_h, the velocity
    // projection, and acceleration's short path (V1 = A^T, W = I: not orthonormal)
    RowSpace rs_, rs_stage_, rs_newton_, rs_vel_, rs_rows_;
    // the A that rs_vel_ factors (the corrected q of a step's end or of a stage): the
    // next step's start (start_terms) or the stage's dynamics (stage) reuse the factor
    // where their A is this one, bitwise (Stamps::vel)
    MatX A_vel_;
    // the step's and its stages' workspaces: each stage's acceleration, d theta / dt
    // and force-element power
    VecX a_, vs_, vbar_, qs_, q1_, v1_, F_, lam_, rhs_, tmp_, Cv_;
    std::vector<VecX> acc_, rate_;
    std::vector<double> power_;
    VecX dq_, dv_;
    MatX Jint_; // d integrate / d theta (RKMK stages) and the LU of its blocks
    std::vector<Eigen::PartialPivLU<MatX>> lu_blocks_;
    VecX th_;
  };

  /// The holonomic rows of A at the last evaluate: A itself where every row is
  /// holonomic, else d.A_h (those rows, in order)
  inline const MatX & holonomic_A(const Model & mo, const Data & d)
  {
    return mo.m_h == mo.m ? d.A : d.A_h;
  }

  /// The kinds, one per file src/cpp/kinds/*.cpp: K writes the kind's rows into the Data
  /// from its frames' kinematics (and the Model's contacts), check_K refuses (through c,
  /// std::invalid_argument) a spec the writer cannot take in the Model (its coordinates,
  /// frame slots, contacts), before ModelBuilder::add keeps it (the checks common to all kinds
  /// are ModelBuilder::add's own).
  namespace kinds
  {
#define PFAFF_KIND(K, rows, window, holonomic)                                              \
  void K(const Model & mo, Data & d, const Spec & s, const RowOut & out);                   \
  void check_##K(const Model & mo, const Spec & s, const Check & c);
#include "kinds.def"
#undef PFAFF_KIND

    /// A point fixed in frame f at ``off`` (the origin without ``has_off``): its world
    /// position p, its Jacobian (3 x nv) and, with_drift, its acceleration at a = 0.
    /// Jp's first w columns are the Jacobian's columns c0 .. c0 + w (RowOut's window).
    void point_terms(
      const FrameKin & f, bool has_off, const Vec3 & off, const RowOut & out, Vec3 & p,
      Matrix3x & Jp, Vec3 & ap);
    /// point_terms' acceleration at a = 0 alone: f's drift at the point
    Vec3 point_drift(const FrameKin & f, bool has_off, const Vec3 & off);
    /// A round geom's contact point x = core + l (l = -radius n, turning with the plane
    /// body f2 while the core moves with f1) relative to f2's material point at x: the
    /// terms of d/dt (v1(x) - v2(x)) at a = 0 that body 2 adds to f1's,
    ///   w1 x (w2 x l) - w2 x ((w2 - w1) x l) - a2(x),
    /// a2(x) f2's drift at x (RollingPoint's rows' drift and the slip's acceleration)
    Vec3 body2_contact_drift(const FrameKin & f1, const FrameKin & f2, const Vec3 & l,
                             const Vec3 & x);
    /// R_e of an orientation block (R_1 R_world against the world, R_1 R_off R_2^T
    /// between two frames) and the angular-velocity rows d.Gjw_ of d R_e / dt
    /// (the first w columns of d.Gjw_: the window's, out.c0 .. out.c0 + out.w)
    Mat3 relative_rotation(
      Data & d, const Spec & s, const Mat3 & R_world, const Mat3 & R_off, bool off_identity,
      const RowOut & out);
    /// FrameAligned's rows of spec s (all three when all_rows, else s.D's)
    /// (from row out.row, Phi's from out.hrow; the drift alone where out.rows_stand)
    void aligned_rows(
      Data & d, const Spec & s, const Mat3 & R_off, bool off_identity, const RowOut & out,
      bool all_rows);
    /// QuatAligned's three rows of spec s (the drift alone where out.rows_stand)
    void quat_rows(Data & d, const Spec & s, const RowOut & out);
  } // namespace kinds

  // -- the algorithms over a Model and its Data (as Pinocchio's over model, data) ------
  // terms.cpp: the per-state terms
  /// M, h (computeAllTerms) and the frames with drift at (q, v); energies if asked.
  void dynamics_state(const Model & mo, Data & d, const VecX & q, const VecX & v, bool extras);
  /// frame placements and Jacobians at q (no velocity): for the position correction;
  /// by the CRBA pass, which leaves M at q too, with_mass or where M of q stands, else
  /// by the kinematics pass alone
  void kinematics_state(const Model & mo, Data & d, const VecX & q, bool with_mass);
  /// the kinematics fs of the frame slots from data's pass: placements and Jacobians
  /// (unless placements is false: p, R, J are still those of q, the mass pass stood)
  /// and, with a velocity v, their drift and angular velocity (else zero)
  void frame_terms(
    const Model & mo, Data & d, const std::vector<FrameSlot> & slots, std::vector<FrameKin> & fs,
    const VecX * v, bool placements);
  /// data.a of the slots' joints at zero joint acceleration, from the RNEA pass's
  /// a_gf = a - X g (or the fused pass's ov, oa) and the placements oMi of the same q
  void joint_accelerations(const Model & mo, Data & d, const std::vector<FrameSlot> & slots);
  /// M at q by the CRBA (WORLD convention: also data.oMi, data.J), skipped when the
  /// mass pass of q stands (false: skipped)
  bool mass_matrix(const Model & mo, Data & d, const VecX & q);
  /// M as mass_matrix and h = nle at (q, v): one fused pass when M moves, else RNEA
  /// (false: M's pass stood)
  bool mass_and_bias(const Model & mo, Data & d, const VecX & q, const VecX & v);
  /// M = U D U^T (Pinocchio's cholesky::decompose) of the last mass pass, once
  void mass_factor(const Model & mo, Data & d);
  /// d.M: M of the last mass pass as a dense symmetric matrix, formed from data.M's
  /// upper triangle once per pass and only where a product or a caller reads it (the
  /// projections take M through its factor)
  const MatX & dense_M(const Model & mo, Data & d);
  /// G = V1^T M^-1 V1 of rs through that factor, its Cholesky factor into d.llt_
  void metric_gram(const Model & mo, Data & d, const RowSpace & rs);
  /// y <- G^-1 y with G = V1^T M^-1 V1 of the row space metric_gram factored last; a
  /// full block's segment of y (RowBlock::full: no G of its own) is set to 0.0
  void gram_solve(const Data & d, const RowSpace & rs, VecX & y);
  /// g(q) and gravity's potential into g_fe_, Vg_fe_ (a gravity compensation element)
  void gravity_terms(const Model & mo, Data & d, const VecX & q);
  /// g(q) into g, from data_g (data keeps the passes of the state) or the plant
  void generalized_gravity(const Model & mo, Data & d, const VecX & q, VecX & g);
  /// the observed frames' kinematics (obs_frames) at (q, v), from the dynamics pass of
  /// (q, v) data holds (dynamics_state), or from the plant
  void observed_frames(const Model & mo, Data & d, const VecX & q, const VecX & v);
  // rows.cpp: the constraint rows
  /// stacked A, drift, Phi of the kinds (write_spec) from the frames last computed
  /// (drift only with velocity), at (q, v)
  void evaluate(const Model & mo, Data & d, const VecX & q, const VecX & v, bool with_drift);
  // row_space.cpp: the row space
  /// row space of A (rows = all, or the holonomic ones) into rs.
  void row_space(
    const Model & mo, Data & d, const MatX & A, bool want_sigma, bool allow_qr, RowSpace & rs);
  /// sigma_min(A) of rs's QR factorisation (sigma_min.cpp)
  void sigma_of_factor(Data & d, RowSpace & rs);
  /// y = alpha V1^T x (add: y += alpha V1^T x), block by block where rs has blocks
  void v1t(const RowSpace & rs, const VecX & x, VecX & y, double alpha = 1.0, bool add = false);
  /// x = alpha V1 y (add: x += ...)
  void v1(const RowSpace & rs, const VecX & y, VecX & x, double alpha = 1.0, bool add = false);
  /// y = alpha W^T x (add: y += ...)
  void wt(const RowSpace & rs, const VecX & x, VecX & y, double alpha = 1.0, bool add = false);
  /// x = alpha W y (add: x += ...)
  void w(const RowSpace & rs, const VecX & y, VecX & x, double alpha = 1.0, bool add = false);
  /// V1 of rs as one matrix: rs.V1, or, where rs has blocks, formed into ws
  const MatX & formed_V1(const RowSpace & rs, MatX & ws);
  /// a = V1_b c_b, c_b = -W_b^T drift_b, on each full block of rs (RowBlock::full): the
  /// acceleration its rows fix, V1_b^T a_b = c_b with V1_b square (ws: a workspace)
  void full_accel(const RowSpace & rs, const VecX & drift, VecX & a, VecX & ws);
  /// v = 0.0 on each full block of rs: the velocity its rows fix (A_b v_b = 0)
  void full_velocity(const RowSpace & rs, VecX & v);
  /// W of rs as one matrix: rs.W, or, where rs has blocks, formed into ws
  const MatX & formed_W(const RowSpace & rs, MatX & ws);
  // projection.cpp: the dynamics, the force
  /// acceleration from the projection direct dynamics at the current terms (G =
  /// V1^T M^-1 V1 of rs is reused where d.llt_ holds it: gram_stands)
  void accel(const Model & mo, Data & d, const VecX & tau, const RowSpace & rs, VecX & a);
  /// constraint force and multipliers for acceleration a (with slipping contact rows:
  /// those accel solved for at this state and tau, Data::slip_lam_ and slip_F_)
  void forces(
    const Model & mo, Data & d, const VecX & tau, const RowSpace & rs, const VecX & a, VecX & F,
    VecX & lam);
  // friction.cpp: the dynamics with slipping contact rows (Model::slip)
  /// the rows W whose transpose times lambda is the generalised force: A, each slipping
  /// row minus mu s^T J_p of its point (s its unit slip velocity at v, else its s0)
  void slip_rows(const Model & mo, const Data & d, const VecX & v, MatX & W);
  /// a = M^-1 (tau - h - W^T lambda) with A a = -drift: (A M^-1 W^T) lambda = A M^-1
  /// (tau - h) + drift solved minimum-norm (redundant rows); F = W^T lambda
  void slip_dynamics(const Model & mo, Data & d, const VecX & tau, VecX & a, VecX & lam, VecX & F);
  // step.cpp
  /// the position correction (Newton-Raphson on the holonomic rows, at most max_newton
  /// iterations: opt.max_newton in a step) and the velocity projection in the metric of
  /// M at (q, v), in place; corr: a step's correction adds the kinetic energy it removed
  /// (null: an RK stage put on the manifold); terms_stand: d holds the frames, A and Phi
  /// of q. Status: value max |Phi| at the end, iterations Newton's steps
  Status correct(
    const Model & mo, Data & d, VecX & q, VecX & v, double * corr, bool terms_stand,
    int max_newton);
  /// RKMK stage rate theta' = dintegrate_dv(q, theta)^-1 vi (vi on nq == nv models)
  void stage_rate(
    const Model & mo, Data & d, const VecX & q, const VecX & theta, const VecX & vi, VecX & out);
  /// rs takes the last correction's factor of A (d.rs_vel_, with its stamp) where A is
  /// still the A it factored (d.A_vel_, bitwise) in the same state epoch; false (nothing
  /// moved) otherwise (projection.cpp)
  bool take_vel_factor(Data & d, RowSpace & rs);
  /// the step's start terms at (q, v): dynamics_state (energies with rec), evaluate and
  /// d.rs_ (sigma_min with rec), once per state: they stand while no pass came between
  /// (Stamps::terms), so (q, v) is the state of the last call then (projection.cpp)
  void start_terms(const Model & mo, Data & d, const VecX & q, const VecX & v, bool rec);
  /// an RK stage's acceleration a at torque tau; with opt.stage_projection a stage
  /// (q, v) off the manifold is first put on it (correct with no energy account) and
  /// returned so. Returns the force elements' power at the stage
  double stage(const Model & mo, Data & d, const VecX & tau, VecX & q, VecX & v, VecX & a);

  /// The state a step moves, (q_, v_) at the torque tau_, and the step's accounts: the
  /// work of tau and of the force elements, the kinetic energy the corrections removed,
  /// the last correction's Newton iterations and the steps whose correction missed
  /// opt.position_tol
  struct StepState
  {
    VecX q_, v_, tau_;
    double work = 0.0, force_work = 0.0, corr = 0.0;
    int newton_it = 0, newton_failures = 0;
  };

  /// One step of the explicit Runge-Kutta method of mo (its tableau; RKMK stages on a
  /// Lie group), each later stage projected (stage), and the end-of-step correction:
  /// s moves from the state at time t (step k) to the next one. It starts from the
  /// start terms d holds for s's state (start_terms), the acceleration there in d.a_
  /// (accel at s.tau_) and the force elements' power there (d.felems.power). Status
  /// code 1 (a non-finite q or v at the step's end) or 3 (the correction failed, max
  /// |Phi| > 1e-6): s keeps its state (its accounts moved). dt: the step's length
  /// (opt.dt in a run; a limited run's phases take steps of their own)
  Status step(const Model & mo, Data & d, StepState & s, double t, int k, double dt);
} // namespace pfaff
