#pragma once
#include <torch/torch.h>
#include <vector>

// a trainer whose step methods are defined in src/learner.cpp and called from src/fit.cpp
class Learner {
 public:
  Learner(torch::nn::Sequential net, torch::optim::Adam* adam) : net_(net), adam_(adam) {}
  float train_step(const torch::Tensor& batch);
  float final_check(const torch::Tensor& batch);

 private:
  torch::nn::Sequential net_;
  torch::optim::Adam* adam_;
  std::vector<torch::Tensor> step_losses_;
  std::vector<torch::Tensor> checks_;
};
