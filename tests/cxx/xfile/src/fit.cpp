#include <torch/torch.h>
#include "stats.h"

void fit(torch::nn::Sequential net, torch::optim::Adam& optimizer, const std::vector<torch::Tensor>& batches) {
  LossTracker tracker;
  LossTracker values;
  double error_sum = 0.0;
  for (const auto& batch : batches) {
    optimizer.zero_grad();
    torch::Tensor pred = net->forward(batch);
    torch::Tensor loss = torch::mse_loss(pred, batch);
    loss.backward();
    optimizer.step();
    tracker.observe(loss);  // expect: GL101
    values.observe_value(loss);  // ok: observe_value adds loss.item<double>()
    error_sum += batch_error(pred, batch);  // ok: a double from another file
  }
}

#include "learner.h"

float run_learner(Learner& learner, const std::vector<torch::Tensor>& batches) {
  float last = 0;
  for (const auto& batch : batches) last = learner.train_step(batch);
  return last + learner.final_check(batches.front());
}
