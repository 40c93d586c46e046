// The recorder of the compiled step core: the buffers a run writes its samples into,
// one row per recorded state (see core.hpp for the Model, the Data and the StepState it
// reads). The record buffers and the force buffers are those of the recorded series of
// series.def (tables.hpp), the one table of them, in its order: record() writes each
// series by its id, record_width() gives each row's width from the table.
#pragma once

#include <cstddef>
#include <vector>

#include <Eigen/Core>

#include "tables/tables.hpp"

namespace pfaff
{
  struct Model;
  struct Data;
  struct StepState;

  /// The record buffers (row-major, float64, owned by the caller), their capacity in
  /// samples and the samples written so far: a run's output (pinocchio's shape: state
  /// of its own, beside the Model and the Data it reads)
  struct Recorder
  {
    static constexpr int n_buffers = record_series(); // series.def's record series
    std::vector<double *> bufs;
    std::vector<std::size_t> sizes; // values each record buffer holds
    int capacity = 0;               // samples the record buffers hold
    double * fbuf[2] = {nullptr, nullptr}; // force_work, force_potential (or none)
    int fcap = 0;                          // the force buffers' length
    int recorded = 0;                      // samples written since set_buffers
    Eigen::VectorXd av;                    // workspace: A v of the sample

    /// the buffers with their sizes (values): each must hold capacity rows of
    /// record_width(mo, i); the count starts again at 0
    void set_buffers(
      const Model & mo, const std::vector<double *> & bufs, const std::vector<std::size_t> & sizes,
      int capacity);
    /// the force elements' buffers: force_work, force_potential (one double per sample)
    void set_force_buffers(double * work, double * pot, int capacity)
    {
      fbuf[0] = work;
      fbuf[1] = pot;
      fcap = capacity;
    }
    /// the force buffers' length (-1: none set)
    int force_capacity() const { return fbuf[0] ? fcap : -1; }
  };

  /// the width of a row of record buffer i: its series' width in series.def (one, nq, nv,
  /// m or m_h)
  std::size_t record_width(const Model & mo, int i);
  /// refuse (std::invalid_argument naming where) buffers of these sizes that record()
  /// would overflow at this capacity with the Model's present rows (a run checks again:
  /// System::add may add rows after set_buffers)
  void check_buffers(
    const Model & mo, const char * where, const std::vector<std::size_t> & sizes, int capacity);
  /// the state's sample (s's state and accounts, d's terms at it: a, tau, F, lambda, A v,
  /// Phi, rank, sigma_min, the energies) at time t into the next row of r's buffers;
  /// std::runtime_error when they are full
  void record(const Model & mo, const Data & d, const StepState & s, Recorder & r, double t);
} // namespace pfaff
