#include "learner.h"

float Learner::train_step(const torch::Tensor& batch) {
  adam_->zero_grad();
  torch::Tensor loss = torch::mse_loss(net_->forward(batch), batch);
  loss.backward();
  adam_->step();
  step_losses_.push_back(loss);  // expect: GL102
  return loss.item<float>();
}

// called once, after training: what it keeps does not grow
float Learner::final_check(const torch::Tensor& batch) {
  torch::Tensor loss = torch::mse_loss(net_->forward(batch), batch);
  checks_.push_back(loss);  // ok: not called each step
  return loss.item<float>();
}
