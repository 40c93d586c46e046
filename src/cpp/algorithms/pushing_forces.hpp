// The constraint forces of a redundant held set that push (pushing_forces.cpp): where
// held unilateral rows are redundant (a box's four corners on a plane, a quadruped's
// sixteen foot corners) the multipliers that give one generalised force W^T lambda form
// an affine set lambda_0 + null(W^T); the least-norm lambda_0 is one choice, and it may
// pull at a corner or leave a stuck point's friction cone where another choice of the
// same motion pushes inside every cone. This finds that choice, or says there is none.
#pragma once

#include <vector>

#include "model/core_types.hpp"

namespace pfaff
{
  /// A row whose multiplier must push: sign * lambda(row) >= 0
  struct PushRow
  {
    int row = -1;
    double sign = -1.0; // a contact or a lower stop pushes with lambda <= 0
  };

  /// A point's friction cone: |(lambda(t1), lambda(t1 + 1))| <= mu f_n with
  /// f_n = -lambda(n) (its normal row pushes with lambda <= 0)
  struct ConeRows
  {
    int n = -1, t1 = -1;
    double mu = 0.0;
  };

  /// The multipliers nearest to lam0 (Euclidean) with W^T lam = W^T lam0 (the same
  /// generalised force: lam - lam0 in the null space of W^T, singular values of W at or
  /// below rank_tol dropped) under which every push row pushes and every cone holds, each
  /// to tol (units of lambda); a convex QP solved by ProxQP (proxsuite), the cones as
  /// cutting planes (tangent planes at the violated forces: the outer polygons close
  /// in on the cone, so an infeasible polygon proves the cone infeasible). True with lam
  /// set where they exist (lam0 itself where it already satisfies them), false where
  /// none does (lam untouched).
  bool pushing_forces(
    const MatX & W, const VecX & lam0, const std::vector<PushRow> & push,
    const std::vector<ConeRows> & cones, double rank_tol, double tol, VecX & lam);

  /// The held rows' multipliers of the contact problem at the acceleration level
  /// (unilateral_forces.cpp): the minimiser of 1/2 lam^T S lam - r^T lam with every push
  /// row pushing and every cone holding (eight tangent planes), S = A M^-1 A^T and
  /// r = A M^-1 (tau - h) + drift of the held rows A (no point slipping); a push row's
  /// multiplier is then zero where its row separates. ProxQP (dense) to tol; false where
  /// it does not solve it (lam untouched).
  bool unilateral_forces(
    const MatX & S, const VecX & r, const std::vector<PushRow> & push,
    const std::vector<ConeRows> & cones, double tol, VecX & lam);

  /// Which of the points of an overlap (rows G, gaps dist < 0 where they overlap) the
  /// least motion out of it leaves clear: the move min 1/2 dq^T M dq with the rows A
  /// kept (A dq = 0) and every gap after it >= 0 (dist + G dq >= 0, first order), a
  /// convex QP (ProxQP, dense); a point whose gap after it exceeds clear_gap is clear (a
  /// short link with both ends in the floor: lifting the deeper end brings the other
  /// out, where holding both on the floor would ask for a turn the first order does not
  /// see). All zero (none clear) where the QP does not solve.
  std::vector<char> clear_after_move(
    const MatX & M, const MatX & A, const MatX & G, const VecX & dist, double clear_gap);

  /// max over the push rows of their pull and over the cones of |lambda_t| - mu f_n
  /// (<= 0: every row pushes, every cone holds)
  double push_violation(
    const VecX & lam, const std::vector<PushRow> & push, const std::vector<ConeRows> & cones);
} // namespace pfaff
