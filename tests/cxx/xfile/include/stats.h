#pragma once
#include <torch/torch.h>

class LossTracker {
 public:
  void observe(const torch::Tensor& loss);
  void observe_value(const torch::Tensor& loss);
  double mean() const;

 private:
  torch::Tensor running_ = torch::zeros({});
  double total_ = 0.0;
  int64_t count_ = 0;
};

// a helper of another file that returns a number, never a graph
double batch_error(const torch::Tensor& pred, const torch::Tensor& target);
