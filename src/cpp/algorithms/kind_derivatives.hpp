// What a constraint kind's derivative rows read and write at one state (KindDerivatives),
// and the derivative rows of each kind, derive_K in its file src/cpp/kinds/<name>.cpp
// (kinds.def). The helpers several kinds share (a frame's or a point's partials, the
// rows sign D p of points fixed in frames, the orientation rows) are in
// kind_derivatives.cpp.
#pragma once

#include <vector>

#include <unsupported/Eigen/CXX11/Tensor>

#include "model/core.hpp"

namespace pfaff
{
  /// The Differentiator's state for the constraint kinds' derivative rows: after
  /// Pinocchio's RNEA-derivatives pass at (q, v, a) (dd: oMi, ov, oa, J, dJ), a kind's
  /// derive_K writes, from its spec's first row `row`,
  ///   dA_k = dA / d delta_k (rows k m + row .., q moved as integrate(q, delta)) into dAB,
  ///   d(A a + drift)/d delta at the state's a into X's first nv columns,
  ///   d drift / dv into X's last nv columns
  /// (both rows' dA and X start at zero; every value in world axes).
  class KindDerivatives
  {
  public:
    /// a point fixed in a joint's frame
    struct Point
    {
      pinocchio::JointIndex joint;
      pinocchio::SE3 placement;
    };
    /// a frame's rotation, angular velocity w and acceleration al (at the state's a),
    /// angular Jacobian Jw, the angular rows of its kinematic Hessian (Hw: slice k,
    /// dJw/d delta_k, in columns k nv .. k nv + nv - 1) and the partials of w in q (dw)
    /// and of al in q (dal) and v (dal_v)
    struct FrameDer
    {
      Mat3 R;
      Vec3 w, al;
      Matrix3x Jw, dw, dal, dal_v;
      MatX Hw;
    };
    /// rows of a point term's D: up to 3 (no heap)
    using DMat = Eigen::Matrix<double, Eigen::Dynamic, 3, 0, 3, 3>;

    KindDerivatives(const Model & mo, Data & d, pinocchio::Data & dd, MatX & dAB, MatX & X);

    /// a new state (q, v) at the acceleration a: the joints' kinematic Hessians are
    /// taken again when first needed
    void begin(const VecX & q, const VecX & v, const VecX & a);
    /// Pinocchio's joint kinematic Hessians of this q (once per state)
    void hessians();
    /// the point of frame slot `slot` at `off` in the frame (its origin without has_off)
    Point point(int slot, bool has_off, const Vec3 & off) const;
    /// the point's kinematic Hessian into H (slice k: dJ/d delta_k, 6 x nv), its
    /// classical acceleration's partials at the state's a into aq (in q), av (in v), its
    /// velocity's in q into vq, its Jacobian (linear rows) into aa; LOCAL_WORLD_ALIGNED
    void point_partials(const Point & p);
    /// the frame of slot `slot` (fixed when on the world)
    void frame(int slot, FrameDer & f);
    /// the rows D (p_1 - p_2) of spec s from row `row` (p_1 alone where s.s2 < 0 or not
    /// both), D scaled by s.scale's first rows; the points at the spec's offsets p1, p2
    /// (offsets) or at the frames' origins
    void point_rows(const Spec & s, int row, DMat D, bool offsets, bool both);
    /// the orientation rows P r(R_e) of Weld, FrameAligned and QuatAligned (r: the skew
    /// part's vee, or quat: the vector part of R_e's quaternion) from row `row`
    void aligned(const Spec & s, int row, const MatX & P, bool quat, const Mat3 & R_c);

    const Model & mo;
    Data & d;              // the terms of this state (evaluate at (q, v)): contacts' geometry
    pinocchio::Data & dd;  // the RNEA derivatives' pass at (q, v, a)
    MatX & dAB;            // dA_k as rows k m .. k m + m - 1 (m nv x nv)
    MatX & X;              // [d(A a + drift)/d delta, d drift/dv] (m x 2 nv)
    const VecX *q = nullptr, *v = nullptr, *a = nullptr;
    int m = 0, nv = 0;
    // workspaces of the helpers, free for a kind between calls
    Eigen::Tensor<double, 3> H;
    Matrix3x vq, aq, av, aa;
    FrameDer f1, f2;
    Matrix6x J6;

  private:
    /// how term treats the coordinates both points of a difference p1 - p2 move
    /// (common_): alone (no second point), first (dJ_c/dq_k of the difference, w_k x
    /// (w_c x (p1 - p2)), for c among them), second (those left to the first)
    enum class Share
    {
      alone,
      first,
      second
    };
    void term(int row, const DMat & D, bool identity, double sign, const Point & p,
              Share share = Share::alone);
    /// the rows D (p1 - p2) of two points: as two terms, with the coordinates both move
    /// walked once (their Hessian columns differ by w_c x (p1 - p2) alone)
    void term_difference(int row, const DMat & D, bool identity, const Point & p1,
                         const Point & p2);
    bool hessians_ = false;
    Matrix6x v6_, a6q_, a6v_, a6a_;
    std::vector<int> sup_;      // term's support (coordinates, last first)
    std::vector<char> common_;  // term_difference: the coordinates both points move
    Vec3 dp_ = Vec3::Zero();    // and p1 - p2
    std::vector<int> col_joint_; // each coordinate's joint
    Matrix3x w_, Jp_;           // and its columns' w and J at the point
    MatX dA3_, X3_;             // a kind's own rows (3 x nv, 3 x 2 nv) before P
    Matrix3x Jw3_, ReJ2_, dJ3_; // aligned's J_w, R_e J_w2, dJ_w,k
  };

  namespace kinds
  {
#define PFAFF_KIND(K, rows, window, holonomic)                                              \
  void derive_##K(KindDerivatives & kd, const Spec & s, int row);
#include "kinds.def"
#undef PFAFF_KIND
  } // namespace kinds
} // namespace pfaff
