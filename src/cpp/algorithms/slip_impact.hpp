// An impact with points that slip through it (slip_impact.cpp): Moreau's impact law with
// Coulomb friction at the velocity level. A point that slips carries the tangential
// impulse -mu p d with its normal impulse p, d the direction of its slip after the
// impact; the rows reach their targets (G v+ = b) as in the frictionless impact.
#pragma once

#include <vector>

#include "model/core_types.hpp"

namespace pfaff
{
  /// A point slipping through an impact
  struct SlipImpulse
  {
    Eigen::Index row = -1; ///< its normal row in the impact's rows G
    Matrix3x T;            ///< its material point's velocity rows, tangential part (I - n n^T) J
    Vec3 n = Vec3::UnitZ(); ///< its normal (world, unit)
    double mu = 0.0;       ///< its friction coefficient
    Vec3 d = Vec3::Zero(); ///< its slip direction after the impact (world, unit): a guess in, the one found out
    bool lost = false;    ///< out: no direction found along which its slip goes on (it cannot slip through)
  };

  /// The velocity after an impact whose rows G reach their targets b (G v+ = b) under the
  /// impulses M (v+ - v) = -H^T iota, H = G with each slipping point's normal row less
  /// mu d^T T: friction -mu p d at the point, p = -iota(row) >= 0 its normal impulse (a
  /// contact pushes with iota <= 0). d is the direction of the slip after the impact,
  /// T v+ / |T v+| (Moreau's law), found by fixed-point iteration from the guess (one
  /// iteration where the slip keeps its direction, as in a planar impact); where that
  /// does not settle and one point slips, by a search around its tangent plane (72
  /// directions, then bisection to 1e-15 rad).
  /// (G M^-1 H^T) iota = G v - b is solved with iota in the range of G (the column-pivoted
  /// QR of G, pivots at or below rank_tol times the largest dropped): redundant rows (a
  /// box's four corners) split their impulses as the frictionless impact does, so that
  /// the velocity after is unique. With mu = 0 this is the impact metric_impact_rows
  /// solves. H and iota out; a point with no direction along which its slip goes on
  /// (the friction turns it back) is flagged lost.
  VecX slip_impact(
    const MatX & M, const MatX & G, const VecX & v, const VecX & b,
    std::vector<SlipImpulse> & slips, double rank_tol, MatX & H, VecX & iota);
} // namespace pfaff
