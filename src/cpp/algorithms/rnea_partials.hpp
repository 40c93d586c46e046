// The partials of RNEA in q and v for the derivatives of the projection dynamics
// (rnea_partials.cpp): Pinocchio's computeRNEADerivatives without the products they do
// not read.
#pragma once

#include "model/core_types.hpp"

namespace pfaff
{
  /// the partials of RNEA at (q, v, a) in q (tangent) and v into out's columns 0 .. nv - 1
  /// and nv .. 2 nv - 1 (out: nv x 2 nv or more rows; only the tree's blocks written):
  /// Pinocchio's computeRNEADerivatives without dtau/da (M, which the dynamics' mass pass
  /// gave) and tau. data holds the pass after, as Pinocchio's leaves it (oMi, ov, oa, J,
  /// dJ, dVdq, dAdq without gravity, dAdv) for the kinematic Hessians and the frames'
  /// acceleration partials. pass: the dynamics' fused mass pass at the same (q, v)
  /// (mass_and_bias, world frame: oMi, J, ov, oa at a = 0, oinertias, oh), whose forward
  /// quantities the partials' forward step then reads instead of computing them again;
  /// nullptr: Pinocchio's own forward step from q and v
  void rnea_partials(
    const pinocchio::Model & model, pinocchio::Data & data, const VecX & q, const VecX & v,
    const VecX & a, MatX & out, const pinocchio::Data * pass = nullptr);
} // namespace pfaff
