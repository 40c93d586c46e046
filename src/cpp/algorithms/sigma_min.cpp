// sigma_min(A) of a row space (sigma_of_factor, core.hpp): 1 / ||R^-1||_2 of a full-rank
// QR (in closed form up to 3 rows, by a certified Rayleigh quotient up to 8, else the
// symmetric eigensolver), the singular values of the pivoted QR's triangle, the
// blocks' least (blocks that cannot hold it skipped by their bounds).
#include "model/core.hpp"
#include "model/core_detail.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Eigenvalues>

namespace pfaff
{
  using detail::kNaN;

  namespace
  {
    // lambda_max of G = W^T W (r from 4 to 8 columns) as the Rayleigh quotient rho of
    // a vector brought to the top eigenvector (power steps, then Rayleigh quotient
    // iteration), certified: rho <= lambda_max always, and (1 + 1e-12) rho I - G is
    // positive definite (its Cholesky factor exists) only where lambda_max is below
    // it. NaN where the certificate fails (rho found another eigenvalue, or a
    // breakdown): the caller takes the eigensolver then.
    double certified_top_eigenvalue(const MatX & W)
    {
      using Small = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 8, 8>;
      using SmallVec = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 8, 1>;
      const int r = int(W.cols());
      Small G(r, r);
      G.noalias() = W.transpose() * W;
      Eigen::Index k0 = 0;
      G.diagonal().maxCoeff(&k0);
      SmallVec x = G.col(k0) / G.col(k0).norm(), y(r);
      for (int k = 0; k < 4; ++k) // power steps toward the top eigenvector
      {
        y.noalias() = G * x;
        x = y / y.norm();
      }
      double rho = x.dot(G * x);
      Small S(r, r);
      for (int k = 0; k < 3; ++k) // Rayleigh quotient iteration
      {
        S = G;
        S.diagonal().array() -= rho;
        y = S.partialPivLu().solve(x);
        const double ny = y.norm();
        if (!(ny > 0.0) || !std::isfinite(ny))
          break; // (G - rho I) singular to round-off: rho is an eigenvalue already
        x = y / ny;
        rho = x.dot(G * x);
      }
      S = -G;
      S.diagonal().array() += (1.0 + 1e-12) * rho;
      Eigen::LLT<Small> chol(S);
      return chol.info() == Eigen::Success && rho > 0.0 ? rho : kNaN;
    }

    // lambda_max(W^T W), W with r <= 3 columns in closed form (r = 2: the larger root
    // of the 2 x 2 characteristic polynomial, a sum of nonnegative terms; r = 3:
    // Eigen's computeDirect, accurate relative to lambda_max), r <= 8 certified to
    // 1e-12 relative (certified_top_eigenvalue), else (or where that fails) the
    // symmetric eigensolver's values (what operatorNorm takes)
    double largest_eigenvalue(const MatX & W)
    {
      const int r = int(W.cols());
      if (r == 1)
        return W.col(0).squaredNorm();
      if (r == 2)
      {
        const double a = W.col(0).squaredNorm(), b = W.col(0).dot(W.col(1)),
                     c = W.col(1).squaredNorm();
        return 0.5 * (a + c) + std::hypot(0.5 * (a - c), b);
      }
      if (r == 3)
      {
        Mat3 G;
        G.noalias() = W.transpose() * W;
        Eigen::SelfAdjointEigenSolver<Mat3> es;
        es.computeDirect(G, Eigen::EigenvaluesOnly);
        return es.eigenvalues()(2);
      }
      if (r <= 8)
        if (const double top = certified_top_eigenvalue(W); !std::isnan(top))
          return top;
      return (W.transpose() * W).selfadjointView<Eigen::Lower>().operatorNorm();
    }

    // a row space whose sigma_min is 1 / ||W||_2 (full row rank by the QR, W = R^-1)
    bool bounded(const RowSpace & rs)
    {
      return !rs.svd && rs.nblocks == 0 && rs.rank > 0 && !rs.zero_rows && rs.R.size() == 0
             && rs.W.rows() == rs.W.cols();
    }
  } // namespace

  // sigma_min(A) of a QR factorisation: full row rank, A^+ = V1 W^T with W = R^-1,
  // sigma_min = 1 / ||R^-1||_2; certified rank r < m, the singular values of A^T Pi =
  // Q R are those of the m x m triangle R kept by pivoted_rows (values only)
  void sigma_of_factor(Data & d, RowSpace & rs)
  {
    if (rs.svd) // the SVD's own (row_space)
      return;
    if (rs.nblocks > 0 && !rs.zero_rows && rs.n >= rs.m) // the blocks' least
    {
      // a block of full row rank by the QR has 1 / ||W||_F <= sigma <= 1 / max_j
      // ||W e_j||: one whose lower bound is above another's upper bound (or exact
      // value) is not the least, and its value is not computed (NaN)
      double upper = std::numeric_limits<double>::infinity();
      for (int b = 0; b < rs.nblocks; ++b)
      {
        RowSpace & br = rs.blocks[size_t(b)].rs;
        if (bounded(br))
          upper = std::min(upper, 1.0 / br.W.colwise().norm().maxCoeff());
        else
        {
          sigma_of_factor(d, br);
          upper = std::min(upper, br.sigma_min);
        }
      }
      rs.sigma_min = std::numeric_limits<double>::infinity();
      for (int b = 0; b < rs.nblocks; ++b)
      {
        RowSpace & br = rs.blocks[size_t(b)].rs;
        if (bounded(br))
        {
          if (1.0 / br.W.norm() > upper)
          {
            br.sigma_min = kNaN;
            continue;
          }
          sigma_of_factor(d, br);
        }
        rs.sigma_min = std::min(rs.sigma_min, br.sigma_min);
      }
    }
    else if (rs.rank == 0 || rs.zero_rows || rs.nblocks > 0 || rs.m > rs.n)
      // a zero row of A, or more rows than coordinates: sigma_min(A) = 0
      rs.sigma_min = 0.0;
    else if (rs.R.size() == 0)
      rs.sigma_min = 1.0 / std::sqrt(largest_eigenvalue(rs.W));
    else
    {
      d.svd_R_.compute(rs.R);
      rs.sigma_min = d.svd_R_.singularValues().minCoeff();
    }
  }

} // namespace pfaff
