#include "stats.h"

void LossTracker::observe(const torch::Tensor& loss) {
  running_ += loss;
  count_ += 1;
}

void LossTracker::observe_value(const torch::Tensor& loss) {
  total_ += loss.item<double>();
  count_ += 1;
}

double LossTracker::mean() const { return count_ ? total_ / count_ : 0.0; }

double batch_error(const torch::Tensor& pred, const torch::Tensor& target) {
  return (pred - target).abs().mean().item<double>();
}
